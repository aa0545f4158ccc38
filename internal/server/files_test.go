package server

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spate-io/spate/internal/fileserve"
	"github.com/spate-io/spate/internal/segment"
)

// TestFilesMetrics: file answers are counted by method and code, their
// bytes by encoding, ranges and 304s on their own.
func TestFilesMetrics(t *testing.T) {
	dir := t.TempDir()
	data := bytes.Repeat([]byte("some text to send\n"), 1000) // 18,000 bytes
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, ts := newTestServer(t, Config{FilesDir: dir, DataDir: t.TempDir()})
	fetch := func(hdr ...string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, ts.URL+"/files/a.txt", nil)
		req.Header.Set("Accept-Encoding", "identity") // Go's client would ask for gzip
		resp := do(t, req, hdr...)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	etag := fetch().Header.Get("ETag")
	fetch("Range", "bytes=0-99")
	fetch("If-None-Match", etag)
	if resp := fetch("Accept-Encoding", "gzip"); resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("gzip: %v", resp.Header)
	}
	resp, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := string(b)
	for _, want := range []string{
		`spate_files_requests_total{code="200",method="GET"} 2`,
		`spate_files_requests_total{code="206",method="GET"} 1`,
		`spate_files_requests_total{code="304",method="GET"} 1`,
		`spate_files_sent_bytes_total{encoding="identity"} 18100`,
		`spate_files_range_requests_total 1`,
		`spate_files_not_modified_total 1`,
		`spate_files_active 0`,
		`spate_files_duration_seconds_count 4`,
		`spate_http_requests_total{code="200",path="/files/"} 2`,
	} {
		if !strings.Contains(m, want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if !strings.Contains(m, `spate_files_sent_bytes_total{encoding="gzip"} `) {
		t.Error("/metrics lacks the gzip bytes")
	}
}

// TestFilesData: with FilesData the data directory's segments are served
// read-only at /data/, without its lock and metadata files, and never to
// a token bound to one tenant.
func TestFilesData(t *testing.T) {
	_, ts := newTestServer(t, Config{FilesData: true, Files: fileserve.Options{Browse: true},
		AuthTokens: []AuthToken{{Token: "all"}, {Token: "t34", Tenant: segment.Tenant{AccountID: 3, ProjectID: 4}, Bound: true}}})
	auth := []string{"Authorization", "Bearer all"}
	if r := post(t, ts.URL+"/insert/jsonline", []byte(`{"ts":"2026-11-22T08:00:00Z","msg":"stored line"}`+"\n"), auth...); r.code != 200 {
		t.Fatal(r.code)
	}
	get := func(path string, hdr ...string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, ts.URL+path, nil)
		resp := do(t, req, hdr...)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := get("/data/0-0/2026-11-22/", append(auth, "Accept", "application/json")...)
	if code != 200 || !strings.Contains(body, `"name":"seg-`) || strings.Contains(body, ".meta") {
		t.Fatalf("listing: %d %s", code, body)
	}
	name := body[strings.Index(body, `"name":"`)+8:]
	name = name[:strings.IndexByte(name, '"')]
	if code, body := get("/data/0-0/2026-11-22/"+name, auth...); code != 200 || !strings.Contains(body, `"msg":"stored line"`) {
		t.Errorf("segment: %d %s", code, body)
	}
	for _, p := range []string{"/data/.lock", "/data/0-0/2026-11-22/.seg-0000000000000000.meta"} {
		if code, _ := get(p, auth...); code != 404 {
			t.Errorf("%s: %d", p, code)
		}
	}
	if code, _ := get("/data/0-0/2026-11-22/"+name, "Authorization", "Bearer t34"); code != 403 {
		t.Errorf("a tenant-bound token: %d, want 403", code)
	}
	if _, err := New(Config{FilesData: true, FilesDir: t.TempDir()}); err == nil {
		t.Error("FilesData without DataDir started")
	}
}

// BenchmarkFilesSmall measures the whole /files/ stack (route, metrics,
// fileserve) on 4 KiB files without a network: "hot" asks for one file
// (always cached), "many" cycles through 5,000 (20 MiB, more than the
// small-file cache holds, so most are read from disk).
func BenchmarkFilesSmall(b *testing.B) {
	dir := b.TempDir()
	data := bytes.Repeat([]byte("0123456789abcdef"), 256)
	const n = 5000
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d.bin", i)), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	s, err := New(Config{FilesDir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	h := s.Handler()
	reqs := make([]*http.Request, n)
	for i := range reqs {
		reqs[i] = httptest.NewRequest("GET", fmt.Sprintf("/files/f%04d.bin", i), nil)
	}
	for _, bc := range []struct {
		name  string
		files int
	}{{"hot", 1}, {"many", n}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, reqs[i%bc.files])
				if w.Code != 200 || w.Body.Len() != len(data) {
					b.Fatalf("%d, %d bytes", w.Code, w.Body.Len())
				}
				i++
			}
		})
	}
}
