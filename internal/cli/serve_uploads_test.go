package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func tusDo(t *testing.T, method, url string, body []byte, hdr ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Tus-Resumable", "1.0.0")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// TestUploadSurvivesKill: an upload half sent when spate serve is killed
// with SIGKILL resumes, after a restart, from the offset the server stored;
// the finished file has the sent bytes' SHA-256.
func TestUploadSurvivesKill(t *testing.T) {
	files := t.TempDir()
	data := randomBytes(3<<20, 7)
	srv := startServeArgs(t, "--files", files, "--uploads")
	resp := tusDo(t, "POST", srv.url+"/uploads/", nil, "Upload-Length", strconv.Itoa(len(data)),
		"Upload-Metadata", "filename "+base64.StdEncoding.EncodeToString([]byte("big.bin")))
	loc := resp.Header.Get("Location")
	if resp.StatusCode != 201 || loc == "" {
		t.Fatalf("create: %d", resp.StatusCode)
	}
	path := loc[strings.Index(loc, "/uploads/"):]
	if r := tusDo(t, "PATCH", srv.url+path, data[:1<<20], "Upload-Offset", "0", "Content-Type", "application/offset+octet-stream"); r.StatusCode != 204 {
		t.Fatalf("patch: %d", r.StatusCode)
	}
	srv.stop(t, syscall.SIGKILL)

	srv = startServeArgs(t, "--files", files, "--uploads")
	defer srv.stop(t, syscall.SIGTERM)
	head := tusDo(t, "HEAD", srv.url+path, nil)
	off, err := strconv.Atoi(head.Header.Get("Upload-Offset"))
	if err != nil || off != 1<<20 {
		t.Fatalf("offset after the restart: %q (%d)", head.Header.Get("Upload-Offset"), head.StatusCode)
	}
	if r := tusDo(t, "PATCH", srv.url+path, data[off:], "Upload-Offset", strconv.Itoa(off), "Content-Type", "application/offset+octet-stream"); r.StatusCode != 204 {
		t.Fatalf("patch after the restart: %d", r.StatusCode)
	}
	got, err := os.ReadFile(filepath.Join(files, "big.bin"))
	if err != nil || sha256.Sum256(got) != sha256.Sum256(data) {
		t.Fatalf("stored file: %v, %d bytes, sha256 differs", err, len(got))
	}
}

// TestTusClients drives the real tus clients against spate serve, each
// interrupted after its first 1 MiB chunk and resumed from the upload's
// URL: tuspy (SPATE_TUS_PYTHON: a python with tuspy installed) and
// tus-js-client (SPATE_TUS_NODE_PATH: a node_modules holding it). CI sets
// both (.ci/run, pinned versions).
func TestTusClients(t *testing.T) {
	py, nodePath := os.Getenv("SPATE_TUS_PYTHON"), os.Getenv("SPATE_TUS_NODE_PATH")
	if py == "" && nodePath == "" {
		t.Skip("SPATE_TUS_PYTHON and SPATE_TUS_NODE_PATH unset: no tus client to drive")
	}
	files := t.TempDir()
	srv := startServeArgs(t, "--files", files, "--uploads")
	defer srv.stop(t, syscall.SIGTERM)
	data := randomBytes(3<<20+12345, 8)
	src := filepath.Join(t.TempDir(), "src.bin")
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}
	scripts := filepath.Join("..", "..", "scripts", "tus")
	run := func(name string, cmd *exec.Cmd, wantOut string) {
		t.Helper()
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), wantOut) || !strings.Contains(string(out), "done") {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
		got, err := os.ReadFile(filepath.Join(files, name))
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%s: stored %d bytes, %v; want the %d sent", name, len(got), err, len(data))
		}
		t.Logf("%s: %s", name, bytes.TrimSpace(out))
	}
	if py != "" {
		run("from-tuspy.bin", exec.Command(py, filepath.Join(scripts, "tuspy_resume.py"), srv.url+"/uploads/", src, "from-tuspy.bin"), "resumed-from 1048576")
	}
	if nodePath != "" {
		cmd := exec.Command("node", filepath.Join(scripts, "tusjs_resume.js"), srv.url+"/uploads/", src, "from-tusjs.bin")
		cmd.Env = append(os.Environ(), "NODE_PATH="+nodePath)
		run("from-tusjs.bin", cmd, "resumed-from-url")
	}
}
