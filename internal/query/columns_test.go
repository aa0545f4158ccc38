package query

import (
	"bytes"
	"context"
	"testing"

	"github.com/spate-io/spate/internal/gen"
	"github.com/spate-io/spate/internal/segindex"
	"github.com/spate-io/spate/internal/segment"
)

// BenchmarkIndexBuild is the CPU a segment's sidecar costs: every line
// read by NewIndexLines into a segindex.Builder, 1 MiB blocks of 128 KiB
// frames as the compressor gives them.
func BenchmarkIndexBuild(b *testing.B) {
	var buf bytes.Buffer
	if _, err := gen.Write(context.Background(), &buf, gen.Config{Size: 16 << 20, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	var blocks [][]byte
	for len(data) > 0 {
		n := min(len(data), 1<<20)
		n = bytes.LastIndexByte(data[:n], '\n') + 1
		blocks = append(blocks, data[:n])
		data = data[n:]
	}
	var frames [][]segindex.Frame
	for _, blk := range blocks {
		frames = append(frames, segment.RawFrames(nil, blk))
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		bl, err := segindex.NewBuilder(NewIndexLines())
		if err != nil {
			b.Fatal(err)
		}
		bl.Numbers = IndexNumbers
		for i, blk := range blocks {
			bl.AddFrames(blk, 0, frames[i])
		}
		bl.Finish(1, 1)
	}
}
