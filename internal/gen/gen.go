// Package gen writes deterministic, realistic web-service logs as NDJSON,
// CSV or logfmt, for tests, benchmarks and `spate gen`.
//
// The output is a pure function of (Seed, Size, Format): the same inputs
// give byte-identical output on every machine and for any number of
// workers. Lines are generated in blocks of blockLines lines; block b is
// drawn from its own random stream seeded from (Seed, b), so workers fill
// blocks in parallel and a single writer emits them in block order.
//
// A typical NDJSON line (seed 1, line 5; wrapped here):
//
//	{"ts":"2026-01-02T00:00:00.041Z","level":"info","service":"api-gateway",
//	"host":"web-010.us-west-2","method":"GET","path":"/api/v1/shipments/74673",
//	"status":200,"latency_ms":18.188,"bytes":1249,"trace_id":"82cf7073983455beff704421f2bed6b3",
//	"user_id":"u_70357","msg":"exported 76 returns to object storage",
//	"http":{"proto":"HTTP/2.0","ua":"okhttp/4.12.0","remote_ip":"10.93.192.55"}}
//
// csv has the same records as flat columns after a header line; logfmt has
// them as key=value pairs with the http object flattened to http.proto etc.
package gen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
)

// Config describes the output. The zero value of every field except Size
// means its default; Size 0 means empty output.
type Config struct {
	// Seed selects the random streams: same Seed+Size+Format gives
	// byte-identical output.
	Seed uint64

	// Size is the output size limit in bytes. The output is the longest
	// sequence of whole lines whose total length is <= Size, so it falls
	// short of Size by less than one line (lines are at most maxLineLen
	// bytes). For csv the header line counts toward Size. The output for
	// a smaller Size is a prefix of the output for a larger one.
	Size int64

	// Format is "ndjson", "csv" or "logfmt"; "" means ndjson.
	Format string

	// Layouts, when more than 1, makes NDJSON lines come in that many
	// field layouts (orders and sets of keys), by service, as in files
	// where services with different loggers interleave (see layouts.go).
	// At most 16; 0 and 1 mean the one layout.
	Layouts int

	// Workers is the number of goroutines generating blocks in parallel;
	// 0 (or less) means runtime.GOMAXPROCS(0). The output does not depend
	// on it.
	Workers int
}

// Stats reports what was written: bytes and whole lines (the csv header
// counts as a line).
type Stats struct {
	Bytes int64
	Lines int64
}

const (
	// blockLines is the number of lines per block, the unit of parallel work
	// and of cancellation checks. 4096 lines are ~1.5 MB of NDJSON: large
	// enough to amortise the channel hand-off, small enough that stopping
	// wastes little.
	blockLines = 4096

	// maxLineLen bounds the length of any generated line in any format
	// (TestLineLengths checks it). Size minus the output size is always
	// smaller than this.
	maxLineLen = 1024

	// minLineLen is a lower bound on the average line length, used only to
	// avoid starting workers that would have no block to fill.
	minLineLen = 100

	// buffersPerWorker is how many blocks each worker may have generated
	// but not yet written: two lets a worker fill one while the writer
	// drains the other.
	buffersPerWorker = 2
)

// Write streams generated logs to w until Size is reached. It issues one
// w.Write per block (~1.5 MB) from the calling goroutine, in order, and
// never retains the slice it passed. On cancellation it stops within about
// one block and returns ctx.Err(); on a write error it stops and returns
// the error. Stats count what w accepted. Memory: two ~2 MB block buffers
// per worker, freed on return. Concurrent calls are independent.
func Write(ctx context.Context, w io.Writer, cfg Config) (Stats, error) {
	st, err := write(ctx, w, cfg)
	var we writeError
	if errors.As(err, &we) {
		err = fmt.Errorf("cannot write generated logs: %w", we.err)
	}
	return st, err
}

// WriteFile writes generated logs to path, creating or truncating it. On
// any error, including cancellation, it removes the partial file. Errors
// name the file.
func WriteFile(ctx context.Context, path string, cfg Config) (Stats, error) {
	if _, err := parseFormat(cfg.Format); err != nil {
		return Stats{}, err
	}
	f, err := os.Create(path)
	if err != nil {
		return Stats{}, fmt.Errorf("cannot create %q: %w", path, unwrapPathError(err))
	}
	st, err := write(ctx, f, cfg)
	var we writeError
	if errors.As(err, &we) {
		err = fmt.Errorf("cannot write %q: %w", path, unwrapPathError(we.err))
	}
	if cerr := f.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("cannot close %q: %w", path, unwrapPathError(cerr))
	}
	if err != nil {
		os.Remove(path)
		return st, err
	}
	return st, nil
}

// unwrapPathError drops the *os.PathError wrapper, whose text repeats the
// path that our own message already names.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// writeError marks an error returned by the destination writer.
type writeError struct{ err error }

func (e writeError) Error() string { return e.err.Error() }
func (e writeError) Unwrap() error { return e.err }

// write runs the pipeline: worker i fills blocks i, i+W, i+2W, … into its
// own buffers and hands them over on its own channel; the calling goroutine
// takes them round-robin, which is block order, and writes them. No locks:
// each buffer is owned by exactly one goroutine at a time. All workers have
// exited when write returns.
func write(ctx context.Context, w io.Writer, cfg Config) (Stats, error) {
	var st Stats
	f, err := parseFormat(cfg.Format)
	if err != nil {
		return st, err
	}
	if cfg.Layouts < 0 || cfg.Layouts > maxLayouts {
		return st, fmt.Errorf("layouts %d: want 1 to %d", cfg.Layouts, maxLayouts)
	}
	if cfg.Layouts > 1 && f != formatNDJSON {
		return st, fmt.Errorf("layouts: only NDJSON lines come in several layouts")
	}
	if err := ctx.Err(); err != nil {
		return st, err
	}
	if cfg.Size <= 0 {
		return st, nil
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if maxBlocks := cfg.Size/(blockLines*minLineLen) + 1; int64(workers) > maxBlocks {
		workers = int(maxBlocks)
	}

	type lane struct {
		full chan []byte // generated blocks, in this worker's block order
		free chan []byte // buffers returned by the writer for reuse
	}
	lanes := make([]lane, workers)
	done := make(chan struct{})
	var wg sync.WaitGroup
	for i := range lanes {
		l := lane{full: make(chan []byte, buffersPerWorker), free: make(chan []byte, buffersPerWorker)}
		for range buffersPerWorker {
			l.free <- nil // allocated on first use, by the worker
		}
		lanes[i] = l
		wg.Go(func() {
			g := &blockGen{seed: cfg.Seed, format: f, layouts: cfg.Layouts}
			for b := int64(i); ; b += int64(workers) {
				var buf []byte
				select {
				case buf = <-l.free:
				case <-done:
					return
				}
				if buf == nil {
					buf = make([]byte, 0, min(blockLines*512, cfg.Size+maxLineLen))
				}
				buf = g.appendBlock(buf[:0], b, cfg.Size)
				select {
				case l.full <- buf:
				case <-done:
					return
				}
			}
		})
	}
	defer func() {
		close(done)
		wg.Wait()
	}()

	for b := 0; st.Bytes < cfg.Size; b++ {
		l := lanes[b%workers]
		var buf []byte
		select {
		case buf = <-l.full:
		case <-ctx.Done():
			return st, ctx.Err()
		}
		if err := ctx.Err(); err != nil {
			return st, err
		}
		lines := int64(blockLines)
		if b == 0 && f == formatCSV {
			lines++ // the header
		}
		last := false
		if rest := cfg.Size - st.Bytes; int64(len(buf)) > rest {
			// Slow path, once: cut the final block after its last whole
			// line that fits.
			buf = buf[:bytes.LastIndexByte(buf[:rest], '\n')+1]
			lines = int64(bytes.Count(buf, []byte{'\n'}))
			last = true
		}
		if len(buf) == 0 {
			break
		}
		n, err := w.Write(buf)
		st.Bytes += int64(n)
		if err == nil && n < len(buf) {
			err = io.ErrShortWrite
		}
		if err != nil {
			st.Lines += int64(bytes.Count(buf[:n], []byte{'\n'}))
			return st, writeError{err}
		}
		st.Lines += lines
		if last {
			break
		}
		l.free <- buf[:0] // never blocks: the lane owns buffersPerWorker buffers
	}
	return st, nil
}

// blockGen appends whole blocks of lines. Each worker owns one; it is not
// safe for concurrent use.
type blockGen struct {
	seed    uint64
	format  format
	layouts int
	rg      recordGen
}

// appendBlock appends block b (lines b*blockLines … (b+1)*blockLines-1,
// preceded by the header for csv block 0) to dst. The bytes depend only on
// (seed, format, b). Steady state allocates nothing once dst has grown to a
// block's size.
//
// It stops early, after the first line that takes the block past limit
// bytes: no output of size limit can contain the lines after it. This
// keeps small outputs cheap; the writer sees a block longer than what is
// left and cuts it.
func (g *blockGen) appendBlock(dst []byte, b int64, limit int64) []byte {
	g.rg.r = blockRNG(g.seed, b)
	first := b * blockLines
	end := int64(len(dst)) + limit
	// Dispatch once per block, then loop over the concrete formatter.
	switch g.format {
	case formatNDJSON:
		if g.layouts > 1 {
			for i := int64(0); i < blockLines && int64(len(dst)) <= end; i++ {
				g.rg.draw(first + i)
				dst = appendNDJSONLayout(dst, &g.rg.rec, g.rg.rec.service()%g.layouts)
			}
			break
		}
		for i := int64(0); i < blockLines && int64(len(dst)) <= end; i++ {
			g.rg.draw(first + i)
			dst = appendNDJSON(dst, &g.rg.rec)
		}
	case formatCSV:
		if b == 0 {
			dst = append(dst, csvHeader...)
		}
		for i := int64(0); i < blockLines && int64(len(dst)) <= end; i++ {
			g.rg.draw(first + i)
			dst = appendCSV(dst, &g.rg.rec)
		}
	case formatLogfmt:
		for i := int64(0); i < blockLines && int64(len(dst)) <= end; i++ {
			g.rg.draw(first + i)
			dst = appendLogfmt(dst, &g.rg.rec)
		}
	default:
		panic(fmt.Sprintf("BUG: unknown format %d", g.format))
	}
	return dst
}
