package fileread

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// FuzzChunker checks that every strategy, with any chunk size and window,
// splits any input into chunks that join back to the input and yield the
// reference reader's lines. Inputs are capped at 1 MiB to keep each
// iteration (nine scans of a file) fast.
func FuzzChunker(f *testing.F) {
	for _, s := range []string{"", "\n", "a", "a\n", "a\r\nb", "\n\n\n", "abc\ndef\nghi", "x\r\n\r\n"} {
		f.Add([]byte(s), uint16(1), uint8(1))
		f.Add([]byte(s), uint16(3), uint8(2))
	}
	if seeds, _ := filepath.Glob("../../testdata/*.ndjson"); len(seeds) > 0 {
		for _, p := range seeds {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b, uint16(64), uint8(1))
			}
		}
	}
	dir := f.TempDir()
	n := 0
	f.Fuzz(func(t *testing.T, data []byte, chunk uint16, window uint8) {
		if len(data) > 1<<20 || DetectCompression(data) != None {
			// Plain text only: bytes that start like gzip or zstd are read
			// as compressed, which mmap and pread refuse by design.
			t.Skip()
		}
		n++
		p := filepath.Join(dir, fmt.Sprintf("in-%d", n%4))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(p)
		for _, cfg := range []Config{
			{Strategy: Mmap, ChunkSize: int(chunk), MmapWindow: pageSize * int64(1+window%4)},
			{Strategy: Mmap, ChunkSize: int(chunk), MmapWindow: -1},
			{Strategy: Pread, ChunkSize: int(chunk)},
			{Strategy: Bufio, ChunkSize: int(chunk)},
			{Strategy: Stream, ChunkSize: int(chunk)},
		} {
			for _, workers := range []int{1, 3} {
				cfg.Workers = workers
				per, _, err := collect(t, []string{p}, cfg)
				if err != nil {
					t.Fatalf("%s chunk=%d: %v", cfg.Strategy, cfg.ChunkSize, err)
				}
				checkChunks(t, fmt.Sprintf("%s chunk=%d workers=%d", cfg.Strategy, cfg.ChunkSize, workers), per[0], data)
			}
		}
	})
}
