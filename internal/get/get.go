// Package get downloads one URL to a file with parallel ranged requests,
// as `spate get` does: the file is cut into chunks fetched by N
// connections at once and written in place; a side file (FILE.spate-get)
// records the finished chunks, so a download that was interrupted fetches
// only what it lacks when run again. Every ranged request carries If-Range
// with the file's ETag: a file that changed on the server starts over
// instead of mixing versions. Errors, 5xx and 429 are retried with backoff
// (Retry-After honoured). A server without ranges gets one plain request.
package get

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a download.
type Options struct {
	URL, Output string
	// Connections fetch chunks at once (default 4); ChunkSize is the bytes
	// of one ranged request (default 4 MiB).
	Connections int
	ChunkSize   int64
	// SHA256, if set, is the hex digest the file must have.
	SHA256 string
	// Retries is how many times one request is tried again after an error,
	// a 5xx or a 429 (default 5).
	Retries int
	// Client is the HTTP client; nil means a default one.
	Client *http.Client
	// Progress, if set, is called about every 200 ms with the bytes done
	// and the total (-1 when unknown).
	Progress func(done, total int64)
}

// Result says what a download did.
type Result struct {
	Size      int64
	Ranged    bool  // fetched in ranged chunks (else one plain request)
	Requests  int64 // ranged or plain GETs made, retries included
	Fetched   int64 // body bytes received
	Resumed   int   // chunks found done in the side file
	Restarted bool  // the file changed on the server and was fetched anew
}

// ErrChanged is the error of a chunk whose If-Range did not hold.
var ErrChanged = errors.New("the file changed on the server")

// state is the side file: what is being fetched and which chunks are done.
type state struct {
	URL   string `json:"url"`
	ETag  string `json:"etag"`
	Size  int64  `json:"size"`
	Chunk int64  `json:"chunk"`
	Done  []bool `json:"done"`
}

// SideFile is the name of the side file of output.
func SideFile(output string) string { return output + ".spate-get" }

// Download fetches o.URL into o.Output.
func Download(ctx context.Context, o Options) (Result, error) {
	if o.Connections <= 0 {
		o.Connections = 4
	}
	if o.ChunkSize <= 0 {
		o.ChunkSize = 4 << 20
	}
	if o.Retries <= 0 {
		o.Retries = 5
	}
	if o.Client == nil {
		o.Client = &http.Client{}
	}
	d := &downloader{o: o}
	res, err := d.run(ctx)
	if errors.Is(err, ErrChanged) {
		// Start over, once, with the new version.
		os.Remove(SideFile(o.Output))
		d = &downloader{o: o}
		res, err = d.run(ctx)
		res.Restarted = true
	}
	if err != nil {
		return res, err
	}
	if o.SHA256 != "" {
		if err := checkSHA256(o.Output, o.SHA256); err != nil {
			return res, err
		}
	}
	return res, nil
}

type downloader struct {
	o        Options
	requests atomic.Int64
	fetched  atomic.Int64
}

func (d *downloader) run(ctx context.Context) (Result, error) {
	o := d.o
	// Probe: the first byte tells the size, the ETag and whether ranges work.
	resp, err := d.do(ctx, func() (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.URL, nil)
		if err == nil {
			req.Header.Set("Range", "bytes=0-0")
			req.Header.Set("Accept-Encoding", "identity")
		}
		return req, err
	})
	if err != nil {
		return d.result(Result{}), err
	}
	size, ranged := int64(-1), false
	if resp.StatusCode == http.StatusPartialContent {
		if _, tot, ok := strings.Cut(resp.Header.Get("Content-Range"), "/"); ok {
			if n, err := strconv.ParseInt(tot, 10, 64); err == nil {
				size, ranged = n, true
			}
		}
	}
	etag := resp.Header.Get("ETag")
	if !ranged {
		// No ranges: this answer is the whole file.
		defer resp.Body.Close()
		return d.result(Result{Size: max(size, 0)}), d.plain(resp)
	}
	resp.Body.Close()
	if strings.HasPrefix(etag, "W/") {
		etag = "" // If-Range needs a strong validator
	}

	n := int((size + o.ChunkSize - 1) / o.ChunkSize)
	st := state{URL: o.URL, ETag: etag, Size: size, Chunk: o.ChunkSize, Done: make([]bool, n)}
	resumed := 0
	if old, err := readState(SideFile(o.Output)); err == nil && old.URL == st.URL && old.Size == st.Size && old.Chunk == st.Chunk && len(old.Done) == n {
		if old.ETag != etag || etag == "" {
			return d.result(Result{Size: size, Ranged: true}), fmt.Errorf("%w: its ETag was %s, is %s", ErrChanged, old.ETag, etag)
		}
		st.Done = old.Done
		for _, ok := range st.Done {
			if ok {
				resumed++
			}
		}
	}
	f, err := os.OpenFile(o.Output, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return d.result(Result{}), fmt.Errorf("cannot write the output: %w", err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		return d.result(Result{}), fmt.Errorf("cannot size the output: %w", err)
	}
	if err := writeState(SideFile(o.Output), &st); err != nil {
		return d.result(Result{}), err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex // guards st.Done and the side file
	var firstErr error
	todo := make(chan int)
	var wg sync.WaitGroup
	for range o.Connections {
		wg.Go(func() {
			for i := range todo {
				if err := d.chunk(ctx, f, &st, i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
						cancel()
					}
					mu.Unlock()
					continue
				}
				mu.Lock()
				st.Done[i] = true
				err := writeState(SideFile(o.Output), &st)
				mu.Unlock()
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
						cancel()
					}
					mu.Unlock()
				}
			}
		})
	}
	stopProgress := d.progress(size)
	for i, done := range st.Done {
		if done {
			continue
		}
		select {
		case todo <- i:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(todo)
	wg.Wait()
	stopProgress()
	res := d.result(Result{Size: size, Ranged: true, Resumed: resumed})
	if firstErr != nil {
		return res, firstErr
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	return res, os.Remove(SideFile(o.Output))
}

func (d *downloader) result(r Result) Result {
	r.Requests, r.Fetched = d.requests.Load(), d.fetched.Load()
	return r
}

// chunk fetches chunk i into f.
func (d *downloader) chunk(ctx context.Context, f *os.File, st *state, i int) error {
	start := int64(i) * st.Chunk
	end := min(start+st.Chunk, st.Size) - 1
	resp, err := d.do(ctx, func() (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, st.URL, nil)
		if err == nil {
			req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", start, end))
			req.Header.Set("Accept-Encoding", "identity")
			if st.ETag != "" {
				req.Header.Set("If-Range", st.ETag)
			}
		}
		return req, err
	})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent {
		return fmt.Errorf("%w: a ranged request got %s", ErrChanged, resp.Status)
	}
	want := fmt.Sprintf("bytes %d-%d/%d", start, end, st.Size)
	if got := resp.Header.Get("Content-Range"); got != want {
		return fmt.Errorf("chunk %d: Content-Range %q, want %q", i, got, want)
	}
	n, err := io.Copy(&offsetWriter{f: f, off: start}, io.LimitReader(resp.Body, end-start+1))
	d.fetched.Add(n)
	if err == nil && n != end-start+1 {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return fmt.Errorf("chunk %d (bytes %d-%d): %w", i, start, end, err)
	}
	return nil
}

// plain copies a whole-file answer into the output.
func (d *downloader) plain(resp *http.Response) error {
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", d.o.URL, resp.Status)
	}
	tmp := d.o.Output + ".part"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("cannot write the output: %w", err)
	}
	stop := d.progress(resp.ContentLength)
	n, err := io.Copy(f, &countReader{r: resp.Body, n: &d.fetched})
	stop()
	if err == nil && resp.ContentLength >= 0 && n != resp.ContentLength {
		err = io.ErrUnexpectedEOF
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("GET %s: %w", d.o.URL, err)
	}
	return os.Rename(tmp, d.o.Output)
}

// do sends the request mk makes, trying again after a transport error, a
// 5xx or a 429 (waiting Retry-After, else 0.5 s doubling to 10 s).
func (d *downloader) do(ctx context.Context, mk func() (*http.Request, error)) (*http.Response, error) {
	wait := 500 * time.Millisecond
	for attempt := 0; ; attempt++ {
		req, err := mk()
		if err != nil {
			return nil, err
		}
		d.requests.Add(1)
		resp, err := d.o.Client.Do(req)
		retry := err != nil
		if err == nil && (resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests) {
			retry = true
			if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s >= 0 {
				wait = time.Duration(s) * time.Second
			}
			io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			err = fmt.Errorf("GET %s: %s", req.URL, resp.Status)
		}
		if !retry {
			return resp, nil
		}
		if attempt >= d.o.Retries || ctx.Err() != nil {
			return nil, err
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
		wait = min(2*wait, 10*time.Second)
	}
}

// progress calls Options.Progress every 200 ms until the returned stop.
func (d *downloader) progress(total int64) func() {
	if d.o.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				d.o.Progress(d.fetched.Load(), total)
			case <-done:
				d.o.Progress(d.fetched.Load(), total)
				return
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

type offsetWriter struct {
	f   *os.File
	off int64
}

func (w *offsetWriter) Write(p []byte) (int, error) {
	n, err := w.f.WriteAt(p, w.off)
	w.off += int64(n)
	return n, err
}

type countReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func readState(name string) (*state, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var st state
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// writeState replaces the side file (write, rename). Neither it nor the
// output is fsynced, as downloaders go: a resume after the process dies
// (a kill, Ctrl-C) is exact; after a power loss, --sha256 tells.
func writeState(name string, st *state) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	tmp := name + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", name, err)
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", name, err)
	}
	return nil
}

// checkSHA256 compares the file's digest with want (hex).
func checkSHA256(name, want string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); !strings.EqualFold(got, want) {
		return fmt.Errorf("%s: sha256 is %s, want %s", name, got, want)
	}
	return nil
}
