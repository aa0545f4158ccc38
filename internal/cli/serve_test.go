package cli

import (
	"bufio"
	"bytes"
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
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

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
}

func startServe(t *testing.T, dir string, args ...string) *serveChild {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args = append([]string{"serve", "--data", dir, "--listen", "127.0.0.1:0", "--log-level", "warn"}, args...)
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &serveChild{cmd: cmd, stderr: &bytes.Buffer{}, mu: &sync.Mutex{}, done: make(chan struct{})}
	urlc := make(chan string, 1)
	go func() {
		defer close(c.done)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			if u, ok := strings.CutPrefix(line, "spate serve: listening on "); ok {
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
		cmd.Wait()
		t.Fatalf("serve exited before listening:\n%s", c.log())
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("serve did not start:\n%s", c.log())
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
	err := c.cmd.Wait()
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

// readStored returns how often each id occurs in dir, failing on any line
// that is not a complete JSON object.
func readStored(t *testing.T, dir string) map[string]int {
	t.Helper()
	files, err := segment.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	dec, _ := zstd.NewReader(nil)
	defer dec.Close()
	seen := map[string]int{}
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
			var v struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(line, &v); err != nil || v.ID == "" {
				t.Fatalf("%s: bad stored line %q: %v", f.Path, line, err)
			}
			seen[v.ID]++
		}
	}
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

// TestServeOverload sends faster than a deliberately slow writer commits:
// the server must answer 429 with Retry-After, keep its peak RSS under a
// bound, and store every acknowledged line.
func TestServeOverload(t *testing.T) {
	if testing.Short() {
		t.Skip("overload test takes a few seconds")
	}
	dir := t.TempDir()
	srv := startServe(t, dir, "--debug-slow-write", "40ms", "--max-request-size", "1MiB",
		"--max-queue", "2MiB", "--max-inflight", "4MiB")
	var wg sync.WaitGroup
	var clients []*ingestClient
	var retryAfter sync.Map
	deadline := time.Now().Add(2 * time.Second)
	for c := range 8 {
		ic := &ingestClient{url: srv.url, prefix: fmt.Sprintf("c%d", c), codes: map[int]int{},
			client: &http.Client{Timeout: 20 * time.Second}}
		clients = append(clients, ic)
		wg.Go(func() {
			for time.Now().Before(deadline) {
				if err := ic.send(4000); err != nil { // ~400 KiB bodies
					t.Errorf("client %d: %v", c, err)
					return
				}
			}
		})
	}
	// Look for a Retry-After header while the clients run.
	go func() {
		for time.Now().Before(deadline) {
			resp, err := http.Post(srv.url+"/api/v1/ingest", "application/x-ndjson",
				strings.NewReader(strings.Repeat(`{"id":"probe","msg":"`+strings.Repeat("p", 900)+`"}`+"\n", 900)))
			if err == nil {
				if resp.StatusCode == 429 {
					retryAfter.Store(resp.Header.Get("Retry-After"), true)
				}
				resp.Body.Close()
			}
		}
	}()
	wg.Wait()
	hwm := vmHWM(t, srv.cmd.Process.Pid)
	srv.stop(t, syscall.SIGTERM)

	ok, throttled := 0, 0
	for _, c := range clients {
		ok += c.codes[200]
		throttled += c.codes[429]
		for code, n := range c.codes {
			if code != 200 && code != 429 {
				t.Fatalf("client %s got %d × %d", c.prefix, n, code)
			}
		}
	}
	if throttled == 0 || ok == 0 {
		t.Fatalf("want both 200s and 429s under overload, got %d and %d", ok, throttled)
	}
	if _, found := retryAfter.Load("1"); !found {
		t.Fatal("no 429 carried Retry-After: 1")
	}
	// The bound: 4 MiB in flight, a 2 MiB queue (held twice while a batch
	// is written) and the Go runtime; far below what 8 clients could push.
	const bound = 96 << 20
	if hwm > bound {
		t.Fatalf("peak RSS %d MiB, want under %d MiB", hwm>>20, bound>>20)
	}
	seen := readStored(t, dir)
	for _, c := range clients {
		for _, id := range c.acked {
			if seen[id] != 1 {
				t.Fatalf("acknowledged line %s stored %d times", id, seen[id])
			}
		}
		for _, id := range c.sent {
			if seen[id] != 0 {
				t.Fatalf("refused line %s stored %d times", id, seen[id])
			}
		}
	}
	t.Logf("%d requests stored, %d answered 429, peak RSS %.1f MiB", ok, throttled, float64(hwm)/(1<<20))
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
