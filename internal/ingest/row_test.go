package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spate-io/spate/internal/ndjson"
	"github.com/spate-io/spate/internal/segment"
)

func TestRowWriter(t *testing.T) {
	w := RowWriter{Tenant: segment.Tenant{AccountID: 1, ProjectID: 2}}
	r := Row{Time: 1764115200123000000, Stream: 2, Fields: []Field{
		{"job", "api"}, {"env", ""}, {"_msg", "hello \"x\"\n"}, {"empty", ""}, {"_stream", "no"}, {"n", "5"},
	}}
	line := string(w.Append(nil, &r))
	want := `{"_time":"2025-11-26T00:00:00.123Z","_stream":"{job=\"api\"}","_stream_id":"`
	if !strings.HasPrefix(line, want) || !strings.HasSuffix(line, `","job":"api","_msg":"hello \"x\"\n","n":"5"}`+"\n") {
		t.Fatalf("%s", line)
	}
	// The _stream_id is the one a line with the same stream gets from
	// Processor.
	pr := NewProcessor(Params{StreamFields: []string{"job"}}, w.Tenant)
	pr.Process([]byte(`{"_time":"2025-11-26T00:00:00.123Z","job":"api"}`), 0)
	var got map[string]string
	if err := json.Unmarshal([]byte(line), &got); err != nil {
		t.Fatal(err)
	}
	if got["_stream"] != string(pr.Stream()) {
		t.Errorf("stream %q, processor %q", got["_stream"], pr.Stream())
	}
	// No stream of its own, no time.
	line = string(w.Append(nil, &Row{Stream: -1, Fields: []Field{{"a", "b"}}}))
	if line != `{"a":"b"}`+"\n" {
		t.Errorf("%s", line)
	}
	line = string(w.Append(nil, &Row{Stream: 0, Fields: []Field{{"a", "b"}}}))
	if !strings.HasPrefix(line, `{"_stream":"{}","_stream_id":"`) {
		t.Errorf("%s", line)
	}
}

// emitRows returns a decode that emits rows, each a fresh copy, and
// checks that the rows it gave are left as they were.
func emitRows(t *testing.T, rows ...Row) func(emit func(*Row) error) error {
	return func(emit func(*Row) error) error {
		for _, r := range rows {
			c := Row{Time: r.Time, Stream: r.Stream, Fields: slices.Clone(r.Fields)}
			if err := emit(&c); err != nil {
				return err
			}
			if !slices.Equal(c.Fields, r.Fields) || c.Stream != r.Stream {
				t.Errorf("decode's row changed: %+v, was %+v", c, r)
			}
		}
		return nil
	}
}

// collectRows runs decode and returns copies of the rows it emits.
func collectRows(t *testing.T, decode func(emit func(*Row) error) error) []Row {
	t.Helper()
	var out []Row
	if err := decode(func(r *Row) error {
		out = append(out, Row{Time: r.Time, Stream: r.Stream, Fields: slices.Clone(r.Fields)})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRowsParams: ignore_fields and extra_fields names leave a row's own
// stream fields, as VictoriaLogs leaves them out of its stream (found by
// TestShipperRandomHTTP: Loki labels and OpenTelemetry resource
// attributes stayed in _stream).
func TestRowsParams(t *testing.T) {
	rows := []Row{
		{Time: 1, Stream: 3, Fields: []Field{{"job", "a"}, {"level", "x"}, {"host", "h"}, {"_msg", "m"}, {"level.sub", "y"}}},
		{Time: 2, Stream: -1, Fields: []Field{{"host", "h"}}},
		{Time: 3, Stream: 0, Fields: []Field{{"level", "z"}}},
	}
	p := Params{IgnoreFields: []string{"level*"}, ExtraFields: []Field{{"host", "forced"}}}
	got := collectRows(t, RowsParams(&p, emitRows(t, rows...)))
	want := []Row{
		{Time: 1, Stream: 1, Fields: []Field{{"job", "a"}, {"_msg", "m"}, {"level.sub", "y"}}},
		rows[1], rows[2],
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	// The line: _stream without them; the Processor drops the rest.
	var w RowWriter
	pr := NewProcessor(p, segment.Tenant{})
	out, _, err := pr.Process(w.Append(nil, &got[0]), 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"_time":"1970-01-01T00:00:00.000000001Z","_stream":"{job=\"a\"}","_stream_id":"`; !strings.HasPrefix(string(out), want) ||
		!strings.HasSuffix(string(out), `","job":"a","_msg":"m","host":"forced"}`) {
		t.Errorf("line %s", out)
	}
	if p := (Params{StreamFields: []string{"a"}}); fmt.Sprint(collectRows(t, RowsParams(&p, emitRows(t, rows...)))) != fmt.Sprint(rows) {
		t.Error("rows changed without ignore_fields and extra_fields")
	}
}

// TestRenameMsgField: _msg_field takes the first named non-empty field
// after the stream fields, never a stream field (found by
// TestShipperRandomHTTP: an OpenTelemetry resource attribute named by
// _msg_field became _msg).
func TestRenameMsgField(t *testing.T) {
	f := func(names string, r Row, want string) {
		t.Helper()
		got := collectRows(t, RenameMsgField(splitList(names), emitRows(t, r)))
		if len(got) != 1 || fmt.Sprint(got[0].Fields) != want || got[0].Stream != r.Stream {
			t.Fatalf("%s: got %+v, want fields %s", names, got, want)
		}
	}
	r := Row{Stream: 1, Fields: []Field{{"message", "res"}, {"msg", ""}, {"message", "rec"}, {"msg", "m"}}}
	f("message", r, "[{message res} {msg } {_msg rec} {msg m}]")
	f("msg,message", r, "[{message res} {msg } {message rec} {_msg m}]")
	f("x", r, "[{message res} {msg } {message rec} {msg m}]")
	f("", r, "[{message res} {msg } {message rec} {msg m}]")
	f("message", Row{Stream: 1, Fields: []Field{{"message", "res"}}}, "[{message res}]")
	f("message", Row{Stream: -1, Fields: []Field{{"message", "a"}}}, "[{_msg a}]")
}

// TestRowWriterStreamCache: rows whose streams come back in any order,
// from few streams (all cached) and from many (the cache emptied when
// full), across tenant changes, give the lines and _stream texts a
// writer without history gives.
func TestRowWriterStreamCache(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, streams := range []int{1, 3, 40, 3000} {
		var w RowWriter
		for i := range 20000 {
			if i%5000 == 2500 {
				w.Tenant.AccountID++
			}
			k := rng.IntN(streams)
			host := fmt.Sprintf("host-%d%s", k, strings.Repeat("x", k%50))
			fields := []Field{{"hostname", host}, {"app_name", fmt.Sprint("app", k%7)}, {"proc_id", ""}, {"msg", fmt.Sprint(i)}}
			if k%11 == 0 {
				fields[2].Value = "-" // an extra stream field on some streams
			}
			r := Row{Time: int64(i + 1), Stream: 3, Fields: fields}
			fresh := RowWriter{Tenant: w.Tenant}
			got, want := string(w.Append(nil, &r)), string(fresh.Append(nil, &r))
			if got != want {
				t.Fatalf("%d streams, row %d: %s, want %s", streams, i, got, want)
			}
			if g, f := string(w.stream(&r)), string(fresh.stream(&r)); g != f {
				t.Fatalf("%d streams, row %d: _stream %s, want %s", streams, i, g, f)
			}
		}
		if w.streamsBytes > maxStreamCacheBytes {
			t.Fatalf("%d streams: the cache holds %d bytes", streams, w.streamsBytes)
		}
		if want := min(streams, 40); streams <= 40 && len(w.streams) != want {
			t.Errorf("%d streams: %d cached", streams, len(w.streams))
		}
	}
}

func TestRowReader(t *testing.T) {
	rr := RowReader(segment.Tenant{}, func(emit func(*Row) error) error {
		for i := range 10000 {
			if err := emit(&Row{Stream: -1, Fields: []Field{{"i", strings.Repeat("x", i%100)}}}); err != nil {
				return err
			}
		}
		return nil
	})
	data, err := io.ReadAll(rr)
	if err != nil || strings.Count(string(data), "\n") != 10000 {
		t.Fatalf("%v %d", err, strings.Count(string(data), "\n"))
	}
	rr.Close()
	// Closing early stops the decoder.
	stopped := make(chan error, 1)
	rr = RowReader(segment.Tenant{}, func(emit func(*Row) error) error {
		for {
			if err := emit(&Row{Stream: -1, Fields: []Field{{"a", "b"}}}); err != nil {
				stopped <- err
				return err
			}
		}
	})
	rr.Read(make([]byte, 10))
	rr.Close()
	if err := <-stopped; err == nil {
		t.Fatal("decoder not stopped")
	}
	// Closing a reader never read never runs its decoder.
	rr = RowReader(segment.Tenant{}, func(func(*Row) error) error {
		t.Error("decoder ran")
		return nil
	})
	rr.Close()
	if n, err := rr.Read(make([]byte, 10)); n != 0 || err == nil {
		t.Errorf("read after close: %d, %v", n, err)
	}
}

// daySink keeps, per day, the lines enqueued in order, the union of the
// groups' streams and the range of their times.
type daySink struct {
	mu    sync.Mutex
	calls int
	fail  int // the call that fails, if > 0
	days  map[string]*dayRecord
	lines int64
}

type dayRecord struct {
	lines    []byte
	streams  map[string]bool
	min, max int64
}

func (s *daySink) Enqueue(_ context.Context, groups []segment.Group) (Ack, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if s.calls == s.fail {
		return nil, errors.New("disk full")
	}
	if s.days == nil {
		s.days = map[string]*dayRecord{}
	}
	for _, g := range groups {
		d := s.days[g.Day]
		if d == nil {
			d = &dayRecord{streams: map[string]bool{}, min: g.MinTime, max: g.MaxTime}
			s.days[g.Day] = d
		}
		d.lines = append(d.lines, g.Lines...)
		s.lines += int64(bytes.Count(g.Lines, []byte{'\n'}))
		for _, st := range g.Streams {
			d.streams[st] = true
		}
		d.min, d.max = min(d.min, g.MinTime), max(d.max, g.MaxTime)
	}
	return memAck{}, nil
}

func (s *daySink) String() string {
	var b strings.Builder
	for _, day := range slices.Sorted(maps.Keys(s.days)) {
		d := s.days[day]
		fmt.Fprintf(&b, "%s [%d,%d] %q\n%s", day, d.min, d.max, slices.Sorted(maps.Keys(d.streams)), d.lines)
	}
	return b.String()
}

// onlyReader hides the type of a RowReader, so that Ingest reads its text.
type onlyReader struct{ io.Reader }

// ingestRows ingests the rows of rr with p into sink, as Ingest takes them
// (direct) or as text, and fails t (naming what) unless every reservation
// is given back and the Result's accepted lines are the ones stored.
func ingestRows(t *testing.T, p *Pipeline, rr io.ReadCloser, direct bool, hint int64, sink *daySink, tenant segment.Tenant, what string) Result {
	t.Helper()
	var body io.Reader = rr
	if !direct {
		body = onlyReader{rr}
	}
	tk, ok := p.Admit(hint)
	if !ok {
		t.Fatal("Admit refused an idle pipeline")
	}
	res := p.Ingest(context.Background(), tk, &Request{Body: body, Sink: sink, Tenant: tenant})
	rr.Close()
	if p.MemoryUsed() != 0 {
		t.Fatalf("%s: %d bytes still reserved", what, p.MemoryUsed())
	}
	if res.Accepted != sink.lines {
		t.Fatalf("%s: %d accepted, %d stored", what, res.Accepted, sink.lines)
	}
	return res
}

// TestIngestRowsDirect checks that rows taken directly from a RowReader are
// stored exactly as their text would be: the same lines, days, streams
// and times, the same results and errors, over chunk sizes, size hints
// and lines over the limit, with rows without time; and that a decoder
// failing midway or a sink failing end the request as they do the text.
func TestIngestRowsDirect(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 80 {
		cfg := Config{Workers: 1 + trial%3, ChunkBytes: 200 + rng.IntN(3000), MaxLineBytes: 100 + rng.IntN(150)}
		n := rng.IntN(400)
		failAt := -1
		if trial%5 == 4 {
			failAt = rng.IntN(n + 1)
		}
		sinkFail := 0
		if trial%7 == 6 && failAt < 0 {
			sinkFail = 1
		}
		hint := int64(-1)
		if trial%2 == 1 {
			hint = int64(rng.IntN(2000))
		}
		var rows []Row
		for i := range n {
			r := Row{Stream: rng.IntN(3) - 1}
			if rng.IntN(4) > 0 {
				r.Time = time.Date(2026, 1, 1+rng.IntN(3), 0, 0, 0, i, time.UTC).UnixNano()
			}
			svc := []string{"api", "db", "", "web"}[rng.IntN(4)]
			r.Fields = []Field{{"service", svc}, {"host", []string{"h1", "h2"}[i/50%2]},
				{"_msg", strings.Repeat("m\"", rng.IntN(cfg.MaxLineBytes/2))}, {"i", fmt.Sprint(i)}}
			rows = append(rows, r)
		}
		decode := func(emit func(*Row) error) error {
			for i := range rows {
				if i == failAt {
					return errors.New("bad varint")
				}
				r := rows[i]
				if err := emit(&r); err != nil {
					return err
				}
			}
			return nil
		}
		run := func(direct bool) (Result, *daySink) {
			p := newTestPipeline(t, cfg)
			sink := &daySink{fail: sinkFail}
			tenant := segment.Tenant{AccountID: 7}
			res := ingestRows(t, p, RowReader(tenant, decode), direct, hint, sink, tenant, fmt.Sprintf("trial %d direct %v", trial, direct))
			return res, sink
		}
		res, sink := run(true)
		want, wantSink := run(false)
		if fmt.Sprint(res.Err) != fmt.Sprint(want.Err) {
			t.Fatalf("trial %d: error %v, text path %v", trial, res.Err, want.Err)
		}
		switch {
		case sinkFail > 0:
			// Chunks are cut differently, so a failing sink stops each path
			// at a different line.
		case failAt >= 0:
			// Rows before the failure are all dealt with (the text path
			// loses those still in its writer's buffer).
			if res.Lines != int64(failAt) || res.Lines < want.Lines {
				t.Fatalf("trial %d: %d lines dealt with before row %d failed; text path %d", trial, res.Lines, failAt, want.Lines)
			}
		default:
			if res.Accepted != want.Accepted || res.Rejected != want.Rejected || res.Lines != want.Lines ||
				res.StoredBytes != want.StoredBytes || res.BodyBytes != want.BodyBytes || !slices.Equal(res.Errors, want.Errors) {
				t.Fatalf("trial %d: %+v, text path %+v", trial, res, want)
			}
			if got, want := sink.String(), wantSink.String(); got != want {
				t.Fatalf("trial %d: stored\n%s\ntext path\n%s", trial, got, want)
			}
		}
	}
}

// TestIngestWritten checks that lines RowWriter wrote, given as Written,
// are stored as the validating path stores them, and that lines not
// written so (no time, other layouts, bad JSON) are still checked.
func TestIngestWritten(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	w := RowWriter{Tenant: segment.Tenant{AccountID: 3}}
	var body []byte
	for i := range 3000 {
		switch rng.IntN(20) {
		case 0:
			body = append(body, "not json\n"...)
		case 1:
			body = append(body, fmt.Sprintf(`{"_time":"2026-01-02T03:04:05Z","i":%d`+"\n", i)...) // cut short
		case 2:
			body = append(body, fmt.Sprintf(`{"i":%d,"_time":"2026-01-02T03:04:05Z","_stream":"{a=\"b\"}"}`+"\n", i)...)
		case 3:
			body = append(body, `{"_time":"yesterday"}`+"\n"...)
		default:
			r := Row{Time: time.Date(2026, 1, 1+rng.IntN(3), 0, 0, 0, i, time.UTC).UnixNano(), Stream: rng.IntN(3) - 1,
				Fields: []Field{{"app", []string{"a\"x", "b\\y", "c", "é"}[rng.IntN(4)]}, {"_msg", strings.Repeat("m", rng.IntN(50))}}}
			if rng.IntN(10) == 0 {
				r.Time = 0 // written without a time: checked as any line
			}
			body = w.Append(body, &r)
		}
	}
	run := func(written bool) (Result, *daySink) {
		p := newTestPipeline(t, Config{ChunkBytes: 4096})
		sink := &daySink{}
		tk, _ := p.Admit(-1)
		res := p.Ingest(context.Background(), tk, &Request{Body: bytes.NewReader(body), Sink: sink, Written: written})
		return res, sink
	}
	res, sink := run(true)
	want, wantSink := run(false)
	if res.Err != nil || res.Accepted != want.Accepted || res.Rejected != want.Rejected || res.Lines != want.Lines ||
		!slices.Equal(res.Errors, want.Errors) || res.Rejected == 0 {
		t.Fatalf("%+v\nvalidating path %+v", res, want)
	}
	if got, want := sink.String(), wantSink.String(); got != want {
		t.Fatalf("stored\n%s\nvalidating path\n%s", got, want)
	}
}

// TestIngestWrittenLong checks that a line RowWriter wrote, given as
// Written, is stored when longer than MaxLineBytes (syslog bounds the
// message, not its line), and that other lines are still held to it.
func TestIngestWrittenLong(t *testing.T) {
	w := RowWriter{}
	long := strings.Repeat("m", 300)
	body := w.Append(nil, &Row{Time: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC).UnixNano(), Fields: []Field{{"_msg", long}}})
	body = append(body, `{"_msg":"`+long+`"}`+"\n"...)
	for _, written := range []bool{true, false} {
		p := newTestPipeline(t, Config{ChunkBytes: 4096, MaxLineBytes: 100})
		tk, _ := p.Admit(-1)
		res := p.Ingest(context.Background(), tk, &Request{Body: bytes.NewReader(body), Sink: &daySink{}, Written: written})
		if want := int64(map[bool]int{true: 1}[written]); res.Err != nil || res.Accepted != want || res.Rejected != 2-want {
			t.Errorf("written %v: %+v, want %d accepted", written, res, want)
		}
	}
}

// TestAppendField checks the fused writer against quoting name and value
// one by one, over strings with and without bytes to escape.
func TestAppendField(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	parts := []string{"a", "service", "é", `"`, `\`, "\n", "\x01", "\xff", "0123456789abcdef"}
	word := func() string {
		var b strings.Builder
		for range rng.IntN(6) {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		return b.String()
	}
	for range 20000 {
		name, value := word(), word()
		prefix := []byte(`{"x":"y",`)[:rng.IntN(10)]
		got := appendField(slices.Clip(prefix), name, value)
		want := append(ndjson.AppendQuoted(slices.Clone(prefix), name), ':')
		want = ndjson.AppendQuoted(want, value)
		if string(got) != string(want) {
			t.Fatalf("appendField(%q, %q) = %s, want %s", name, value, got, want)
		}
	}
}

// TestIngestUnchecked checks UncheckedRowReader against RowReader: a valid
// request is stored exactly as a checked one, and its check runs only when
// its rows pass maxPendingChunks chunks or memory is short (never on the
// text path's side of things: there it runs first); a request whose decode
// fails midway stores nothing, whatever its size, and ends with a
// *CheckError carrying check's error; and no memory stays reserved.
func TestIngestUnchecked(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	big, once := 0, 0 // valid requests that needed their check, and that did not
	for trial := range 120 {
		cfg := Config{Workers: 1 + trial%3, ChunkBytes: 300 + rng.IntN(1500), MaxLineBytes: 100 + rng.IntN(150)}
		if trial%4 == 3 {
			cfg.MemoryBytes = int64(2*cfg.ChunkBytes + rng.IntN(4*cfg.ChunkBytes)) // room for 1-2 chunks
		}
		n := rng.IntN(600)
		failAt := -1
		if trial%3 == 2 {
			failAt = rng.IntN(n + 1)
			if trial%2 == 0 {
				failAt = n // after the last row
			}
		}
		var rows []Row
		for i := range n {
			r := Row{Stream: rng.IntN(3) - 1, Time: time.Date(2026, 1, 1+rng.IntN(2), 0, 0, 0, i, time.UTC).UnixNano()}
			r.Fields = []Field{{"service", []string{"api", "db"}[rng.IntN(2)]},
				{"_msg", strings.Repeat("m", rng.IntN(cfg.MaxLineBytes))}, {"i", fmt.Sprint(i)}}
			if rng.IntN(8) > 0 {
				r.Fields[1].Value = r.Fields[1].Value[:len(r.Fields[1].Value)/4] // most lines fit
			}
			rows = append(rows, r)
		}
		decode := func(emit func(*Row) error) error {
			for i := range rows {
				if i == failAt {
					return errors.New("bad varint")
				}
				if err := emit(&rows[i]); err != nil {
					return err
				}
			}
			if failAt == n {
				return errors.New("bad varint")
			}
			return nil
		}
		checks := 0
		check := func() error {
			checks++
			if failAt >= 0 {
				return fmt.Errorf("cannot read the request: row %d is bad", failAt)
			}
			return nil
		}
		run := func(rr io.ReadCloser, direct bool) (Result, *daySink) {
			sink := &daySink{}
			res := ingestRows(t, newTestPipeline(t, cfg), rr, direct, -1, sink, segment.Tenant{}, fmt.Sprintf("trial %d direct %v", trial, direct))
			return res, sink
		}
		for _, direct := range []bool{true, false} {
			checks = 0
			res, sink := run(UncheckedRowReader(segment.Tenant{}, decode, check), direct)
			if failAt >= 0 {
				var ce *CheckError
				if !errors.As(res.Err, &ce) || ce.Err.Error() != fmt.Sprintf("cannot read the request: row %d is bad", failAt) ||
					sink.lines != 0 || res.Lines != 0 || res.BodyBytes != 0 || res.Rejected != 0 {
					t.Fatalf("trial %d direct %v: failing at row %d of %d: %+v, %d stored", trial, direct, failAt, n, res, sink.lines)
				}
				if !direct && checks != 1 {
					t.Fatalf("trial %d: the text path ran check %d times", trial, checks)
				}
				continue
			}
			want, wantSink := run(RowReader(segment.Tenant{}, decode), direct)
			if res.Err != nil || res.Accepted != want.Accepted || res.Rejected != want.Rejected || res.Lines != want.Lines ||
				res.StoredBytes != want.StoredBytes || res.BodyBytes != want.BodyBytes || !slices.Equal(res.Errors, want.Errors) {
				t.Fatalf("trial %d direct %v: %+v, checked %+v", trial, direct, res, want)
			}
			if got, want := sink.String(), wantSink.String(); got != want {
				t.Fatalf("trial %d direct %v: stored\n%s\nchecked\n%s", trial, direct, got, want)
			}
			switch {
			case !direct && checks != 1:
				t.Fatalf("trial %d: the text path ran check %d times", trial, checks)
			case direct && checks > 1:
				t.Fatalf("trial %d: check ran %d times", trial, checks)
			case direct && cfg.MemoryBytes == 0 && res.StoredBytes < int64(cfg.ChunkBytes) && checks != 0:
				t.Fatalf("trial %d: %d bytes in one chunk, and check ran", trial, res.StoredBytes)
			case direct && res.StoredBytes > int64(maxPendingChunks+1)*int64(cfg.ChunkBytes+cfg.MaxLineBytes+200):
				if checks != 1 {
					t.Fatalf("trial %d: %d bytes in chunks of %d, and check ran %d times", trial, res.StoredBytes, cfg.ChunkBytes, checks)
				}
				big++
			case direct && checks == 0:
				once++
			}
		}
	}
	if big < 5 || once < 5 {
		t.Fatalf("only %d valid requests were checked for their size and %d walked once", big, once)
	}
}

// TestIngestUncheckedConcurrent runs unchecked requests, valid and not, at
// once on a pipeline with room for three chunks: no request may wait for
// memory while it holds chunks back (that could deadlock the others), and
// every valid request is stored whole, every invalid one not at all.
func TestIngestUncheckedConcurrent(t *testing.T) {
	p := newTestPipeline(t, Config{Workers: 2, ChunkBytes: 512, MaxLineBytes: 200, MemoryBytes: 3 * 2 * 512})
	sink := &daySink{}
	var wg sync.WaitGroup
	var stored, refused atomic.Int64
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			for range 40 {
				n := 1 + rng.IntN(60)
				bad := rng.IntN(3) == 0
				decode := func(emit func(*Row) error) error {
					for i := range n {
						r := Row{Stream: -1, Time: time.Date(2026, 1, 1, 0, 0, 0, i, time.UTC).UnixNano(),
							Fields: []Field{{"g", fmt.Sprint(g)}, {"_msg", strings.Repeat("m", 20+rng.IntN(100))}}}
						if err := emit(&r); err != nil {
							return err
						}
					}
					if bad {
						return errors.New("bad varint")
					}
					return nil
				}
				check := func() error {
					if bad {
						return errors.New("bad request")
					}
					return nil
				}
				tk, ok := p.Admit(-1)
				for !ok { // full: the server's 429; the client retries
					time.Sleep(time.Millisecond)
					tk, ok = p.Admit(-1)
				}
				res := p.Ingest(context.Background(), tk, &Request{Body: UncheckedRowReader(segment.Tenant{}, decode, check), Sink: sink})
				var ce *CheckError
				switch {
				case bad && errors.As(res.Err, &ce) && res.Accepted == 0:
					refused.Add(1)
				case !bad && res.Err == nil && res.Accepted == int64(n):
					stored.Add(res.Accepted)
				default:
					t.Errorf("bad %v, %d rows: %+v", bad, n, res)
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("requests still waiting after 60s: deadlock")
	}
	if sink.lines != stored.Load() || p.MemoryUsed() != 0 || refused.Load() == 0 {
		t.Fatalf("%d lines stored, %d accepted, %d refused, %d bytes still reserved", sink.lines, stored.Load(), refused.Load(), p.MemoryUsed())
	}
}
