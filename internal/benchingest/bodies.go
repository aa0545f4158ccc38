package benchingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

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
// same for every run with the same seed), or reads the first size bytes of
// whole lines of the file input when it is not "", splits them into bodies
// of about batchBytes, encodes each in proto and, if gz is set, compresses
// it. It allocates size bytes, plus about a tenth of that again for the
// gzip streams, once; nothing is generated or copied per request
// afterwards.
func makePool(ctx context.Context, size int64, batchBytes int, seed uint64, input string, gz bool, proto Protocol) (*pool, error) {
	var p *pool
	if input != "" {
		data, err := readLines(input, size)
		if err != nil {
			return nil, err
		}
		p = &pool{data: data, lines: int64(bytes.Count(data, []byte{'\n'}))}
	} else {
		var buf bytes.Buffer
		buf.Grow(int(size))
		st, err := gen.Write(ctx, &buf, gen.Config{Seed: seed, Size: size, Format: "ndjson"})
		if err != nil {
			return nil, fmt.Errorf("cannot generate the request bodies: %w", err)
		}
		if st.Lines == 0 {
			return nil, fmt.Errorf("cannot generate the request bodies: %d bytes hold no whole generated line", size)
		}
		p = &pool{data: buf.Bytes(), lines: st.Lines}
	}
	var before int64 // lines in the bodies before this one
	for _, raw := range splitBodies(nil, p.data, batchBytes) {
		b := body{raw: raw, wire: raw, lines: int64(bytes.Count(raw, []byte{'\n'}))}
		var err error
		if b.wire, err = proto.encode(raw); err != nil {
			var le *lineError
			switch {
			case input != "" && errors.As(err, &le):
				return nil, fmt.Errorf("%s:%d: cannot send it as %s: not a JSON object: %w", input, before+int64(le.Line), proto, le.Err)
			case input != "":
				return nil, fmt.Errorf("%s: cannot send its lines as %s: %w", input, proto, err)
			}
			return nil, fmt.Errorf("cannot encode the generated lines as %s: %w", proto, err)
		}
		before += b.lines
		if gz {
			if b.wire, err = gzipBytes(b.wire); err != nil {
				return nil, err
			}
		}
		p.bodies = append(p.bodies, b)
	}
	return p, nil
}

// readLines returns the whole lines in the first size bytes of the file
// path, each ending in '\n' (a last line without one gets it when the file
// ends there). Blank lines are kept: the server is sent them as they are.
func readLines(path string, size int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the lines to send: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() < size {
		size = st.Size() + 1 // room to see the end
	}
	buf := make([]byte, size)
	n, err := io.ReadFull(f, buf)
	eof := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
	if err != nil && !eof {
		return nil, fmt.Errorf("cannot read the lines to send: %w", err)
	}
	if !eof { // size bytes read: is that where the file ends?
		var one [1]byte
		if m, _ := f.Read(one[:]); m == 0 {
			eof = true
		}
	}
	data := buf[:n]
	if i := bytes.LastIndexByte(data, '\n'); eof && i < len(data)-1 {
		data = append(data, '\n') // the file's last line
	} else {
		data = data[:i+1]
	}
	if len(data) == 0 {
		if eof {
			return nil, fmt.Errorf("%s: no lines to send: the file is empty", path)
		}
		return nil, fmt.Errorf("%s: no whole line in its first %d bytes (the pool size; --volume sets it, up to 256 MiB)", path, size)
	}
	return data, nil
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
