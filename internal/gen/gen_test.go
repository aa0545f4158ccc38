package gen

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// generate returns the output for cfg and checks that Stats describe it.
func generate(t *testing.T, cfg Config) []byte {
	t.Helper()
	var buf bytes.Buffer
	st, err := Write(context.Background(), &buf, cfg)
	if err != nil {
		t.Fatalf("Write(%+v): %v", cfg, err)
	}
	out := buf.Bytes()
	if st.Bytes != int64(len(out)) {
		t.Fatalf("Write(%+v): Stats.Bytes = %d, wrote %d bytes", cfg, st.Bytes, len(out))
	}
	if want := int64(bytes.Count(out, []byte{'\n'})); st.Lines != want {
		t.Fatalf("Write(%+v): Stats.Lines = %d, wrote %d lines", cfg, st.Lines, want)
	}
	return out
}

// lines splits output into lines without their "\n".
func lines(out []byte) []string {
	s := strings.TrimSuffix(string(out), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// sampleSize is enough bytes for well over 20k lines in every format.
const sampleSize = 12 << 20

// sample returns the first n lines (after the csv header) of a seed-1
// output, generated once per format.
var sampleCache = map[string][]string{}

func sample(t *testing.T, format string, n int) []string {
	t.Helper()
	ls, ok := sampleCache[format]
	if !ok {
		ls = lines(generate(t, Config{Seed: 1, Size: sampleSize, Format: format}))
		if format == "csv" {
			ls = ls[1:]
		}
		sampleCache[format] = ls
	}
	if len(ls) < n {
		t.Fatalf("sample(%s): %d lines, want %d", format, len(ls), n)
	}
	return ls[:n]
}

func TestDeterministic(t *testing.T) {
	f := func(format string, size int64) {
		t.Helper()
		want := generate(t, Config{Seed: 42, Size: size, Format: format, Workers: 1})
		if int64(len(want)) < size/2 {
			t.Fatalf("%s/%d: only %d bytes", format, size, len(want))
		}
		for _, workers := range []int{1, 2, 7, 0} {
			got := generate(t, Config{Seed: 42, Size: size, Format: format, Workers: workers})
			if !bytes.Equal(got, want) {
				t.Fatalf("%s/%d: Workers=%d output differs from Workers=1 (len %d vs %d)", format, size, workers, len(got), len(want))
			}
		}
	}
	// 5 MiB spans several blocks in every format, so 2 and 7 workers
	// interleave.
	for _, format := range Formats() {
		f(format, 5<<20)
		f(format, 100_000)
	}
	f("", 64<<10)
	if a, b := generate(t, Config{Seed: 3, Size: 1 << 20}), generate(t, Config{Seed: 3, Size: 1 << 20, Format: "ndjson"}); !bytes.Equal(a, b) {
		t.Fatalf(`Format "" and "ndjson" differ`)
	}
}

func TestSeedsDiffer(t *testing.T) {
	for _, format := range Formats() {
		a := generate(t, Config{Seed: 1, Size: 1 << 20, Format: format})
		b := generate(t, Config{Seed: 2, Size: 1 << 20, Format: format})
		la, lb := lines(a), lines(b)
		same := 0
		for i := range min(len(la), len(lb)) {
			if la[i] == lb[i] {
				same++
			}
		}
		if same > 1 { // the csv header
			t.Fatalf("%s: seeds 1 and 2 share %d lines", format, same)
		}
	}
}

func TestSizeContract(t *testing.T) {
	for _, format := range Formats() {
		big := generate(t, Config{Seed: 9, Size: 3 << 20, Format: format})
		f := func(size int64) {
			t.Helper()
			out := generate(t, Config{Seed: 9, Size: size, Format: format, Workers: 3})
			if int64(len(out)) > size {
				t.Fatalf("%s/%d: %d bytes, more than Size", format, size, len(out))
			}
			if len(out) > 0 && out[len(out)-1] != '\n' {
				t.Fatalf("%s/%d: output does not end in a newline", format, size)
			}
			if !bytes.HasPrefix(big, out) {
				t.Fatalf("%s/%d: output is not a prefix of the longer output", format, size)
			}
			// Longest sequence of whole lines: the next line must not fit.
			next := bytes.IndexByte(big[len(out):], '\n') + 1
			if next <= 0 || int64(len(out)+next) <= size {
				t.Fatalf("%s/%d: stopped at %d bytes although the next line (%d bytes) fits", format, size, len(out), next)
			}
			if size-int64(len(out)) >= maxLineLen {
				t.Fatalf("%s/%d: %d bytes short of Size, want < %d", format, size, size-int64(len(out)), maxLineLen)
			}
		}
		for _, size := range []int64{1, 10, 100, 249, 1000, 4096, 64 << 10, 1 << 20, 1<<20 + 1, 2_000_000} {
			f(size)
		}
		// Sizes at line and block boundaries.
		ls := lines(big)
		off := 0
		for i, l := range ls {
			off += len(l) + 1
			if i < 3 || i == blockLines-1 || i == blockLines || i == blockLines+1 {
				f(int64(off))
				f(int64(off - 1))
				f(int64(off + 1))
			}
		}
		for _, size := range []int64{0, 1, 10, 100} {
			if out := generate(t, Config{Seed: 9, Size: size, Format: format}); len(out) != 0 {
				t.Fatalf("%s/%d: got %q, want empty output", format, size, out)
			}
		}
	}
}

func TestUnknownFormat(t *testing.T) {
	var buf bytes.Buffer
	_, err := Write(context.Background(), &buf, Config{Size: 1000, Format: "xml"})
	if err == nil || err.Error() != `unknown format "xml": want ndjson, csv or logfmt` {
		t.Fatalf("Write with format xml: err = %v", err)
	}
	path := filepath.Join(t.TempDir(), "x")
	if _, err := WriteFile(context.Background(), path, Config{Size: 1000, Format: "JSON"}); err == nil {
		t.Fatalf("WriteFile with format JSON: no error")
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("WriteFile with a bad format created the file: %v", err)
	}
	if got := Formats(); !slices.Equal(got, []string{"ndjson", "csv", "logfmt"}) {
		t.Fatalf("Formats() = %q", got)
	}
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Write(ctx, io.Discard, Config{Size: 1 << 20}); err != context.Canceled {
		t.Fatalf("Write with a canceled context: err = %v, want context.Canceled", err)
	}

	// Cancel from inside the writer, after the first block.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	w := &cancelWriter{cancel: cancel}
	st, err := Write(ctx, w, Config{Size: 1 << 40, Workers: 2})
	if err != context.Canceled {
		t.Fatalf("Write canceled mid-stream: err = %v, want context.Canceled", err)
	}
	if st.Bytes != w.n || w.writes != 1 {
		t.Fatalf("Write canceled mid-stream: Stats.Bytes = %d after %d writes of %d bytes", st.Bytes, w.writes, w.n)
	}

	// WriteFile removes the partial file.
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	path := filepath.Join(t.TempDir(), "big.ndjson")
	if _, err := WriteFile(ctx, path, Config{Size: 1 << 40}); err != context.DeadlineExceeded {
		t.Fatalf("WriteFile past its deadline: err = %v, want context.DeadlineExceeded", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("WriteFile left the partial file behind: %v", err)
	}
}

type cancelWriter struct {
	cancel    func()
	n, writes int64
}

func (w *cancelWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	w.writes++
	w.cancel()
	return len(p), nil
}

type failWriter struct{ after int }

var errDiskFull = errors.New("disk full")

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) <= w.after {
		w.after -= len(p)
		return len(p), nil
	}
	n := w.after
	w.after = 0
	return n, errDiskFull
}

func TestWriteError(t *testing.T) {
	want := generate(t, Config{Seed: 1, Size: 4 << 20})
	st, err := Write(context.Background(), &failWriter{after: 2_000_000}, Config{Seed: 1, Size: 4 << 20})
	if !errors.Is(err, errDiskFull) {
		t.Fatalf("Write to a failing writer: err = %v, want %v", err, errDiskFull)
	}
	if st.Bytes != 2_000_000 || st.Lines != int64(bytes.Count(want[:2_000_000], []byte{'\n'})) {
		t.Fatalf("Write to a failing writer: Stats = %+v", st)
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.csv")
	cfg := Config{Seed: 5, Size: 300_000, Format: "csv"}
	st, err := WriteFile(context.Background(), path, cfg)
	if err != nil {
		t.Fatalf("WriteFile: %v", err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("ReadFile: %v", err)
	}
	if want := generate(t, cfg); !bytes.Equal(got, want) || st.Bytes != int64(len(want)) {
		t.Fatalf("WriteFile wrote %d bytes (Stats %+v), Write %d; equal: %v", len(got), st, len(want), bytes.Equal(got, want))
	}

	bad := filepath.Join(dir, "no-such-dir", "out.csv")
	_, err = WriteFile(context.Background(), bad, cfg)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("cannot create %q", bad)) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("WriteFile into a missing directory: err = %v", err)
	}
}

// ndjsonKeys is the fixed key order of NDJSON lines.
var ndjsonKeys = []string{"ts", "level", "service", "host", "method", "path", "status", "latency_ms", "bytes", "trace_id", "user_id", "msg", "http"}

// topLevelKeys returns the keys of a JSON object in document order.
func topLevelKeys(line string) ([]string, error) {
	dec := json.NewDecoder(strings.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not an object: %v %v", tok, err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, tok.(string))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

func TestNDJSON(t *testing.T) {
	const n = 20_000
	ls := sample(t, "ndjson", n)

	var (
		levels                               = map[string]int{}
		services, hosts, paths               = map[string]bool{}, map[string]bool{}, map[string]bool{}
		nullUser, quoted, nonASCII, withHTTP int
		missing, extra                       int
		nErrors, fivexx, errors5xx           int
		inRange                              int
		prevTS                               string
		latInfo, latError                    []float64
	)
	for i, line := range ls {
		if !utf8.ValidString(line) {
			t.Fatalf("line %d: invalid UTF-8: %q", i, line)
		}
		if len(line)+1 > maxLineLen {
			t.Fatalf("line %d: %d bytes, more than %d", i, len(line)+1, maxLineLen)
		}
		if len(line)+1 >= 250 && len(line)+1 <= 500 {
			inRange++
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %d: invalid JSON: %v\n%s", i, err, line)
		}
		keys, err := topLevelKeys(line)
		if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		// Known keys come in the fixed order, extras after them.
		next := 0
		for _, k := range keys {
			j := slices.Index(ndjsonKeys, k)
			if j < 0 {
				next = len(ndjsonKeys)
				continue
			}
			if j < next {
				t.Fatalf("line %d: key %q out of order: %q", i, k, keys)
			}
			next = j + 1
		}
		for _, k := range []string{"host", "latency_ms", "bytes", "trace_id"} {
			if _, ok := m[k]; !ok {
				missing++
			}
		}
		if slices.ContainsFunc(keys, func(k string) bool { return !slices.Contains(ndjsonKeys, k) }) {
			extra++
		}

		ts := m["ts"].(string)
		if _, err := time.Parse("2006-01-02T15:04:05.000Z", ts); err != nil {
			t.Fatalf("line %d: ts %q: %v", i, ts, err)
		}
		if ts < prevTS {
			t.Fatalf("line %d: ts %q before %q", i, ts, prevTS)
		}
		prevTS = ts

		level := m["level"].(string)
		levels[level]++
		services[m["service"].(string)] = true
		if h, ok := m["host"].(string); ok {
			hosts[h] = true
		}
		paths[m["path"].(string)] = true
		if _, ok := m["method"].(string); !ok {
			t.Fatalf("line %d: no method", i)
		}
		if m["user_id"] == nil {
			nullUser++
		} else if u := m["user_id"].(string); !strings.HasPrefix(u, "u_") {
			t.Fatalf("line %d: user_id %q", i, u)
		}
		if tr, ok := m["trace_id"].(string); ok && len(tr) != 32 {
			t.Fatalf("line %d: trace_id %q", i, tr)
		}
		msg := m["msg"].(string)
		if strings.Contains(msg, `"`) {
			quoted++
		}
		for j := 0; j < len(msg); j++ {
			if msg[j] >= 0x80 {
				nonASCII++
				break
			}
		}
		if h, ok := m["http"].(map[string]any); ok {
			withHTTP++
			if h["proto"] == nil || h["ua"] == nil || h["remote_ip"] == nil {
				t.Fatalf("line %d: incomplete http object %v", i, h)
			}
		}
		status := int(m["status"].(float64))
		if level == "error" {
			nErrors++
		}
		if status >= 500 {
			fivexx++
			if level == "error" {
				errors5xx++
			}
		}
		if lat, ok := m["latency_ms"].(float64); ok {
			switch level {
			case "info":
				latInfo = append(latInfo, lat)
			case "error":
				latError = append(latError, lat)
			}
		}
	}

	share := func(name string, k int, lo, hi float64) {
		t.Helper()
		if s := float64(k) / n; s < lo || s > hi {
			t.Fatalf("%s: share %.4f, want %.2f..%.2f", name, s, lo, hi)
		}
	}
	count := func(name string, k, lo, hi int) {
		t.Helper()
		if k < lo || k > hi {
			t.Fatalf("%s: %d, want %d..%d", name, k, lo, hi)
		}
	}
	share("lines of 250..500 bytes", inRange, 0.9, 1)
	share("level=info", levels["info"], 0.7, 0.9)
	share("level=warn", levels["warn"], 0.05, 0.15)
	share("level=error", levels["error"], 0.02, 0.08)
	share("level=debug", levels["debug"], 0.02, 0.08)
	count("services", len(services), 15, 25)
	count("hosts", len(hosts), 150, 1000)
	count("paths", len(paths), 100, n)
	share("user_id null", nullUser, 0.05, 0.15)
	share(`msg with '"'`, quoted, 0.005, 0.05)
	share("msg with non-ASCII", nonASCII, 0.005, 0.05)
	share("http present", withHTTP, 0.8, 0.97)
	share("missing field", missing, 0.002, 0.03)
	share("extra field", extra, 0.002, 0.03)
	if p := float64(errors5xx) / float64(nErrors); p <= 0.5 {
		t.Fatalf("P(status>=500 | level=error) = %.3f, want > 0.5", p)
	}
	if p := float64(errors5xx) / float64(fivexx); p <= 0.5 {
		t.Fatalf("P(level=error | status>=500) = %.3f, want > 0.5", p)
	}
	// Long tail, errors slower.
	sort.Float64s(latInfo)
	sort.Float64s(latError)
	p50, p99 := latInfo[len(latInfo)/2], latInfo[len(latInfo)*99/100]
	if p99 < 5*p50 {
		t.Fatalf("info latency p50 %.3f, p99 %.3f: want a long tail", p50, p99)
	}
	if e50 := latError[len(latError)/2]; e50 < 2*p50 {
		t.Fatalf("median latency: error %.3f, info %.3f: want errors slower", e50, p50)
	}
}

// TestLineLengths checks maxLineLen on many lines of every format.
func TestLineLengths(t *testing.T) {
	size := int64(64 << 20)
	if testing.Short() {
		size = 8 << 20
	}
	for _, format := range Formats() {
		var w maxLineWriter
		if _, err := Write(context.Background(), &w, Config{Seed: 11, Size: size, Format: format}); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if w.max > maxLineLen {
			t.Fatalf("%s: longest line %d bytes, want <= %d", format, w.max, maxLineLen)
		}
		t.Logf("%s: longest line %d bytes", format, w.max)
	}
}

// maxLineWriter records the longest line written to it.
type maxLineWriter struct{ cur, max int }

func (w *maxLineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.cur += len(p)
			break
		}
		w.max = max(w.max, w.cur+i+1)
		w.cur = 0
		p = p[i+1:]
	}
	return n, nil
}

func TestCSV(t *testing.T) {
	out := generate(t, Config{Seed: 1, Size: 4 << 20, Format: "csv"})
	r := csv.NewReader(bytes.NewReader(out))
	r.ReuseRecord = true
	header, err := r.Read()
	if err != nil {
		t.Fatalf("reading the header: %v", err)
	}
	header = slices.Clone(header) // r reuses its record
	want := strings.Split(strings.TrimSuffix(csvHeader, "\n"), ",")
	if !slices.Equal(header, want) {
		t.Fatalf("header = %q, want %q", header, want)
	}
	// The same seed gives the same records in every format.
	nd := sample(t, "ndjson", 5000)
	for i := 0; ; i++ {
		rec, err := r.Read() // checks the field count against the header
		if err == io.EOF {
			if i < 5000 {
				t.Fatalf("only %d records", i)
			}
			break
		}
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if i >= len(nd) {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(nd[i]), &m); err != nil {
			t.Fatalf("ndjson line %d: %v", i, err)
		}
		for j, col := range header {
			if got, want := rec[j], flatValue(m, col); got != want {
				t.Fatalf("record %d column %s = %q, ndjson has %q", i, col, got, want)
			}
		}
	}
}

// flatValue returns the value of a csv column or logfmt key in a decoded
// NDJSON line, as text, or "" when it is null or missing.
func flatValue(m map[string]any, col string) string {
	v := m[col]
	if sub, ok := strings.CutPrefix(strings.Replace(col, "http_", "http.", 1), "http."); ok {
		h, _ := m["http"].(map[string]any)
		v = h[sub]
	}
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case float64:
		if col == "latency_ms" {
			return strconv.FormatFloat(v, 'f', 3, 64)
		}
		return strconv.FormatFloat(v, 'f', -1, 64)
	case []any:
		s := make([]string, len(v))
		for i, x := range v {
			s[i] = x.(string)
		}
		return strings.Join(s, ",")
	}
	return fmt.Sprint(v)
}

// logfmtKV is one key=value pair of a logfmt line.
type logfmtKV struct{ key, value string }

// parseLogfmt is a strict test-only logfmt parser: bare values may not
// contain '"', '=' or '\'; quoted values allow only \" and \\ escapes.
func parseLogfmt(line string) ([]logfmtKV, error) {
	var kvs []logfmtKV
	for line != "" {
		eq := strings.IndexByte(line, '=')
		if eq <= 0 || strings.ContainsAny(line[:eq], " \"\\") {
			return nil, fmt.Errorf("bad key in %q", line)
		}
		key := line[:eq]
		line = line[eq+1:]
		var val string
		if strings.HasPrefix(line, `"`) {
			var b strings.Builder
			j := 1
			for ; j < len(line) && line[j] != '"'; j++ {
				c := line[j]
				if c == '\\' {
					j++
					if j == len(line) || line[j] != '"' && line[j] != '\\' {
						return nil, fmt.Errorf("bad escape in %q", line)
					}
					c = line[j]
				}
				b.WriteByte(c)
			}
			if j == len(line) {
				return nil, fmt.Errorf("unterminated quote in %q", line)
			}
			val, line = b.String(), line[j+1:]
		} else {
			end := strings.IndexByte(line, ' ')
			if end < 0 {
				end = len(line)
			}
			val, line = line[:end], line[end:]
			if val == "" || strings.ContainsAny(val, "\"=\\") {
				return nil, fmt.Errorf("bad bare value %q", val)
			}
		}
		kvs = append(kvs, logfmtKV{key, val})
		if line != "" {
			if line[0] != ' ' {
				return nil, fmt.Errorf("no space after %s=%q", key, val)
			}
			line = line[1:]
		}
	}
	return kvs, nil
}

func TestParseLogfmt(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		kvs, err := parseLogfmt(in)
		got := fmt.Sprint(kvs)
		if err != nil {
			got = "error"
		}
		if got != want {
			t.Fatalf("parseLogfmt(%q) = %s, want %s", in, got, want)
		}
	}
	f(`a=1 b="x y" c="q\"\\"`, `[{a 1} {b x y} {c q"\}]`)
	f(`a=1`, `[{a 1}]`)
	f(`a=`, `error`)
	f(`a="x`, `error`)
	f(`a=x"y`, `error`)
	f(`a=1  b=2`, `error`)
	f(`a="\n"`, `error`)
}

func TestLogfmt(t *testing.T) {
	keys := []string{"ts", "level", "service", "host", "method", "path", "status", "latency_ms", "bytes", "trace_id", "user_id", "msg", "http.proto", "http.ua", "http.remote_ip"}
	extras := []string{"retry", "region", "tags"}
	ls := sample(t, "logfmt", 20_000)
	nd := sample(t, "ndjson", 20_000)
	for i, line := range ls {
		kvs, err := parseLogfmt(line)
		if err != nil {
			t.Fatalf("line %d: %v\n%s", i, err, line)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(nd[i]), &m); err != nil {
			t.Fatalf("ndjson line %d: %v", i, err)
		}
		next := 0
		seen := map[string]bool{}
		for _, kv := range kvs {
			j := slices.Index(keys, kv.key)
			switch {
			case j >= next:
				next = j + 1
			case j < 0 && slices.Contains(extras, kv.key):
				next = len(keys)
			default:
				t.Fatalf("line %d: unexpected or misplaced key %q", i, kv.key)
			}
			seen[kv.key] = true
			if want := flatValue(m, kv.key); kv.value != want {
				t.Fatalf("line %d: %s=%q, ndjson has %q", i, kv.key, kv.value, want)
			}
		}
		for _, k := range []string{"ts", "level", "service", "method", "path", "status", "msg"} {
			if !seen[k] {
				t.Fatalf("line %d: no %s", i, k)
			}
		}
		if seen["user_id"] != (m["user_id"] != nil) {
			t.Fatalf("line %d: user_id in logfmt %v, ndjson %v", i, seen["user_id"], m["user_id"])
		}
	}
}

func TestAppendTS(t *testing.T) {
	f := func(tm time.Time) {
		t.Helper()
		ms := tm.UnixMilli()
		got := string(appendTS(nil, ms))
		want := time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
		if got != want {
			t.Fatalf("appendTS(%d) = %s, want %s", ms, got, want)
		}
	}
	f(time.Unix(0, 0))
	f(time.Date(2026, 1, 2, 3, 4, 5, 678e6, time.UTC))
	f(time.Date(2000, 2, 29, 23, 59, 59, 999e6, time.UTC))
	f(time.Date(1900, 3, 1, 0, 0, 0, 0, time.UTC))
	f(time.Date(1969, 12, 31, 23, 59, 59, 1e6, time.UTC))
	f(time.Date(2100, 12, 31, 12, 0, 0, 0, time.UTC))
	r := rng{s: 1}
	for range 100_000 {
		f(time.UnixMilli(int64(r.next()%(8000*365*86_400_000)) - 1000*365*86_400_000))
	}
}

func TestTablesNeedNoJSONEscaping(t *testing.T) {
	var all []string
	all = append(all, levelNames[:]...)
	all = append(all, services[:]...)
	all = append(all, methods[:]...)
	all = append(all, protos[:]...)
	all = append(all, userAgents[:]...)
	all = append(all, regions[:]...)
	for _, h := range hosts {
		all = append(all, h.name)
	}
	for _, ts := range tagSets {
		all = append(all, ts...)
	}
	for _, s := range all {
		if b := appendJSONString(nil, []byte(s)); string(b) != `"`+s+`"` {
			t.Fatalf("table value %q needs JSON escaping", s)
		}
	}
	for _, s := range append(all[:0:0], append(levelNames[:], append(services[:], append(methods[:], append(protos[:], regions[:]...)...)...)...)...) {
		if b := appendLogfmtValue(nil, []byte(s)); string(b) != s {
			t.Fatalf("table value %q needs logfmt quoting", s)
		}
	}
	names := map[string]bool{}
	for _, h := range hosts {
		names[h.name] = true
	}
	if len(names) != len(services)*hostsPerService {
		t.Fatalf("%d distinct host names, want %d", len(names), len(services)*hostsPerService)
	}
}

func TestPickTable(t *testing.T) {
	weights := []float64{80, 10, 5, 5, 0, 0.0001}
	tab := newPickTable(weights)
	counts := make([]int, len(weights))
	for _, v := range tab {
		counts[v]++
	}
	for i, w := range weights {
		want := w / 100.0001 * float64(len(tab))
		if math.Abs(float64(counts[i])-want) > 4 || w > 0 && counts[i] == 0 || w == 0 && counts[i] != 0 {
			t.Fatalf("index %d (weight %v): %d slots, want about %.1f", i, w, counts[i], want)
		}
	}
}

// TestLayouts: with Layouts, each line is valid JSON holding the same
// fields and values as the line of the same record in the one layout (plus
// "pod" in odd layouts), in one of Layouts key orders by service, and some
// layouts differ before the service field.
func TestLayouts(t *testing.T) {
	var one, mixed bytes.Buffer
	if _, err := Write(context.Background(), &one, Config{Seed: 3, Size: 2 << 20}); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(context.Background(), &mixed, Config{Seed: 3, Size: 2 << 20, Layouts: 8}); err != nil {
		t.Fatal(err)
	}
	a := strings.Split(strings.TrimSuffix(one.String(), "\n"), "\n")
	b := strings.Split(strings.TrimSuffix(mixed.String(), "\n"), "\n")
	orders := map[string]bool{}
	beforeService := map[string]bool{}
	for i := range min(len(a), len(b)) {
		var ma, mb map[string]any
		if err := json.Unmarshal([]byte(a[i]), &ma); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(b[i]), &mb); err != nil {
			t.Fatalf("line %d: %v: %s", i, err, b[i])
		}
		delete(mb, "pod")
		if !reflect.DeepEqual(ma, mb) {
			t.Fatalf("line %d: %s\nvs %s", i, b[i], a[i])
		}
		dec := json.NewDecoder(strings.NewReader(b[i]))
		dec.Token()
		var keys []string
		for dec.More() {
			k, _ := dec.Token()
			keys = append(keys, k.(string))
			var v any
			dec.Decode(&v)
		}
		if len(keys) >= 13 { // no field missing: the order is the layout's
			orders[strings.Join(keys[:len(keys)-2], ",")] = true
			before, _, _ := strings.Cut(strings.Join(keys, ","), "service")
			beforeService[before] = true
		}
	}
	if len(orders) < 8 || len(beforeService) < 4 {
		t.Fatalf("%d key orders, %d different runs of keys before service", len(orders), len(beforeService))
	}
	if _, err := Write(context.Background(), io.Discard, Config{Size: 100, Layouts: 2, Format: "csv"}); err == nil {
		t.Fatal("layouts accepted for csv")
	}
}
