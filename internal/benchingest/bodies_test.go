package benchingest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"

	"github.com/spate-io/spate/internal/gen"
)

func TestSplitBodies(t *testing.T) {
	f := func(data string, target int, want ...string) {
		t.Helper()
		var got []string
		for _, b := range splitBodies(nil, []byte(data), target) {
			got = append(got, string(b))
		}
		if strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
			t.Fatalf("splitBodies(%q, %d)\ngot  %q\nwant %q", data, target, got, want)
		}
	}
	f("", 10)
	f("a\n", 10, "a\n")
	f("a\nb\nc\n", 100, "a\nb\nc\n")
	f("a\nb\nc\n", 4, "a\nb\n", "c\n")
	f("a\nb\nc\n", 2, "a\n", "b\n", "c\n")
	f("a\nb\nc\n", 3, "a\n", "b\n", "c\n")
	f("aaaa\nb\n", 2, "aaaa\n", "b\n")                     // a line longer than target is a body of its own
	f("a\nbbbbbb\nc\nd\n", 4, "a\n", "bbbbbb\n", "c\nd\n") // … and the next body starts after it
	f("a\nb\n", 0, "a\n", "b\n")                           // target <= 0: one line per body
	f("a\nb\ntail", 100, "a\nb\n")                         // the unterminated tail is dropped
	f("a\nb\ntail", 2, "a\n", "b\n")
	f("\n\n\n", 2, "\n\n", "\n")
}

// TestSplitBodiesGenerated checks splitBodies on generated logs at many
// targets: the bodies concatenate back to the input (every line exactly
// once, in order), each ends in '\n' and fits its target unless it is a
// single line.
func TestSplitBodiesGenerated(t *testing.T) {
	var buf bytes.Buffer
	if _, err := gen.Write(context.Background(), &buf, gen.Config{Seed: 7, Size: 200 << 10, Format: "ndjson"}); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	for _, target := range []int{1, 100, 333, 1000, 4096, 65536, 1 << 20} {
		bodies := splitBodies(nil, data, target)
		var joined []byte
		for i, b := range bodies {
			if len(b) == 0 || b[len(b)-1] != '\n' {
				t.Fatalf("target %d: body %d does not end in a newline", target, i)
			}
			if len(b) > target && bytes.Count(b, []byte{'\n'}) != 1 {
				t.Fatalf("target %d: body %d has %d bytes and %d lines", target, i, len(b), bytes.Count(b, []byte{'\n'}))
			}
			if i+1 < len(bodies) && len(b) < target {
				// It is the most lines that fit: the next line would not.
				next := bodies[i+1]
				if len(b)+bytes.IndexByte(next, '\n')+1 <= target {
					t.Fatalf("target %d: body %d (%d bytes) could have taken the next line", target, i, len(b))
				}
			}
			joined = append(joined, b...)
		}
		if !bytes.Equal(joined, data) {
			t.Fatalf("target %d: the bodies do not add up to the input", target)
		}
	}
}

func TestMakePool(t *testing.T) {
	for _, gz := range []bool{false, true} {
		p, err := makePool(context.Background(), 300<<10, 64<<10, 3, "", gz, JSONLine)
		if err != nil {
			t.Fatal(err)
		}
		var lines int64
		var joined []byte
		for i, b := range p.bodies {
			lines += b.lines
			joined = append(joined, b.raw...)
			wire := b.wire
			if gz {
				zr, err := gzip.NewReader(bytes.NewReader(b.wire))
				if err != nil {
					t.Fatalf("body %d: %v", i, err)
				}
				if wire, err = io.ReadAll(zr); err != nil {
					t.Fatalf("body %d: %v", i, err)
				}
				if len(b.wire) >= len(b.raw) {
					t.Errorf("body %d: gzip did not shrink it: %d -> %d bytes", i, len(b.raw), len(b.wire))
				}
			}
			if !bytes.Equal(wire, b.raw) {
				t.Fatalf("gzip=%v: body %d: the wire bytes are not the raw bytes", gz, i)
			}
		}
		if lines != p.lines || !bytes.Equal(joined, p.data) || len(p.bodies) < 4 {
			t.Fatalf("gzip=%v: %d bodies, %d lines (pool %d)", gz, len(p.bodies), lines, p.lines)
		}
	}
	if _, err := makePool(context.Background(), 10, 1<<20, 1, "", false, JSONLine); err == nil || !strings.Contains(err.Error(), "hold no whole generated line") {
		t.Fatalf("a pool smaller than one line: %v", err)
	}
}

func TestMakePoolInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	ctx := context.Background()
	lines := `{"ts":"2026-01-02T03:04:05Z","msg":"one","service":"a"}` + "\n" +
		`{"ts":1767323045,"msg":"two","service":"b"}` + "\n" +
		`{"msg":"three","n":3}` // no '\n' at the end of the file
	whole := write("whole.ndjson", lines)
	for _, tc := range []struct {
		size  int64
		want  string
		lines int64
	}{
		{1 << 20, lines + "\n", 3},                                               // all of it; the last line gets its '\n'
		{int64(len(lines)), lines + "\n", 3},                                     // exactly the file
		{int64(len(lines)) - 1, lines[:strings.LastIndexByte(lines, '\n')+1], 2}, // the last line cut: left out
		{60, lines[:strings.IndexByte(lines, '\n')+1], 1},
	} {
		p, err := makePool(ctx, tc.size, 1<<20, 1, whole, false, JSONLine)
		if err != nil {
			t.Fatalf("size %d: %v", tc.size, err)
		}
		if string(p.data) != tc.want || p.lines != tc.lines || len(p.bodies) != 1 || p.bodies[0].lines != tc.lines {
			t.Errorf("size %d: pool %q, %d lines, %d bodies", tc.size, p.data, p.lines, len(p.bodies))
		}
	}

	// The other protocols parse the lines: the numeric ts is no RFC 3339
	// time, so it stays a field (an attribute), and the line is sent.
	p, err := makePool(ctx, 1<<20, 1<<20, 1, whole, false, OTLP)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(p.bodies[0].wire, []byte("1767323045")) || !bytes.Contains(p.bodies[0].wire, []byte("three")) {
		t.Errorf("the OTLP body lacks the second line's ts or the third line: %q", p.bodies[0].wire)
	}

	for _, tc := range []struct {
		name, content string
		size          int64
		proto         Protocol
		want          string
	}{
		{"empty", "", 1 << 20, JSONLine, "empty.ndjson: no lines to send: the file is empty"},
		{"long", strings.Repeat("x", 100) + "\n", 50, JSONLine, "long.ndjson: no whole line in its first 50 bytes"},
		// Body 2 starts at line 3: the error counts lines in the file.
		{"bad", "{}\n{}\n{}\nnot json\n", 1 << 20, OTLP, "bad.ndjson:4: cannot send it as otlp: not a JSON object"},
		{"bad1", "{}\n{\"a\":\n", 1 << 20, Loki, "bad1.ndjson:2: cannot send it as loki: not a JSON object"},
	} {
		path := write(tc.name+".ndjson", tc.content)
		batch := 1 << 20
		if tc.name == "bad" {
			batch = 6 // two lines a body
		}
		_, err := makePool(ctx, tc.size, batch, 1, path, false, tc.proto)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := makePool(ctx, 1<<20, 1<<20, 1, filepath.Join(dir, "absent"), false, JSONLine); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}
