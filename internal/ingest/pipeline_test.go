package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/spate-io/spate/internal/segment"
)

// memSink is a Sink that keeps what it is given, in order. fail, if set,
// decides per call whether Enqueue fails; ackErr whether the ack fails.
type memSink struct {
	mu      sync.Mutex
	lines   []string            // every stored line, in the order enqueued
	days    map[string][]string // the same by day: the order that counts
	calls   int
	fail    func(call int) error
	ackErr  func(call int) error
	block   chan struct{} // if set, Enqueue waits for it (or ctx)
	maxSeen int           // most groups' bytes in one call
}

type memAck struct{ err error }

func (a memAck) Wait(context.Context) error { return a.err }
func (a memAck) Done() bool                 { return true }

func (m *memSink) Enqueue(ctx context.Context, groups []segment.Group) (Ack, error) {
	if m.block != nil {
		select {
		case <-m.block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	call := m.calls
	m.calls++
	if m.fail != nil {
		if err := m.fail(call); err != nil {
			return nil, err
		}
	}
	var ackErr error
	if m.ackErr != nil {
		ackErr = m.ackErr(call)
	}
	n := 0
	for _, g := range groups {
		n += len(g.Lines)
		if ackErr != nil {
			continue
		}
		if m.days == nil {
			m.days = map[string][]string{}
		}
		for l := range bytes.Lines(g.Lines) {
			line := string(bytes.TrimSuffix(l, []byte{'\n'}))
			m.lines = append(m.lines, line)
			m.days[g.Day] = append(m.days[g.Day], line)
		}
	}
	m.maxSeen = max(m.maxSeen, n)
	return memAck{ackErr}, nil
}

// byDay returns the stored lines of each day, days in order.
func (m *memSink) byDay() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return dayString(m.days)
}

func dayString(days map[string][]string) string {
	var keys []string
	for d := range days {
		keys = append(keys, d)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, d := range keys {
		fmt.Fprintf(&b, "%s:\n%s\n", d, strings.Join(days[d], "\n"))
	}
	return b.String()
}

func (m *memSink) stored() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.lines...)
}

var fixedNow = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func newTestPipeline(t testing.TB, cfg Config) *Pipeline {
	t.Helper()
	cfg.Now = func() time.Time { return fixedNow }
	p, err := NewPipeline(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func ingestBody(t testing.TB, p *Pipeline, body io.Reader, sink Sink, maxBytes int64) Result {
	t.Helper()
	return ingestHint(t, p, body, -1, sink, maxBytes)
}

func ingestHint(t testing.TB, p *Pipeline, body io.Reader, hint int64, sink Sink, maxBytes int64) Result {
	t.Helper()
	tk, ok := p.Admit(hint)
	if !ok {
		t.Fatal("Admit refused an idle pipeline")
	}
	return p.Ingest(context.Background(), tk, &Request{Body: body, Sink: sink, MaxBytes: maxBytes})
}

// reference is the naive, sequential model of Ingest on a complete body:
// every line through one Processor, in order.
func reference(body string, maxLine int) (stored map[string][]string, n int, errs []LineError, rejected, lines int64) {
	stored = map[string][]string{}
	pr := NewProcessor(Params{}, segment.Tenant{})
	now := fixedNow.UnixNano()
	for i, line := range strings.SplitAfter(body, "\n") {
		if line == "" {
			break // after a final '\n'
		}
		lines++
		line = strings.TrimSuffix(line, "\n")
		var msg string
		switch {
		case len(line) > maxLine:
			msg = fmt.Sprintf("line is %d bytes, more than the limit of %d; skipped", len(line), maxLine)
		case strings.TrimSpace(line) == "":
			continue
		default:
			out, ts, err := pr.Process([]byte(line), now)
			if err == nil {
				day := segment.DayOf(time.Unix(0, ts))
				stored[day] = append(stored[day], string(out))
				n++
				continue
			}
			msg = err.Error()
		}
		rejected++
		if len(errs) < MaxErrors {
			errs = append(errs, LineError{Line: int64(i + 1), Error: msg})
		}
	}
	return stored, n, errs, rejected, lines
}

// randomBody returns n lines: mostly good, some bad, empty, or longer than
// maxLine (some longer than several chunks).
func randomBody(rng *rand.Rand, n, maxLine, chunk int) string {
	var b strings.Builder
	for i := range n {
		switch k := rng.IntN(40); {
		case k == 0:
			b.WriteString("not json")
		case k == 1:
			b.WriteString("  ")
		case k == 2:
			fmt.Fprintf(&b, `{"msg":"%s"}`, strings.Repeat("L", maxLine+rng.IntN(3*chunk)))
		case k == 3:
			fmt.Fprintf(&b, `{"ts":"never","i":%d}`, i)
		case k == 4:
			b.WriteString(`{"msg":"crlf"}` + "\r")
		default:
			fmt.Fprintf(&b, `{"ts":"2026-01-0%dT00:00:00Z","i":%d,"pad":"%s"}`, 1+i%3, i, strings.Repeat("p", rng.IntN(maxLine/2)))
		}
		if i < n-1 || rng.IntN(2) == 0 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// TestIngestMatchesReference runs random bodies through pipelines of
// several chunk sizes and worker counts, read in random pieces, and checks
// every result against the sequential reference.
func TestIngestMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, cfg := range []Config{
		{Workers: 1, ChunkBytes: 300, MaxLineBytes: 100},
		{Workers: 3, ChunkBytes: 1000, MaxLineBytes: 200},
		{Workers: 2, ChunkBytes: 4096, MaxLineBytes: 4095},
		{Workers: 4, ChunkBytes: 257, MaxLineBytes: 256, MemoryBytes: 600},
	} {
		p := newTestPipeline(t, cfg)
		c := p.Config()
		for iter := range 30 {
			body := randomBody(rng, 1+rng.IntN(300), c.MaxLineBytes, c.ChunkBytes)
			var r io.Reader = strings.NewReader(body)
			switch iter % 3 {
			case 1:
				r = iotest.OneByteReader(r)
			case 2:
				r = iotest.HalfReader(r)
			}
			// Size hints: none, exact, too small, too large.
			hint := []int64{-1, int64(len(body)), int64(len(body) / 3), int64(len(body)) + 10}[iter%4]
			sink := &memSink{}
			res := ingestHint(t, p, r, hint, sink, 0)
			wantDays, wantN, wantErrs, wantRej, wantLines := reference(body, c.MaxLineBytes)
			name := fmt.Sprintf("workers %d chunk %d, body %d", c.Workers, c.ChunkBytes, iter)
			if res.Err != nil {
				t.Fatalf("%s: %v", name, res.Err)
			}
			if got, want := sink.byDay(), dayString(wantDays); got != want {
				t.Fatalf("%s: stored\n%s\nwant\n%s", name, got, want)
			}
			if res.Accepted != int64(wantN) || res.Rejected != wantRej || res.Lines != wantLines ||
				res.BodyBytes != int64(len(body)) || fmt.Sprint(res.Errors) != fmt.Sprint(wantErrs) {
				t.Fatalf("%s: result %+v\nwant accepted %d rejected %d lines %d bytes %d errors %v",
					name, res, wantN, wantRej, wantLines, len(body), wantErrs)
			}
			if sink.maxSeen > 2*c.ChunkBytes {
				t.Fatalf("%s: one Enqueue of %d bytes for chunks of %d", name, sink.maxSeen, c.ChunkBytes)
			}
		}
		if u := p.MemoryUsed(); u != 0 {
			t.Fatalf("memory still reserved after the requests: %d", u)
		}
	}
}

func lines(n int, format string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, format+"\n", i+1)
	}
	return b.String()
}

// TestIngestMaxBytes: a body over the limit stops there with
// ErrBodyTooLarge; the complete lines within the limit are stored.
func TestIngestMaxBytes(t *testing.T) {
	p := newTestPipeline(t, Config{Workers: 2, ChunkBytes: 100, MaxLineBytes: 50})
	body := lines(50, `{"ts":1767323045,"i":"%03d"}`) // 28 bytes a line
	for _, limit := range []int64{1, 27, 28, 29, 560, 1399, 1400} {
		sink := &memSink{}
		res := ingestBody(t, p, strings.NewReader(body), sink, limit)
		want := limit / 28
		if limit == int64(len(body)) {
			if res.Err != nil || res.Accepted != 50 {
				t.Fatalf("limit %d = body size: %+v", limit, res)
			}
			continue
		}
		if !errors.Is(res.Err, ErrBodyTooLarge) || res.Accepted != want || res.Lines != want || int64(len(sink.stored())) != want || res.BodyBytes != limit {
			t.Fatalf("limit %d: %+v, stored %d; want ErrBodyTooLarge, %d lines", limit, res, len(sink.stored()), want)
		}
	}
}

// failingReader returns data, then err.
type failingReader struct {
	r   io.Reader
	err error
}

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, f.err
	}
	return n, err
}

// TestIngestReadError: a body cut short keeps its complete lines and
// drops the partial one; the error is ErrRead.
func TestIngestReadError(t *testing.T) {
	p := newTestPipeline(t, Config{Workers: 2, ChunkBytes: 100, MaxLineBytes: 50})
	cut := errors.New("connection reset")
	body := lines(20, `{"ts":1767323045,"i":"%03d"}`) + `{"ts":1767323045,"i":"partial`
	sink := &memSink{}
	res := ingestBody(t, p, &failingReader{strings.NewReader(body), cut}, sink, 0)
	if !errors.Is(res.Err, ErrRead) || !errors.Is(res.Err, cut) || res.Accepted != 20 || res.Lines != 20 || len(sink.stored()) != 20 {
		t.Fatalf("%+v (stored %d), want ErrRead after 20 lines", res, len(sink.stored()))
	}
	// A long line cut short is not reported as a line.
	body = lines(3, `{"i":%d}`) + strings.Repeat("x", 500)
	sink = &memSink{}
	res = ingestBody(t, p, &failingReader{strings.NewReader(body), cut}, sink, 0)
	if !errors.Is(res.Err, cut) || res.Accepted != 3 || res.Rejected != 0 || res.Lines != 3 {
		t.Fatalf("long line cut: %+v", res)
	}
}

// TestIngestLongLineStream: a line far longer than a chunk in the middle of
// a long body is skipped (named, with its line number) without growing
// memory; every other line is stored, in order.
func TestIngestLongLineStream(t *testing.T) {
	p := newTestPipeline(t, Config{Workers: 2, ChunkBytes: 1 << 10, MaxLineBytes: 512})
	before := lines(1000, `{"i":%d}`)
	long := `{"msg":"` + strings.Repeat("z", 1<<20) + `"}` + "\n"
	after := lines(1000, `{"j":%d}`)
	sink := &memSink{}
	res := ingestBody(t, p, io.MultiReader(strings.NewReader(before), strings.NewReader(long), strings.NewReader(after)), sink, 0)
	if res.Err != nil || res.Accepted != 2000 || res.Rejected != 1 || res.Lines != 2001 || len(res.Errors) != 1 ||
		res.Errors[0].Line != 1001 || !strings.Contains(res.Errors[0].Error, fmt.Sprintf("line is %d bytes", len(long)-1)) {
		t.Fatalf("%+v", res)
	}
	got := sink.stored()
	if !strings.Contains(got[999], `"i":1000`) || !strings.Contains(got[1000], `"j":1`) {
		t.Fatalf("lines around the skipped one: %q %q", got[999], got[1000])
	}
	// At the very end, without a final newline.
	sink = &memSink{}
	res = ingestBody(t, p, strings.NewReader(before+strings.TrimSuffix(long, "\n")), sink, 0)
	if res.Err != nil || res.Accepted != 1000 || res.Rejected != 1 || res.Lines != 1001 || res.Errors[0].Line != 1001 {
		t.Fatalf("long last line: %+v", res)
	}
}

// TestIngestSinkFailure: when the sink refuses a chunk, the lines before
// it stay stored, the rest are not, and Lines says where it stopped.
func TestIngestSinkFailure(t *testing.T) {
	p := newTestPipeline(t, Config{Workers: 2, ChunkBytes: 100, MaxLineBytes: 50})
	body := lines(100, `{"ts":1767323045,"i":"%03d"}`)
	full := errors.New("disk full")
	sink := &memSink{fail: func(call int) error {
		if call == 3 {
			return full
		}
		return nil
	}}
	res := ingestBody(t, p, strings.NewReader(body), sink, 0)
	got := sink.stored()
	if !errors.Is(res.Err, full) || res.Accepted != int64(len(got)) || res.Lines != res.Accepted || len(got) == 0 || len(got) >= 100 {
		t.Fatalf("%+v, stored %d", res, len(got))
	}
	if want := fmt.Sprintf(`"i":"%03d"`, len(got)); !strings.Contains(got[len(got)-1], want) {
		t.Fatalf("stored lines are not a prefix: last %q", got[len(got)-1])
	}
	// A failed acknowledgement: its lines are not counted.
	sink = &memSink{ackErr: func(call int) error {
		if call == 1 {
			return full
		}
		return nil
	}}
	res = ingestBody(t, p, strings.NewReader(body), sink, 0)
	if !errors.Is(res.Err, full) || res.Accepted != int64(len(sink.stored())) {
		t.Fatalf("ack failure: %+v, stored %d", res, len(sink.stored()))
	}
	if p.MemoryUsed() != 0 {
		t.Fatalf("memory reserved: %d", p.MemoryUsed())
	}
}

// TestIngestBusy: a sink that stays full fails the request with ErrBusy
// after MaxWait.
func TestIngestBusy(t *testing.T) {
	p := newTestPipeline(t, Config{Workers: 1, ChunkBytes: 100, MaxLineBytes: 50, MaxWait: 50 * time.Millisecond})
	sink := &memSink{block: make(chan struct{})}
	res := ingestBody(t, p, strings.NewReader(lines(10, `{"i":%d}`)), sink, 0)
	if !errors.Is(res.Err, ErrBusy) || res.Accepted != 0 || res.Lines != 0 {
		t.Fatalf("%+v", res)
	}
}

// TestAdmitAndWait: with memory for two chunks, Admit refuses a third
// request, and many concurrent multi-chunk requests all finish (requests
// that wait for memory hold none).
func TestAdmitAndWait(t *testing.T) {
	p := newTestPipeline(t, Config{Workers: 2, ChunkBytes: 100, MaxLineBytes: 50, MemoryBytes: 400})
	a, ok1 := p.Admit(-1)
	b, ok2 := p.Admit(-1)
	if !ok1 || !ok2 {
		t.Fatal("Admit refused with room")
	}
	if _, ok := p.Admit(-1); ok {
		t.Fatal("Admit took a third chunk of 200 bytes out of 400")
	}
	if c, ok := p.Admit(10); ok {
		t.Fatal("small body admitted with no room left")
	} else {
		_ = c
	}
	a.Release()
	a.Release() // twice is harmless
	// A body of 10 bytes reserves the buffer class that holds 11: 25 bytes.
	if c, ok := p.Admit(10); !ok || p.MemoryUsed() != 200+2*25 {
		t.Fatalf("small body: ok %v, memory %d", ok, p.MemoryUsed())
	} else {
		c.Release()
	}
	b.Release()

	body := lines(200, `{"ts":1767323045,"i":"%03d"}`)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var results []Result
	for range 16 {
		wg.Go(func() {
			var tk *Ticket
			for {
				var ok bool
				if tk, ok = p.Admit(-1); ok {
					break
				}
				time.Sleep(time.Millisecond)
			}
			res := p.Ingest(context.Background(), tk, &Request{Body: iotest.HalfReader(strings.NewReader(body)), Sink: &memSink{}})
			mu.Lock()
			results = append(results, res)
			mu.Unlock()
		})
	}
	wg.Wait()
	for _, r := range results {
		if r.Err != nil || r.Accepted != 200 {
			t.Fatalf("%+v", r)
		}
	}
	if p.MemoryUsed() != 0 {
		t.Fatalf("memory reserved: %d", p.MemoryUsed())
	}
}

// TestIngestCancel: a cancelled request stops, and what it enqueued is
// still counted exactly.
func TestIngestCancel(t *testing.T) {
	p := newTestPipeline(t, Config{Workers: 2, ChunkBytes: 100, MaxLineBytes: 50})
	ctx, cancel := context.WithCancel(context.Background())
	sink := &memSink{}
	pr, pw := io.Pipe()
	go func() {
		pw.Write([]byte(lines(10, `{"i":%d}`)))
		cancel()
		pw.CloseWithError(context.Canceled)
	}()
	tk, _ := p.Admit(-1)
	res := p.Ingest(ctx, tk, &Request{Body: pr, Sink: sink})
	if res.Err == nil || res.Accepted != int64(len(sink.stored())) {
		t.Fatalf("%+v, stored %d", res, len(sink.stored()))
	}
}

// TestPipelineClose: Ingest after Close fails with ErrClosed and releases
// its ticket; a request running at Close finishes.
func TestPipelineClose(t *testing.T) {
	p, err := NewPipeline(Config{Workers: 2, ChunkBytes: 100, MaxLineBytes: 50})
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	done := make(chan Result)
	tk, _ := p.Admit(-1)
	go func() { done <- p.Ingest(context.Background(), tk, &Request{Body: pr, Sink: &memSink{}}) }()
	pw.Write([]byte(lines(10, `{"i":%d}`)))
	p.Close()
	p.Close()
	pw.Write([]byte(lines(10, `{"i":%d}`)))
	pw.Close()
	if res := <-done; res.Err != nil || res.Accepted != 20 {
		t.Fatalf("request running at Close: %+v", res)
	}
	tk2, _ := p.Admit(-1)
	if res := p.Ingest(context.Background(), tk2, &Request{Body: strings.NewReader("{}\n"), Sink: &memSink{}}); !errors.Is(res.Err, ErrClosed) {
		t.Fatalf("after Close: %+v", res)
	}
	if p.MemoryUsed() != 0 {
		t.Fatalf("memory reserved: %d", p.MemoryUsed())
	}
}
