package storescan

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spate-io/spate/internal/fileread"
	"github.com/spate-io/spate/internal/gen"
	"github.com/spate-io/spate/internal/query"
	"github.com/spate-io/spate/internal/segindex"
	"github.com/spate-io/spate/internal/segment"
)

type collectSink struct{ rows []string }

func (s *collectSink) WriteRow(r *query.Row) error {
	var b strings.Builder
	for _, f := range r.Fields {
		fmt.Fprintf(&b, "%s=%s\x00", f.Name, f.Value)
	}
	s.rows = append(s.rows, b.String())
	return nil
}

// sameRows compares two answers, numbers within a relative 1e-9 (sums of
// floats depend on the order rows are added in, which parallel workers
// change from run to run).
func sameRows(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		fa, fb := strings.Split(a[i], "\x00"), strings.Split(b[i], "\x00")
		if len(fa) != len(fb) {
			return false
		}
		for j := range fa {
			if fa[j] == fb[j] {
				continue
			}
			na, va, _ := strings.Cut(fa[j], "=")
			nb, vb, _ := strings.Cut(fb[j], "=")
			x, err1 := strconv.ParseFloat(va, 64)
			y, err2 := strconv.ParseFloat(vb, 64)
			if na != nb || err1 != nil || err2 != nil || math.Abs(x-y) > 1e-9*math.Max(math.Abs(x), math.Abs(y)) {
				return false
			}
		}
	}
	return true
}

// oddLines are lines the columns must read exactly as the query engine
// does: renamed fields, numbers, nested objects, escapes, empty values,
// repeated keys, times without a zone, and lines that are not JSON.
const oddLines = `{"ts":"2026-01-02T00:00:01Z","message":"renamed","service":"odd","status":"500","latency_ms":1e3}
{"_time":"2026-01-02T00:00:02.5+02:00","_msg":"x","service":"odd","http":{"code":404},"level":"err\"or"}
{"_time":"2026-01-02 00:00:03","_msg":"no zone","service":"zoneless","status":503}
{"_time":"1767312004","_msg":"unix","service":"odd","level":"","status":200}
{"_time":"2026-01-02T00:00:05Z","_msg":"dup","service":"a","service":"b","bytes":-0}
not json, _time:2026 service:odd
{"_time":"2026-01-02T00:00:06Z","_msg":"\u00e9t\u00e9","service":"\u00e9","path":"/\u0041"}
{"_time":"2026-01-02T00:00:07Z","_msg":"units","service":"units","latency_ms":"1.5s","bytes":"2KB","http.remote_ip":"10.1.2.3"}
`

// TestColumnsMatchLines runs queries over a store with sidecars, reading
// hot columns, and again reading every line (no Index), and checks the
// answers agree; then damages the sidecars' columns and checks again.
func TestColumnsMatchLines(t *testing.T) {
	dir := t.TempDir()
	st, err := segment.Open(dir, segment.Options{
		Logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
		IndexLines: query.NewIndexLines(), IndexNumbers: query.IndexNumbers, CompressDelay: -1, MaxSegmentBytes: 3 << 20,
	})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := gen.Write(context.Background(), &buf, gen.Config{Size: 6 << 20, Seed: 7, Layouts: 3}); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	for len(data) > 0 {
		n := min(len(data), 256<<10)
		n = bytes.LastIndexByte(data[:n], '\n') + 1
		if err := st.Append(context.Background(), []segment.Group{{Day: "2026-01-02", Lines: data[:n]}}); err != nil {
			t.Fatal(err)
		}
		if len(data) == buf.Len() {
			if err := st.Append(context.Background(), []segment.Group{{Day: "2026-01-02", Lines: []byte(oddLines)}}); err != nil {
				t.Fatal(err)
			}
			// A segment of JSON lines whose times have no zone (oddLines'
			// plain line keeps its segment from columns).
			zl := `{"_time":"2026-01-03 00:00:07","_msg":"no zone","service":"zoneless","status":"200"}` + "\n"
			if err := st.Append(context.Background(), []segment.Group{{Day: "2026-01-03", Lines: []byte(zl + zl + zl)}}); err != nil {
				t.Fatal(err)
			}
		}
		data = data[n:]
	}
	st.Close()
	// Reopen: the last segment is sealed and compressed too.
	if st, err = segment.Open(dir, segment.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), IndexLines: query.NewIndexLines(), IndexNumbers: query.IndexNumbers, CompressDelay: -1}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for st.Stats().CompressPending > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	st.Close()
	idx, _ := filepath.Glob(filepath.Join(dir, "0-0", "*", "*.idx"))
	if len(idx) < 3 {
		t.Fatalf("%d sidecars, want one per segment", len(idx))
	}

	queries := []string{
		`* | stats count()`,
		`* | stats by (service) count() | sort by (service)`,
		`status:>=500 | stats by (service) count(), avg(latency_ms), quantile(0.95, latency_ms), median(bytes) | sort by (service)`,
		`level:=error | stats count()`,
		`level:="" | stats count()`,
		`* | stats by (path) sum(bytes) | sort by (path) | limit 50`,
		`service:~"ca" host:worker* | stats count_uniq(user_id), min(bytes), max(latency_ms), sum_len(path), count_empty(level)`,
		`* | stats by (_time:1m) count() | sort by (_time)`,
		`_time:[2026-01-02T00:01:00Z, 2026-01-02T00:02:00Z) | stats by (level) count() | sort by (level)`,
		`_time:>2026-01-02T00:00:04Z | stats count(), min(_time)`,
		`nosuchfield:x | stats count()`,
		`* | filter status:404 | stats by (method, http.proto) count() | sort by (method, http.proto)`,
		`service:odd OR service:zoneless OR service:é | stats by (service, status, level) count(), sum(latency_ms) | sort by (service, status, level)`,
		`http.code:404 | stats count()`,
		`{service="odd"} | stats count()`,
		`* | stats by (region) uniq_values(retry) | sort by (region)`,
		`* | stats by (region, retry) count() | sort by (region, retry)`,
		`status:404 | stats by (method, service) count() n | sort by (method, service)`,
		`status:404 | stats by (method, user_id) count() n | sort by (n desc, method, user_id) | limit 20`,
		`nosuchfield:"" | stats by (level) count() | sort by (level)`,
		`_time:[2026-01-02T00:00:30Z, 2026-01-02T00:01:40Z) | stats by (_time:10s, level) count() | sort by (_time, level)`,
		`_time:[2026-01-02T00:00:30Z, 2026-01-02T00:01:40Z) level:=error | stats by (_time:10s) count() | sort by (_time)`,
		`_time:>=2026-01-02T00:00:20Z _time:<2026-01-02T00:02:00Z | stats by (service) count() | sort by (service)`,
		`* | stats by (_time:1d offset 3h, service) count() | sort by (_time, service)`,
		`* | stats by (_time:week) count()`,
		// Blocks in one bucket are counted from their packed columns'
		// counts, blocks over several bucket by bucket.
		`* | stats by (_time:1h, service) count() | sort by (_time, service)`,
		`* | stats by (_time:1s, level) count() | sort by (_time, level)`,
		// Values read as numbers though not decimals (durations, byte
		// sizes, IPv4 addresses), by the filters, the stats and the
		// sidecars' numeric ranges alike.
		`status:len_range(3, 3) | stats count()`,
		`host:string_range(a, m) | stats by (service) count() | sort by (service)`,
		`http.remote_ip:ipv4_range(10.0.0.0/8) | stats count()`,
		`latency_ms:le_field(bytes) | stats by (level) count() | sort by (level)`,
		`latency_ms:>1s | stats count()`,
		`bytes:range(1KB, 3KB) | stats count()`,
		`http.remote_ip:>"10.1.0.0" http.remote_ip:<"10.2.0.0" | stats count()`,
		`service:units OR service:odd | stats by (service) sum(bytes) s, max(latency_ms) m | sort by (service)`,
		`_time:>2026-01-02T00:01:00Z OR level:=error | stats by (level) count() | sort by (level)`,
		`NOT _time:>2026-01-02T00:01:00Z | stats by (_time:30s) count() | sort by (_time)`,
		`* | stats by (level) rate() | sort by (level)`,
		`upstream | stats count()`,
		`"i/o timeout" | stats by (service) count() | sort by (service)`,
		`_msg:été | stats count()`,
		`_time:[2026-01-02T00:00:00Z, 2026-01-02T00:03:00Z) timeout | stats by (level) count() | sort by (level)`,
		`path:~"v1/ord" | stats count(), sum(bytes)`,
		`user_id:u_1* | stats count()`,
		`upstream returned | stats count()`,
	}
	now := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
	var afterIndex func() // called after each sidecar is opened
	var tz *time.Location // the queries' time zone (nil: UTC)
	runAs := func(qs string, index, ordered bool) ([]string, query.Stats) {
		t.Helper()
		q, err := query.Parse(qs, now)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(qs, "rate()") {
			q.AddTimeFilter(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC).UnixNano(), now.UnixNano())
		}
		in, err := New(segment.Tenant{}, q, true)
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		var names []string
		if err := in.Add(dir, func(name string, _ int64) { names = append(names, name) }); err != nil {
			t.Fatal(err)
		}
		opts := query.Options{StoreFields: true, Unordered: !ordered, TimeZone: tz}
		if index {
			opts.Index = in.Index
			if afterIndex != nil {
				opts.Index = func(name string) *segindex.Index {
					ix := in.Index(name)
					afterIndex()
					return ix
				}
			}
		}
		var sink collectSink
		qst, err := query.Run(context.Background(), q, names, fileread.Config{Open: in.Open, Workers: 2, ParallelInputs: 2, NoMmap: true}, opts, &sink)
		if err != nil {
			t.Fatalf("%s (index %v): %v", qs, index, err)
		}
		return sink.rows, qst
	}
	run := func(qs string, index bool) ([]string, query.Stats) { return runAs(qs, index, false) }
	check := func(damaged bool) {
		for _, qs := range queries {
			want, _ := run(qs, false)
			got, qst := run(qs, true)
			if !sameRows(got, want) {
				t.Errorf("%s (damaged %v):\nfrom columns %q\nfrom lines   %q", qs, damaged, got, want)
			}
			if !damaged && !strings.Contains(qs, "{service") && !strings.Contains(qs, "min(_time)") && qst.ColumnBlocks+qst.TokenSkippedBlocks+qst.ValueSkippedBlocks == 0 {
				t.Errorf("%s: no block read from columns", qs)
			}
			if damaged && qst.ColumnBytes > 0 && qst.ColumnFallbacks == 0 {
				t.Errorf("%s: damaged columns read without a fallback", qs)
			}
			if len(want) == 0 {
				t.Errorf("%s: no rows", qs)
			}
		}
	}
	check(false)

	// In another time zone the line without one reads 5 hours earlier:
	// its block's columns must not hold its time as UTC.
	tz = time.FixedZone("UTC+5", 5*3600)
	for _, qs := range []string{
		`service:zoneless | stats by (_time:1h) count()`,
		`_time:<2026-01-02T00:00:00Z | stats count()`,
		`* | stats by (_time:1h, service) count() | sort by (_time, service)`,
	} {
		want, _ := run(qs, false)
		got, _ := run(qs, true)
		if !sameRows(got, want) || len(want) == 0 {
			t.Errorf("%s (UTC+5):\nthrough sidecars %q\nwithout          %q", qs, got, want)
		}
	}
	tz = nil

	// Queries that read lines: blocks decoded alone, in parallel, those
	// out of the time range or without the tokens they need skipped; rows
	// in file order when ordered.
	var first struct {
		Trace string `json:"trace_id"`
		Path  string `json:"path"`
	}
	if err := json.Unmarshal(buf.Bytes()[:bytes.IndexByte(buf.Bytes(), '\n')], &first); err != nil || first.Trace == "" {
		t.Fatalf("no trace_id in the first line: %v", err)
	}
	needles := []string{
		`trace_id:=` + first.Trace,
		`trace_id:` + first.Trace[:10] + `*`,
		`path:="` + first.Path + `" | stats count()`,
		`"` + first.Trace + `" OR level:error | stats count()`,
		`trace_id:in(` + first.Trace + `, nosuchtrace)`,
		`contains_all(upstream, timeout) | stats count()`,
		`service:é`,
		`latency_ms:>2500 | fields _time, latency_ms, service`,
		`bytes:range(0, 1) | stats count()`,
		`status:>=500 status:<=503 latency_ms:<5 | stats by (status) count() | sort by (status)`,
		`{service="odd"} | stats count()`,
	}
	for _, qs := range needles {
		for _, ordered := range []bool{true, false} {
			want, _ := runAs(qs, false, ordered)
			got, qst := runAs(qs, true, ordered)
			// A trace id is in one frame of its block: the others are
			// ruled out by their blooms (blocks hold 8 frames here).
			if strings.HasPrefix(qs, "trace_id:=") && qst.TokenSkippedFrames < 5 {
				t.Errorf("%s (ordered %v): %d frames skipped by their blooms", qs, ordered, qst.TokenSkippedFrames)
			}
			if !ordered {
				slices.Sort(want)
				slices.Sort(got)
			}
			if !sameRows(got, want) || len(want) == 0 {
				t.Errorf("%s (ordered %v):\nthrough sidecars %q\nwithout          %q", qs, ordered, got, want)
			}
			// (A prefix of one token has no whole token; OR and common
			// words rule nothing out.)
			prunes := !strings.Contains(qs, " OR ") && !strings.Contains(qs, "*") && !strings.Contains(qs, "upstream")
			if prunes && qst.TokenSkippedBlocks+qst.ValueSkippedBlocks == 0 {
				t.Errorf("%s: no block skipped by token blooms, numeric ranges or streams", qs)
			}
		}
	}
	for _, qs := range []string{
		`level:error | limit 20`,
		`service:odd`,
		`"lock wait" | fields _time, service, _msg | limit 30`,
		`_time:[2026-01-02T00:01:00Z, 2026-01-02T00:01:10Z) | fields _time, level`,
		`* | sort by (_time) desc | limit 5`,
		`* | stats by (service) count() | sort by (service)`,
		`_msg:upstream | stats count()`,
		`* | uniq by (level)`,
	} {
		for _, ordered := range []bool{true, false} {
			want, _ := runAs(qs, false, ordered)
			got, qst := runAs(qs, true, ordered)
			if ordered || strings.Contains(qs, "sort") || strings.Contains(qs, "stats") || strings.Contains(qs, "uniq") {
				if !sameRows(got, want) {
					t.Errorf("%s (ordered %v):\nthrough sidecars %q\nwithout          %q", qs, ordered, got, want)
				}
			} else if len(got) != len(want) {
				t.Errorf("%s (unordered): %d rows through sidecars, %d without", qs, len(got), len(want))
			}
			if qst.LineBlocks+qst.ColumnBlocks == 0 {
				t.Errorf("%s (ordered %v): no block read through sidecars", qs, ordered)
			}
			if len(want) == 0 {
				t.Errorf("%s: no rows", qs)
			}
		}
	}
	if _, qst := run(`_time:[2026-01-02T00:01:00Z, 2026-01-02T00:02:00Z) | stats count()`, true); qst.SkippedBlocks == 0 {
		t.Errorf("a one-minute range skipped no block")
	}

	// A segment rewritten between the opening of its sidecar and of its
	// lines (here, its mtime changes) is read as a file: same answers.
	zsts, _ := filepath.Glob(filepath.Join(dir, "0-0", "*", "*.zst"))
	mtimes := map[string]time.Time{}
	for _, z := range zsts {
		fi, err := os.Stat(z)
		if err != nil {
			t.Fatal(err)
		}
		mtimes[z] = fi.ModTime()
	}
	afterIndex = func() {
		for _, z := range zsts {
			os.Chtimes(z, mtimes[z], mtimes[z].Add(time.Second))
		}
	}
	for _, ordered := range []bool{true, false} {
		qs := `trace_id:=` + first.Trace
		want, _ := runAs(qs, false, ordered)
		got, qst := runAs(qs, true, ordered)
		if !sameRows(got, want) || len(want) == 0 || qst.LineBlocks != 0 {
			t.Errorf("%s (ordered %v), segments rewritten under their sidecars: %d blocks read through them, got %q, want %q", qs, ordered, qst.LineBlocks, got, want)
		}
		for z, mt := range mtimes {
			os.Chtimes(z, mt, mt)
		}
	}
	afterIndex = nil

	// Damage every column frame (the data area): answers stay the same,
	// from the lines.
	for _, p := range idx {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		tlen := int(b[16]) | int(b[17])<<8 | int(b[18])<<16 | int(b[19])<<24
		for i := 32 + tlen; i < len(b); i += 7 {
			b[i] ^= 0x5a
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		// Keep the sidecar's view of its segment (size and mtime).
		z := strings.TrimSuffix(p, ".idx")
		fi, _ := os.Stat(z)
		os.Chtimes(z, fi.ModTime(), fi.ModTime())
	}
	check(true)
	if !slices.ContainsFunc(queries, func(q string) bool { return q != "" }) {
		t.Fatal("no queries")
	}
}
