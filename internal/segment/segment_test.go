package segment

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// logBuf collects a test store's log output; the writer and compressor
// log from their own goroutines.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// testLogger returns a debug-level logger writing to a logBuf.
func testLogger() (*slog.Logger, *logBuf) {
	lb := &logBuf{}
	return slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug})), lb
}

// openStore opens a store in dir with o, logging to a buffer unless o
// has a logger, and closes it at the end of the test.
func openStore(t testing.TB, dir string, o Options) *Store {
	t.Helper()
	if o.Logger == nil {
		o.Logger, _ = testLogger()
	}
	if o.testRemoveDelay == 0 {
		o.testRemoveDelay = -1 // plain segments go as soon as compressed
	}
	if o.CompressDelay == 0 {
		o.CompressDelay = -1 // sealed segments are compressed at once
	}
	s, err := Open(dir, o)
	if err != nil {
		t.Fatalf("Open(%q): %v", dir, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// mustAppend appends groups given as day, lines, day, lines...
func mustAppend(t testing.TB, s *Store, dayLines ...string) {
	t.Helper()
	if err := s.Append(context.Background(), groups(dayLines...)); err != nil {
		t.Fatalf("Append: %v", err)
	}
}

func groups(dayLines ...string) []Group {
	var gs []Group
	for i := 0; i+1 < len(dayLines); i += 2 {
		gs = append(gs, Group{Day: dayLines[i], Lines: []byte(dayLines[i+1])})
	}
	return gs
}

// readFile returns the content of a listed segment, decompressed.
func readFile(t testing.TB, dir string, f File) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, f.Path))
	if err != nil {
		t.Fatalf("cannot read %s: %v", f.Path, err)
	}
	if f.Compressed {
		return unzstd(t, f.Path, data)
	}
	return data
}

func unzstd(t testing.TB, name string, data []byte) []byte {
	t.Helper()
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	out, err := dec.DecodeAll(data, nil)
	if err != nil {
		t.Fatalf("%s is not valid zstd: %v", name, err)
	}
	return out
}

// readDays reads every segment under dir, checks that each ends with a
// complete line, and returns each day's content in segment order.
func readDays(t testing.TB, dir string) map[string]string {
	t.Helper()
	files, err := List(dir)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	days := map[string]string{}
	for _, f := range files {
		data := readFile(t, dir, f)
		if len(data) == 0 || data[len(data)-1] != '\n' {
			t.Fatalf("%s: got %d bytes not ending in a newline", f.Path, len(data))
		}
		days[f.Day] += string(data)
	}
	return days
}

// dirNames returns the relative paths of all files under dir but the lock
// and segment metadata (see metaNames).
func dirNames(t testing.TB, dir string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == lockName || strings.HasPrefix(d.Name(), ".seg-") {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		names = append(names, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// waitFor polls cond until it holds or 10 s pass.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestParseSyncMode_Success(t *testing.T) {
	f := func(in string, want SyncMode) {
		t.Helper()
		got, err := ParseSyncMode(in)
		if err != nil {
			t.Fatalf("ParseSyncMode(%q): %v", in, err)
		}
		if got != want {
			t.Fatalf("ParseSyncMode(%q): got %v, want %v", in, got, want)
		}
		if got.String() != in {
			t.Fatalf("ParseSyncMode(%q).String(): got %q", in, got.String())
		}
	}
	f("batch", SyncBatch)
	f("interval", SyncInterval)
	f("never", SyncNever)
	if SyncMode(0) != SyncBatch {
		t.Fatalf("the zero SyncMode is %v, want batch", SyncMode(0))
	}
}

func TestParseSyncMode_Failure(t *testing.T) {
	f := func(in string) {
		t.Helper()
		if got, err := ParseSyncMode(in); err == nil {
			t.Fatalf("ParseSyncMode(%q): got %v, want an error", in, got)
		}
	}
	f("")
	f("Batch")
	f("always")
	f("batch ")
	f("1s")
}

func TestAppendReadBack(t *testing.T) {
	for _, mode := range []SyncMode{SyncBatch, SyncInterval, SyncNever} {
		t.Run(mode.String(), func(t *testing.T) {
			dir := t.TempDir()
			s := openStore(t, dir, Options{Sync: mode, SyncInterval: 5 * time.Millisecond})
			mustAppend(t, s, "2026-11-22", "{\"a\":1}\n{\"a\":2}\n")
			mustAppend(t, s, "2026-11-23", "{\"b\":1}\n", "2026-11-22", "{\"a\":3}\n")
			mustAppend(t, s, "2026-11-22", "", "2026-11-22", "{\"a\":4}\n\n", "2026-11-23", "{\"b\":2}\n")
			if err := s.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			got := readDays(t, dir)
			want := map[string]string{
				"2026-11-22": "{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n{\"a\":4}\n\n",
				"2026-11-23": "{\"b\":1}\n{\"b\":2}\n",
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("got %q, want %q", got, want)
			}
			st := s.Stats()
			if st.LinesWritten != 7 || st.BytesWritten != 49 || st.QueueBytes != 0 || st.QueueRequests != 0 {
				t.Fatalf("got stats %+v, want 7 lines, 49 bytes, empty queue", st)
			}
			if mode == SyncBatch && st.Syncs < 3 {
				t.Fatalf("batch mode: got %d fsyncs for 3 batches", st.Syncs)
			}
		})
	}
}

func TestAppend_Failure(t *testing.T) {
	s := openStore(t, t.TempDir(), Options{MaxQueueBytes: 100})
	f := func(want error, dayLines ...string) {
		t.Helper()
		err := s.Append(context.Background(), groups(dayLines...))
		if !errors.Is(err, want) {
			t.Fatalf("Append(%q): got %v, want %v", dayLines, err, want)
		}
	}
	f(ErrInvalid, "2026-11-22", "no newline")
	f(ErrInvalid, "2026-11-22", "a\n", "2026-11-23", "a\nb")
	f(ErrInvalid, "2026-1-22", "a\n")
	f(ErrInvalid, "2026-02-29", "a\n")
	f(ErrInvalid, "../etc", "a\n")
	f(ErrInvalid, "", "a\n")
	f(ErrTooLarge, "2026-11-22", strings.Repeat("x", 100)+"\n")
	f(ErrTooLarge, "2026-11-22", strings.Repeat("x", 60)+"\n", "2026-11-23", strings.Repeat("x", 60)+"\n")
	if files, _ := List(s.Dir()); len(files) != 0 {
		t.Fatalf("failed Appends left files %v", files)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Append(ctx, groups("2026-11-22", "a\n")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Append with a cancelled context: got %v", err)
	}
	if err := s.Append(context.Background(), nil); err != nil {
		t.Fatalf("Append(nil): %v", err)
	}
	s.Close()
	f(ErrClosed, "2026-11-22", "a\n")
	f(ErrClosed)
	if files, _ := List(s.Dir()); len(files) != 0 {
		t.Fatalf("failed Appends left files %v", files)
	}
}

// TestAppendReuse checks the buffer lifetime and cancellation: once Append
// returns, here because its context ended while the request was still
// queued, the caller may overwrite its buffers; the request is still
// written, with the original lines.
func TestAppendReuse(t *testing.T) {
	dir := t.TempDir()
	release := make(chan struct{})
	s := openStore(t, dir, Options{testBeforeBatch: func() { <-release }})
	buf := []byte("one\ntwo\n")
	recs := []Group{{Day: "2026-11-22", Lines: buf}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Append(ctx, recs) }()
	waitFor(t, "the queued request", func() bool { return s.Stats().QueueRequests == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	copy(buf, "XXXXXXXX")
	recs[0].Day = "2026-11-23"
	close(release)
	s.Close()
	if got := readDays(t, dir); len(got) != 1 || got["2026-11-22"] != "one\ntwo\n" {
		t.Fatalf("got %q, want the original lines", got)
	}
}

// TestAppendConcurrent runs many appenders over a few days with small
// segments, then checks that every line is present exactly once, that
// each goroutine's lines keep their order within a day, and that each
// request's lines for a day are contiguous in one file.
func TestAppendConcurrent(t *testing.T) {
	for _, mode := range []SyncMode{SyncBatch, SyncNever} {
		t.Run(mode.String(), func(t *testing.T) {
			dir := t.TempDir()
			s := openStore(t, dir, Options{Sync: mode, MaxSegmentBytes: 8 << 10, MaxQueueBytes: 1 << 20})
			const workers, requests = 8, 60
			days := []string{"2026-11-20", "2026-11-21", "2026-11-22"}
			var wg sync.WaitGroup
			for g := range workers {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(g), 1))
					for i := range requests {
						var recs []Group
						for _, day := range days {
							if rng.IntN(3) == 0 {
								continue
							}
							var b []byte
							for k := range 1 + rng.IntN(20) {
								b = fmt.Appendf(b, "{\"g\":%d,\"i\":%d,\"k\":%d,\"day\":%q}\n", g, i, k, day)
							}
							recs = append(recs, Group{Day: day, Lines: b})
						}
						if err := s.Append(context.Background(), recs); err != nil {
							t.Errorf("worker %d request %d: %v", g, i, err)
							return
						}
					}
				})
			}
			wg.Wait()
			waitFor(t, "compression", func() bool { return s.Stats().CompressPending == 0 })
			if err := s.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}

			files, err := List(dir)
			if err != nil {
				t.Fatal(err)
			}
			type reqKey struct{ g, i int }
			type loc struct {
				file string
				line int
			}
			seen := map[string]bool{}
			type dayWorker struct {
				day string
				g   int
			}
			last := map[string]loc{}             // request+day -> last line location
			prevReq := map[dayWorker]int{}       // day, worker -> last request seen
			prevK := map[reqKey]map[string]int{} // request -> day -> last k
			compressed := 0
			for _, f := range files {
				if f.Compressed {
					compressed++
				}
				if f.Size > 8<<10 && !f.Compressed {
					t.Errorf("%s: %d bytes, over MaxSegmentBytes", f.Path, f.Size)
				}
				for n, line := range strings.Split(strings.TrimSuffix(string(readFile(t, dir, f)), "\n"), "\n") {
					if seen[line] {
						t.Fatalf("%s: duplicate line %s", f.Path, line)
					}
					seen[line] = true
					var g, i, k int
					var day string
					if _, err := fmt.Sscanf(line, "{\"g\":%d,\"i\":%d,\"k\":%d,\"day\":%q}", &g, &i, &k, &day); err != nil {
						t.Fatalf("%s: cannot parse %q: %v", f.Path, line, err)
					}
					if day != f.Day {
						t.Fatalf("%s: line %s of day %s", f.Path, line, day)
					}
					key := fmt.Sprint(g, i, day)
					if l, ok := last[key]; ok && (l.file != f.Path || l.line != n-1) {
						t.Fatalf("%s:%d: request g=%d i=%d split: previous line at %s:%d", f.Path, n, g, i, l.file, l.line)
					}
					last[key] = loc{f.Path, n}
					di := dayWorker{day, g}
					if p, ok := prevReq[di]; ok && p > i {
						t.Fatalf("%s: worker %d request %d after request %d", f.Path, g, i, p)
					}
					prevReq[di] = i
					rk := reqKey{g, i}
					if prevK[rk] == nil {
						prevK[rk] = map[string]int{}
					}
					if p, ok := prevK[rk][day]; ok && p != k-1 {
						t.Fatalf("%s: request g=%d i=%d line %d after line %d", f.Path, g, i, k, p)
					}
					prevK[rk][day] = k
				}
			}
			st := s.Stats()
			if int64(len(seen)) != st.LinesWritten {
				t.Fatalf("read %d lines, the store acknowledged %d", len(seen), st.LinesWritten)
			}
			if len(files) < 10 || compressed == 0 {
				t.Fatalf("got %d files, %d compressed: want rotations and compression", len(files), compressed)
			}
			t.Logf("%d lines in %d files (%d compressed), %d batches for %d requests", len(seen), len(files), compressed, st.Batches, workers*requests)
		})
	}
}

// TestCloseDrains runs appenders while Close runs: every Append either
// succeeds and its lines are on disk, or returns ErrClosed and they are
// not; no other outcome.
func TestCloseDrains(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, Options{Sync: SyncBatch})
	var wg sync.WaitGroup
	var acked sync.Map
	var ok, closedErrs atomic.Int64
	for g := range 6 {
		wg.Go(func() {
			for i := 0; ; i++ {
				line := fmt.Sprintf("g=%d i=%d\n", g, i)
				err := s.Append(context.Background(), groups("2026-11-22", line))
				switch {
				case err == nil:
					acked.Store(strings.TrimSuffix(line, "\n"), true)
					ok.Add(1)
				case errors.Is(err, ErrClosed):
					closedErrs.Add(1)
					return
				default:
					t.Errorf("Append: %v", err)
					return
				}
			}
		})
	}
	waitFor(t, "some appends", func() bool { return ok.Load() >= 50 })
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	wg.Wait()
	got := strings.Split(strings.TrimSuffix(readDays(t, dir)["2026-11-22"], "\n"), "\n")
	n := 0
	acked.Range(func(k, _ any) bool { n++; return true })
	if len(got) != n {
		t.Fatalf("got %d lines on disk, %d acknowledged", len(got), n)
	}
	for _, line := range got {
		if _, ok := acked.Load(line); !ok {
			t.Fatalf("line %q on disk was not acknowledged", line)
		}
	}
	if closedErrs.Load() != 6 {
		t.Fatalf("got %d ErrClosed, want one per appender", closedErrs.Load())
	}
}

// stalledStore opens a store with a queue of maxQueue bytes whose writer
// blocks before its first batch until release is called; later batches
// run at once.
func stalledStore(t *testing.T, maxQueue int64) (s *Store, release func()) {
	t.Helper()
	ch := make(chan struct{})
	var stall atomic.Bool
	stall.Store(true)
	s = openStore(t, t.TempDir(), Options{MaxQueueBytes: maxQueue, testBeforeBatch: func() {
		if stall.Load() {
			<-ch
		}
	}})
	return s, func() {
		stall.Store(false)
		close(ch)
	}
}

// TestBackpressure stalls the writer and fills the queue: Append must fail
// at once with ErrQueueFull, without allocating, and the queue must never
// hold more than MaxQueueBytes.
func TestBackpressure(t *testing.T) {
	s, release := stalledStore(t, 1000)
	line := strings.Repeat("x", 399) + "\n"
	// Two requests fit; the writer takes the first batch and blocks.
	errs := make(chan error, 2)
	for range 2 {
		go func() { errs <- s.Append(context.Background(), groups("2026-11-22", line)) }()
	}
	waitFor(t, "two queued requests", func() bool { return s.Stats().QueueRequests == 2 })

	recs := groups("2026-11-22", line)
	start := time.Now()
	for range 1000 {
		if err := s.Append(context.Background(), recs); err != ErrQueueFull {
			t.Fatalf("Append on a full queue: got %v, want ErrQueueFull", err)
		}
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("1000 rejected Appends took %v", d)
	}
	if st := s.Stats(); st.QueueBytes != 800 || st.QueueRequests != 2 {
		t.Fatalf("got queue %d bytes, %d requests; want 800, 2", st.QueueBytes, st.QueueRequests)
	}
	ctx := context.Background()
	if allocs := testing.AllocsPerRun(100, func() { s.Append(ctx, recs) }); allocs != 0 {
		t.Errorf("a rejected Append allocates %v times", allocs)
	}
	// Too large is a different error, also immediate.
	big := groups("2026-11-22", strings.Repeat("y", 1000)+"\n")
	if err := s.Append(context.Background(), big); !errors.Is(err, ErrTooLarge) || errors.Is(err, ErrQueueFull) {
		t.Fatalf("Append of 1001 bytes: got %v, want ErrTooLarge", err)
	}
	// A smaller request still fits in the space left.
	small := make(chan error, 1)
	go func() { small <- s.Append(context.Background(), groups("2026-11-23", "s\n")) }()
	waitFor(t, "the small request", func() bool { return s.Stats().QueueRequests == 3 })

	release()
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("queued Append: %v", err)
		}
	}
	if err := <-small; err != nil {
		t.Fatalf("small Append: %v", err)
	}
	if st := s.Stats(); st.QueueBytes != 0 || st.QueueRequests != 0 || st.LinesWritten != 3 {
		t.Fatalf("after draining: %+v", st)
	}
	// The queue is usable again.
	mustAppend(t, s, "2026-11-22", line)
}

// TestEnqueueWait stalls the writer and fills the queue: Enqueue with wait
// blocks until room is freed, callers that do not wait get ErrQueueFull
// while someone waits (no starvation), a cancelled wait takes nothing, and
// Close wakes the waiters with ErrClosed.
func TestEnqueueWait(t *testing.T) {
	s, release := stalledStore(t, 1000)
	ctx := context.Background()
	line := strings.Repeat("x", 399) + "\n"
	first, err := s.Enqueue(ctx, groups("2026-11-22", line), false)
	if err != nil {
		t.Fatal(err)
	}
	second, err := s.Enqueue(ctx, groups("2026-11-22", line), false)
	if err != nil {
		t.Fatal(err)
	}
	if first.Done() || second.Done() {
		t.Fatal("acknowledged while the writer is stalled")
	}
	if _, err := s.Enqueue(ctx, groups("2026-11-22", line), false); err != ErrQueueFull {
		t.Fatalf("Enqueue without wait on a full queue: %v", err)
	}
	// A cancelled wait returns the context's error and enqueues nothing.
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := s.Enqueue(cctx, groups("2026-11-22", line), true); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled wait: %v", err)
	}
	waited := make(chan error, 1)
	var p *Pending
	go func() {
		var err error
		p, err = s.Enqueue(ctx, groups("2026-11-23", line), true)
		waited <- err
	}()
	waitFor(t, "a waiter", func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.waiters == 1 })
	// 100 bytes would fit, but a caller that does not wait must not jump
	// the queue.
	if _, err := s.Enqueue(ctx, groups("2026-11-22", "y\n"), false); err != ErrQueueFull {
		t.Fatalf("Enqueue without wait beside a waiter: %v", err)
	}
	release()
	if err := <-waited; err != nil {
		t.Fatalf("waiting Enqueue: %v", err)
	}
	for _, q := range []*Pending{first, second, p} {
		if err := q.Wait(ctx); err != nil {
			t.Fatalf("Wait: %v", err)
		}
	}
	if st := s.Stats(); st.LinesWritten != 3 || st.QueueBytes != 0 {
		t.Fatalf("after draining: %+v", st)
	}
}

// TestEnqueueWaitClose: Close wakes a caller waiting for room with
// ErrClosed, and still writes what was enqueued.
func TestEnqueueWaitClose(t *testing.T) {
	release := make(chan struct{})
	dir := t.TempDir()
	s := openStore(t, dir, Options{MaxQueueBytes: 1000, testBeforeBatch: func() { <-release }})
	ctx := context.Background()
	line := strings.Repeat("x", 599) + "\n"
	first, err := s.Enqueue(ctx, groups("2026-11-22", line), false)
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() {
		_, err := s.Enqueue(ctx, groups("2026-11-22", line), true)
		waited <- err
	}()
	waitFor(t, "a waiter", func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.waiters == 1 })
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	if err := <-waited; !errors.Is(err, ErrClosed) {
		t.Fatalf("waiter after Close: %v", err)
	}
	close(release)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if err := first.Wait(ctx); err != nil {
		t.Fatalf("enqueued before Close: %v", err)
	}
	files, err := List(dir)
	if err != nil || len(files) != 1 || files[0].Size != 600 {
		t.Fatalf("List after Close: %+v, %v", files, err)
	}
}

// TestWriteError injects a short write followed by an error: the batch
// fails, the segment is rolled back and sealed, and later Appends go to a
// new segment. Only acknowledged lines are on disk.
func TestWriteError(t *testing.T) {
	dir := t.TempDir()
	logger, logs := testLogger()
	var n atomic.Int64
	s := openStore(t, dir, Options{Logger: logger, NoCompress: true, testWrite: func(f *os.File, p []byte) (int, error) {
		if n.Add(1) == 2 {
			k, _ := f.Write(p[:len(p)/2])
			return k, errors.New("injected write error")
		}
		return f.Write(p)
	}})
	mustAppend(t, s, "2026-11-22", "ok 1\n")
	err := s.Append(context.Background(), groups("2026-11-22", "fails 1\nfails 2\n"))
	if err == nil || !strings.Contains(err.Error(), "injected write error") {
		t.Fatalf("got %v, want the injected error", err)
	}
	mustAppend(t, s, "2026-11-22", "ok 2\n")
	st := s.Stats()
	s.Close()
	if got, want := readDays(t, dir)["2026-11-22"], "ok 1\nok 2\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if files, _ := List(dir); len(files) != 2 {
		t.Fatalf("got files %v, want the failed segment sealed and a new one", files)
	}
	if st.WriteErrors != 1 || st.LinesWritten != 2 {
		t.Fatalf("got %+v, want 1 write error, 2 lines", st)
	}
	if !strings.Contains(logs.String(), "cannot write segment batch") {
		t.Fatalf("the failure was not logged: %s", logs)
	}
}

func TestObserve(t *testing.T) {
	var mu sync.Mutex
	var got BatchInfo
	s := openStore(t, t.TempDir(), Options{Observe: func(b BatchInfo) {
		mu.Lock()
		defer mu.Unlock()
		got.Requests += b.Requests
		got.Lines += b.Lines
		got.Bytes += b.Bytes
		got.Segments += b.Segments
		if b.Err != nil || b.Write <= 0 || b.Sync <= 0 {
			t.Errorf("got batch %+v, want write and sync times and no error", b)
		}
	}})
	mustAppend(t, s, "2026-11-22", "a\nb\n", "2026-11-23", "c\n")
	mustAppend(t, s, "2026-11-22", "d\n")
	s.Close()
	mu.Lock()
	defer mu.Unlock()
	want := BatchInfo{Requests: 2, Lines: 4, Bytes: 8, Segments: 3}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestSyncInterval(t *testing.T) {
	s := openStore(t, t.TempDir(), Options{Sync: SyncInterval, SyncInterval: 5 * time.Millisecond})
	mustAppend(t, s, "2026-11-22", "a\n")
	waitFor(t, "an interval fsync", func() bool { return s.Stats().Syncs > 0 })
	n := s.Stats().Syncs
	time.Sleep(30 * time.Millisecond)
	if got := s.Stats().Syncs; got != n {
		t.Fatalf("idle store fsynced again: %d -> %d", n, got)
	}
}

func TestSyncNever(t *testing.T) {
	s := openStore(t, t.TempDir(), Options{Sync: SyncNever})
	mustAppend(t, s, "2026-11-22", "a\n")
	if got := s.Stats().Syncs; got != 0 {
		t.Fatalf("got %d fsyncs before Close, want 0", got)
	}
	s.Close()
	if got := s.Stats().Syncs; got != 1 {
		t.Fatalf("got %d fsyncs after Close, want 1", got)
	}
}

func TestLocked(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, Options{})
	if _, err := Open(dir, Options{}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: got %v, want ErrLocked", err)
	}
	s.Close()
	s2 := openStore(t, dir, Options{})
	s2.Close()
}

func TestCloseTwice(t *testing.T) {
	s := openStore(t, t.TempDir(), Options{})
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
	wg.Wait()
}

// TestWriteErrorFirstWrite: when the first write to a new segment fails,
// the rollback leaves it empty and sealing removes it.
func TestWriteErrorFirstWrite(t *testing.T) {
	dir := t.TempDir()
	var fail atomic.Bool
	fail.Store(true)
	s := openStore(t, dir, Options{testWrite: func(f *os.File, p []byte) (int, error) {
		if fail.Load() {
			k, _ := f.Write(p[:1])
			return k, errors.New("injected write error")
		}
		return f.Write(p)
	}})
	if err := s.Append(context.Background(), groups("2026-11-22", "a\n", "2026-11-23", "b\n")); err == nil {
		t.Fatal("got no error from a failed write")
	}
	waitFor(t, "the failed segment to be removed", func() bool { return s.Stats().Segments == 0 })
	if got := dirNames(t, dir); len(got) != 0 {
		t.Fatalf("got files %q after a failed first write, want none", got)
	}
	fail.Store(false)
	mustAppend(t, s, "2026-11-22", "c\n")
	s.Close()
	if got := readDays(t, dir); len(got) != 1 || got["2026-11-22"] != "c\n" {
		t.Fatalf("got %q", got)
	}
}

func TestOpen_Failure(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, "file", "x")
	f := func(dir string, o Options) {
		t.Helper()
		if s, err := Open(dir, o); err == nil {
			s.Close()
			t.Fatalf("Open(%q, %+v): got no error", dir, o)
		}
	}
	f(filepath.Join(dir, "file"), Options{})
	f(filepath.Join(dir, "file", "sub"), Options{})
	f(dir, Options{MaxQueueBytes: -1})
	f(dir, Options{MaxSegmentAge: -time.Second})
	f(dir, Options{Sync: SyncNever + 1})
}
