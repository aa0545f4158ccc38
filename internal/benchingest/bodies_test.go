package benchingest

import (
	"bytes"
	"context"
	"io"
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
		p, err := makePool(context.Background(), 300<<10, 64<<10, 3, gz, JSONLine)
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
	if _, err := makePool(context.Background(), 10, 1<<20, 1, false, JSONLine); err == nil || !strings.Contains(err.Error(), "hold no whole generated line") {
		t.Fatalf("a pool smaller than one line: %v", err)
	}
}
