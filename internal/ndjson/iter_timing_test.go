package ndjson

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/spate-io/spate/internal/gen"
)

var (
	sinkInt int
	sinkMap map[string]any
)

// benchLines returns 1 MiB of generated log lines (~400 bytes each, 13-15
// fields, one nested object) and their total size including newlines.
func benchLines(b *testing.B) ([][]byte, int64) {
	b.Helper()
	lines := genLines(b, 1<<20)
	var size int64
	for _, line := range lines {
		size += int64(len(line)) + 1
	}
	return lines, size
}

// BenchmarkIter walks realistic lines: walk-only (Next until false, the
// validation every line pays), walk+key and walk+value (one accessor per
// leaf), walk+key+value (decoding every leaf, as printing all fields
// would), and as baselines walk-strict (the scanning path alone, without
// Next's fast path and key prediction), encoding/json unmarshalling the
// same bytes into a map and json.Valid.
func BenchmarkIter(b *testing.B) {
	lines, size := benchLines(b)
	b.Run("walk", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		var it Iter
		n := 0
		for b.Loop() {
			for _, line := range lines {
				it.Reset(line)
				for it.Next() {
					n++
				}
				if it.Err() != nil {
					b.Fatal(it.Err())
				}
			}
		}
		sinkInt = n
	})
	b.Run("walk+key", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		var it Iter
		n := 0
		for b.Loop() {
			for _, line := range lines {
				it.Reset(line)
				for it.Next() {
					n += len(it.Key())
				}
			}
		}
		sinkInt = n
	})
	b.Run("walk+value", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		var it Iter
		n := 0
		for b.Loop() {
			for _, line := range lines {
				it.Reset(line)
				for it.Next() {
					n += len(it.Value())
				}
			}
		}
		sinkInt = n
	})
	b.Run("walk+key+value", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		var it Iter
		n := 0
		for b.Loop() {
			for _, line := range lines {
				it.Reset(line)
				for it.Next() {
					n += len(it.Key()) + len(it.Value())
				}
			}
		}
		sinkInt = n
	})
	b.Run("walk-strict", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		var it Iter
		n := 0
		for b.Loop() {
			for _, line := range lines {
				it.Reset(line)
				for it.nextStrict() {
					n++
				}
				if it.Err() != nil {
					b.Fatal(it.Err())
				}
			}
		}
		sinkInt = n
	})
	b.Run("encoding-json-map", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			for _, line := range lines {
				var m map[string]any
				if err := json.Unmarshal(line, &m); err != nil {
					b.Fatal(err)
				}
				sinkMap = m
			}
		}
	})
	b.Run("encoding-json-valid", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			for _, line := range lines {
				if json.Valid(line) {
					n++
				}
			}
		}
		sinkInt = n
	})
}

// BenchmarkIterPlainText measures rejecting lines that are not JSON
// objects, which happens on every line of a plain-text file.
func BenchmarkIterPlainText(b *testing.B) {
	line := []byte(`2026-01-02T00:00:00.041Z INFO api-gateway GET /api/v1/shipments/74673 200 18.188ms`)
	b.SetBytes(int64(len(line)) + 1)
	b.ReportAllocs()
	var it Iter
	for b.Loop() {
		it.Reset(line)
		for it.Next() {
		}
		if it.Err() == nil {
			b.Fatal("plain text accepted")
		}
	}
}

// BenchmarkScanString measures the SWAR string scan alone on ASCII,
// escaped and non-ASCII contents.
func BenchmarkScanString(b *testing.B) {
	for _, c := range []struct{ name, s string }{
		{"ascii-8", `abcdefgh"`},
		{"ascii-64", `GET /api/v1/shipments/74673 exported 76 returns to object storage"`},
		{"escaped-64", `GET /api/v1/shipments/74673 \"exported\" 76 returns to \\object\"`},
		{"utf8-64", `экспортировано 76 возвратов в хранилище объектов"`},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := []byte(c.s)
			b.SetBytes(int64(len(s)))
			n := 0
			for b.Loop() {
				end, _, _ := scanString(s, 0)
				n += end
			}
			sinkInt = n
		})
	}
}

// BenchmarkIterLayouts walks generated lines in 1, 2 and 8 field layouts
// (gen.Config.Layouts, interleaved by service), as a query does: each key
// is classified once per token and every key but service is skipped from
// then on (KeyToken, Skip).
func BenchmarkIterLayouts(b *testing.B) {
	for _, layouts := range []int{1, 2, 8} {
		var buf bytes.Buffer
		if _, err := gen.Write(context.Background(), &buf, gen.Config{Seed: 1, Size: 1 << 20, Layouts: layouts, Workers: 1}); err != nil {
			b.Fatal(err)
		}
		lines := bytes.Split(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n"))
		b.Run(fmt.Sprintf("layouts=%d", layouts), func(b *testing.B) {
			b.SetBytes(int64(buf.Len()))
			b.ReportAllocs()
			var it Iter
			var classified [512]uint64 // token per slot, to classify each key once (as the record builder does)
			n := 0
			for b.Loop() {
				for _, line := range lines {
					it.Reset(line)
					for it.Next() {
						tok := it.KeyToken()
						if tok != 0 && classified[tok%512] == tok {
							n++ // service, by its token
							continue
						}
						if string(it.Key()) != "service" {
							it.Skip(tok)
							continue
						}
						n++
						classified[tok%512] = tok
					}
					if it.Err() != nil {
						b.Fatal(it.Err())
					}
				}
			}
			sinkInt = n
		})
	}
}
