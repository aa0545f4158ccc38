package benchingest

import (
	"bytes"
	"context"
	"fmt"

	"github.com/klauspost/compress/gzip"

	"github.com/spate-io/spate/internal/gen"
)

// body is one pre-built request body. Bodies are made before the clock
// starts and only read during the run, by any number of clients at once.
type body struct {
	raw   []byte // NDJSON lines, each ending in '\n'; aliases the pool
	wire  []byte // what is sent: raw in the protocol, gzip-compressed with Gzip
	lines int64  // lines in raw
}

// pool is the pre-generated data of a run, split into request bodies.
type pool struct {
	data   []byte // all generated lines; the bodies' raw slices alias it
	lines  int64  // lines in data
	bodies []body
}

// makePool generates size bytes of NDJSON with internal/gen (seeded, so the
// same for every run with the same seed), splits it into bodies of about
// batchBytes, encodes each in proto and, if gz is set, compresses it. It allocates size
// bytes, plus about a tenth of that again for the gzip streams, once;
// nothing is generated or copied per request afterwards.
func makePool(ctx context.Context, size int64, batchBytes int, seed uint64, gz bool, proto Protocol) (*pool, error) {
	var buf bytes.Buffer
	buf.Grow(int(size))
	st, err := gen.Write(ctx, &buf, gen.Config{Seed: seed, Size: size, Format: "ndjson"})
	if err != nil {
		return nil, fmt.Errorf("cannot generate the request bodies: %w", err)
	}
	if st.Lines == 0 {
		return nil, fmt.Errorf("cannot generate the request bodies: %d bytes hold no whole generated line", size)
	}
	p := &pool{data: buf.Bytes(), lines: st.Lines}
	for _, raw := range splitBodies(nil, p.data, batchBytes) {
		b := body{raw: raw, wire: raw, lines: int64(bytes.Count(raw, []byte{'\n'}))}
		if b.wire, err = proto.encode(raw); err != nil {
			return nil, err
		}
		if gz {
			if b.wire, err = gzipBytes(b.wire); err != nil {
				return nil, err
			}
		}
		p.bodies = append(p.bodies, b)
	}
	return p, nil
}

// splitBodies appends to dst the bodies of data: consecutive slices of data
// (aliasing it, not copies) that together cover every line exactly once, in
// order. Each body is the longest run of whole lines that fits in target
// bytes, or a single line when that line alone is longer. data must consist
// of lines that each end in '\n'; a trailing unterminated line is dropped,
// so every body ends in '\n'. target <= 0 means one line per body.
func splitBodies(dst [][]byte, data []byte, target int) [][]byte {
	for len(data) > 0 {
		n := 0 // length of the body being built
		if target > 0 {
			// Fast path: the last newline within target bytes.
			n = bytes.LastIndexByte(data[:min(len(data), target)], '\n') + 1
		}
		if n == 0 {
			// Slow path: one line longer than target (or target <= 0).
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				break // the unterminated tail
			}
			n = i + 1
		}
		dst = append(dst, data[:n:n])
		data = data[n:]
	}
	return dst
}

// gzipBytes returns p compressed as one gzip stream at the default level.
func gzipBytes(p []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(p); err != nil {
		return nil, fmt.Errorf("cannot gzip a request body: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("cannot gzip a request body: %w", err)
	}
	return buf.Bytes(), nil
}
