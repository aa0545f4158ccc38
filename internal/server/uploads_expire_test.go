package server

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// age sets the modification times of upload id's files to d ago.
func age(t *testing.T, store, id string, d time.Duration) {
	t.Helper()
	old := time.Now().Add(-d)
	for _, p := range []string{id, id + ".info"} {
		if err := os.Chtimes(filepath.Join(store, p), old, old); err != nil {
			t.Fatal(err)
		}
	}
}

func metrics(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return string(b)
}

// TestUploadExpiration: answers about unfinished uploads carry
// Upload-Expires; an upload idle past --uploads-expire is deleted when asked
// for (410), or by the sweep, also after a restart; finished uploads and
// uploads with a request in flight are left alone.
func TestUploadExpiration(t *testing.T) {
	files := t.TempDir()
	store := filepath.Join(files, uploadsDir)
	_, ts := newTestServer(t, Config{FilesDir: files, Uploads: true, UploadsExpire: time.Hour})

	opts := tusReq(t, "OPTIONS", ts.URL+"/uploads/", nil)
	if ext := opts.Header.Get("Tus-Extension"); !strings.Contains(ext, "expiration") || !strings.Contains(ext, "checksum") || strings.Contains(ext, "concatenation") {
		t.Fatalf("Tus-Extension %q", ext)
	}
	expires := func(r *http.Response) time.Duration {
		t.Helper()
		e, err := http.ParseTime(r.Header.Get("Upload-Expires"))
		if err != nil {
			t.Fatalf("Upload-Expires %q: %v", r.Header.Get("Upload-Expires"), err)
		}
		return time.Until(e)
	}
	create := func(n int) (string, string) {
		t.Helper()
		r := tusReq(t, "POST", ts.URL+"/uploads/", nil, "Upload-Length", strconv.Itoa(n))
		if r.StatusCode != 201 {
			t.Fatalf("create: %d", r.StatusCode)
		}
		if d := expires(r); d < 59*time.Minute || d > time.Hour+time.Second {
			t.Fatalf("creation expires in %v, want about 1h", d)
		}
		loc := r.Header.Get("Location")
		if loc[0] == '/' {
			loc = ts.URL + loc
		}
		return loc, path.Base(loc)
	}
	patch := func(loc string, off int, piece []byte) *http.Response {
		return tusReq(t, "PATCH", loc, piece, "Upload-Offset", strconv.Itoa(off), "Content-Type", "application/offset+octet-stream")
	}

	// An upload in progress: each PATCH moves its expiry; the last one
	// finishes it and has none.
	loc, id := create(10)
	age(t, store, id, 30*time.Minute)
	if r := tusReq(t, "HEAD", loc, nil); r.StatusCode != 200 || expires(r) > 31*time.Minute {
		t.Fatalf("HEAD of an upload idle 30m: %d, expires in %v", r.StatusCode, expires(r))
	}
	r := patch(loc, 0, []byte("01234"))
	if d := expires(r); r.StatusCode != 204 || d < 59*time.Minute {
		t.Fatalf("patch: %d, expires in %v", r.StatusCode, d)
	}
	if r := patch(loc, 5, []byte("56789")); r.StatusCode != 204 || r.Header.Get("Upload-Expires") != "" {
		t.Fatalf("final patch: %d, Upload-Expires %q", r.StatusCode, r.Header.Get("Upload-Expires"))
	}

	// An idle one: asked for after an hour, it is gone.
	loc, id = create(10)
	patch(loc, 0, []byte("abc"))
	age(t, store, id, time.Hour+time.Minute)
	if r := tusReq(t, "PATCH", loc, []byte("def"), "Upload-Offset", "3", "Content-Type", "application/offset+octet-stream"); r.StatusCode != http.StatusGone {
		t.Fatalf("patch of an expired upload: %d, want 410", r.StatusCode)
	}
	for _, p := range []string{id, id + ".info"} {
		if _, err := os.Stat(filepath.Join(store, p)); !os.IsNotExist(err) {
			t.Errorf("%s of an expired upload: %v", p, err)
		}
	}
	if r := tusReq(t, "HEAD", loc, nil); r.StatusCode != 404 {
		t.Fatalf("HEAD after expiry: %d, want 404", r.StatusCode)
	}
	if m := metrics(t, ts.URL); !strings.Contains(m, "spate_uploads_expired_total 1\n") || !strings.Contains(m, "spate_uploads_finished_total 1\n") || !strings.Contains(m, "spate_uploads_finished_bytes_total 10\n") {
		t.Errorf("metrics:\n%s", m)
	}

	// The sweep: idle ones go, fresh ones and busy ones stay.
	e := &expiry{dir: store, ttl: time.Hour, log: slog.New(slog.NewTextHandler(io.Discard, nil)), now: time.Now, busy: map[string]int{}}
	_, idle := create(10)
	_, fresh := create(10)
	_, busy := create(10)
	age(t, store, idle, 2*time.Hour)
	e.acquire(busy)
	age(t, store, busy, 2*time.Hour)
	e.sweep()
	exists := func(id string) bool { _, err := os.Stat(filepath.Join(store, id+".info")); return err == nil }
	if exists(idle) || !exists(fresh) || !exists(busy) {
		t.Fatalf("after a sweep: idle %v, fresh %v, busy %v; want false, true, true", exists(idle), exists(fresh), exists(busy))
	}
	e.release(busy)
	e.sweep()
	if exists(busy) {
		t.Fatal("an idle upload survived a sweep after its request ended")
	}
	if got := (&expiry{ttl: time.Minute}).sweepEvery(); got != 15*time.Second {
		t.Errorf("sweep every %v for 1m", got)
	}

	// After a restart, the first sweep runs at once.
	_, left := create(10)
	age(t, store, left, 2*time.Hour)
	s2, err := New(Config{FilesDir: files, Uploads: true, UploadsExpire: time.Hour, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	for deadline := time.Now().Add(5 * time.Second); exists(left); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("an expired upload left before a restart was not swept")
		}
	}
	if !exists(fresh) {
		t.Fatal("the restart swept a fresh upload")
	}
	if b, err := os.ReadFile(filepath.Join(files, id)); err == nil || bytes.Contains(b, []byte("abc")) {
		t.Fatal("an expired upload was stored as a file")
	}
}

// TestUploadsNeverExpire: UploadsExpire 0 keeps uploads and announces no
// expiration.
func TestUploadsNeverExpire(t *testing.T) {
	files := t.TempDir()
	_, ts := newTestServer(t, Config{FilesDir: files, Uploads: true})
	if ext := tusReq(t, "OPTIONS", ts.URL+"/uploads/", nil).Header.Get("Tus-Extension"); strings.Contains(ext, "expiration") {
		t.Fatalf("Tus-Extension %q", ext)
	}
	r := tusReq(t, "POST", ts.URL+"/uploads/", nil, "Upload-Length", "10")
	if r.StatusCode != 201 || r.Header.Get("Upload-Expires") != "" {
		t.Fatalf("create: %d, Upload-Expires %q", r.StatusCode, r.Header.Get("Upload-Expires"))
	}
	id := path.Base(r.Header.Get("Location"))
	age(t, filepath.Join(files, uploadsDir), id, 1000*time.Hour)
	if r := tusReq(t, "HEAD", ts.URL+"/uploads/"+id, nil); r.StatusCode != 200 {
		t.Fatalf("HEAD of an old upload: %d", r.StatusCode)
	}
}
