package server

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	tusd "github.com/tus/tusd/v2/pkg/handler"
	"golang.org/x/sys/unix"
)

func TestNoSpace(t *testing.T) {
	is507 := func(err error) bool {
		e, ok := err.(tusd.Error)
		return ok && e.HTTPResponse.StatusCode == http.StatusInsufficientStorage
	}
	if err := noSpace(&fs.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}); !is507(err) {
		t.Errorf("ENOSPC: %v", err)
	}
	if err := noSpace(fmt.Errorf("w: %w", syscall.EDQUOT)); !is507(err) {
		t.Errorf("EDQUOT: %v", err)
	}
	if other := errors.New("x"); noSpace(other) != other || noSpace(nil) != nil {
		t.Error("other errors must pass through")
	}
}

// TestUploadFullDisk fills a small tmpfs: the PATCH that hits the full disk
// gets 507, the bytes it stored are kept and counted in the offset, the
// file is not shown at /files/; once space is freed the client resumes
// from that offset and the file is whole. Needs root (mount).
func TestUploadFullDisk(t *testing.T) {
	files := t.TempDir()
	if err := unix.Mount("tmpfs", files, "tmpfs", 0, "size=2m"); err != nil {
		t.Skipf("cannot mount a tmpfs to fill (needs root): %v", err)
	}
	t.Cleanup(func() { unix.Unmount(files, unix.MNT_DETACH) })
	filler := filepath.Join(files, ".filler")
	if err := os.WriteFile(filler, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	_, ts := newTestServer(t, Config{FilesDir: files, Uploads: true})
	data := bytes.Repeat([]byte("0123456789abcdef"), 100000) // 1.6 MB: more than is free
	r := tusReq(t, "POST", ts.URL+"/uploads/", nil, "Upload-Length", strconv.Itoa(len(data)), "Upload-Metadata", meta("big.bin"))
	loc := r.Header.Get("Location")
	if r.StatusCode != 201 {
		t.Fatalf("create: %d", r.StatusCode)
	}
	if loc[0] == '/' {
		loc = ts.URL + loc
	}
	patch := func(off int) *http.Response {
		return tusReq(t, "PATCH", loc, data[off:], "Upload-Offset", strconv.Itoa(off), "Content-Type", "application/offset+octet-stream")
	}
	if r := patch(0); r.StatusCode != http.StatusInsufficientStorage {
		t.Fatalf("patch onto a full disk: %d, want 507", r.StatusCode)
	}
	off, _ := strconv.Atoi(tusReq(t, "HEAD", loc, nil).Header.Get("Upload-Offset"))
	if off <= 0 || off >= len(data) {
		t.Fatalf("offset after a full disk %d, want part of %d", off, len(data))
	}
	if resp, err := http.Get(ts.URL + "/files/big.bin"); err != nil || resp.StatusCode != 404 {
		t.Fatalf("a half-written upload is served: %v %v", resp.StatusCode, err)
	}
	os.Remove(filler)
	if r := patch(off); r.StatusCode != 204 {
		t.Fatalf("resume after freeing space: %d", r.StatusCode)
	}
	resp, err := http.Get(ts.URL + "/files/big.bin")
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	io.Copy(h, resp.Body)
	resp.Body.Close()
	if want := sha256.Sum256(data); !bytes.Equal(h.Sum(nil), want[:]) {
		t.Fatal("the resumed upload differs from what was sent")
	}
}
