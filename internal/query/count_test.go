package query

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/spate-io/spate/internal/fileread"
)

// TestCountLogLines checks the block-wise count against a line-by-line one,
// with empty lines, CR and block boundaries in every position.
func TestCountLogLines(t *testing.T) {
	forEachKernel(t, testCountLogLines)
}

func testCountLogLines(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	pieces := []string{"a", "bc\n", "\n", "\r\n", "x\r\n", "\r", "{\"k\":1}\n"}
	long := string(bytes.Repeat([]byte("x"), 300)) + "\n"
	for round := range 2000 {
		var b bytes.Buffer
		target := r.IntN(3 * countBlock)
		for b.Len() < target {
			switch {
			case r.IntN(50) == 0:
				b.WriteString(pieces[r.IntN(len(pieces))])
			case round%2 == 0:
				b.WriteString(long) // blocks counted newline by newline
			default:
				b.WriteString("line of text\n") // blocks counted with bytes.Count
			}
		}
		data := b.Bytes()
		if got, want := countLogLines(data), refCountLines(data); got != want {
			t.Fatalf("countLogLines = %d, want %d", got, want)
		}
	}
}

// refCountLines is the reference count of non-empty lines: one NextLine
// call per line.
func refCountLines(data []byte) int64 {
	n := int64(0)
	for d := data; len(d) > 0; {
		line, rest := fileread.NextLine(d)
		if len(line) > 0 {
			n++
		}
		d = rest
	}
	return n
}
