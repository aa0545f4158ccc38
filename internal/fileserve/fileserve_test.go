package fileserve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// tree makes root/ with files, a dotfile, a symlink out of it and a
// secret beside it; it returns root and the content of big.bin.
func tree(t testing.TB) (string, []byte) {
	t.Helper()
	top := t.TempDir()
	root := filepath.Join(top, "root")
	big := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KiB
	files := map[string][]byte{
		"big.bin":         big,
		"notes.txt":       []byte("hello notes\n"),
		"app/v1/main.css": []byte("body{}"),
		"no-ext":          []byte("<html><body>sniffed</body></html>"),
		"Résumé.pdf":      []byte("%PDF-1.4 résumé"),
		".env":            []byte("SECRET dotfile"),
		"sub/.git/config": []byte("SECRET git"),
	}
	for name, data := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(top, "secret.txt"), []byte("SECRET outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(top, "secret.txt"), filepath.Join(root, "link-out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("notes.txt", filepath.Join(root, "link-in")); err != nil {
		t.Fatal(err)
	}
	return root, big
}

func newHandler(t testing.TB, o Options) (*Handler, []byte) {
	t.Helper()
	root, big := tree(t)
	h, err := New(root, "/files/", o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h, big
}

func serve(h http.Handler, method, target string, hdr ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestServeFile(t *testing.T) {
	h, big := newHandler(t, Options{CacheControl: "public, max-age=60", Immutable: []string{"app/*/*.css"}})
	w := serve(h, "GET", "/files/big.bin")
	etag, lm := w.Header().Get("ETag"), w.Header().Get("Last-Modified")
	if w.Code != 200 || !bytes.Equal(w.Body.Bytes(), big) || !strings.HasPrefix(etag, `"`) || lm == "" ||
		w.Header().Get("Accept-Ranges") != "bytes" || w.Header().Get("Cache-Control") != "public, max-age=60" {
		t.Fatalf("GET: %d, %d bytes, headers %v", w.Code, w.Body.Len(), w.Header())
	}
	if w := serve(h, "HEAD", "/files/big.bin"); w.Code != 200 || w.Body.Len() != 0 || w.Header().Get("Content-Length") != "65536" {
		t.Errorf("HEAD: %d %d %v", w.Code, w.Body.Len(), w.Header())
	}
	for _, c := range []struct {
		target, ctype string
	}{{"/files/notes.txt", "text/plain; charset=utf-8"}, {"/files/app/v1/main.css", "text/css; charset=utf-8"}, {"/files/no-ext", "text/html; charset=utf-8"}, {"/files/link-in", "text/plain; charset=utf-8"}} {
		if w := serve(h, "GET", c.target); w.Code != 200 || w.Header().Get("Content-Type") != c.ctype {
			t.Errorf("%s: %d %q, want %q", c.target, w.Code, w.Header().Get("Content-Type"), c.ctype)
		}
	}
	if cc := serve(h, "GET", "/files/app/v1/main.css").Header().Get("Cache-Control"); cc != "public, max-age=60, immutable" {
		t.Errorf("immutable: %q", cc)
	}
	if cd := serve(h, "GET", "/files/notes.txt?download").Header().Get("Content-Disposition"); cd != `attachment; filename="notes.txt"` {
		t.Errorf("disposition: %q", cd)
	}
	if cd := serve(h, "GET", "/files/"+url.PathEscape("Résumé.pdf")).Header().Get("Content-Disposition"); cd != `inline; filename="R_sum_.pdf"; filename*=UTF-8''R%C3%A9sum%C3%A9.pdf` {
		t.Errorf("non-ASCII disposition: %q", cd)
	}

	// Ranges.
	if w := serve(h, "GET", "/files/big.bin", "Range", "bytes=10-19"); w.Code != 206 || w.Body.String() != string(big[10:20]) || w.Header().Get("Content-Range") != "bytes 10-19/65536" {
		t.Errorf("range: %d %q %v", w.Code, w.Body.String(), w.Header())
	}
	if w := serve(h, "GET", "/files/big.bin", "Range", "bytes=-5"); w.Code != 206 || w.Body.String() != string(big[len(big)-5:]) {
		t.Errorf("suffix range: %d %q", w.Code, w.Body.String())
	}
	w = serve(h, "GET", "/files/big.bin", "Range", "bytes=0-1,100-102")
	mt, params, _ := mime.ParseMediaType(w.Header().Get("Content-Type"))
	if w.Code != 206 || mt != "multipart/byteranges" {
		t.Fatalf("multi range: %d %v", w.Code, w.Header())
	}
	mr := multipart.NewReader(w.Body, params["boundary"])
	var parts []string
	for {
		p, err := mr.NextPart()
		if err != nil {
			break
		}
		b, _ := io.ReadAll(p)
		parts = append(parts, string(b))
	}
	if len(parts) != 2 || parts[0] != string(big[0:2]) || parts[1] != string(big[100:103]) {
		t.Errorf("multi range parts: %q", parts)
	}
	if w := serve(h, "GET", "/files/big.bin", "Range", "bytes=70000-"); w.Code != 416 || w.Header().Get("Content-Range") != "bytes */65536" {
		t.Errorf("unsatisfiable: %d %v", w.Code, w.Header())
	}
	many := "bytes=" + strings.Repeat("0-0,", DefaultMaxRanges) + "1-1"
	if w := serve(h, "GET", "/files/big.bin", "Range", many); w.Code != 200 || w.Body.Len() != len(big) {
		t.Errorf("%d ranges: %d, %d bytes; want the whole file", DefaultMaxRanges+1, w.Code, w.Body.Len())
	}

	// Conditional requests.
	old := time.Unix(0, 0).UTC().Format(http.TimeFormat)
	for _, c := range []struct {
		hdr  []string
		code int
	}{
		{[]string{"If-None-Match", etag}, 304},
		{[]string{"If-None-Match", `"other"`}, 200},
		{[]string{"If-Modified-Since", lm}, 304},
		{[]string{"If-Modified-Since", "not a date"}, 200},
		{[]string{"If-Match", `"other"`}, 412},
		{[]string{"If-Match", etag}, 200},
		{[]string{"If-Unmodified-Since", old}, 412},
		{[]string{"Range", "bytes=0-0", "If-Range", etag}, 206},
		{[]string{"Range", "bytes=0-0", "If-Range", `"other"`}, 200},
		{[]string{"Range", "bytes=0-0", "If-Range", lm}, 206},
	} {
		if w := serve(h, "GET", "/files/big.bin", c.hdr...); w.Code != c.code {
			t.Errorf("%v: %d, want %d", c.hdr, w.Code, c.code)
		}
	}
	if w := serve(h, "POST", "/files/big.bin"); w.Code != 405 || w.Header().Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d %v", w.Code, w.Header())
	}
}

// TestRefusedPaths: nothing outside the directory, no dotfile and no
// directory is ever served.
func TestRefusedPaths(t *testing.T) {
	h, _ := newHandler(t, Options{})
	for _, c := range []struct {
		target string
		code   int
	}{
		{"/files/../secret.txt", 404},
		{"/files/%2e%2e/secret.txt", 404},
		{"/files/..%2fsecret.txt", 404},
		{"/files/app%2fv1%2fmain.css", 404},
		{"/files/app%5cv1%5cmain.css", 404},
		{"/files/notes.txt%00.png", 404},
		{"/files//etc/passwd", 404},
		{"/files/link-out", 404},
		{"/files/.env", 404},
		{"/files/sub/.git/config", 404},
		{"/files/./notes.txt", 404},
		{"/files/app", 403},
		{"/files/app/", 404},
		{"/files/", 404},
		{"/files/missing", 404},
	} {
		w := serve(h, "GET", c.target)
		if w.Code != c.code || strings.Contains(w.Body.String(), "SECRET") {
			t.Errorf("%s: %d %q, want %d", c.target, w.Code, w.Body.String(), c.code)
		}
	}
	// With dotfiles allowed, dotfiles inside are served; outside still not.
	hd, _ := newHandler(t, Options{Dotfiles: true})
	if w := serve(hd, "GET", "/files/.env"); w.Code != 200 {
		t.Errorf("dotfile with Dotfiles: %d", w.Code)
	}
	if w := serve(hd, "GET", "/files/link-out"); w.Code != 404 {
		t.Errorf("symlink out with Dotfiles: %d", w.Code)
	}
}

// FuzzPath tries arbitrary paths: no panic, and a SECRET (outside the
// directory, or in a dotfile) is never sent.
func FuzzPath(f *testing.F) {
	for _, s := range []string{"../secret.txt", "%2e%2e/secret.txt", "link-out", ".env", "sub/.git/config", "a/../../secret.txt", "big.bin", "app/v1/main.css", "//secret.txt", "..\\secret.txt"} {
		f.Add(s)
	}
	h, _ := newHandler(f, Options{})
	hb, _ := newHandler(f, Options{Browse: true})
	f.Fuzz(func(t *testing.T, p string) {
		for _, h := range []*Handler{h, hb} {
			for _, u := range []*url.URL{{Path: "/files/" + p}, {Path: "/files/" + p, RawPath: "/files/" + p}} {
				r := &http.Request{Method: "GET", URL: u, Header: http.Header{}}
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if body := w.Body.String(); strings.Contains(body, "SECRET") || strings.Contains(body, ".env") || strings.Contains(body, ".git") || strings.Contains(body, "secret.txt") {
					t.Fatalf("%q (browse %v) sent a secret or its name: %d %q", p, h.opts.Browse, w.Code, body)
				}
			}
		}
	})
}

// BenchmarkServeSmall measures the handler on a 4 KiB file (headers,
// open, stat, ServeContent) without a network.
func BenchmarkServeSmall(b *testing.B) {
	root := b.TempDir()
	data := bytes.Repeat([]byte("x"), 4096)
	if err := os.WriteFile(filepath.Join(root, "small.txt"), data, 0o644); err != nil {
		b.Fatal(err)
	}
	h, err := New(root, "/files/", Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	r := httptest.NewRequest("GET", "/files/small.txt", nil)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 {
			b.Fatal(w.Code)
		}
	}
}

// TestBrowse: with Browse, directories are listed (HTML, or JSON on
// request) without dotfiles or symlinks; names are escaped.
func TestBrowse(t *testing.T) {
	h, _ := newHandler(t, Options{Browse: true})
	if err := os.WriteFile(filepath.Join(h.root.Name(), "<i>x.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := serve(h, "GET", "/files/", "Accept", "application/json")
	var list []dirEntry
	if err := json.Unmarshal(w.Body.Bytes(), &list); w.Code != 200 || err != nil {
		t.Fatalf("JSON listing: %d %v %s", w.Code, err, w.Body.String())
	}
	var names []string
	for _, e := range list {
		names = append(names, e.Name)
	}
	want := []string{"<i>x.txt", "Résumé.pdf", "app", "big.bin", "no-ext", "notes.txt", "sub"}
	if !slices.Equal(names, want) {
		t.Errorf("listing %v, want %v (no dotfiles, no symlinks)", names, want)
	}
	w = serve(h, "GET", "/files/")
	if body := w.Body.String(); w.Code != 200 || strings.Contains(body, "<i>x") || !strings.Contains(body, "&lt;i&gt;x.txt") || !strings.Contains(body, `href="app/"`) || strings.Contains(body, ".env") {
		t.Errorf("HTML listing: %d\n%s", w.Code, body)
	}
	if w := serve(h, "GET", "/files/app"); w.Code != 301 || w.Header().Get("Location") != "/files/app/" {
		t.Errorf("directory without slash: %d %q", w.Code, w.Header().Get("Location"))
	}
	if w := serve(h, "GET", "/files/app/v1/"); w.Code != 200 || !strings.Contains(w.Body.String(), "main.css") || !strings.Contains(w.Body.String(), `href="../"`) {
		t.Errorf("sub listing: %d %s", w.Code, w.Body.String())
	}
	for _, target := range []string{"/files/sub/.git/", "/files/../", "/files/notes.txt/", "/files/link-out/"} {
		if w := serve(h, "GET", target); w.Code != 404 || strings.Contains(w.Body.String(), "SECRET") {
			t.Errorf("%s: %d %s", target, w.Code, w.Body.String())
		}
	}
	// Without Browse, no listing.
	h2, _ := newHandler(t, Options{})
	if w := serve(h2, "GET", "/files/"); w.Code != 404 {
		t.Errorf("listing without Browse: %d", w.Code)
	}
}

// TestHostileHeaders: malformed and hostile Range and conditional headers
// get the documented answer, never a panic or a body larger than the file
// times the ranges allowed.
func TestHostileHeaders(t *testing.T) {
	h, big := newHandler(t, Options{})
	size := len(big)
	thousand := "bytes=" + strings.Repeat("0-10,", 999) + "0-10"
	overlapping := "bytes=0-40000,100-60000,200-65535"
	for _, c := range []struct {
		hdr  []string
		code int
	}{
		{[]string{"Range", thousand}, 200},    // over MaxRanges: the whole file
		{[]string{"Range", overlapping}, 200}, // ranges summing past the size: the whole file (ServeContent)
		// Not valid (RFC 9110 lets a server ignore them, as nginx does):
		// the whole file.
		{[]string{"Range", "bytes=500-100"}, 200}, // reversed
		{[]string{"Range", "bytes=a-b"}, 200},     // not numbers
		{[]string{"Range", "items=0-1"}, 200},     // unknown unit
		{[]string{"Range", "bytes="}, 200},
		{[]string{"Range", "bytes=0-1;2-3"}, 200},
		// Valid but overlapping nothing: 416 with the size.
		{[]string{"Range", "bytes=99999999999999999999-"}, 416}, // past int64
		{[]string{"Range", "bytes=70000-80000"}, 416},
		{[]string{"Range", "bytes=-0"}, 416}, // an empty suffix
		{[]string{"Range", "bytes=-0", "If-Range", `"other"`}, 200},
		// A last-pos past the end (past int64 too) is the end.
		{[]string{"Range", "bytes=0-99999999999999999999"}, 206},
		{[]string{"Range", "bytes=0-0,-1"}, 206},
		{[]string{"Range", "bytes=70000-80000,0-0"}, 206},
		{[]string{"If-Modified-Since", "yesterday"}, 200}, // bad dates are ignored
		{[]string{"If-Unmodified-Since", "never"}, 200},   // as RFC 9110 says
		{[]string{"If-None-Match", `"unclosed`}, 200},
		{[]string{"If-Match", "*"}, 200},
		{[]string{"If-Range", "garbage", "Range", "bytes=0-0"}, 200},
	} {
		w := serve(h, "GET", "/files/big.bin", c.hdr...)
		if w.Code != c.code {
			t.Errorf("%.60v: %d, want %d", c.hdr, w.Code, c.code)
		}
		if w.Code == 416 && w.Header().Get("Content-Range") != "bytes */"+strconv.Itoa(size) {
			t.Errorf("%.60v: 416 with Content-Range %q", c.hdr, w.Header().Get("Content-Range"))
		}
		if w.Body.Len() > 3*size {
			t.Errorf("%.60v: a %d-byte body for a %d-byte file", c.hdr, w.Body.Len(), size)
		}
	}
}

// FuzzRange: normalizeRange never panics, and what it passes on is a set
// of ranges inside the file that http.ServeContent answers with 206.
func FuzzRange(f *testing.F) {
	for _, s := range []string{"bytes=0-9", "bytes=-5", "bytes=5-", "bytes=9-0", "bytes=0-1,3-4,-2", "bytes=99999999999999999999-", "bytes=-0", "Bytes = 1-2", "bytes=,", "bytes=1-1-1"} {
		f.Add(s, int64(100))
	}
	f.Fuzz(func(t *testing.T, h string, size int64) {
		if size < 0 || size > 1<<20 {
			return
		}
		norm, action := normalizeRange(h, size, DefaultMaxRanges)
		if action != rangeServe {
			return
		}
		r := httptest.NewRequest("GET", "/x", nil)
		r.Header.Set("Range", norm)
		w := httptest.NewRecorder()
		http.ServeContent(w, r, "x", time.Time{}, bytes.NewReader(make([]byte, size)))
		if w.Code != 206 && w.Code != 200 {
			t.Fatalf("%q (size %d) -> %q: ServeContent answered %d", h, size, norm, w.Code)
		}
	})
}

// TestSmallCache: a small file's cached answer has the same headers and
// body as the first, and follows the file once smallRecheck has passed.
func TestSmallCache(t *testing.T) {
	h, _ := newHandler(t, Options{CacheControl: "no-cache"})
	first := serve(h, "GET", "/files/notes.txt")
	second := serve(h, "GET", "/files/notes.txt")
	first.Header().Del("Date")
	second.Header().Del("Date")
	if first.Code != 200 || second.Code != 200 || first.Body.String() != second.Body.String() || !reflect.DeepEqual(first.Header(), second.Header()) {
		t.Fatalf("cached answer differs:\n%v %q\n%v %q", first.Header(), first.Body.String(), second.Header(), second.Body.String())
	}
	if n, _ := h.small.Load("notes.txt"); n == nil {
		t.Fatal("notes.txt was not cached")
	}
	// The cached answer's header is shared: adding to one answer's
	// header (Add, Set) must not change the next.
	second.Header().Add("Vary", "Origin")
	if third := serve(h, "GET", "/files/notes.txt"); fmt.Sprint(third.Header()["Vary"]) != "[Accept-Encoding]" {
		t.Fatalf("Vary after an Add to an earlier answer: %q", third.Header()["Vary"])
	}
	if head := serve(h, "HEAD", "/files/notes.txt"); head.Body.Len() != 0 || head.Header().Get("Content-Length") != "12" {
		t.Fatalf("HEAD from the cache: %v %q", head.Header(), head.Body.String())
	}
	if dl := serve(h, "GET", "/files/notes.txt?download"); !strings.HasPrefix(dl.Header().Get("Content-Disposition"), "attachment") {
		t.Fatalf("?download from the cache: %q", dl.Header().Get("Content-Disposition"))
	}
	p := filepath.Join(h.root.Name(), "notes.txt")
	if err := os.WriteFile(p, []byte("changed, and longer than before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := smallRecheck
	defer func() { smallRecheck = old }()
	smallRecheck = time.Hour
	if w := serve(h, "GET", "/files/notes.txt"); w.Body.String() != "hello notes\n" {
		t.Errorf("within smallRecheck: %q", w.Body.String())
	}
	smallRecheck = 0
	if w := serve(h, "GET", "/files/notes.txt"); w.Body.String() != "changed, and longer than before\n" {
		t.Errorf("after smallRecheck: %q", w.Body.String())
	}
	os.Remove(p)
	if w := serve(h, "GET", "/files/notes.txt"); w.Code != 404 {
		t.Errorf("removed: %d %q", w.Code, w.Body.String())
	}
	if n := h.smallBytes.Load(); n < 0 || n > 64<<10 {
		t.Errorf("smallBytes %d", n)
	}
}
