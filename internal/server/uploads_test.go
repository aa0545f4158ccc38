package server

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// tusReq sends one tus request.
func tusReq(t *testing.T, method, url string, body []byte, hdr ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Tus-Resumable", "1.0.0")
	resp := do(t, req, hdr...)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

func meta(name string) string {
	return "filename " + base64.StdEncoding.EncodeToString([]byte(name))
}

// TestUploads: a tus upload sent in pieces, one of them lost, resumes from
// the offset the server has, and the finished file is served at /files/;
// names are sanitised, an existing file is not replaced, the size cap
// gives 413.
func TestUploads(t *testing.T) {
	files := t.TempDir()
	_, ts := newTestServer(t, Config{FilesDir: files, Uploads: true, UploadsMaxSize: 1 << 20})
	data := bytes.Repeat([]byte("resumable upload\n"), 30000) // 510,000 bytes
	resp := tusReq(t, "POST", ts.URL+"/uploads/", nil, "Upload-Length", strconv.Itoa(len(data)), "Upload-Metadata", meta("../../etc/report.txt"))
	loc := resp.Header.Get("Location")
	if resp.StatusCode != 201 || loc == "" {
		t.Fatalf("create: %d %v", resp.StatusCode, resp.Header)
	}
	if loc[0] == '/' {
		loc = ts.URL + loc
	}
	patch := func(off int, piece []byte) *http.Response {
		return tusReq(t, "PATCH", loc, piece, "Upload-Offset", strconv.Itoa(off), "Content-Type", "application/offset+octet-stream")
	}
	if r := patch(0, data[:200000]); r.StatusCode != 204 || r.Header.Get("Upload-Offset") != "200000" {
		t.Fatalf("patch 1: %d %v", r.StatusCode, r.Header)
	}
	// A piece sent at a wrong offset: 409, nothing stored.
	if r := patch(300000, data[300000:400000]); r.StatusCode != 409 {
		t.Fatalf("patch at a wrong offset: %d", r.StatusCode)
	}
	// Resume: ask the offset, send the rest.
	r := tusReq(t, "HEAD", loc, nil)
	off, _ := strconv.Atoi(r.Header.Get("Upload-Offset"))
	if off != 200000 {
		t.Fatalf("HEAD offset %q", r.Header.Get("Upload-Offset"))
	}
	if r := patch(off, data[off:]); r.StatusCode != 204 {
		t.Fatalf("patch 2: %d", r.StatusCode)
	}
	got, err := os.ReadFile(filepath.Join(files, "report.txt"))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("stored: %v, %d bytes", err, len(got))
	}
	dl, err := http.Get(ts.URL + "/files/report.txt")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(dl.Body)
	dl.Body.Close()
	if !bytes.Equal(body, data) {
		t.Fatal("/files/report.txt differs")
	}
	// The same name again: 409 (no --uploads-overwrite).
	if r := tusReq(t, "POST", ts.URL+"/uploads/", nil, "Upload-Length", "5", "Upload-Metadata", meta("report.txt")); r.StatusCode != 409 {
		t.Errorf("existing name: %d", r.StatusCode)
	}
	// Past the size cap: 413.
	if r := tusReq(t, "POST", ts.URL+"/uploads/", nil, "Upload-Length", fmt.Sprint(2<<20)); r.StatusCode != 413 {
		t.Errorf("past the cap: %d", r.StatusCode)
	}
	// The store's own files are never served.
	if r, _ := http.Get(ts.URL + "/files/.uploads/"); r.StatusCode != 404 {
		t.Errorf("/files/.uploads/: %d", r.StatusCode)
	}
}

// TestUploadsOverwriteAndTokens: with UploadsOverwrite a finished upload
// replaces a file; uploads need a token that may write.
func TestUploadsOverwriteAndTokens(t *testing.T) {
	files := t.TempDir()
	os.WriteFile(filepath.Join(files, "a.txt"), []byte("old"), 0o644)
	_, ts := newTestServer(t, Config{FilesDir: files, Uploads: true, UploadsOverwrite: true,
		AuthTokens: []AuthToken{{Token: "w", Perm: PermWrite}, {Token: "r", Perm: PermRead}}})
	if r := tusReq(t, "POST", ts.URL+"/uploads/", nil, "Upload-Length", "3", "Authorization", "Bearer r"); r.StatusCode != 403 {
		t.Errorf("read-only token: %d", r.StatusCode)
	}
	resp := tusReq(t, "POST", ts.URL+"/uploads/", []byte("new"), "Upload-Length", "3", "Upload-Metadata", meta("a.txt"),
		"Authorization", "Bearer w", "Content-Type", "application/offset+octet-stream")
	if resp.StatusCode != 201 {
		t.Fatalf("creation with upload: %d", resp.StatusCode)
	}
	if got, _ := os.ReadFile(filepath.Join(files, "a.txt")); string(got) != "new" {
		t.Errorf("a.txt is %q", got)
	}
}

// TestUploadChecksum: a piece whose Upload-Checksum does not match gets 460
// and stores nothing; a matching one is stored; OPTIONS announces the
// extension.
func TestUploadChecksum(t *testing.T) {
	files := t.TempDir()
	_, ts := newTestServer(t, Config{FilesDir: files, Uploads: true})
	if r := tusReq(t, "OPTIONS", ts.URL+"/uploads/", nil); !strings.Contains(r.Header.Get("Tus-Extension"), "checksum") || r.Header.Get("Tus-Checksum-Algorithm") != "sha1,sha256" {
		t.Errorf("OPTIONS: %v", r.Header)
	}
	data := []byte("checksummed upload, in two pieces\n")
	resp := tusReq(t, "POST", ts.URL+"/uploads/", nil, "Upload-Length", strconv.Itoa(len(data)), "Upload-Metadata", meta("sum.txt"))
	loc := resp.Header.Get("Location")
	if loc[0] == '/' {
		loc = ts.URL + loc
	}
	sum := func(algo string, b []byte) string {
		if algo == "sha1" {
			h := sha1.Sum(b)
			return "sha1 " + base64.StdEncoding.EncodeToString(h[:])
		}
		h := sha256.Sum256(b)
		return "sha256 " + base64.StdEncoding.EncodeToString(h[:])
	}
	patch := func(off int, piece []byte, checksum string) *http.Response {
		return tusReq(t, "PATCH", loc, piece, "Upload-Offset", strconv.Itoa(off), "Content-Type", "application/offset+octet-stream", "Upload-Checksum", checksum)
	}
	if r := patch(0, data[:10], sum("sha256", []byte("something else"))); r.StatusCode != 460 {
		t.Fatalf("bad checksum: %d", r.StatusCode)
	}
	if r := tusReq(t, "HEAD", loc, nil); r.Header.Get("Upload-Offset") != "0" {
		t.Fatalf("after a bad checksum the offset is %q", r.Header.Get("Upload-Offset"))
	}
	if r := patch(0, data[:10], "md5 AAAA"); r.StatusCode != 400 {
		t.Errorf("unknown algorithm: %d", r.StatusCode)
	}
	if r := patch(0, data[:10], sum("sha256", data[:10])); r.StatusCode != 204 {
		t.Fatalf("good sha256: %d", r.StatusCode)
	}
	if r := patch(10, data[10:], sum("sha1", data[10:])); r.StatusCode != 204 {
		t.Fatalf("good sha1: %d", r.StatusCode)
	}
	if got, _ := os.ReadFile(filepath.Join(files, "sum.txt")); !bytes.Equal(got, data) {
		t.Errorf("stored %q", got)
	}
}
