package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
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

	"github.com/spate-io/spate/internal/segment"
)

func newTestServer(t *testing.T, cfg Config) (*Server, *httptest.Server) {
	t.Helper()
	if cfg.DataDir == "" {
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

type response struct {
	code   int
	header http.Header
	rep    ingestReport
}

func post(t *testing.T, url string, body []byte, hdr ...string) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
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
		"{\"ts\":\"never\",\"msg\":\"c\"}\n" +
		"{\"msg\":\"d\"}" // no final newline
	r := post(t, ts.URL+"/api/v1/ingest", []byte(body), "Content-Type", "application/x-ndjson")
	if r.code != 200 || r.rep.Accepted != 3 || r.rep.Rejected != 3 {
		t.Fatalf("got %d %+v", r.code, r.rep)
	}
	var lines []int
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
	s, ts := newTestServer(t, Config{MaxRequestBytes: 1 << 20, MaxLineBytes: 1000, AuthTokens: []string{"secret"}})
	auth := []string{"Authorization", "Bearer secret"}
	bomb := gz(bytes.Repeat([]byte(`{"a":1}`+"\n"), 4<<20/8)) // 4 MiB of lines, >1 MiB limit
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
	f("content type", 415, "Content-Type", []byte(`{"a":1}`+"\n"), h("Content-Type", "multipart/form-data; boundary=x")...)
	f("encoding", 415, "Content-Encoding", []byte(`{"a":1}`+"\n"), h("Content-Encoding", "br")...)
	f("truncated gzip", 400, "cannot decompress gzip", gz([]byte(`{"a":1}` + "\n"))[:12], h("Content-Encoding", "gzip")...)
	f("not gzip", 400, "cannot decompress gzip", []byte(`{"a":1}`+"\n"), h("Content-Encoding", "gzip")...)
	f("gzip bomb", 413, "larger than", bomb, h("Content-Encoding", "gzip")...)
	f("big body", 413, "larger than", bytes.Repeat([]byte(`{"a":1}`+"\n"), 2<<20/8), h()...)
	f("long line", 413, "line 2 is", []byte(`{"a":1}`+"\n"+`{"a":"`+strings.Repeat("x", 1000)+`"}`+"\n"), h()...)
	f("tenant", 400, "tenants", []byte(`{"a":1}`+"\n"), h("AccountID", "3")...)
	f("bad param", 400, "extra_fields", []byte(`{"a":1}`+"\n"), h("VL-Extra-Fields", "novalue")...)

	resp, err := http.Get(ts.URL + "/insert/jsonline")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "POST" {
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
		`spate_ingest_requests_total{code="200",path="/api/v1/ingest"} 1`,
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
