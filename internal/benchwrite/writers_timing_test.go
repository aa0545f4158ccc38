package benchwrite

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkWriters appends 8 MiB of 100-byte records in batches of 1000
// with each writer, without syncs, to a new file in the temp dir per
// iteration (creating and removing it is timed too, a few microseconds).
// MB/s counts record bytes. Compare with `spate bench write`, which also
// runs each writer in a fresh process and syncs.
func BenchmarkWriters(b *testing.B) {
	recs := testRecords(b, (8<<20)/100, 100)
	dir := b.TempDir()
	for _, name := range Writers {
		b.Run("writer="+name, func(b *testing.B) {
			b.SetBytes(int64(len(recs.Data)))
			b.ReportAllocs()
			p := filepath.Join(dir, name+".ndjson")
			for b.Loop() {
				f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := writeRecords(context.Background(), f, name, SyncNone, recs, 1000, writerOptions{}); err != nil {
					b.Fatal(err)
				}
				if err := f.Close(); err != nil {
					b.Fatal(err)
				}
				if err := os.Remove(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
