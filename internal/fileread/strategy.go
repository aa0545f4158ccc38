// Package fileread hands newline-aligned chunks of one or many inputs to N
// workers, using one of several read strategies: a windowed mmap, parallel
// pread, a bufio baseline, or a stream reader for stdin, pipes and compressed
// files.
//
// The contract every strategy keeps: each chunk holds whole lines in input
// order; every chunk but an input's last ends with '\n'; the concatenation of
// an input's chunks in Seq order is the input's bytes (decompressed), up to
// the size the input had when it was opened. With Config.SkipLongLines, the
// over-long lines are left out of the chunks' Data, and each chunk's Skip
// accounts for the bytes left out right after its Data.
//
// Chunk data aliases a mapping or a reused buffer and is valid only until the
// callback returns: copy anything that must outlive it.
package fileread

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// Strategy names a way of reading an input.
type Strategy string

// The read strategies. See README ("Read strategies") for measurements.
const (
	// Auto picks a strategy per input: Stream for stdin, pipes and
	// compressed files; otherwise Pread for small files and AutoRegular
	// for the rest.
	Auto Strategy = "auto"
	// Mmap maps the file read-only, window by window, and hands out slices
	// of the mapping: no copy. Peak RSS is bounded by the windows in flight.
	// A file truncated while mapped gives an error (ErrInputChanged), not a
	// crash.
	Mmap Strategy = "mmap"
	// Pread has every worker read its own fixed-size chunk with pread into
	// its own buffer, finishing the chunk's last line by reading past the
	// chunk's end (the next chunk skips that partial line).
	Pread Strategy = "pread"
	// Bufio is the write-ups' baseline: one goroutine reads a bufio.Reader
	// with a 4 MiB buffer into 8 MiB chunks, carrying the partial last line
	// into the next chunk. It reads ahead only while a worker is idle, so
	// with one worker it reads and then processes, like a plain loop.
	Bufio Strategy = "bufio"
	// Stream reads any io.Reader (stdin, pipes, gzip and zstd files,
	// detected by magic bytes) on its own goroutine, reading ahead of the
	// workers.
	Stream Strategy = "stream"
)

// AutoRegular is the strategy Auto uses for uncompressed regular files
// larger than autoSmallFile. Chosen from `spate bench io` runs on the
// reference machine; see README ("How auto chooses").
const AutoRegular = Mmap

// autoSmallFile is the size under which Auto reads a regular file with Pread
// (one or two chunks; a mapping would cost more than it saves).
const autoSmallFile = 16 << 20

// Strategies returns the selectable strategy names, Auto first.
func Strategies() []Strategy { return []Strategy{Auto, Mmap, Pread, Bufio, Stream} }

// ParseStrategy returns the strategy called name.
func ParseStrategy(name string) (Strategy, error) {
	for _, s := range Strategies() {
		if string(s) == name {
			return s, nil
		}
	}
	names := make([]string, 0, 5)
	for _, s := range Strategies() {
		names = append(names, string(s))
	}
	return "", fmt.Errorf("unknown read strategy %q: want one of %s", name, strings.Join(names, ", "))
}

// Defaults. Chunk sizes come from `spate bench io --chunk-size` sweeps on the
// reference machine (README, "Chunk size").
const (
	DefaultPreadChunk  = 1 << 20  // bytes per pread chunk: fits L2, so the copy is re-read from cache
	DefaultBufioChunk  = 8 << 20  // bytes per bufio chunk (the write-ups' value)
	DefaultBufioBuffer = 4 << 20  // bufio.Reader buffer (the write-ups' value)
	DefaultStreamChunk = 1 << 20  // bytes per stream chunk
	DefaultMmapChunk   = 4 << 20  // bytes per chunk handed out from a window
	DefaultMmapWindow  = 64 << 20 // bytes mapped at a time
	DefaultMaxLineSize = 64 << 20 // longest line accepted, excluding '\n'
	mmapWindowsAhead   = 2        // windows mapped beyond the one being consumed
)

// Config says how to read. The zero value reads with Auto, GOMAXPROCS
// workers and the defaults above.
type Config struct {
	Strategy Strategy // "" means Auto
	// Workers is the number of goroutines calling the callback; 0 means
	// runtime.GOMAXPROCS(0).
	Workers int
	// ChunkSize is the target chunk size in bytes; 0 means the strategy's
	// default. A chunk is extended to the end of its last line, so chunks
	// may be larger by up to one line. It is capped at MaxLineSize.
	ChunkSize int
	// MmapWindow is the mmap window in bytes; 0 means DefaultMmapWindow and
	// a negative value maps each file whole.
	MmapWindow int64
	// MaxLineSize is the longest line accepted, in bytes, not counting its
	// "\n"; 0 means DefaultMaxLineSize. A longer line stops the scan with a
	// *LineTooLongError naming the input and the line's byte offset, unless
	// SkipLongLines is set.
	MaxLineSize int
	// SkipLongLines makes a line longer than MaxLineSize be skipped instead
	// of stopping the scan: it is not handed to the callback, the chunk
	// before it reports its bytes in Chunk.Skip, and Stats.LongLines and
	// Stats.LongLineSamples count and describe it. Memory stays bounded by
	// about MaxLineSize per reader: pread, bufio and stream read past the
	// rest of the line in bounded buffers, and mmap never maps more of it
	// than it would to find a line of MaxLineSize.
	SkipLongLines bool
	// Latencies asks Scan to record, per chunk, the time a worker took to
	// obtain and process it (Stats.Latencies).
	Latencies bool
	// Stdin is read for the input name "-"; nil means os.Stdin.
	Stdin io.Reader
	// Open, if set, opens the inputs other than "-" instead of os.Open,
	// and says how many bytes of each to read: limit >= 0 reads at most
	// that many (decompressed, for a compressed file), -1 all of it. A
	// snapshot of a spate serve data directory uses it to read each
	// segment once, only as far as its acknowledged lines. The file's
	// compression is still detected from its first bytes.
	Open func(name string) (f *os.File, limit int64, err error)
	// NoMmap makes Auto read uncompressed regular files with Pread instead
	// of Mmap: as fast from the page cache, and the memory stays in the
	// read buffers, where mapped windows would count in the process's RSS
	// (for a server that runs many scans at once).
	NoMmap bool
	// ParallelInputs is how many inputs are read at once (default 1: one
	// after the other). Reading several helps compressed inputs, whose
	// decoding is sequential within a file: each input read at once has
	// its own decoder and its own chunks in flight (Workers of them, or
	// Workers+2 for Stream). Chunks of later inputs may then arrive
	// before earlier inputs end, and InputDone may be called concurrently
	// and out of input order.
	ParallelInputs int
	// Pace, if set, is called by each worker after each chunk and by each
	// producer after filling each chunk of a sequential input (decoding
	// included), with the time that work took; it may block to slow the
	// scan down (spate serve paces queries while it ingests). It must be
	// safe for concurrent use, and return promptly once ctx is done.
	Pace func(ctx context.Context, busy time.Duration)
	// InputDone, if set, is called on the producer goroutine once every
	// chunk of input idx has been handed to the workers (some may still be
	// in flight), with the input's size in bytes as read (decompressed for
	// compressed input). A chunk covers the bytes [Offset,
	// Offset+len(Data)+Skip) of its input, and an input's chunks cover
	// [0, size) without gaps or overlaps in Offset order (skipped over-long
	// lines included), so a consumer can restore file order from Offset,
	// advancing by len(Data)+Skip, and know when an input is complete. It is
	// not called for an input that failed or when the scan stops early.
	InputDone func(input int, size int64)
}

func (c Config) workers() int {
	if c.Workers > 0 {
		return c.Workers
	}
	return runtime.GOMAXPROCS(0)
}

func (c Config) maxLine() int {
	if c.MaxLineSize > 0 {
		return c.MaxLineSize
	}
	return DefaultMaxLineSize
}

// chunkSize returns the configured chunk size for s, capped at the maximum
// line size so that a line over the limit always crosses a chunk boundary,
// where every strategy checks it.
func (c Config) chunkSize(s Strategy) int {
	n := c.ChunkSize
	if n <= 0 {
		switch s {
		case Pread:
			n = DefaultPreadChunk
		case Bufio:
			n = DefaultBufioChunk
		case Mmap:
			n = DefaultMmapChunk
		default:
			n = DefaultStreamChunk
		}
	}
	return min(n, max(c.maxLine(), 1))
}

// Chunk is a run of whole lines from one input.
type Chunk struct {
	// Data holds whole lines, each ending in '\n' except possibly the last
	// line of the input. Valid only until the callback returns. It is empty
	// only in a chunk with Skip > 0 that reports nothing but skipped bytes.
	Data []byte
	// Input is the index of the input in the list given to Scan.
	Input int
	// Name is the input's name as given to Scan ("-" for stdin).
	Name string
	// Seq orders the chunks of one input: higher Seq comes later in the
	// input. Seqs of one input increase but may skip numbers.
	Seq int64
	// Offset is the byte offset of Data[0] in the input (decompressed).
	Offset int64
	// Skip is the number of bytes right after Data that were skipped: one
	// or more whole lines longer than MaxLineSize, with their '\n'. It is
	// always 0 unless Config.SkipLongLines is set. The chunk covers the
	// input's bytes [Offset, Offset+len(Data)+Skip), so a consumer that
	// restores file order from offsets advances by len(Data)+Skip.
	Skip int64
	// Strategy is the strategy that read this input.
	Strategy Strategy

	// read is, for a compressed input, the compressed bytes read for this
	// chunk (see FileBytes); compressed says it is set.
	read       int64
	compressed bool
}

// FileBytes returns the bytes of the input file this chunk accounts for,
// for progress against the file's size: len(Data)+Skip, or for a gzip or
// zstd input the compressed bytes read since the chunk before (about: the
// decoder reads ahead), so that a compressed file's chunks add up to its
// size rather than to its decompressed size.
func (c *Chunk) FileBytes() int64 {
	if c.compressed {
		return c.read
	}
	return int64(len(c.Data)) + c.Skip
}

// Stats describes a finished scan.
type Stats struct {
	Bytes  int64 // bytes handed to the callback, summed over all chunks
	Chunks int64 // chunks handed to the callback
	// Latencies holds, when Config.Latencies is set, one entry per chunk:
	// the time a worker took to obtain that chunk and run the callback.
	Latencies []time.Duration
	// Strategies holds the strategy used for each input, by input index.
	Strategies []Strategy
	// LongLines counts the lines skipped for being longer than MaxLineSize
	// (Config.SkipLongLines).
	LongLines int64
	// LongLineSamples describes the first skipped lines in input order, at
	// most MaxLongLineSamples of them.
	LongLineSamples []LongLine
}

// Errors returned by Scan, testable with errors.Is.
var (
	// ErrLineTooLong: a line exceeds Config.MaxLineSize.
	ErrLineTooLong = errors.New("line too long")
	// ErrInputChanged: an input shrank or faulted (SIGBUS on a mapping)
	// while it was being read.
	ErrInputChanged = errors.New("input changed during read")
	// ErrUnsupported: the strategy cannot read this input (for example
	// mmap of a pipe or of a compressed file).
	ErrUnsupported = errors.New("strategy cannot read this input")
)

// Stop may be returned by a callback to end the scan early without error:
// Scan then returns a nil error once the workers have stopped.
var Stop = errors.New("stop scan")

// LineTooLongError reports a line longer than the configured maximum.
type LineTooLongError struct {
	Name   string // input name
	Offset int64  // byte offset where the line starts
	Max    int    // the limit in bytes
}

func (e *LineTooLongError) Error() string {
	return fmt.Sprintf("%s: line at byte offset %d is longer than the maximum line size of %d bytes (raise it with --max-line-size)", e.Name, e.Offset, e.Max)
}

// Is makes errors.Is(err, ErrLineTooLong) true.
func (e *LineTooLongError) Is(target error) bool { return target == ErrLineTooLong }
