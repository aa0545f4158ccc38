// Package segindex reads and writes the sidecar index of a sealed,
// compressed spate segment: where each of its blocks (whole lines, as one
// or more independent zstd frames) starts, what the block holds (rows, _time range,
// field names, token blooms) and hot columns, a columnar copy of the
// block's fields but long, mostly distinct ids, so that a query that reads
// only those never decompresses or parses the lines.
//
// The index is a cache of the segment, never trusted over it. It names the
// segment's size and modification time, its table is checksummed and every
// column is a zstd frame with its content checksum: a sidecar that does not
// match its segment, is truncated, of another version or corrupt is
// refused by Open, and the caller reads the segment as if there were no
// sidecar (and may rebuild it with a Builder).
//
// # On-disk format (version 6, little-endian)
//
//	[0:8]    magic "SPATEIDX"
//	[8:12]   version
//	[12:16]  zero
//	[16:24]  table length T
//	[24:32]  xxhash64 of the table
//	[32:32+T] table (below)
//	then     the data area: the column frames the table points into
//
// The table is the segment's .zst size and modification time (Unix ns),
// its decompressed size, row count and the data area's length; the field
// names of the segment; then per block: its offset and length in the
// .zst, its decompressed offset and length, rows, flags, the _time
// range, the field ids present in some row, the block's columns (field id,
// offset and length in the data area, decompressed length), its _time
// column when it has one, the numeric ranges of its column fields (field
// id, 1 if any value is a number, min and max as float64 bits), its
// _stream values (count+1, 0 when unknown; each as length and bytes), its
// token blooms (as columns, with the bloom's xxhash64 for length), its
// frames when it has more than one (count, 0 for one; each frame's length
// in the .zst, decompressed length and rows), and with frames, the blooms
// per frame of the fields without a column (count; each as field id, then
// per frame the bloom's offset, length, 0 when the frame has no token of
// the field, and xxhash64). The table ends with the segment's blooms: for
// each field with tokens, a bloom of all of them (count; each as field id,
// offset, length and xxhash64).
//
// A column is one zstd frame, but for a packed one. A string column starts
// with its kind. 'd': a dictionary of the block's distinct values in
// first-seen order (count, then each as length and bytes) and one id per
// row, 1 (count < 255), 2 or 4 bytes wide; id 0 is a row without the
// field, id i > 0 the dictionary's (i-1)th value. 'k' (packed, for at most
// 254 values; 'd' is then for more), stored as is, not compressed: the
// dictionary as for 'd', then the ids in 1 (one value), 2 (up to 3), 4 (up
// to 15) or 8 bits, the first row in a byte's low bits, unused bits zero,
// then how many rows have each id, 0 to count (uvarints); followed in the
// data area (not in its decompressed length) by the low 32
// bits of its xxhash64, little-endian. 'p' (plain, for fields whose values
// are mostly distinct): per row, 0 for a row without the field, else 1 +
// the value's length and the value (lengths as uvarints). The _time column
// is each row's Unix ns as a zigzag varint delta from the row before (the
// first from 0). A token bloom (bloom.go) is stored as is, 32-byte blocks,
// not compressed.
package segindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"

	"github.com/spate-io/spate/internal/bytesutil"
)

// noMap makes Open read with pread only (tests of the path used where
// sidecars cannot be mapped).
var noMap = false

// Version is the format version this package writes and reads. Anything
// that changes what a sidecar means, not only its layout (the bloom hash
// or probe count, the tokenizer, how values are read), takes a new
// version: a sidecar of another version is refused and rebuilt. Version 1
// was written during development (FNV token hashes, 7 probes); version 2
// had blooms probed anywhere by double hashing (bloom.go), version 3 one
// frame per block, version 4 no segment blooms, version 5 xxhash64 for
// every token (TokenHash), version 6 no packed columns, version 7 a time
// column for lines whose times have no zone (read in UTC whatever the
// query's zone), version 8 no row counts per id in packed columns,
// version 9 a top-level empty key as a field named "" (not _msg), an
// empty message field taken over a later non-empty one, and "0", "-" and
// 0 as times (not "no time", as VictoriaLogs reads them).
const Version = 10

const (
	magic      = "SPATEIDX"
	headerSize = 32
	// maxTable caps the table Open reads: a corrupt length must not make
	// it allocate gigabytes.
	maxTable = 256 << 20
)

// Block flags.
const (
	// FlagTime: every row of the block has a _time with an explicit zone
	// (or a numeric one), and the block has a _time column.
	FlagTime = 1 << iota
	// FlagColumns: every row of the block is a JSON object the query
	// engine reads without error, so its columns stand for its rows.
	// Without it the block must be read from the segment.
	FlagColumns
)

// Ext is the sidecar's name suffix: "seg-N.ndjson.zst" has "seg-N.ndjson.zst.idx".
const Ext = ".idx"

// ErrStale says a sidecar does not describe the segment beside it (another
// size or modification time): the segment was replaced or rewritten.
var ErrStale = errors.New("index does not match its segment")

// ErrCorrupt says a sidecar is truncated, damaged or of another version.
var ErrCorrupt = errors.New("index is corrupt")

// ErrVersion says a sidecar is of another format version (written by
// another spate, as after an upgrade). It is an ErrCorrupt too: such a
// sidecar is ignored and rebuilt like a damaged one.
var ErrVersion error = versionError{}

type versionError struct{}

func (versionError) Error() string        { return "index of another format version" }
func (versionError) Is(target error) bool { return target == ErrCorrupt }

// Block is one block of a segment: an independent zstd frame in the .zst
// holding whole lines.
type Block struct {
	ZOff    int64 // offset of the frame in the .zst
	ZLen    int64 // length of the frame
	RawOff  int64 // offset of the block's first line in the decompressed segment
	RawLen  int64 // decompressed length
	Rows    int   // lines in the block
	Flags   uint32
	MinTime int64 // with FlagTime: the least and greatest _time, Unix ns
	MaxTime int64
	// Present holds the ids (into Index.Fields) of the fields some row of
	// the block has, ascending.
	Present []int
	// Columns are the block's hot columns, by field id ascending; Time is
	// the _time column (with FlagTime).
	Columns []ColumnRef
	Time    ColumnRef
	// Nums are the numeric ranges of the block's column fields (see
	// NumRange), by field id ascending.
	Nums []NumRange
	// Streams are the distinct _stream values of the block's rows ("{}"
	// for rows without one), sorted, when StreamsKnown (at most
	// maxBlockStreams of them).
	Streams      []string
	StreamsKnown bool
	// Blooms are the token blooms of the block's fields (see HasBloom),
	// by field id ascending, read with Index.ReadBloom; their RawLen is
	// the xxhash64 of their bytes (they are stored as is).
	Blooms []ColumnRef
	// Frames are the block's zstd frames in order, when it has more than
	// one (nil: the block is one frame): their lengths add up to ZLen,
	// RawLen and Rows.
	Frames []Frame
	// FrameBlooms are, for the fields with a bloom but no column in the
	// block (long, mostly distinct values: ids), a bloom per frame, by
	// field id ascending; only with Frames. A query looking up such a
	// value decodes only the frames whose blooms may hold it.
	FrameBlooms []FrameBlooms
}

// Frame is one zstd frame of a block of several.
type Frame struct {
	ZLen, RawLen int64
	Rows         int
}

// FrameBlooms are the blooms of one field in each frame of a block, read
// with Index.ReadBloom. A frame whose bloom has Len 0 holds no token of
// the field.
type FrameBlooms struct {
	Field  int
	Frames []ColumnRef
}

// FrameBloom returns the per-frame blooms of field id, if the block has
// them.
func (b *Block) FrameBloom(id int) ([]ColumnRef, bool) {
	i, ok := slices.BinarySearchFunc(b.FrameBlooms, id, func(f FrameBlooms, id int) int { return f.Field - id })
	if !ok {
		return nil, false
	}
	return b.FrameBlooms[i].Frames, true
}

// NumRange is what a block's values of one field hold as numbers (as the
// query engine parses them, Builder.Numbers): with Any, the least and
// greatest; without, no value is a number. NaN values make no range at
// all (a NaN compares as neither less nor greater).
type NumRange struct {
	Field    int
	Any      bool
	Min, Max float64
}

// Num returns b's numeric range of field id; ok is false when unknown.
func (b *Block) Num(id int) (NumRange, bool) {
	for _, n := range b.Nums {
		if n.Field == id {
			return n, true
		}
	}
	return NumRange{}, false
}

// Bloom returns b's token bloom of field id; ok is false when the block
// has none (the field is absent, has no tokens, or gets no bloom).
func (b *Block) Bloom(id int) (ColumnRef, bool) { return refOf(b.Blooms, id) }

// ColumnRef locates one column frame in the data area.
type ColumnRef struct {
	Field  int   // field id
	Off    int64 // offset in the data area
	Len    int64 // frame length
	RawLen int64 // decompressed length
	slot   int   // a bloom's index in Index.checked
}

// Has reports whether some row of b has field id.
func (b *Block) Has(id int) bool {
	lo, hi := 0, len(b.Present)
	for lo < hi {
		m := (lo + hi) / 2
		switch {
		case b.Present[m] == id:
			return true
		case b.Present[m] < id:
			lo = m + 1
		default:
			hi = m
		}
	}
	return false
}

// Column returns b's column of field id.
func (b *Block) Column(id int) (ColumnRef, bool) { return refOf(b.Columns, id) }

// refOf returns the ref of field id in refs.
func refOf(refs []ColumnRef, id int) (ColumnRef, bool) {
	for _, c := range refs {
		if c.Field == id {
			return c, true
		}
	}
	return ColumnRef{}, false
}

// Index is an opened sidecar. Its fields are read-only after Open; its
// methods are safe for concurrent use.
type Index struct {
	ZstSize   int64
	ZstMtime  int64
	RawSize   int64
	Rows      int64
	Fields    []string
	Blocks    []Block
	f         *os.File
	mapped    []byte // the whole file, mapped (nil: read with pread)
	dataStart int64
	dataLen   int64
	byName    map[string]int
	// fieldBlooms[id][b] is the index in Blocks[b].Blooms of block b's
	// bloom of field id (-1: none), for the fields with a bloom in some
	// block: what a query checks block after block, without searching
	// each block's list; 4 bytes a block and field.
	fieldBlooms [][]int32
	// segBlooms[id] is the segment's bloom of field id (Len -1: none).
	segBlooms []ColumnRef
	// checked marks the blooms whose checksum matched once: an Index kept
	// between queries (OpenShared) hashes each bloom once, not per query.
	checked []atomic.Bool
	// Sharing (OpenShared), guarded by shared.mu.
	id      fileID
	shared  bool
	refs    int
	evicted bool
}

// BlockBloom returns block b's token bloom of field id, as Block.Bloom
// does (false: the field is absent from the block or has no token there),
// from a table by field (cheaper for a query checking every block).
func (ix *Index) BlockBloom(id, b int) (ColumnRef, bool) {
	if id < 0 || id >= len(ix.fieldBlooms) || ix.fieldBlooms[id] == nil {
		return ColumnRef{}, false
	}
	i := ix.fieldBlooms[id][b]
	if i < 0 {
		return ColumnRef{}, false
	}
	return ix.Blocks[b].Blooms[i], true
}

// SegmentBloom returns the bloom of every token of field id in the
// segment, read with ReadBloom: a token it lacks is in no block's bloom
// (false: the field has no token in the segment).
func (ix *Index) SegmentBloom(id int) (ColumnRef, bool) {
	if id < 0 || id >= len(ix.segBlooms) {
		return ColumnRef{}, false
	}
	ref := ix.segBlooms[id]
	return ref, ref.Len >= 0
}

// FieldID returns the id of the named field, or -1 when no row of the
// segment has it.
func (ix *Index) FieldID(name string) int {
	if id, ok := ix.byName[name]; ok {
		return id
	}
	return -1
}

// Close unmaps and closes the sidecar file, or, for an Index of
// OpenShared, releases it. Slices ReadColumn and ReadBloom returned must no
// longer be used.
func (ix *Index) Close() error {
	if ix.shared {
		return ix.release()
	}
	return ix.close()
}

func (ix *Index) close() error {
	unmapFile(ix.mapped)
	ix.mapped = nil
	return ix.f.Close()
}

// Open reads the sidecar f of the segment whose .zst has size zstSize and
// modification time zstMtime (Unix ns). It takes f over: Close closes it,
// and Open closes it on error. It returns an error wrapping ErrStale or
// ErrCorrupt when the sidecar cannot be used. Cost: one read of the table
// (a few KB per MB of segment); columns are read on demand.
func Open(f *os.File, zstSize, zstMtime int64) (ix *Index, err error) {
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	var h [headerSize]byte
	if _, err := f.ReadAt(h[:], 0); err != nil {
		return nil, fmt.Errorf("cannot read header: %w (%w)", err, ErrCorrupt)
	}
	if string(h[:8]) != magic {
		return nil, fmt.Errorf("no index magic: %w", ErrCorrupt)
	}
	if v := binary.LittleEndian.Uint32(h[8:]); v != Version {
		return nil, fmt.Errorf("index version %d, want %d: %w", v, Version, ErrVersion)
	}
	tlen := binary.LittleEndian.Uint64(h[16:])
	if tlen > maxTable || int64(tlen) > fi.Size()-headerSize {
		return nil, fmt.Errorf("table length %d past the file's end (%d bytes): %w", tlen, fi.Size(), ErrCorrupt)
	}
	table := make([]byte, tlen)
	if _, err := f.ReadAt(table, headerSize); err != nil {
		return nil, fmt.Errorf("cannot read table: %w (%w)", err, ErrCorrupt)
	}
	if xxhash.Sum64(table) != binary.LittleEndian.Uint64(h[24:]) {
		return nil, fmt.Errorf("table checksum mismatch: %w", ErrCorrupt)
	}
	ix = &Index{f: f, dataStart: headerSize + int64(tlen), byName: map[string]int{}}
	if err := ix.parseTable(table); err != nil {
		return nil, fmt.Errorf("%w (%w)", err, ErrCorrupt)
	}
	if ix.dataStart+ix.dataLen != fi.Size() {
		return nil, fmt.Errorf("index is %d bytes, its table says %d: %w", fi.Size(), ix.dataStart+ix.dataLen, ErrCorrupt)
	}
	if ix.ZstSize != zstSize || ix.ZstMtime != zstMtime {
		return nil, fmt.Errorf("index is of a segment of %d bytes modified at %d, the segment has %d bytes modified at %d: %w",
			ix.ZstSize, ix.ZstMtime, zstSize, zstMtime, ErrStale)
	}
	if !noMap {
		ix.mapped = mapFile(f, fi.Size())
	}
	return ix, nil
}

// tableReader decodes the table; the first error sticks.
type tableReader struct {
	b   []byte
	err error
}

func (r *tableReader) u64() uint64 {
	if r.err != nil || len(r.b) < 8 {
		r.fail()
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

func (r *tableReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a count of items of at least min bytes each and checks that
// the table can hold them.
func (r *tableReader) count(min int) int {
	n := r.uvarint()
	if n > uint64(len(r.b)/min) {
		r.fail()
		return 0
	}
	return int(n)
}

func (r *tableReader) bytes(n uint64) []byte {
	if r.err != nil || n > uint64(len(r.b)) {
		r.fail()
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *tableReader) fail() {
	if r.err == nil {
		r.err = io.ErrUnexpectedEOF
	}
	r.b = nil
}

func (ix *Index) parseTable(table []byte) error {
	r := &tableReader{b: table}
	ix.ZstSize = int64(r.u64())
	ix.ZstMtime = int64(r.u64())
	ix.RawSize = int64(r.u64())
	ix.Rows = int64(r.u64())
	ix.dataLen = int64(r.u64())
	nf := r.count(1)
	ix.Fields = make([]string, nf)
	for i := range ix.Fields {
		ix.Fields[i] = string(r.bytes(r.uvarint()))
		ix.byName[ix.Fields[i]] = i
	}
	nb := r.count(8)
	ix.Blocks = make([]Block, nb)
	var rows int64
	blooms := 0
	for i := range ix.Blocks {
		b := &ix.Blocks[i]
		b.ZOff = int64(r.uvarint())
		b.ZLen = int64(r.uvarint())
		b.RawOff = int64(r.uvarint())
		b.RawLen = int64(r.uvarint())
		b.Rows = int(r.uvarint())
		b.Flags = uint32(r.uvarint())
		b.MinTime = int64(r.u64())
		b.MaxTime = int64(r.u64())
		np := r.count(1)
		b.Present = make([]int, np)
		prev := -1
		for j := range b.Present {
			b.Present[j] = int(r.uvarint())
			if b.Present[j] <= prev || b.Present[j] >= nf {
				return fmt.Errorf("block %d: bad field id %d", i, b.Present[j])
			}
			prev = b.Present[j]
		}
		nc := r.count(4)
		b.Columns = make([]ColumnRef, nc)
		for j := range b.Columns {
			b.Columns[j] = r.column()
			if b.Columns[j].RawLen < 0 || b.Columns[j].RawLen > 1<<30 {
				return fmt.Errorf("block %d: column of %d bytes", i, b.Columns[j].RawLen)
			}
			if b.Columns[j].Field >= nf || !b.Has(b.Columns[j].Field) {
				return fmt.Errorf("block %d: column of an absent field %d", i, b.Columns[j].Field)
			}
		}
		if b.Flags&FlagTime != 0 {
			b.Time = r.column()
		}
		nn := r.count(18)
		b.Nums = make([]NumRange, nn)
		for j := range b.Nums {
			n := &b.Nums[j]
			n.Field = int(r.uvarint())
			n.Any = r.uvarint() == 1
			n.Min = math.Float64frombits(r.u64())
			n.Max = math.Float64frombits(r.u64())
			if n.Field >= nf || !b.Has(n.Field) {
				return fmt.Errorf("block %d: numeric range of an absent field %d", i, n.Field)
			}
		}
		if ns := r.uvarint(); ns > 0 {
			b.StreamsKnown = true
			if ns-1 > maxBlockStreams {
				return fmt.Errorf("block %d: %d streams", i, ns-1)
			}
			b.Streams = make([]string, ns-1)
			for j := range b.Streams {
				b.Streams[j] = string(r.bytes(r.uvarint()))
			}
		}
		nbl := r.count(4)
		b.Blooms = make([]ColumnRef, nbl)
		for j := range b.Blooms {
			b.Blooms[j] = r.column()
			b.Blooms[j].slot = blooms
			blooms++
			if b.Blooms[j].Field >= nf || !b.Has(b.Blooms[j].Field) {
				return fmt.Errorf("block %d: bloom of an absent field %d", i, b.Blooms[j].Field)
			}
		}
		if err := ix.parseFrames(r, b, &blooms); err != nil {
			return fmt.Errorf("block %d: %w", i, err)
		}
		if r.err != nil {
			break
		}
		for _, c := range b.Blooms {
			if err := ix.checkRef(c); err != nil {
				return fmt.Errorf("block %d: %w", i, err)
			}
		}
		for _, fb := range b.FrameBlooms {
			for _, c := range fb.Frames {
				if err := ix.checkRef(c); err != nil {
					return fmt.Errorf("block %d: %w", i, err)
				}
			}
		}
		if err := ix.checkRef(b.Time); err != nil {
			return fmt.Errorf("block %d: %w", i, err)
		}
		for _, c := range b.Columns {
			if err := ix.checkRef(c); err != nil {
				return fmt.Errorf("block %d: %w", i, err)
			}
		}
		rows += int64(b.Rows)
	}
	ix.segBlooms = make([]ColumnRef, nf)
	for i := range ix.segBlooms {
		ix.segBlooms[i].Len = -1
	}
	nsb := r.count(4)
	for range nsb {
		c := r.column()
		if r.err != nil {
			break
		}
		if c.Field >= nf || ix.segBlooms[c.Field].Len >= 0 {
			return fmt.Errorf("segment bloom of field %d", c.Field)
		}
		if err := ix.checkRef(c); err != nil {
			return fmt.Errorf("segment bloom: %w", err)
		}
		c.slot = blooms
		blooms++
		ix.segBlooms[c.Field] = c
	}
	if r.err != nil {
		return fmt.Errorf("table: %w", r.err)
	}
	if len(r.b) != 0 {
		return fmt.Errorf("table has %d bytes past its end", len(r.b))
	}
	if rows != ix.Rows {
		return fmt.Errorf("blocks hold %d rows, the table says %d", rows, ix.Rows)
	}
	ix.checked = make([]atomic.Bool, blooms)
	ix.fieldBlooms = make([][]int32, nf)
	for b := range ix.Blocks {
		for i, ref := range ix.Blocks[b].Blooms {
			fb := ix.fieldBlooms[ref.Field]
			if fb == nil {
				fb = make([]int32, nb)
				for i := range fb {
					fb[i] = -1
				}
				ix.fieldBlooms[ref.Field] = fb
			}
			fb[b] = int32(i)
		}
	}
	return nil
}

// parseFrames reads the frames of block b and their blooms (bloom slots
// are numbered on from *slots).
func (ix *Index) parseFrames(r *tableReader, b *Block, slots *int) error {
	nfr := r.count(3)
	if nfr == 0 {
		return nil
	}
	if nfr < 2 {
		return errors.New("a block of one frame lists it")
	}
	b.Frames = make([]Frame, nfr)
	var zlen, rawLen int64
	rows := 0
	for j := range b.Frames {
		f := &b.Frames[j]
		f.ZLen, f.RawLen, f.Rows = int64(r.uvarint()), int64(r.uvarint()), int(r.uvarint())
		if f.ZLen <= 0 || f.RawLen <= 0 || f.Rows < 0 {
			return fmt.Errorf("frame %d: %d bytes of %d, %d rows", j, f.ZLen, f.RawLen, f.Rows)
		}
		zlen, rawLen, rows = zlen+f.ZLen, rawLen+f.RawLen, rows+f.Rows
	}
	if r.err == nil && (zlen != b.ZLen || rawLen != b.RawLen || rows != b.Rows) {
		return fmt.Errorf("frames hold %d bytes of %d and %d rows, the block %d of %d and %d", zlen, rawLen, rows, b.ZLen, b.RawLen, b.Rows)
	}
	nfb := r.count(1 + 3*nfr)
	b.FrameBlooms = make([]FrameBlooms, nfb)
	prev := -1
	for j := range b.FrameBlooms {
		fb := &b.FrameBlooms[j]
		fb.Field = int(r.uvarint())
		if fb.Field <= prev || fb.Field >= len(ix.Fields) || !b.Has(fb.Field) {
			return fmt.Errorf("frame blooms of field %d", fb.Field)
		}
		prev = fb.Field
		fb.Frames = make([]ColumnRef, nfr)
		for k := range fb.Frames {
			fb.Frames[k] = ColumnRef{Field: fb.Field, Off: int64(r.uvarint()), Len: int64(r.uvarint()), RawLen: int64(r.uvarint()), slot: *slots}
			*slots++
		}
	}
	return nil
}

func (r *tableReader) column() ColumnRef {
	return ColumnRef{Field: int(r.uvarint()), Off: int64(r.uvarint()), Len: int64(r.uvarint()), RawLen: int64(r.uvarint())}
}

func (ix *Index) checkRef(c ColumnRef) error {
	if c.Off < 0 || c.Len < 0 || c.Off+c.Len > ix.dataLen {
		return fmt.Errorf("column at %d+%d past the data area (%d bytes)", c.Off, c.Len, ix.dataLen)
	}
	return nil
}

// ReadBloom returns the token bloom c as ReadColumn does, checked against
// its checksum: a damaged bloom is an error, never a wrong answer. Safe for
// concurrent use.
func (ix *Index) ReadBloom(c ColumnRef, buf []byte) (bloom, newBuf []byte, err error) {
	bloom, buf, err = ix.ReadColumn(c, buf)
	if err != nil {
		return nil, buf, err
	}
	if c.slot >= 0 && c.slot < len(ix.checked) && ix.checked[c.slot].Load() && ix.mapped != nil {
		return bloom, buf, nil // Fast path: the mapped bytes were checked before.
	}
	if xxhash.Sum64(bloom) != uint64(c.RawLen) {
		return nil, buf, fmt.Errorf("bloom checksum mismatch: %w", ErrCorrupt)
	}
	if c.slot >= 0 && c.slot < len(ix.checked) {
		ix.checked[c.slot].Store(true)
	}
	return bloom, buf, nil
}

// ReadColumn returns the frame of c, compressed. Where the sidecar is
// mapped, frame is a slice of the mapping, valid until Close, that must
// not be written to; elsewhere it is read into buf (grown as needed).
// newBuf is buf, grown, for the caller to pass again: never frame, which
// may be the mapping. Safe for concurrent use.
func (ix *Index) ReadColumn(c ColumnRef, buf []byte) (frame, newBuf []byte, err error) {
	if ix.mapped != nil {
		// Fast path: no copy, no system call.
		off := ix.dataStart + c.Off
		return ix.mapped[off : off+c.Len : off+c.Len], buf, nil
	}
	if int64(cap(buf)) < c.Len {
		buf = make([]byte, c.Len)
	}
	buf = buf[:c.Len]
	if _, err := ix.f.ReadAt(buf, ix.dataStart+c.Off); err != nil {
		return nil, buf, fmt.Errorf("cannot read column: %w", err)
	}
	return buf, buf, nil
}

// Kinds of string column (the first byte of one).
const (
	kindDict   = 'd'
	kindPlain  = 'p'
	kindPacked = 'k' // stored as is, not a zstd frame (see Stored)
)

// maxPackedDict is the most values a packed dictionary column holds: ids
// of a byte at most.
const maxPackedDict = 254

// packedBits is the width of a packed column's ids for a dictionary of n
// values (ids 0 to n): 1, 2, 4 or 8 bits.
func packedBits(n int) int {
	switch {
	case n <= 1:
		return 1
	case n <= 3:
		return 2
	case n <= 15:
		return 4
	}
	return 8
}

// DecodeColumn appends to dst[:0] the column whose frame ReadColumn
// returned: decompressed by dec, or copied when it is stored as is.
// A stored column is checked against its checksum, as zstd checks a
// frame's.
func DecodeColumn(dec *zstd.Decoder, frame, dst []byte) ([]byte, error) {
	if Stored(frame) {
		n := len(frame) - 4
		if n < 1 || uint32(xxhash.Sum64(frame[:n])) != binary.LittleEndian.Uint32(frame[n:]) {
			return dst, fmt.Errorf("stored column checksum mismatch: %w", ErrCorrupt)
		}
		return append(dst[:0], frame[:n]...), nil
	}
	return dec.DecodeAll(frame, dst[:0])
}

// Stored reports whether a column's frame (as ReadColumn returns it) is
// the column as is rather than a zstd frame: a packed dictionary column.
// A zstd frame starts with its magic number, 28 b5 2f fd.
func Stored(frame []byte) bool { return len(frame) > 0 && frame[0] == kindPacked }

// StringColumn is a decoded string column of one block. Values alias the
// buffer it was decoded from: they are valid until that buffer is reused.
type StringColumn struct {
	// Dict holds a dictionary column's distinct values (id i > 0 is
	// Dict[i-1]); nil for a plain column.
	Dict     []string
	ids      []byte
	width    int
	unpacked []byte   // a packed column's ids of fewer than 8 bits, a byte each (ids aliases it)
	counts   []uint32 // a packed column's rows per id (see Counts)
	// A plain column's values and presence, by row.
	plain  bool
	vals   []string
	absent []bool
}

// ID returns row's value id in a dictionary column: 0 when the row has no
// such field. It must not be called on a plain column.
func (c *StringColumn) ID(row int) uint32 {
	switch c.width {
	case 1:
		return uint32(c.ids[row])
	case 2:
		return uint32(binary.LittleEndian.Uint16(c.ids[2*row:]))
	}
	return binary.LittleEndian.Uint32(c.ids[4*row:])
}

// ByteIDs returns a dictionary column's ids, one byte per row, when its
// dictionary has fewer than 255 values (ID(r) is ids[r]); ok is false
// otherwise. The slice aliases c.
func (c *StringColumn) ByteIDs() (ids []byte, ok bool) {
	if c.plain || c.width != 1 {
		return nil, false
	}
	return c.ids, true
}

// Rows returns the rows c was decoded for.
func (c *StringColumn) Rows() int {
	if c.plain {
		return len(c.vals)
	}
	return len(c.ids) / c.width
}

// IsDict reports whether c is a dictionary column (see ID).
func (c *StringColumn) IsDict() bool { return !c.plain }

// Value returns row's value and whether the row has the field.
func (c *StringColumn) Value(row int) (string, bool) {
	if c.plain {
		return c.vals[row], !c.absent[row]
	}
	id := c.ID(row)
	if id == 0 {
		return "", false
	}
	return c.Dict[id-1], true
}

// Counts returns, for a packed column, how many rows have each id (id 0:
// rows without the field): Counts()[i] rows have ID i. It is nil for other
// columns. The slice is c's, valid until c is parsed again.
func (c *StringColumn) Counts() []uint32 {
	if c.plain {
		return nil
	}
	return c.counts
}

// ParseCounts decodes the dictionary and the counts of a packed column
// (see Counts) into c, without its ids: ID and ByteIDs must not be used
// on c then (ByteIDs says not ok). It is what a count by the column's
// values needs, at the cost of reading the dictionary. ok is false for
// other kinds of column, which ParseString decodes.
func ParseCounts(raw []byte, rows int, c *StringColumn) (ok bool, err error) {
	if len(raw) == 0 || raw[0] != kindPacked {
		return false, nil
	}
	c.Dict, c.vals, c.absent = c.Dict[:0], c.vals[:0], c.absent[:0]
	c.plain = false
	rest, err := c.parseDict(raw[1:])
	if err != nil {
		return true, err
	}
	if _, err := c.packedCounts(rest, rows); err != nil {
		return true, err
	}
	c.ids, c.width = nil, 0
	return true, nil
}

// parseDict reads a dictionary (count, then each value's length and
// bytes) into c.Dict and returns what follows it.
func (c *StringColumn) parseDict(raw []byte) ([]byte, error) {
	n, k := binary.Uvarint(raw)
	if k <= 0 || n > uint64(len(raw)) {
		return nil, fmt.Errorf("bad dictionary size: %w", ErrCorrupt)
	}
	raw = raw[k:]
	for range n {
		l, k := binary.Uvarint(raw)
		if k <= 0 || l > uint64(len(raw)-k) {
			return nil, fmt.Errorf("bad dictionary value: %w", ErrCorrupt)
		}
		v := raw[k : k+int(l)]
		c.Dict = append(c.Dict, bytesutil.ToUnsafeString(v))
		raw = raw[k+int(l):]
	}
	return raw, nil
}

// packedCounts splits what follows a packed column's dictionary into its
// packed ids (returned) and its counts, which it reads into c.counts:
// one per id, adding up to rows.
func (c *StringColumn) packedCounts(raw []byte, rows int) ([]byte, error) {
	n := len(c.Dict)
	if n > maxPackedDict {
		return nil, fmt.Errorf("packed column of %d values: %w", n, ErrCorrupt)
	}
	per := 8 / packedBits(n)
	idBytes := (rows + per - 1) / per
	if len(raw) < idBytes {
		return nil, fmt.Errorf("%d id bytes for %d rows of %d bits: %w", len(raw), rows, 8/per, ErrCorrupt)
	}
	ids, rest := raw[:idBytes], raw[idBytes:]
	c.counts = c.counts[:0]
	var sum uint64
	for range n + 1 {
		v, k := binary.Uvarint(rest)
		if k <= 0 || v > uint64(rows) {
			return nil, fmt.Errorf("bad row count: %w", ErrCorrupt)
		}
		c.counts = append(c.counts, uint32(v))
		sum += v
		rest = rest[k:]
	}
	if len(rest) != 0 || sum != uint64(rows) {
		return nil, fmt.Errorf("packed column counts %d rows of %d, %d bytes past them: %w", sum, rows, len(rest), ErrCorrupt)
	}
	return ids, nil
}

// ParseString decodes a decompressed string column of rows rows into c,
// reusing c's slices. c's values alias raw.
func ParseString(raw []byte, rows int, c *StringColumn) error {
	if len(raw) == 0 {
		return fmt.Errorf("empty column: %w", ErrCorrupt)
	}
	kind := raw[0]
	raw = raw[1:]
	c.Dict, c.vals, c.absent = c.Dict[:0], c.vals[:0], c.absent[:0]
	switch kind {
	case kindPlain:
		c.plain = true
		for range rows {
			l, k := binary.Uvarint(raw)
			if k <= 0 || l > uint64(len(raw)-k)+1 {
				return fmt.Errorf("bad plain value: %w", ErrCorrupt)
			}
			raw = raw[k:]
			if l == 0 {
				c.vals, c.absent = append(c.vals, ""), append(c.absent, true)
				continue
			}
			v := raw[:l-1]
			c.vals, c.absent = append(c.vals, bytesutil.ToUnsafeString(v)), append(c.absent, false)
			raw = raw[l-1:]
		}
		if len(raw) != 0 {
			return fmt.Errorf("plain column has %d bytes past its rows: %w", len(raw), ErrCorrupt)
		}
		return nil
	case kindDict, kindPacked:
		c.plain = false
	default:
		return fmt.Errorf("unknown column kind %q: %w", kind, ErrCorrupt)
	}
	raw, err := c.parseDict(raw)
	if err != nil {
		return err
	}
	if kind == kindPacked {
		ids, err := c.packedCounts(raw, rows)
		if err != nil {
			return err
		}
		return c.unpack(ids, rows)
	}
	c.counts = c.counts[:0]
	c.width = idWidth(len(c.Dict))
	if len(raw) != rows*c.width {
		return fmt.Errorf("%d id bytes for %d rows of width %d: %w", len(raw), rows, c.width, ErrCorrupt)
	}
	c.ids = raw
	for r := range rows {
		if c.ID(r) > uint32(len(c.Dict)) {
			return fmt.Errorf("row %d: id %d past the dictionary (%d values): %w", r, c.ID(r), len(c.Dict), ErrCorrupt)
		}
	}
	return nil
}

// unpack reads the packed ids of a packed column (as packedCounts split
// them) into c.unpacked, one byte per row.
func (c *StringColumn) unpack(raw []byte, rows int) error {
	n := len(c.Dict)
	bits := packedBits(n)
	per := 8 / bits
	ids := raw // 8 bits: as is
	if bits < 8 {
		ids = slices.Grow(c.unpacked[:0], len(raw)*per)[:len(raw)*per]
		c.unpacked = ids
	}
	switch bits {
	case 4:
		for i, x := range raw {
			ids[2*i], ids[2*i+1] = x&15, x>>4
		}
	case 2:
		for i, x := range raw {
			ids[4*i], ids[4*i+1], ids[4*i+2], ids[4*i+3] = x&3, x>>2&3, x>>4&3, x>>6
		}
	case 1:
		for i, x := range raw {
			for j := range 8 {
				ids[8*i+j] = x >> j & 1
			}
		}
	}
	// Bits past the last row are zero as written; ids past the dictionary
	// are not.
	if rows < len(ids) && bytesOver(ids[rows:], 0) {
		return fmt.Errorf("packed column has ids past its rows: %w", ErrCorrupt)
	}
	c.ids, c.width = ids[:rows], 1
	if bytesOver(c.ids, byte(n)) {
		for r, id := range c.ids {
			if int(id) > n {
				return fmt.Errorf("row %d: id %d past the dictionary (%d values): %w", r, id, n, ErrCorrupt)
			}
		}
	}
	return nil
}

// bytesOver reports whether a byte of b is greater than n, 8 bytes at a
// time when n < 128.
func bytesOver(b []byte, n byte) bool {
	i := 0
	if n < 128 {
		// Per byte x: x+(127-n) sets its high bit exactly when x > n (no
		// carry leaves a byte, as x < 128 there); a byte of 128 or more
		// has it already.
		// Words are OR'd together, four at a time, and tested once: a
		// column is almost never over, and four independent words keep
		// the core busy (2-3x a word at a time, BenchmarkBytesOver).
		const ones, highs = 0x0101010101010101, 0x8080808080808080
		add := ones * uint64(127-n)
		var acc uint64
		for ; i+32 <= len(b); i += 32 {
			x0 := binary.LittleEndian.Uint64(b[i:])
			x1 := binary.LittleEndian.Uint64(b[i+8:])
			x2 := binary.LittleEndian.Uint64(b[i+16:])
			x3 := binary.LittleEndian.Uint64(b[i+24:])
			acc |= ((x0 &^ highs) + add | x0) | ((x1 &^ highs) + add | x1) | ((x2 &^ highs) + add | x2) | ((x3 &^ highs) + add | x3)
		}
		for ; i+8 <= len(b); i += 8 {
			x := binary.LittleEndian.Uint64(b[i:])
			acc |= (x &^ highs) + add | x
		}
		if acc&highs != 0 {
			return true
		}
	}
	for _, x := range b[i:] {
		if x > n {
			return true
		}
	}
	return false
}

// idWidth is the byte width of ids for a dictionary of n values.
func idWidth(n int) int {
	switch {
	case n < 255:
		return 1
	case n < 65535:
		return 2
	}
	return 4
}

// ParseTime decodes a decompressed _time column of rows rows into
// dst[:0] and returns it.
func ParseTime(raw []byte, rows int, dst []int64) ([]int64, error) {
	dst = dst[:0]
	var t int64
	for range rows {
		d, k := binary.Varint(raw)
		if k <= 0 {
			return dst, fmt.Errorf("bad time delta: %w", ErrCorrupt)
		}
		raw = raw[k:]
		t += d
		dst = append(dst, t)
	}
	if len(raw) != 0 {
		return dst, fmt.Errorf("time column has %d bytes past its rows: %w", len(raw), ErrCorrupt)
	}
	return dst, nil
}
