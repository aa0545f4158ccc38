package server

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// syscw reads the write syscalls this process has made (/proc/self/io;
// sendfile(2) counts as one per call, as write(2) does).
func syscw(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skip("no /proc/self/io:", err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "syscw: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	t.Skip("no syscw in /proc/self/io")
	return 0
}

// TestFilesSendfile: a 64 MiB download from /files/ takes a few dozen
// write syscalls (sendfile hands the kernel megabytes at a time), where a
// copy through a buffer takes thousands: the middleware passes
// io.ReaderFrom through to net/http's sendfile path.
func TestFilesSendfile(t *testing.T) {
	dir := t.TempDir()
	data := bytes.Repeat([]byte("spate sendfile!\n"), 4<<20) // 64 MiB
	if err := os.WriteFile(filepath.Join(dir, "big.bin"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, ts := newTestServer(t, Config{FilesDir: dir, DataDir: t.TempDir()})
	get := func(url string) int64 {
		t.Helper()
		before := syscw(t)
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || n != int64(len(data)) || resp.StatusCode != 200 {
			t.Fatalf("%s: %d, %d bytes, %v", url, resp.StatusCode, n, err)
		}
		return syscw(t) - before
	}
	viaFiles := get(ts.URL + "/files/big.bin")
	// The control: the same file behind a plain io.Reader, which hides the
	// *os.File from net/http. (A bufio.Reader would not: its WriteTo hands
	// the file on, and sendfile is used.)
	ctl := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, err := os.Open(filepath.Join(dir, "big.bin"))
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		io.Copy(w, struct{ io.Reader }{f})
	}))
	defer ctl.Close()
	viaBuffer := get(ctl.URL)
	t.Logf("write syscalls for 64 MiB: /files/ %d, through a buffer %d", viaFiles, viaBuffer)
	if viaFiles > 200 || viaBuffer < 1000 {
		t.Errorf("write syscalls: /files/ %d (want < 200, sendfile), buffered copy %d (want > 1000)", viaFiles, viaBuffer)
	}
}

// TestFilesOnly: a server with only a files directory serves /files/ and
// has no data endpoints.
func TestFilesOnly(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{FilesDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer func() { ts.Close(); s.Close() }()
	for _, c := range []struct {
		path string
		code int
		body string
	}{{"/files/a.txt", 200, "hello"}, {"/insert/jsonline", 404, ""}, {"/select/logsql/query?query=*", 404, ""}, {"/readyz", 200, "ready\n"}} {
		resp, err := http.Get(ts.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.code || c.body != "" && string(b) != c.body {
			t.Errorf("%s: %d %q", c.path, resp.StatusCode, b)
		}
	}
	if _, err := New(Config{}); err == nil {
		t.Error("a server with neither directory started")
	}
}

// TestFilesStalledClient: a client that stops reading mid-download is
// disconnected once a piece waits filesWriteTimeout, freeing the handler.
func TestFilesStalledClient(t *testing.T) {
	noLeak(t)
	old := filesWriteTimeout
	filesWriteTimeout = 200 * time.Millisecond
	defer func() { filesWriteTimeout = old }()
	dir := t.TempDir()
	// Text that compresses to about half: its gzip form fills the socket
	// buffers too.
	text := make([]byte, 64<<20)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range text {
		text[i] = "0123456789abcdef"[r.IntN(16)]
	}
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), text, 0o644); err != nil {
		t.Fatal(err)
	}
	s, ts := newTestServer(t, Config{FilesDir: dir, DataDir: t.TempDir()})
	for _, ae := range []string{"identity", "gzip"} { // sendfile, and writes of compressed pieces
		conn, err := net.Dial("tcp", ts.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "GET /files/big.txt HTTP/1.1\r\nHost: x\r\nAccept-Encoding: %s\r\n\r\n", ae)
		waitFor(t, "the download to start", func() bool { return readGauge(t, s, "spate_files_active") == 1 })
		waitFor(t, "the stalled download to be dropped", func() bool { return readGauge(t, s, "spate_files_active") == 0 })
		conn.Close()
	}
}

func readGauge(t *testing.T, s *Server, name string) float64 {
	t.Helper()
	mfs, err := s.m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	return -1
}
