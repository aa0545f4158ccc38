package server

import (
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// The tus expiration extension, which tusd does not have: an unfinished
// upload that has received nothing for UploadsExpire is deleted. The
// answers to creation, PATCH and HEAD of an unfinished upload carry
// Upload-Expires (an HTTP date); a request for an upload past that time
// deletes it and gets 410 Gone; and a sweep every expire/4 (at most every
// 10 minutes, at least every second) deletes the ones nobody asks for,
// also those left from before a restart. An upload with a request in
// flight is never swept. Activity is the newest modification time of the
// upload's data and info files, so it survives restarts.

// expiry tracks the uploads' activity. Safe for concurrent use.
type expiry struct {
	dir string // the tus store
	ttl time.Duration
	log *slog.Logger
	now func() time.Time
	// onExpire counts each expired upload.
	onExpire func()

	mu   sync.Mutex
	busy map[string]int // uploads with requests in flight
}

// lastActivity returns when upload id last changed; false if it is not
// an unfinished upload (no info file).
func (e *expiry) lastActivity(id string) (time.Time, bool) {
	info, err := os.Stat(filepath.Join(e.dir, id+".info"))
	if err != nil {
		return time.Time{}, false
	}
	t := info.ModTime()
	if bin, err := os.Stat(filepath.Join(e.dir, id)); err == nil && bin.ModTime().After(t) {
		t = bin.ModTime()
	}
	return t, true
}

// validID reports whether id can name an upload in the store: tusd's IDs
// are hex; anything with a path or a dot is not one.
func validID(id string) bool {
	return id != "" && !strings.ContainsAny(id, `/\.`) && len(id) <= 128
}

// remove deletes upload id's files; it must not be busy.
func (e *expiry) remove(id string, idle time.Duration) {
	size := int64(-1)
	if fi, err := os.Stat(filepath.Join(e.dir, id)); err == nil {
		size = fi.Size()
	}
	var errs []error
	for _, p := range []string{id, id + ".info", id + ".lock", id + ".stop"} {
		if err := os.Remove(filepath.Join(e.dir, p)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		e.log.Warn("cannot delete an expired upload", "id", id, "error", err)
		return
	}
	if e.onExpire != nil {
		e.onExpire()
	}
	e.log.Info("upload expired", "id", id, "bytes_received", size, "idle", idle.Round(time.Second))
}

// acquire marks id busy unless it has expired, which it then deletes;
// it reports whether id may be served. Call release after serving.
func (e *expiry) acquire(id string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.busy[id] == 0 {
		if t, ok := e.lastActivity(id); ok {
			if idle := e.now().Sub(t); idle >= e.ttl {
				e.remove(id, idle)
				return false
			}
		}
	}
	e.busy[id]++
	return true
}

func (e *expiry) release(id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.busy[id]--; e.busy[id] <= 0 {
		delete(e.busy, id)
	}
}

// sweep deletes every unfinished upload idle for ttl or more.
func (e *expiry) sweep() {
	entries, err := os.ReadDir(e.dir)
	if err != nil {
		e.log.Warn("cannot list the unfinished uploads", "error", err)
		return
	}
	now := e.now()
	for _, ent := range entries {
		id, ok := strings.CutSuffix(ent.Name(), ".info")
		if !ok || !validID(id) {
			continue
		}
		e.mu.Lock()
		if e.busy[id] == 0 {
			if t, ok := e.lastActivity(id); ok && now.Sub(t) >= e.ttl {
				e.remove(id, now.Sub(t))
			}
		}
		e.mu.Unlock()
	}
}

// sweepEvery returns the interval between sweeps.
func (e *expiry) sweepEvery() time.Duration {
	return min(max(e.ttl/4, time.Second), 10*time.Minute)
}

// run sweeps until done is closed; the first sweep is at once.
func (e *expiry) run(done <-chan struct{}) {
	t := time.NewTicker(e.sweepEvery())
	defer t.Stop()
	for {
		e.sweep()
		select {
		case <-done:
			return
		case <-t.C:
		}
	}
}

// wrap applies expiry to the tus handler h, which sees paths relative to
// /uploads/ (an upload's ID).
func (e *expiry) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Path
		switch {
		case r.Method == http.MethodPost && id == "":
			h.ServeHTTP(&expiresWriter{ResponseWriter: w, e: e, post: true}, r)
		case (r.Method == http.MethodPatch || r.Method == http.MethodHead) && validID(id):
			if !e.acquire(id) {
				w.Header().Set("Tus-Resumable", "1.0.0")
				http.Error(w, "the upload expired after "+e.ttl.String()+" without data and was deleted; start a new one", http.StatusGone)
				return
			}
			defer e.release(id)
			h.ServeHTTP(&expiresWriter{ResponseWriter: w, e: e, id: id}, r)
		case r.Method == http.MethodDelete && validID(id):
			e.acquire(id) // an expired upload is deleted either way
			defer e.release(id)
			h.ServeHTTP(w, r)
		default:
			h.ServeHTTP(w, r)
		}
	})
}

// expiresWriter adds Upload-Expires to a successful answer about an
// upload that is still unfinished when the answer starts.
type expiresWriter struct {
	http.ResponseWriter
	e    *expiry
	id   string
	post bool
	done bool
}

func (w *expiresWriter) WriteHeader(code int) {
	if !w.done {
		w.done = true
		id := w.id
		if w.post && code == http.StatusCreated {
			id = path.Base(w.Header().Get("Location"))
		}
		if code/100 == 2 && validID(id) {
			if t, ok := w.e.lastActivity(id); ok {
				w.Header().Set("Upload-Expires", t.Add(w.e.ttl).UTC().Format(http.TimeFormat))
			}
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *expiresWriter) Write(p []byte) (int, error) {
	if !w.done {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(p)
}

func (w *expiresWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
