package get

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spate-io/spate/internal/fileserve"
)

// server serves dir's files with fileserve behind a hook that may fail
// requests; it counts the ranged requests.
type server struct {
	*httptest.Server
	ranged atomic.Int64
	fail   atomic.Pointer[func(r *http.Request) int] // status to answer instead, or 0
}

func newServer(t *testing.T, dir string) *server {
	t.Helper()
	h, err := fileserve.New(dir, "/files/", fileserve.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Range") != "" && r.Header.Get("Range") != "bytes=0-0" {
			s.ranged.Add(1)
		}
		if f := s.fail.Load(); f != nil {
			if code := (*f)(r); code != 0 {
				w.Header().Set("Retry-After", "0")
				w.WriteHeader(code)
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { s.Close(); h.Close() })
	return s
}

// cutAfter fails every chunk request after the first n with 500.
func cutAfter(n int64) *func(*http.Request) int {
	var served atomic.Int64
	f := func(r *http.Request) int {
		if r.Header.Get("Range") != "bytes=0-0" && served.Add(1) > n {
			return http.StatusInternalServerError
		}
		return 0
	}
	return &f
}

func randomFile(t *testing.T, dir, name string, size int, seed uint64) []byte {
	t.Helper()
	data := make([]byte, size)
	r := rand.New(rand.NewPCG(seed, seed))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return data
}

func TestDownload(t *testing.T) {
	src := t.TempDir()
	data := randomFile(t, src, "f.bin", 5<<20+123, 1)
	s := newServer(t, src)
	out := filepath.Join(t.TempDir(), "f.bin")
	sum := sha256.Sum256(data)
	res, err := Download(context.Background(), Options{URL: s.URL + "/files/f.bin", Output: out, Connections: 4, ChunkSize: 256 << 10, SHA256: hex.EncodeToString(sum[:])})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	if !bytes.Equal(got, data) || !res.Ranged || res.Size != int64(len(data)) {
		t.Fatalf("%+v, %d bytes", res, len(got))
	}
	if _, err := os.Stat(SideFile(out)); !os.IsNotExist(err) {
		t.Errorf("side file left: %v", err)
	}
	if _, err := Download(context.Background(), Options{URL: s.URL + "/files/f.bin", Output: out, SHA256: strings.Repeat("0", 64)}); err == nil || !strings.Contains(err.Error(), "sha256") {
		t.Errorf("a wrong sha256: %v", err)
	}
}

// TestResume: a download cut off after some chunks fetches, when run
// again, only the chunks it lacks (plus at most one in flight when cut).
func TestResume(t *testing.T) {
	src := t.TempDir()
	data := randomFile(t, src, "f.bin", 4<<20, 2)
	s := newServer(t, src)
	out := filepath.Join(t.TempDir(), "f.bin")
	s.fail.Store(cutAfter(6))
	opts := Options{URL: s.URL + "/files/f.bin", Output: out, Connections: 2, ChunkSize: 256 << 10, Retries: 1}
	if _, err := Download(context.Background(), opts); err == nil {
		t.Fatal("a download cut off succeeded")
	}
	st, err := readState(SideFile(out))
	if err != nil {
		t.Fatal(err)
	}
	missing := 0
	for _, ok := range st.Done {
		if !ok {
			missing++
		}
	}
	s.fail.Store(nil)
	before := s.ranged.Load()
	res, err := Download(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	if !bytes.Equal(got, data) {
		t.Fatal("resumed download differs")
	}
	if n := s.ranged.Load() - before; n > int64(missing)+1 || res.Resumed != len(st.Done)-missing {
		t.Errorf("resume fetched %d chunks for %d missing (resumed %d)", n, missing, res.Resumed)
	}
}

// TestChanged: a file that changed between two runs is fetched anew, never
// mixed.
func TestChanged(t *testing.T) {
	src := t.TempDir()
	randomFile(t, src, "f.bin", 2<<20, 3)
	s := newServer(t, src)
	out := filepath.Join(t.TempDir(), "f.bin")
	s.fail.Store(cutAfter(3))
	opts := Options{URL: s.URL + "/files/f.bin", Output: out, Connections: 1, ChunkSize: 256 << 10, Retries: 1}
	Download(context.Background(), opts)
	s.fail.Store(nil)
	time.Sleep(10 * time.Millisecond)
	data := randomFile(t, src, "f.bin", 2<<20, 4) // same size, new content
	res, err := Download(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	if !bytes.Equal(got, data) || !res.Restarted {
		t.Fatalf("changed file: restarted %v, equal %v", res.Restarted, bytes.Equal(got, data))
	}
}

// TestRetry: 429 and 5xx answers are retried (Retry-After honoured).
func TestRetry(t *testing.T) {
	src := t.TempDir()
	data := randomFile(t, src, "f.bin", 1<<20, 5)
	s := newServer(t, src)
	var n atomic.Int64
	flaky := func(r *http.Request) int {
		switch n.Add(1) % 3 {
		case 1:
			return http.StatusTooManyRequests
		case 2:
			return http.StatusServiceUnavailable
		}
		return 0
	}
	s.fail.Store(&flaky)
	out := filepath.Join(t.TempDir(), "f.bin")
	res, err := Download(context.Background(), Options{URL: s.URL + "/files/f.bin", Output: out, Connections: 2, ChunkSize: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	if !bytes.Equal(got, data) || res.Requests < 10 {
		t.Fatalf("%+v", res)
	}
}

// TestNoRanges: a server that ignores Range gets one plain request.
func TestNoRanges(t *testing.T) {
	data := bytes.Repeat([]byte("no ranges here\n"), 50000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(data) }))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "f")
	res, err := Download(context.Background(), Options{URL: srv.URL, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	if !bytes.Equal(got, data) || res.Ranged || res.Requests != 1 {
		t.Fatalf("%+v, %d bytes", res, len(got))
	}
}
