package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/spate-io/spate/internal/ingest"
	"github.com/spate-io/spate/internal/segment"
)

func newTestServer(t *testing.T, cfg Config) (*Server, *httptest.Server) {
	t.Helper()
	if cfg.DataDir == "" && len(cfg.SelectPeers) == 0 {
		cfg.DataDir = t.TempDir()
	}
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.Now = func() time.Time { return time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC) }
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		ts.Close()
		s.Close()
	})
	return s, ts
}

// do sends req with the headers hdr (name, value, ...).
func do(t *testing.T, req *http.Request, hdr ...string) *http.Response {
	t.Helper()
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

type response struct {
	code   int
	header http.Header
	rep    insertReport
}

func post(t *testing.T, url string, body []byte, hdr ...string) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp := do(t, req, hdr...)
	defer resp.Body.Close()
	var r response
	r.code, r.header = resp.StatusCode, resp.Header
	if err := json.NewDecoder(resp.Body).Decode(&r.rep); err != nil {
		t.Fatalf("response body is not JSON: %v", err)
	}
	return r
}

// storedLines closes s and returns every line in its data directory,
// decompressing sealed segments.
func storedLines(t *testing.T, s *Server) []string {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	files, err := segment.List(s.Store().Dir())
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(s.Store().Dir(), f.Path))
		if err != nil {
			t.Fatal(err)
		}
		if f.Compressed {
			d, _ := zstd.NewReader(nil)
			if data, err = d.DecodeAll(data, nil); err != nil {
				t.Fatal(err)
			}
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
	}
	return lines
}

func gz(data []byte) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write(data)
	w.Close()
	return b.Bytes()
}

func TestIngestStoresGoodLines(t *testing.T) {
	s, ts := newTestServer(t, Config{})
	body := "{\"ts\":\"2026-01-02T03:04:05Z\",\"msg\":\"a\"}\n" +
		"not json\n" +
		"\n" +
		"{\"msg\":\"b\"}\r\n" +
		"{\"msg\":\"\xff\"}\n" +
		"{\"_time\":\"never\",\"msg\":\"c\"}\n" +
		"{\"msg\":\"d\"}" // no final newline
	r := post(t, ts.URL+"/api/v1/ingest", []byte(body), "Content-Type", "application/x-ndjson")
	if r.code != 200 || r.rep.Accepted != 3 || r.rep.Rejected != 3 {
		t.Fatalf("got %d %+v", r.code, r.rep)
	}
	var lines []int64
	for _, e := range r.rep.Errors {
		lines = append(lines, e.Line)
	}
	if fmt.Sprint(lines) != "[2 5 6]" {
		t.Fatalf("error lines %v, want [2 5 6]: %+v", lines, r.rep.Errors)
	}
	if !strings.Contains(r.rep.Errors[1].Error, "invalid UTF-8") || !strings.Contains(r.rep.Errors[2].Error, `"never"`) {
		t.Fatalf("errors %+v", r.rep.Errors)
	}
	// The same through the VictoriaLogs path, gzip and zstd.
	r = post(t, ts.URL+"/insert/jsonline", gz([]byte(`{"msg":"e"}`+"\n")), "Content-Encoding", "gzip")
	if r.code != 200 || r.rep.Accepted != 1 {
		t.Fatalf("gzip: %d %+v", r.code, r.rep)
	}
	enc, _ := zstd.NewWriter(nil)
	r = post(t, ts.URL+"/insert/jsonline?_msg_field=log", enc.EncodeAll([]byte(`{"log":"f"}`+"\n"), nil), "Content-Encoding", "zstd")
	if r.code != 200 || r.rep.Accepted != 1 {
		t.Fatalf("zstd: %d %+v", r.code, r.rep)
	}
	got := storedLines(t, s)
	sort.Strings(got)
	want := []string{
		`{"_time":"2026-11-22T10:00:00Z","_msg":"f"}`,
		`{"_time":"2026-11-22T10:00:00Z","msg":"b"}`,
		`{"_time":"2026-11-22T10:00:00Z","msg":"d"}`,
		`{"_time":"2026-11-22T10:00:00Z","msg":"e"}`,
		`{"ts":"2026-01-02T03:04:05Z","msg":"a"}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("stored:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestIngestBadRequests: each bad request gets its documented status and
// stores nothing; a good request afterwards is stored alone.
func TestIngestBadRequests(t *testing.T) {
	s, ts := newTestServer(t, Config{MaxRequestBytes: 1 << 20, Ingest: ingest.Config{MaxLineBytes: 1000}, AuthTokens: []AuthToken{{Token: "secret"}}})
	auth := []string{"Authorization", "Bearer secret"}
	junkBomb := gz(bytes.Repeat([]byte("\x00"), 8<<20)) // no newline in 8 MiB of decoded zeros
	f := func(name string, code int, wantErr string, body []byte, hdr ...string) {
		t.Helper()
		r := post(t, ts.URL+"/insert/jsonline", body, hdr...)
		if r.code != code || !strings.Contains(r.rep.Error, wantErr) || r.rep.Accepted != 0 {
			t.Fatalf("%s: got %d %+v, want %d with %q", name, r.code, r.rep, code, wantErr)
		}
	}
	h := func(kv ...string) []string { return append(append([]string{}, auth...), kv...) }
	f("no token", 401, "token", []byte(`{"a":1}`+"\n"))
	f("wrong token", 401, "token", []byte(`{"a":1}`+"\n"), "Authorization", "Bearer nope")
	f("empty body", 400, "empty body", nil, h()...)
	f("blank lines", 400, "empty body", []byte("\n\n  \n"), h()...)
	f("all bad", 400, "no valid lines", []byte("x\ny\n"), h()...)
	f("not ndjson", 400, "no valid lines", []byte("<html><body>hello</body></html>"), h()...)
	f("content type", 415, "Content-Type", []byte(`{"a":1}`+"\n"), h("Content-Type", "multipart/form-data; boundary=x")...)
	f("encoding", 415, "Content-Encoding", []byte(`{"a":1}`+"\n"), h("Content-Encoding", "br")...)
	f("truncated gzip", 400, "cannot decompress gzip", gz([]byte(`{"a":1}` + "\n"))[:12], h("Content-Encoding", "gzip")...)
	f("not gzip", 400, "cannot decompress gzip", []byte(`{"a":1}`+"\n"), h("Content-Encoding", "gzip")...)
	zenc, _ := zstd.NewWriter(nil)
	zbody := zenc.EncodeAll([]byte(`{"a":1}`+"\n"), nil)
	f("truncated zstd", 400, "cannot decompress zstd", zbody[:len(zbody)-3], h("Content-Encoding", "zstd")...)
	f("not zstd", 400, "cannot decompress zstd", []byte(`{"a":1}`+"\n"), h("Content-Encoding", "zstd")...)
	f("gzip bomb", 413, "larger than --max-request-size", junkBomb, h("Content-Encoding", "gzip")...)
	f("big body", 413, "more than --max-request-size", bytes.Repeat([]byte(`{"a":1}`+"\n"), 2<<20/8), h()...)
	f("bad tenant", 400, "header AccountID", []byte(`{"a":1}`+"\n"), h("AccountID", "x")...)
	f("bad project", 400, "header ProjectID", []byte(`{"a":1}`+"\n"), h("ProjectID", "-1")...)
	f("bad param", 400, "extra_fields", []byte(`{"a":1}`+"\n"), h("VL-Extra-Fields", "novalue")...)

	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/insert/jsonline", nil)
	req.Header.Set(auth[0], auth[1])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "POST, PUT" {
		t.Fatalf("GET: %d", resp.StatusCode)
	}
	r := post(t, ts.URL+"/api/v1/ingest", []byte(`{"ok":1}`+"\n"), h()...)
	if r.code != 200 || r.rep.Accepted != 1 {
		t.Fatalf("good request: %d %+v", r.code, r.rep)
	}
	if got := storedLines(t, s); len(got) != 1 || !strings.Contains(got[0], `"ok":1`) {
		t.Fatalf("stored %q, want only the good request", got)
	}
}

// TestIngestTruncatedCompressed: a compressed body cut short keeps the
// complete lines it decoded, from the first, and the answer says how many.
func TestIngestTruncatedCompressed(t *testing.T) {
	s, ts := newTestServer(t, Config{})
	zenc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
	accepted := map[string]int64{}
	for _, enc := range []string{"gzip", "zstd"} {
		body := genLines(enc, 0, 20000)
		data := gz(body)
		if enc == "zstd" {
			data = zenc.EncodeAll(body, nil)
		}
		r := post(t, ts.URL+"/insert/jsonline", data[:len(data)*2/3], "Content-Encoding", enc)
		if r.code != 400 || !strings.Contains(r.rep.Error, "cannot decompress "+enc) || r.rep.Accepted == 0 ||
			r.rep.Accepted >= 20000 || r.rep.Lines != r.rep.Accepted || !strings.Contains(r.rep.Error, fmt.Sprintf("the first %d lines", r.rep.Lines)) {
			t.Fatalf("%s: %d %+v", enc, r.code, r.rep)
		}
		accepted[enc] = r.rep.Accepted
	}
	seen := map[string]int{}
	for _, l := range storedLines(t, s) {
		var v struct{ ID string }
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatal(err)
		}
		seen[v.ID]++
	}
	for enc, n := range accepted {
		for i := range n {
			if id := fmt.Sprintf("%s-%d", enc, i); seen[id] != 1 {
				t.Fatalf("%s: line %s stored %d times", enc, id, seen[id])
			}
		}
	}
	if len(seen) != int(accepted["gzip"]+accepted["zstd"]) {
		t.Fatalf("stored %d lines, answered %v", len(seen), accepted)
	}
}

// TestIngestLongLine: a line over --max-line-size is rejected and named;
// the lines around it are stored.
func TestIngestLongLine(t *testing.T) {
	s, ts := newTestServer(t, Config{Ingest: ingest.Config{MaxLineBytes: 1000}})
	body := `{"a":1}` + "\n" + `{"a":"` + strings.Repeat("x", 5000) + `"}` + "\n" + `{"a":3}` + "\n"
	r := post(t, ts.URL+"/insert/jsonline", []byte(body))
	if r.code != 200 || r.rep.Accepted != 2 || r.rep.Rejected != 1 || r.rep.Lines != 3 || len(r.rep.Errors) != 1 ||
		r.rep.Errors[0].Line != 2 || !strings.Contains(r.rep.Errors[0].Error, "line is 5008 bytes, more than the limit of 1000") {
		t.Fatalf("%d %+v", r.code, r.rep)
	}
	if got := storedLines(t, s); len(got) != 2 {
		t.Fatalf("stored %q", got)
	}
}

// TestIngestGzipBombValid: a compressed body that expands past
// --max-request-size stops there with 413; the lines before the limit are
// stored and counted in the answer.
func TestIngestGzipBombValid(t *testing.T) {
	s, ts := newTestServer(t, Config{MaxRequestBytes: 1 << 20})
	body := gz(bytes.Repeat([]byte(`{"a":1}`+"\n"), 8<<20/8)) // 8 MiB of lines
	r := post(t, ts.URL+"/insert/jsonline", body, "Content-Encoding", "gzip")
	if r.code != 413 || r.rep.Accepted != 1<<20/8 || r.rep.Lines != r.rep.Accepted || !strings.Contains(r.rep.Error, "the first 131072 lines") {
		t.Fatalf("%d %+v", r.code, r.rep)
	}
	if got := storedLines(t, s); len(got) != 1<<20/8 {
		t.Fatalf("stored %d lines", len(got))
	}
}

// TestIngestConcurrent: many clients, every acknowledged line stored
// exactly once.
func TestIngestConcurrent(t *testing.T) {
	s, ts := newTestServer(t, Config{Segment: segment.Options{MaxSegmentBytes: 64 << 10}})
	const clients, reqs, perReq = 6, 20, 50
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for r := range reqs {
				var b bytes.Buffer
				for l := range perReq {
					fmt.Fprintf(&b, `{"ts":"2026-01-0%dT00:00:00Z","id":"%d-%d-%d"}`+"\n", 1+l%3, c, r, l)
				}
				resp := post(t, ts.URL+"/insert/jsonline", b.Bytes())
				if resp.code != 200 || resp.rep.Accepted != perReq {
					t.Errorf("client %d: %d %+v", c, resp.code, resp.rep)
					return
				}
			}
		})
	}
	wg.Wait()
	seen := map[string]int{}
	for _, l := range storedLines(t, s) {
		var v struct{ ID string }
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("stored line %q: %v", l, err)
		}
		seen[v.ID]++
	}
	if len(seen) != clients*reqs*perReq {
		t.Fatalf("%d distinct lines, want %d", len(seen), clients*reqs*perReq)
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("line %s stored %d times", id, n)
		}
	}
}

func TestHealthAndMetrics(t *testing.T) {
	s, ts := newTestServer(t, Config{})
	post(t, ts.URL+"/api/v1/ingest", []byte(`{"a":1}`+"\nbad\n"))
	get := func(path string) (int, string) {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if c, b := get("/healthz"); c != 200 || b != "ok\n" {
		t.Fatalf("healthz %d %q", c, b)
	}
	if c, _ := get("/readyz"); c != 200 {
		t.Fatalf("readyz %d", c)
	}
	_, m := get("/metrics")
	for _, want := range []string{
		`spate_ingest_lines_total{result="accepted"} 1`,
		`spate_ingest_lines_total{result="rejected"} 1`,
		`spate_http_requests_total{code="200",path="/api/v1/ingest"} 1`,
		`spate_fsync_seconds_count 1`,
		`spate_queue_bytes 0`,
		`process_resident_memory_bytes`,
		`process_major_pagefaults_total`,
	} {
		if !strings.Contains(m, want) {
			t.Fatalf("metrics lack %q:\n%s", want, m)
		}
	}
	s.Close()
	if c, _ := get("/readyz"); c != 503 {
		t.Fatalf("readyz after Close: %d", c)
	}
	if r := post(t, ts.URL+"/api/v1/ingest", []byte(`{"a":1}`+"\n")); r.code != 503 {
		t.Fatalf("ingest after Close: %d", r.code)
	}
}

// TestIngestDebug: debug=1 checks and reports the lines but stores none.
func TestIngestDebug(t *testing.T) {
	s, ts := newTestServer(t, Config{})
	r := post(t, ts.URL+"/insert/jsonline?debug=1", []byte(`{"a":1}`+"\nbad\n"))
	if r.code != 200 || !r.rep.Debug || r.rep.Accepted != 1 || r.rep.Rejected != 1 {
		t.Fatalf("debug: %d %+v", r.code, r.rep)
	}
	if got := storedLines(t, s); len(got) != 0 {
		t.Fatalf("debug stored %q", got)
	}
}

// genLines returns n numbered lines with a time field.
func genLines(prefix string, from, n int) []byte {
	var b bytes.Buffer
	for i := from; i < from+n; i++ {
		fmt.Fprintf(&b, `{"ts":"2026-01-02T03:04:05Z","id":"%s-%d","msg":"%s"}`+"\n", prefix, i, strings.Repeat("m", i%50))
	}
	return b.Bytes()
}

// TestIngestStream: a chunked body of unknown length, many chunks long,
// sent with PUT as curl -T does, is stored whole and in order, and the
// chunks in flight stay within the memory bound.
func TestIngestStream(t *testing.T) {
	s, ts := newTestServer(t, Config{Ingest: ingest.Config{ChunkBytes: 64 << 10, MaxLineBytes: 1 << 10, MemoryBytes: 512 << 10}})
	const n = 100_000
	body := genLines("s", 0, n)
	pr, pw := io.Pipe()
	go func() {
		for rest := body; len(rest) > 0; {
			k := min(len(rest), 7777)
			pw.Write(rest[:k])
			rest = rest[k:]
		}
		pw.Close()
	}()
	req, _ := http.NewRequest(http.MethodPut, ts.URL+"/api/v1/ingest", pr)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var rep insertReport
	json.NewDecoder(resp.Body).Decode(&rep)
	resp.Body.Close()
	if resp.StatusCode != 200 || rep.Accepted != n || rep.Lines != n {
		t.Fatalf("%d %+v", resp.StatusCode, rep)
	}
	got := storedLines(t, s)
	if len(got) != n {
		t.Fatalf("stored %d lines, want %d", len(got), n)
	}
	for i, l := range got {
		if want := fmt.Sprintf(`"id":"s-%d"`, i); !strings.Contains(l, want) {
			t.Fatalf("line %d is %q, want %s: out of order", i, l, want)
		}
	}
	if u := s.pipe.MemoryUsed(); u != 0 {
		t.Fatalf("memory still reserved: %d", u)
	}
}

// rawRequest opens a connection to ts and sends the head of a request
// with the given body length header ("Content-Length: N" or chunked).
func rawRequest(t *testing.T, ts *httptest.Server, method, path, lengthHeader string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\n%s\r\n\r\n", method, path, lengthHeader)
	return c
}

// readAnswer reads one HTTP answer from c.
func readAnswer(t *testing.T, c net.Conn) (*http.Response, insertReport) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	var rep insertReport
	json.NewDecoder(resp.Body).Decode(&rep)
	resp.Body.Close()
	return resp, rep
}

// TestIngestClientGone: a client that disconnects midway leaves its
// complete lines stored (chunk by chunk) and its partial line dropped.
func TestIngestClientGone(t *testing.T) {
	s, ts := newTestServer(t, Config{Ingest: ingest.Config{ChunkBytes: 4 << 10, MaxLineBytes: 1 << 10}})
	c := rawRequest(t, ts, "POST", "/insert/jsonline", "Content-Length: 10000000")
	c.Write(genLines("g", 0, 1000))
	c.Write([]byte(`{"ts":"2026-01-02T03:04:05Z","id":"partial`))
	time.Sleep(100 * time.Millisecond)
	c.Close()
	waitFor(t, "the lines stored", func() bool { return s.Store().Stats().LinesWritten == 1000 })
	got := storedLines(t, s)
	if len(got) != 1000 || !strings.Contains(got[999], `"g-999"`) {
		t.Fatalf("stored %d lines, last %q", len(got), got[len(got)-1])
	}
}

// TestIngestStall: a client that stops sending is cut off after
// ReadTimeout with 408; its complete lines are stored.
func TestIngestStall(t *testing.T) {
	s, ts := newTestServer(t, Config{ReadTimeout: 300 * time.Millisecond})
	c := rawRequest(t, ts, "POST", "/insert/jsonline", "Transfer-Encoding: chunked")
	body := genLines("st", 0, 10)
	fmt.Fprintf(c, "%x\r\n%s\r\n", len(body), body)
	start := time.Now()
	resp, rep := readAnswer(t, c)
	if resp.StatusCode != 408 || rep.Accepted != 10 || !strings.Contains(rep.Error, "sent nothing for --read-timeout=300ms") {
		t.Fatalf("%d %+v", resp.StatusCode, rep)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the stall was cut off after %v", d)
	}
	if got := storedLines(t, s); len(got) != 10 {
		t.Fatalf("stored %d lines", len(got))
	}
}

// TestIngest429Readable: a request that finds no memory gets 429 with
// Retry-After before its body is read; a client that sends the whole body
// first still reads the answer, the connection stays usable, and nothing
// of the refused body is stored. A client that asked "Expect:
// 100-continue" is answered without sending its body.
func TestIngest429Readable(t *testing.T) {
	s, ts := newTestServer(t, Config{Ingest: ingest.Config{ChunkBytes: 64 << 10, MaxLineBytes: 1 << 10, MemoryBytes: 128 << 10}})
	// A stalled request holds all the memory.
	hold := rawRequest(t, ts, "POST", "/insert/jsonline", "Content-Length: 100000000")
	hold.Write(genLines("hold", 0, 10))
	waitFor(t, "the memory taken", func() bool { return s.pipe.MemoryUsed() == 128<<10 })

	// A raw client that writes all of a 4 MiB body before reading.
	big := genLines("big", 0, 40000)
	c := rawRequest(t, ts, "POST", "/insert/jsonline", fmt.Sprintf("Content-Length: %d", len(big)))
	if _, err := c.Write(big); err != nil {
		t.Fatalf("the server stopped reading the body: %v", err)
	}
	resp, rep := readAnswer(t, c)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" || rep.Accepted != 0 || !strings.Contains(rep.Error, "retry later") {
		t.Fatalf("%d %v %+v", resp.StatusCode, resp.Header, rep)
	}
	// The connection is still in sync: a second request on it is answered.
	fmt.Fprintf(c, "POST /insert/jsonline HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
	if resp, _ := readAnswer(t, c); resp.StatusCode != 429 {
		t.Fatalf("second request on the connection: %d", resp.StatusCode)
	}

	// Go's client, which reads while it sends, gets the 429 too.
	r := post(t, ts.URL+"/insert/jsonline", big)
	if r.code != 429 || r.header.Get("Retry-After") != "1" {
		t.Fatalf("Go client: %d", r.code)
	}

	// Expect: 100-continue: answered at once, the body never sent.
	e := rawRequest(t, ts, "POST", "/insert/jsonline", fmt.Sprintf("Content-Length: %d\r\nExpect: 100-continue", len(big)))
	if resp, _ := readAnswer(t, e); resp.StatusCode != 429 {
		t.Fatalf("Expect: 100-continue: %d", resp.StatusCode)
	}

	hold.Close()
	waitFor(t, "the memory back", func() bool { return s.pipe.MemoryUsed() == 0 })
	if r := post(t, ts.URL+"/insert/jsonline", big); r.code != 200 || r.rep.Accepted != 40000 {
		t.Fatalf("after the stall: %d %+v", r.code, r.rep)
	}
	if got := storedLines(t, s); len(got) != 40010 {
		t.Fatalf("stored %d lines, want 40010 (the held request's 10 and the last one)", len(got))
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestIngestTenants: the AccountID and ProjectID headers select the
// tenant, whose lines are stored apart; no headers mean 0:0.
func TestIngestTenants(t *testing.T) {
	s, ts := newTestServer(t, Config{})
	for _, h := range [][]string{nil, {"AccountID", "7", "ProjectID", "8"}, {"AccountID", "7"}, {"ProjectID", "0", "AccountID", "0"}} {
		if r := post(t, ts.URL+"/insert/jsonline", []byte(fmt.Sprintf(`{"h":%q}`, strings.Join(h, ","))+"\n"), h...); r.code != 200 {
			t.Fatalf("%v: %d %+v", h, r.code, r.rep)
		}
	}
	s.Close()
	files, err := segment.List(s.Store().Dir())
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]int{}
	for _, f := range files {
		by[f.Tenant.String()+" "+strings.SplitN(f.Path, "/", 2)[0]]++
	}
	if fmt.Sprint(by) != "map[0:0 0-0:1 7:0 7-0:1 7:8 7-8:1]" {
		t.Fatalf("segments by tenant: %v", by)
	}
}
