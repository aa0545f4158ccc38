package fileread

import (
	"bytes"
	"cmp"
	"slices"
)

// MaxLongLineSamples is how many skipped over-long lines
// Stats.LongLineSamples describes.
const MaxLongLineSamples = 10

// skipReadSize bounds the reads that skip the rest of an over-long line in a
// regular file (pread and mmap).
const skipReadSize = 1 << 20

// LongLine describes a line skipped for being longer than MaxLineSize
// (Config.SkipLongLines).
type LongLine struct {
	Input  int    // index of the input in the list given to Scan
	Name   string // input name
	Offset int64  // byte offset where the line starts (decompressed)
	// Length is the line's exact length in bytes, not counting its '\n':
	// every strategy reads to the line's end to skip it.
	Length int64
}

// longLines counts skipped over-long lines and keeps the first
// MaxLongLineSamples. The producer and each worker own one, and each records
// lines in input order, so merging them gives the first lines of the scan.
type longLines struct {
	n       int64
	samples []LongLine
}

func (l *longLines) add(x LongLine) {
	l.n++
	if len(l.samples) < MaxLongLineSamples {
		l.samples = append(l.samples, x)
	}
}

// mergeLongLines sums ls into st and keeps the first MaxLongLineSamples of
// their samples in input order.
func mergeLongLines(st *Stats, ls ...*longLines) {
	for _, l := range ls {
		st.LongLines += l.n
		st.LongLineSamples = append(st.LongLineSamples, l.samples...)
	}
	slices.SortFunc(st.LongLineSamples, func(a, b LongLine) int {
		return cmp.Or(cmp.Compare(a.Input, b.Input), cmp.Compare(a.Offset, b.Offset))
	})
	if len(st.LongLineSamples) > MaxLongLineSamples {
		st.LongLineSamples = st.LongLineSamples[:MaxLongLineSamples]
	}
}

// skipJob hands out a chunk that only reports skipped bytes (Chunk.Skip,
// empty Data). It holds no buffer.
type skipJob struct{ c Chunk }

func (j *skipJob) load(_ *worker, c *Chunk) error {
	*c = j.c
	return nil
}

func (j *skipJob) release() {}

// skipLine reads a regular file from pos up to and including the next '\n',
// or to its size at open, in reads of at most len(buf) bytes into buf. It
// returns the offset where the next line starts and whether a '\n' ended the
// line. Cost: one read per len(buf) bytes skipped; memory: buf.
func (in *input) skipLine(pos int64, buf []byte) (next int64, newline bool, err error) {
	for pos < in.size {
		n := int(min(int64(len(buf)), in.size-pos))
		if err := in.readAt(buf[:n], pos); err != nil {
			return 0, false, err
		}
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return pos + int64(i) + 1, true, nil
		}
		pos += int64(n)
	}
	return pos, false, nil
}
