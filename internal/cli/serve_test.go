package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/spate-io/spate/internal/gen"
	"github.com/spate-io/spate/internal/segment"
)

// serveChild is `spate serve` running as a child process (the test binary
// acting as spate, see TestMain).
type serveChild struct {
	cmd    *exec.Cmd
	url    string
	stderr *bytes.Buffer
	mu     *sync.Mutex
	done   chan struct{}
	// The process is waited for once (wait); waitErr is how it exited.
	waitOnce *sync.Once
	waitErr  error
}

// wait waits for the process to exit, once, and returns how it did.
func (c *serveChild) wait() error {
	c.waitOnce.Do(func() { c.waitErr = c.cmd.Wait() })
	return c.waitErr
}

func startServe(t *testing.T, dir string, args ...string) *serveChild {
	t.Helper()
	return startServeArgs(t, append([]string{"--data", dir}, args...)...)
}

// startServeArgs is startServe with all of serve's flags given.
func startServeArgs(t *testing.T, args ...string) *serveChild {
	t.Helper()
	return startCommand(t, "serve", args...)
}

// startCommand runs `spate sub --listen 127.0.0.1:0 --log-level warn
// args...` (serve or consume) and waits until it says where it listens.
func startCommand(t *testing.T, sub string, args ...string) *serveChild {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args = append([]string{sub, "--listen", "127.0.0.1:0", "--log-level", "warn"}, args...)
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &serveChild{cmd: cmd, stderr: &bytes.Buffer{}, mu: &sync.Mutex{}, done: make(chan struct{}), waitOnce: &sync.Once{}}
	t.Cleanup(func() {
		// A test that did not stop its child (it failed, or had no need):
		// no child outlives its test, holding ports, files and CPU. It is
		// stopped as the test would (SIGTERM; SIGKILL after 10 s), and a
		// stop the test makes later sees how it exited.
		exited := make(chan struct{})
		go func() {
			c.wait()
			close(exited)
		}()
		select {
		case <-exited:
			return
		default:
		}
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	urlc := make(chan string, 1)
	go func() {
		defer close(c.done)
		sc := bufio.NewScanner(pipe)
		// Long lines too (a warning may quote a 256 KiB syslog message):
		// a child whose stderr is not read blocks as it logs.
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			line := sc.Text()
			if u, ok := strings.CutPrefix(line, "spate "+sub+": listening on "); ok {
				urlc <- u
			}
			c.mu.Lock()
			c.stderr.WriteString(line + "\n")
			c.mu.Unlock()
		}
	}()
	select {
	case c.url = <-urlc:
	case <-c.done:
		c.wait()
		t.Fatalf("%s exited before listening:\n%s", sub, c.log())
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("%s did not start:\n%s", sub, c.log())
	}
	return c
}

func (c *serveChild) log() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stderr.String()
}

// stop sends sig and waits for the process; for SIGTERM it must exit 0.
func (c *serveChild) stop(t *testing.T, sig syscall.Signal) {
	t.Helper()
	c.cmd.Process.Signal(sig)
	err := c.wait()
	<-c.done
	if sig == syscall.SIGTERM && err != nil {
		t.Fatalf("serve after SIGTERM: %v\n%s", err, c.log())
	}
}

// ingestClient posts numbered lines and records which ones were
// acknowledged.
type ingestClient struct {
	url    string
	prefix string
	next   int
	acked  []string
	sent   []string // sent but not acknowledged (no answer, or not 200)
	codes  map[int]int
	client *http.Client
}

func (c *ingestClient) send(lines int) error {
	var b bytes.Buffer
	ids := make([]string, lines)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%d", c.prefix, c.next)
		c.next++
		fmt.Fprintf(&b, `{"id":%q,"msg":"line %s for the crash test"}`+"\n", ids[i], strings.Repeat("x", len(ids[i])))
	}
	resp, err := c.client.Post(c.url+"/insert/jsonline", "application/x-ndjson", &b)
	if err != nil {
		c.sent = append(c.sent, ids...)
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	c.codes[resp.StatusCode]++
	if resp.StatusCode == http.StatusOK {
		c.acked = append(c.acked, ids...)
	} else {
		c.sent = append(c.sent, ids...)
	}
	return nil
}

// forEachStored calls fn with every line stored in the data directory dir,
// decompressing sealed segments, and fails on a segment that ends in a
// partial line.
func forEachStored(t *testing.T, dir string, fn func(path string, line []byte)) {
	t.Helper()
	files, err := segment.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	dec, _ := zstd.NewReader(nil)
	defer dec.Close()
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, f.Path))
		if err != nil {
			t.Fatal(err)
		}
		if f.Compressed {
			if data, err = dec.DecodeAll(data, nil); err != nil {
				t.Fatalf("%s: %v", f.Path, err)
			}
		}
		if len(data) > 0 && data[len(data)-1] != '\n' {
			t.Fatalf("%s ends in a partial line: %q", f.Path, data[max(0, len(data)-80):])
		}
		for line := range bytes.Lines(data) {
			fn(f.Path, line)
		}
	}
}

// readStored returns how often each id occurs in dir, failing on any line
// that is not a complete JSON object.
func readStored(t *testing.T, dir string) map[string]int {
	t.Helper()
	seen := map[string]int{}
	forEachStored(t, dir, func(path string, line []byte) {
		var v struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(line, &v); err != nil || v.ID == "" {
			t.Fatalf("%s: bad stored line %q: %v", path, line, err)
		}
		seen[v.ID]++
	})
	return seen
}

// TestServeCrash kills `spate serve` with SIGKILL at random moments while
// several clients ingest, restarts it on the same directory each time, and
// checks that every acknowledged line is stored exactly once, that no line
// is stored twice, and that no partial line is visible after recovery.
func TestServeCrash(t *testing.T) {
	rounds := 20
	if testing.Short() {
		rounds = 4
	}
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 9))
	var clients []*ingestClient
	for round := range rounds {
		srv := startServe(t, dir, "--segment-size", "256KiB")
		var wg sync.WaitGroup
		for c := range 4 {
			ic := &ingestClient{url: srv.url, prefix: fmt.Sprintf("r%d-c%d", round, c), codes: map[int]int{},
				client: &http.Client{Timeout: 10 * time.Second}}
			clients = append(clients, ic)
			seed := r.Uint64()
			wg.Go(func() {
				cr := rand.New(rand.NewPCG(seed, 1))
				for ic.send(1+cr.IntN(300)) == nil {
				}
			})
		}
		time.Sleep(time.Duration(10+r.IntN(150)) * time.Millisecond)
		srv.stop(t, syscall.SIGKILL)
		wg.Wait()
	}
	// Recover once more and stop cleanly, then read everything.
	srv := startServe(t, dir)
	srv.stop(t, syscall.SIGTERM)
	seen := readStored(t, dir)
	acked, unacked := 0, 0
	for _, c := range clients {
		for _, id := range c.acked {
			if seen[id] != 1 {
				t.Fatalf("acknowledged line %s stored %d times", id, seen[id])
			}
			acked++
		}
		for _, id := range c.sent {
			if seen[id] > 1 {
				t.Fatalf("unacknowledged line %s stored %d times", id, seen[id])
			}
			unacked++
		}
	}
	if acked == 0 {
		t.Fatal("no line was acknowledged: the test did not exercise the server")
	}
	t.Logf("%d rounds: %d lines acknowledged, %d in flight at the kills, %d stored", rounds, acked, unacked, len(seen))
}

// overloadClient sends bodies of numbered lines, each line tagged with its
// request ("r":"c3-17"), and records the requests answered 200 and 429.
type overloadClient struct {
	name      string
	acked     map[string]int // request id -> lines, answered 200
	refused   map[string]int // answered 429 (with Retry-After)
	codes     map[int]int
	transport []string // errors without an HTTP answer (resets, ...)
	noRetry   int      // 429s without Retry-After
}

func (c *overloadClient) body(id string, size int) ([]byte, int) {
	var b bytes.Buffer
	b.Grow(size + 200)
	n := 0
	for b.Len() < size {
		fmt.Fprintf(&b, `{"r":"%s","i":%d,"msg":"overload line %d for the 429 test","pad":"%s"}`+"\n", id, n, n, strings.Repeat("p", n%64))
		n++
	}
	return b.Bytes(), n
}

// goSend posts with Go's client, which reads the answer while it sends.
func (c *overloadClient) goSend(client *http.Client, url, id string, body []byte) (code int, retry string, err error) {
	resp, err := client.Post(url, "application/x-ndjson", bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After"), nil
}

// curlSend posts with curl, which sends "Expect: 100-continue" for bodies
// over 1 MiB and reports resets as exit codes 55 and 56.
func (c *overloadClient) curlSend(url, file string) (code int, retry string, err error) {
	out, err := exec.Command("curl", "-sS", "-o", "/dev/null", "-w", "%{http_code} %header{retry-after}",
		"-H", "Content-Type: application/x-ndjson", "--data-binary", "@"+file, url).CombinedOutput()
	if err != nil {
		return 0, "", fmt.Errorf("curl: %v: %s", err, out)
	}
	f := strings.Fields(string(out))
	if len(f) == 0 {
		return 0, "", fmt.Errorf("curl printed nothing")
	}
	code, _ = strconv.Atoi(f[0])
	if len(f) > 1 {
		retry = f[1]
	}
	return code, retry, nil
}

// TestServeOverload is the overload: 32 clients send 8 MiB bodies
// as fast as they can for 8 s (28 with Go's client, 4 with curl when it is
// installed) to a server with the default limits. Every request must get
// 200, or 429 with Retry-After; none may fail without an answer (a reset);
// the stored lines must be exactly those of the requests answered 200; and
// the server's peak RSS must stay under 512 MiB.
func TestServeOverload(t *testing.T) {
	if testing.Short() {
		t.Skip("overload test takes about 15 s")
	}
	dir := t.TempDir()
	srv := startServe(t, dir)
	url := srv.url + "/insert/jsonline"
	_, curlErr := exec.LookPath("curl")
	var wg sync.WaitGroup
	var clients []*overloadClient
	deadline := time.Now().Add(8 * time.Second)
	for k := range 32 {
		c := &overloadClient{name: fmt.Sprintf("c%d", k), acked: map[string]int{}, refused: map[string]int{}, codes: map[int]int{}}
		clients = append(clients, c)
		useCurl := k >= 28 && curlErr == nil
		wg.Go(func() {
			client := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{}}
			file := filepath.Join(t.TempDir(), "body")
			for r := 0; time.Now().Before(deadline); r++ {
				id := fmt.Sprintf("%s-%d", c.name, r)
				body, lines := c.body(id, 8<<20)
				var code int
				var retry string
				var err error
				if useCurl {
					if err := os.WriteFile(file, body, 0o644); err != nil {
						t.Error(err)
						return
					}
					code, retry, err = c.curlSend(url, file)
				} else {
					code, retry, err = c.goSend(client, url, id, body)
				}
				if err != nil {
					c.transport = append(c.transport, err.Error())
					continue
				}
				c.codes[code]++
				switch code {
				case 200:
					c.acked[id] = lines
				case 429:
					c.refused[id] = lines
					if retry == "" {
						c.noRetry++
					}
					time.Sleep(100 * time.Millisecond) // Retry-After, capped as spate bench ingest does
				}
			}
		})
	}
	wg.Wait()
	hwm := vmHWM(t, srv.cmd.Process.Pid)
	srv.stop(t, syscall.SIGTERM)

	ok, throttled := 0, 0
	for _, c := range clients {
		ok += c.codes[200]
		throttled += c.codes[429]
		for code, n := range c.codes {
			if code != 200 && code != 429 {
				t.Errorf("client %s got %d × %d", c.name, n, code)
			}
		}
		if len(c.transport) > 0 {
			t.Errorf("client %s: %d requests got no answer, first: %s", c.name, len(c.transport), c.transport[0])
		}
		if c.noRetry > 0 {
			t.Errorf("client %s: %d answers 429 without Retry-After", c.name, c.noRetry)
		}
	}
	if throttled == 0 || ok == 0 {
		t.Fatalf("want both 200s and 429s under overload, got %d and %d", ok, throttled)
	}
	if hwm > 512<<20 {
		t.Errorf("peak RSS %d MiB, want under 512 MiB", hwm>>20)
	}
	// Every stored line belongs to a request answered 200, and each such
	// request is stored whole, exactly once.
	stored := countByRequest(t, dir)
	for _, c := range clients {
		for id, n := range c.acked {
			if stored[id] != n {
				t.Errorf("request %s answered 200 with %d lines; %d stored", id, n, stored[id])
			}
			delete(stored, id)
		}
		for id := range c.refused {
			if stored[id] != 0 {
				t.Errorf("request %s answered 429; %d of its lines stored", id, stored[id])
			}
		}
	}
	for id, n := range stored {
		t.Errorf("%d lines of request %s stored without a 200", n, id)
	}
	t.Logf("%d requests stored, %d answered 429, peak RSS %.1f MiB", ok, throttled, float64(hwm)/(1<<20))
}

// countByRequest counts the stored lines of each request id ("r").
func countByRequest(t *testing.T, dir string) map[string]int {
	t.Helper()
	counts := map[string]int{}
	forEachStored(t, dir, func(path string, line []byte) {
		_, rest, ok := bytes.Cut(line, []byte(`"r":"`))
		id, _, ok2 := bytes.Cut(rest, []byte(`"`))
		if !ok || !ok2 {
			t.Fatalf("%s: stored line without a request id: %q", path, line)
		}
		counts[string(id)]++
	})
	return counts
}

// vmHWM returns the peak resident set of process pid, in bytes.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc status")
	return 0
}

// TestServeFlags checks that the operational flags take effect: the token
// file guards ingestion, the admin listener serves pprof and metrics, JSON
// logs are JSON, and --no-compress leaves sealed segments plain.
func TestServeFlags(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("# ingest tokens\n\nsecret-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, dir, "--auth-token-file", tokens, "--admin-listen", "127.0.0.1:0",
		"--log-format", "json", "--log-level", "info", "--no-compress")
	post := func(token string) int {
		req, _ := http.NewRequest(http.MethodPost, srv.url+"/api/v1/ingest", strings.NewReader(`{"id":"x"}`+"\n"))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if c := post(""); c != 401 {
		t.Fatalf("without token: %d", c)
	}
	if c := post("wrong"); c != 401 {
		t.Fatalf("wrong token: %d", c)
	}
	if c := post("secret-1"); c != 200 {
		t.Fatalf("good token: %d", c)
	}
	var admin string
	for line := range strings.Lines(srv.log()) {
		if a, ok := strings.CutPrefix(line, "spate serve: admin (pprof, metrics) on "); ok {
			admin = strings.TrimSpace(a)
		}
	}
	if admin == "" {
		t.Fatalf("no admin address in the log:\n%s", srv.log())
	}
	for path, want := range map[string]string{"/debug/pprof/": "goroutine", "/metrics": `spate_ingest_lines_total{result="accepted"} 1`} {
		resp, err := http.Get(admin + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Fatalf("admin %s: %d, lacks %q", path, resp.StatusCode, want)
		}
	}
	srv.stop(t, syscall.SIGTERM)
	for line := range strings.Lines(srv.log()) {
		if strings.HasPrefix(line, "spate serve:") {
			continue // the plain lines tools wait for
		}
		if !json.Valid([]byte(line)) {
			t.Fatalf("--log-format json wrote a non-JSON line: %q", line)
		}
	}
	// A restart seals the old segment; without compression it stays plain
	// (a compressor would finish a one-line segment well within the wait).
	srv = startServe(t, dir, "--no-compress")
	time.Sleep(300 * time.Millisecond)
	srv.stop(t, syscall.SIGTERM)
	files, err := segment.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no segment written")
	}
	for _, f := range files {
		if f.Compressed {
			t.Fatalf("--no-compress: %s is compressed", f.Path)
		}
	}
}

// TestServeTenants: lines sent with tenant headers are stored apart, and
// spate query reads one tenant of a data directory: 0:0 unless --tenant
// says which.
func TestServeTenants(t *testing.T) {
	dir := t.TempDir()
	srv := startServe(t, dir)
	send := func(n int, hdr ...string) {
		t.Helper()
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, `{"i":%d}`+"\n", i)
		}
		req, _ := http.NewRequest(http.MethodPost, srv.url+"/insert/jsonline", strings.NewReader(b.String()))
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%v: %d", hdr, resp.StatusCode)
		}
	}
	send(3)
	send(5, "AccountID", "7", "ProjectID", "8")
	send(11, "AccountID", "9")
	srv.stop(t, syscall.SIGTERM)
	count := func(args ...string) string {
		t.Helper()
		code, out, stderr := runCLI(t, append([]string{"query", "--format", "csv"}, args...)...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		return strings.TrimSpace(strings.TrimPrefix(string(out), "n\n"))
	}
	for _, c := range []struct{ tenant, want string }{{"", "3"}, {"0:0", "3"}, {"7:8", "5"}, {"9", "11"}, {"9:0", "11"}, {"1:1", "0"}} {
		args := []string{"* | stats count() n", dir}
		if c.tenant != "" {
			args = append([]string{"--tenant", c.tenant}, args...)
		}
		if got := count(args...); got != c.want {
			t.Errorf("tenant %q: %s lines, want %s", c.tenant, got, c.want)
		}
	}
	// Lines stored without a stream read as the stream {} with its ID in
	// the tenant, as spate serve's query API and VictoriaLogs answer.
	for _, c := range []struct{ tenant, want string }{
		{"0:0", `_stream,_stream_id,n
{},0000000000000000e934a84adb05276890d7f7bfcadabe92,3`},
		{"7:8", `_stream,_stream_id,n
{},0000000700000008e934a84adb05276890d7f7bfcadabe92,5`},
	} {
		code, out, stderr := runCLI(t, "query", "--format", "csv", "--tenant", c.tenant, "* | stats by (_stream, _stream_id) count() n", dir)
		if code != ExitOK || strings.TrimSpace(string(out)) != c.want {
			t.Errorf("streams of tenant %s: exit %d: %s%s\nwant %s", c.tenant, code, out, stderr, c.want)
		}
	}
	if code, _, stderr := runCLI(t, "query", "--tenant", "7:8", "*", t.TempDir()); code != ExitUsage || !strings.Contains(string(stderr), "no input is one") {
		t.Fatalf("--tenant on a plain directory: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "query", "--tenant", "x", "*", dir); code != ExitUsage || !strings.Contains(string(stderr), "invalid --tenant") {
		t.Fatalf("--tenant x: exit %d: %s", code, stderr)
	}
}

// TestServeQueryWhileWriting runs spate query on a data directory in a
// loop while clients ingest into it with 1 MiB segments, so that segments
// are rotated, sealed, compressed and renamed under the queries. No query
// may fail; each count must include every line acknowledged before it
// started, count none twice (at most the lines sent by its end), and
// never be smaller than the one before; the last count, after ingestion,
// must be exact.
func TestServeQueryWhileWriting(t *testing.T) {
	dir := t.TempDir()
	srv := startServe(t, dir, "--segment-size", "1MiB", "--segment-age", "300ms", "--compress-delay", "0")
	var acked, sent atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for c := range 3 {
		wg.Go(func() {
			client := &http.Client{Timeout: 20 * time.Second}
			for r := 0; ; r++ {
				select {
				case <-stop:
					return
				default:
				}
				var b bytes.Buffer
				n := 200 + r%300
				for i := range n {
					fmt.Fprintf(&b, `{"c":%d,"r":%d,"i":%d,"msg":"%s"}`+"\n", c, r, i, strings.Repeat("q", 100+i%50))
				}
				sent.Add(int64(n))
				resp, err := client.Post(srv.url+"/insert/jsonline?_stream_fields=c", "application/x-ndjson", &b)
				if err != nil {
					t.Errorf("client %d: %v", c, err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Errorf("client %d: %d", c, resp.StatusCode)
					return
				}
				acked.Add(int64(n))
			}
		})
	}
	count := func() int64 {
		t.Helper()
		code, out, stderr := runCLI(t, "query", "--format", "csv", "* | stats count() n", dir)
		n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(string(out), "n\n")), 10, 64)
		if code != ExitOK || err != nil {
			t.Errorf("query during ingestion: exit %d, output %q: %s", code, out, stderr)
			return -1
		}
		return n
	}
	var prev int64
	queries := 0
	failure := ""
	for deadline := time.Now().Add(4 * time.Second); time.Now().Before(deadline) && failure == ""; queries++ {
		before := acked.Load()
		n := count()
		after := sent.Load()
		if n < before || n > after || n < prev {
			failure = fmt.Sprintf("query %d counted %d lines: %d were acknowledged before it, %d sent by its end, %d counted before", queries, n, before, after, prev)
		}
		prev = n
	}
	close(stop)
	wg.Wait() // before failing: the clients report to t
	if failure != "" {
		t.Fatal(failure)
	}
	if n := count(); n != acked.Load() {
		t.Fatalf("after ingestion: %d lines counted, %d acknowledged", n, acked.Load())
	}
	srv.stop(t, syscall.SIGTERM)
	if n := count(); n != acked.Load() {
		t.Fatalf("after the server stopped: %d lines counted, %d acknowledged", n, acked.Load())
	}
	files, _ := segment.List(dir)
	compressed := 0
	for _, f := range files {
		if f.Compressed {
			compressed++
		}
	}
	if len(files) < 5 || compressed == 0 {
		t.Fatalf("%d segments, %d compressed: the test did not rotate and compress under the queries", len(files), compressed)
	}
	t.Logf("%d queries during ingestion of %d lines into %d segments (%d compressed)", queries, acked.Load(), len(files), compressed)
}

// TestQueryStorePrune: spate query skips the segments whose metadata rules
// them out (time range, streams), reads the others, and counts exactly
// what a full read counts.
func TestQueryStorePrune(t *testing.T) {
	dir := t.TempDir()
	srv := startServe(t, dir, "--segment-size", "32KiB")
	start := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	services := []string{"api", "web", "db"}
	type line struct {
		ts  time.Time
		svc string
	}
	var all []line
	for h := range 24 {
		var b bytes.Buffer
		for i := range 300 {
			l := line{start.Add(time.Duration(h)*time.Hour + time.Duration(i)*time.Second), services[(h/8+i%2)%3]}
			if h >= 12 {
				l.svc = services[h%3]
			}
			all = append(all, l)
			fmt.Fprintf(&b, `{"ts":%q,"service":%q,"msg":"line %d of hour %d %s"}`+"\n", l.ts.Format(time.RFC3339), l.svc, i, h, strings.Repeat("x", 40))
		}
		resp, err := http.Post(srv.url+"/insert/jsonline?_stream_fields=service", "application/x-ndjson", &b)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("hour %d: %d", h, resp.StatusCode)
		}
	}
	srv.stop(t, syscall.SIGTERM)
	now := start.Add(24 * time.Hour)
	q := func(query string, extra ...string) (string, string) {
		t.Helper()
		args := append([]string{"query", "--stats", "--format", "csv", "--now", now.Format(time.RFC3339)}, extra...)
		code, out, stderr := runCLI(t, append(args, query, dir)...)
		if code != ExitOK {
			t.Fatalf("%s: exit %d: %s", query, code, stderr)
		}
		return strings.TrimSpace(strings.TrimPrefix(string(out), "n\n")), stderr
	}
	count := func(keep func(line) bool) string {
		n := 0
		for _, l := range all {
			if keep(l) {
				n++
			}
		}
		return strconv.Itoa(n)
	}
	skipped := func(stderr string) (read, total int) {
		t.Helper()
		if _, err := fmt.Sscanf(stderr[strings.LastIndex(stderr, "spate: read "):], "spate: read %d of the %d segments", &read, &total); err != nil {
			t.Fatalf("no segment counts in %q", stderr)
		}
		return read, total
	}
	got, stderr := q("_time:1h | stats count() n")
	if want := count(func(l line) bool { return !l.ts.Before(now.Add(-time.Hour)) }); got != want {
		t.Fatalf("_time:1h: %s, want %s", got, want)
	}
	read, total := skipped(stderr)
	if total < 20 || read*10 > total {
		t.Fatalf("_time:1h read %d of %d segments", read, total)
	}
	got, stderr = q(`{service="web"} | stats count() n`)
	if want := count(func(l line) bool { return l.svc == "web" }); got != want {
		t.Fatalf("{service=web}: %s, want %s", got, want)
	}
	if read, total := skipped(stderr); read >= total {
		t.Fatalf("{service=web} read %d of %d segments", read, total)
	}
	// With a time field named, times are not pruned (ingestion may have
	// taken the time from another field).
	got, stderr = q("_time:1h | stats count() n", "--time-field", "_time")
	if read, total := skipped(stderr); read != total || got != count(func(l line) bool { return !l.ts.Before(now.Add(-time.Hour)) }) {
		t.Fatalf("--time-field _time: %s, read %d of %d", got, read, total)
	}
	// Everything, once.
	if got, _ := q("* | stats count() n"); got != strconv.Itoa(len(all)) {
		t.Fatalf("*: %s, want %d", got, len(all))
	}
}

// TestServeBigBodyLongLine streams a 1 GiB body (512 MiB of generated
// lines, a 2 MiB line, 512 MiB more) with PUT to a server with the default
// limits: the long line is rejected and named by its number, every other
// line is stored, and the server stays within 256 MiB of RSS.
func TestServeBigBodyLongLine(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 1 GiB")
	}
	dir := t.TempDir()
	srv := startServe(t, dir, "--no-compress")
	pr, pw := io.Pipe()
	var firstLines, lines int64
	go func() {
		ctx := context.Background()
		st, err := gen.Write(ctx, pw, gen.Config{Seed: 1, Size: 512 << 20, Format: "ndjson"})
		if err == nil {
			firstLines = st.Lines
			_, err = fmt.Fprintf(pw, `{"msg":"%s"}`+"\n", strings.Repeat("L", 2<<20))
		}
		if err == nil {
			st, err = gen.Write(ctx, pw, gen.Config{Seed: 2, Size: 512 << 20, Format: "ndjson"})
			lines = firstLines + 1 + st.Lines
		}
		pw.CloseWithError(err)
	}()
	req, _ := http.NewRequest(http.MethodPut, srv.url+"/api/v1/ingest", pr)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Accepted, Rejected, Lines int64
		Errors                    []struct {
			Line  int64
			Error string
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	hwm := vmHWM(t, srv.cmd.Process.Pid)
	srv.stop(t, syscall.SIGTERM)
	if resp.StatusCode != 200 || rep.Rejected != 1 || rep.Accepted != lines-1 || rep.Lines != lines || len(rep.Errors) != 1 ||
		rep.Errors[0].Line != firstLines+1 || !strings.Contains(rep.Errors[0].Error, "more than the limit") {
		t.Fatalf("%d %+v; want %d lines, the long one at %d", resp.StatusCode, rep, lines, firstLines+1)
	}
	if hwm > 256<<20 {
		t.Fatalf("peak RSS %d MiB for a 1 GiB body, want under 256 MiB", hwm>>20)
	}
	code, out, stderr := runCLI(t, "query", "--format", "csv", "* | stats count() n", dir)
	if code != ExitOK || strings.TrimSpace(string(out)) != fmt.Sprintf("n\n%d", lines-1) {
		t.Fatalf("stored: %s %s", out, stderr)
	}
	t.Logf("%d lines, the long one at %d; peak RSS %d MiB", lines, firstLines+1, hwm>>20)
}
