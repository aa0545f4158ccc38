package cli

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeFiles: spate serve --files alone serves the directory with the
// Cache-Control flags; the file flags without --files are a usage error.
func TestServeFiles(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{"a.txt": "hello", "assets/app.js": "var x;", ".hidden": "SECRET"} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := startServeArgs(t, "--files", dir, "--cache-control", "public, max-age=600", "--immutable", "assets/*")
	for _, c := range []struct {
		path, body, cc string
		code           int
	}{
		{"/files/a.txt", "hello", "public, max-age=600", 200},
		{"/files/assets/app.js", "var x;", "public, max-age=600, immutable", 200},
		{"/files/.hidden", "", "", 404},
		{"/insert/jsonline", "", "", 404},
	} {
		resp, err := http.Get(srv.url + c.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.code || c.code == 200 && (string(b) != c.body || resp.Header.Get("Cache-Control") != c.cc) || strings.Contains(string(b), "SECRET") {
			t.Errorf("%s: %d %q %q", c.path, resp.StatusCode, b, resp.Header.Get("Cache-Control"))
		}
	}
	srv.stop(t, syscall.SIGTERM)

	// The other file flags reach the server: dotfiles, listings, the data
	// directory, the upload cap.
	data := t.TempDir()
	srv = startServeArgs(t, "--files", dir, "--files-dotfiles", "--files-browse", "--data", data, "--files-data", "--uploads", "--uploads-max-size", "1KiB", "--uploads-expire", "90m")
	for _, c := range []struct {
		method, path string
		hdr          []string
		code         int
		body         string
	}{
		{"GET", "/files/.hidden", nil, 200, "SECRET"},
		{"GET", "/files/assets/", []string{"Accept", "application/json"}, 200, `"name":"app.js"`},
		{"GET", "/data/", []string{"Accept", "application/json"}, 200, `[`},
		{"POST", "/uploads/", []string{"Tus-Resumable", "1.0.0", "Upload-Length", "2048"}, 413, ""},
		{"POST", "/uploads/", []string{"Tus-Resumable", "1.0.0", "Upload-Length", "512"}, 201, ""},
	} {
		req, _ := http.NewRequest(c.method, srv.url+c.path, nil)
		for i := 0; i+1 < len(c.hdr); i += 2 {
			req.Header.Set(c.hdr[i], c.hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.code || !strings.Contains(string(b), c.body) {
			t.Errorf("%s %s: %d %q", c.method, c.path, resp.StatusCode, b)
		}
		if c.code == 201 {
			// --uploads-expire: the new upload expires in 90 minutes.
			exp, err := http.ParseTime(resp.Header.Get("Upload-Expires"))
			if d := time.Until(exp); err != nil || d < 89*time.Minute || d > 91*time.Minute {
				t.Errorf("Upload-Expires %q: in %v, want 90m", resp.Header.Get("Upload-Expires"), d)
			}
		}
	}
	srv.stop(t, syscall.SIGTERM)
	for _, args := range [][]string{{"serve"}, {"serve", "--data", dir, "--immutable", "x"}, {"serve", "--files", dir, "--immutable", "[bad"},
		{"serve", "--data", dir, "--uploads"}, {"serve", "--files", dir, "--files-data"}} {
		code, _, stderr := runCLI(t, args...)
		if code == ExitOK {
			t.Errorf("%v: exit 0: %s", args, stderr)
		}
	}
}
