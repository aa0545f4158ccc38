package segindex

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"
)

// LineReader reads the fields of one log line as the query engine sees
// them, calling emit for each (name, value), and reports the line's _time
// (Unix ns) with timeOK when the line has one whose value does not depend
// on a time zone, and ok when the line is a JSON object read without error
// (a line that is not must be read from the segment by queries). The
// strings given to emit are valid only during the call.
type LineReader func(line []byte, emit func(name, value string)) (t int64, timeOK, ok bool)

// Hot column rules: every field of a block gets a column (a dictionary,
// or plain for mostly distinct values; see decide) except one whose values
// are mostly distinct (more than one in two rows) and average more than
// maxIDAvg bytes: an identifier (trace and request ids) or free text. As a
// column such a field would cost as much as the rest together (about 34
// bytes a row for a 32-digit hex id against 40 for all other short fields
// of `spate gen` logs), and queries look such values up rather than
// aggregate them. _msg is the exception (msgField). A long field with few
// distinct values (a user agent) is a cheap dictionary.
const maxIDAvg = 24

// Never a string column: _time has its own.
var notHot = map[string]bool{"_time": true}

// msgField always gets a plain column, whatever its length: word searches
// of the message are the most common log queries, and its column is a
// fraction of the lines to decompress (about 15% of `spate gen` lines).
const msgField = "_msg"

// maxBlockStreams caps the _stream values a block lists; past it, its
// streams are unknown.
const maxBlockStreams = 32

// Builder builds the sidecar of one segment block by block. It is not safe
// for concurrent use. Cost: one LineReader call per line, one map lookup
// per field value, and one zstd encode per column; memory is the columns'
// compressed bytes, one block's values, and for the segment blooms each
// field's distinct token hashes of every block (8 bytes each: 2.3 MB for
// the 290,000 trace ids of a 128 MiB segment) and a 4 KiB sketch.
type Builder struct {
	// Numbers, if set, parses a value as the query engine does for
	// numeric filters; the block's column fields then get numeric ranges
	// (NumRange). Set it before the first Add.
	Numbers func(string) (float64, bool)

	read   LineReader
	enc    *zstd.Encoder
	fields []string
	byName map[string]int
	blocks []Block
	data   []byte
	rows   int64
	raw    int64

	// Per block scratch.
	cols  []colAcc // by field id
	pos   []int    // field id by position in the line before
	times []int64
	buf   []byte
	hs    []uint64 // token hashes
	// With frames (AddFrames, more than one): the frame of the row being
	// read, the first row of each frame so far, and a set to collect one
	// frame's tokens of a field.
	frame     int
	frameRows []int
	frameSet  tokenSet
}

// colAcc accumulates one field's values in the current block.
type colAcc struct {
	dict    map[string]uint32
	values  []string
	ids     []uint32 // by row; 0: absent
	n       int      // rows with the field
	bytes   int      // their values' total length
	lastRow int      // 1 + the last row that had the field
	skip    bool     // no column in this block: values are not collected
	// plain: a plain column (see decide); plainBuf holds its first
	// plainRows rows.
	plain     bool
	plainBuf  []byte
	plainRows int
	// bloom: the field gets a token bloom (HasBloom); toks collects the
	// block's token hashes: of each value as it comes for plain and
	// skipped fields, of the dictionary at the end for the others.
	bloom bool
	toks  tokenSet
	// segHs collects the field's distinct token hashes of each block (a
	// hash in several blocks is there several times) and segCount counts
	// the distinct ones, for the segment's bloom of the field: appending
	// and a sketch cost a fraction of a set of all of them, whose inserts
	// miss the cache once it outgrows it.
	segHs    []uint64
	segCount *distinctCounter
	// frameHs: with frames, the token hashes of a skipped field's values
	// in row order; frameStart[i] is where frame i's begin.
	frameHs    []uint64
	frameStart []int
	// The block's numeric range of the values seen (of plain columns, as
	// they come; of dictionary ones, at the end): nums counts numbers,
	// nan marks a NaN (no range then).
	nums     int
	nan      bool
	min, max float64
}

// addNum adds v to c's numeric range.
func (c *colAcc) addNum(v string, b *Builder) {
	if b.Numbers == nil {
		return
	}
	f, ok := b.Numbers(v)
	switch {
	case !ok:
	case math.IsNaN(f):
		c.nan = true
	case c.nums == 0:
		c.min, c.max, c.nums = f, f, 1
	default:
		c.min, c.max = min(c.min, f), max(c.max, f)
		c.nums++
	}
}

// addTokens adds the tokens of v to c's token set, and to frame's when
// the block has frames and c no column.
func (c *colAcc) addTokens(v string, b *Builder, frame int) {
	b.hs = AppendTokenHashes(b.hs[:0], v)
	for _, h := range b.hs {
		c.toks.add(h)
	}
	if c.skip && len(b.frameRows) > 0 {
		for len(c.frameStart) <= frame {
			c.frameStart = append(c.frameStart, len(c.frameHs))
		}
		c.frameHs = append(c.frameHs, b.hs...)
	}
}

// dictTokens adds the tokens of c's dictionary values.
func (c *colAcc) dictTokens(b *Builder) {
	if !c.bloom {
		return
	}
	for _, v := range c.values {
		c.addTokens(v, b, 0)
	}
}

// frameTokens adds the tokens of the values c collected as a dictionary
// (it has just become skipped) to their rows' frames.
func (c *colAcc) frameTokens(b *Builder) {
	if !c.bloom || len(b.frameRows) == 0 {
		return
	}
	f := 0
	for r, id := range c.ids {
		for f+1 < len(b.frameRows) && b.frameRows[f+1] <= r {
			f++
		}
		if id > 0 {
			b.hs = AppendTokenHashes(b.hs[:0], c.values[id-1])
			for len(c.frameStart) <= f {
				c.frameStart = append(c.frameStart, len(c.frameHs))
			}
			c.frameHs = append(c.frameHs, b.hs...)
		}
	}
}

// NewBuilder returns a Builder reading lines with read.
func NewBuilder(read LineReader) (*Builder, error) {
	// The fastest level, with literals entropy-coded even when a column
	// has no matches (numbers, ids: its default skips them, and numeric
	// columns then barely compress): BenchmarkIndexBuild 95-97 -> 81-87
	// ms against the default level, for 0.8% more sidecar bytes.
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithAllLitEntropyCompression(true))
	if err != nil {
		return nil, err
	}
	return &Builder{read: read, enc: enc, byName: map[string]int{}}, nil
}

// Add indexes the next block: raw holds its whole lines (each ending in
// '\n', as in the segment), compressed to the frame at zoff of zlen bytes.
func (b *Builder) Add(raw []byte, zoff, zlen int64) {
	b.AddFrames(raw, zoff, []Frame{{ZLen: zlen, RawLen: int64(len(raw))}})
}

// AddFrames indexes the next block as Add does, compressed to consecutive
// frames from zoff: each frame's ZLen, and RawLen of whole lines of raw
// (their Rows are counted here). A block of several frames gets blooms
// per frame for the fields without a column (Block.FrameBlooms).
func (b *Builder) AddFrames(raw []byte, zoff int64, frames []Frame) {
	blk := Block{ZOff: zoff, RawOff: b.raw, RawLen: int64(len(raw)), Flags: FlagTime | FlagColumns}
	for _, f := range frames {
		blk.ZLen += f.ZLen
	}
	b.frame, b.frameRows = 0, b.frameRows[:0]
	var frameEnd int64 // raw offset where the current frame ends
	if len(frames) > 1 {
		blk.Frames = slices.Clone(frames)
		b.frameRows = append(b.frameRows, 0)
		frameEnd = frames[0].RawLen
	}
	for i := range b.cols {
		c := &b.cols[i]
		c.frameHs, c.frameStart = c.frameHs[:0], c.frameStart[:0]
		clear(c.dict)
		c.values, c.ids, c.n, c.bytes, c.lastRow = c.values[:0], c.ids[:0], 0, 0, 0
		c.skip, c.plain, c.plainBuf, c.plainRows = notHot[b.fields[i]], b.fields[i] == msgField, c.plainBuf[:0], 0
		c.toks.reset()
		c.nums, c.nan = 0, false
	}
	b.times = b.times[:0]
	row, k := 0, 0 // row in the block, field in the row
	emit := func(name, value string) {
		// Fast path: the field at this position in the line before had
		// the same name.
		var id int
		if k < len(b.pos) && b.fields[b.pos[k]] == name {
			id = b.pos[k]
		} else {
			id = b.fieldID(name)
			for len(b.pos) <= k {
				b.pos = append(b.pos, 0)
			}
			b.pos[k] = id
		}
		k++
		c := &b.cols[id]
		if c.lastRow == row+1 {
			return // a repeated name: the row has the first
		}
		c.lastRow = row + 1
		c.n++
		if c.bloom && (c.skip || c.plain) {
			c.addTokens(value, b, b.frame)
		}
		if c.skip {
			return
		}
		c.bytes += len(value)
		if c.plain {
			// Fast path for mostly distinct values: no dictionary.
			c.addNum(value, b)
			for c.plainRows < row {
				c.plainBuf = append(c.plainBuf, 0)
				c.plainRows++
			}
			c.plainBuf = binary.AppendUvarint(c.plainBuf, uint64(len(value))+1)
			c.plainBuf = append(c.plainBuf, value...)
			c.plainRows++
			return
		}
		for len(c.ids) < row {
			c.ids = append(c.ids, 0)
		}
		v, ok := c.dict[value]
		if !ok {
			value = strings.Clone(value)
			c.values = append(c.values, value)
			v = uint32(len(c.values))
			c.dict[value] = v
		}
		c.ids = append(c.ids, v)
	}
	for data := raw; len(data) > 0; {
		i := bytes.IndexByte(data, '\n')
		var line []byte
		if i < 0 {
			line, data = data, nil
		} else {
			line, data = data[:i], data[i+1:]
		}
		if blk.Frames != nil {
			// The line starts at raw offset len(raw)-len(data)-len(line)-1
			// (or is the last, unterminated one); frames hold whole lines.
			start := int64(len(raw) - len(data) - len(line))
			if i >= 0 {
				start--
			}
			for start >= frameEnd && b.frame+1 < len(blk.Frames) {
				blk.Frames[b.frame].Rows = row - b.frameRows[b.frame]
				b.frame++
				b.frameRows = append(b.frameRows, row)
				frameEnd += blk.Frames[b.frame].RawLen
			}
		}
		if len(line) == 0 || (len(line) == 1 && line[0] == '\r') {
			continue // not a log: queries skip it too
		}
		k = 0
		t, timeOK, ok := b.read(line, emit)
		if !ok {
			blk.Flags &^= FlagColumns
		}
		if timeOK {
			if len(b.times) == 0 || t < blk.MinTime {
				blk.MinTime = t
			}
			if len(b.times) == 0 || t > blk.MaxTime {
				blk.MaxTime = t
			}
		} else {
			blk.Flags &^= FlagTime
		}
		b.times = append(b.times, t)
		row++
		if row == decideRows {
			b.decide()
		}
	}
	blk.Rows = row
	if blk.Frames != nil {
		blk.Frames[b.frame].Rows = row - b.frameRows[b.frame]
	}
	b.decide()
	for id := range b.cols {
		c := &b.cols[id]
		if c.n == 0 {
			continue
		}
		blk.Present = append(blk.Present, id)
		if c.bloom {
			if !c.skip && !c.plain {
				c.dictTokens(b)
			}
			if c.toks.n > 0 {
				b.hs = c.toks.appendTo(b.hs[:0])
				c.segHs = append(c.segHs, b.hs...)
				if c.segCount == nil {
					c.segCount = new(distinctCounter)
				}
				for _, h := range b.hs {
					c.segCount.add(h)
				}
				off := len(b.data)
				b.data = appendBloom(b.data, b.hs, bloomBitsPerToken)
				sum := xxhash.Sum64(b.data[off:])
				blk.Blooms = append(blk.Blooms, ColumnRef{Field: id, Off: int64(off), Len: int64(len(b.data) - off), RawLen: int64(sum)})
			}
			if c.skip && blk.Frames != nil && c.toks.n > 0 {
				blk.FrameBlooms = append(blk.FrameBlooms, b.frameBlooms(id, c, len(blk.Frames)))
			}
		}
		if blk.Flags&FlagColumns == 0 || c.skip {
			continue
		}
		var col []byte
		if c.plain {
			col = append(append(b.buf[:0], kindPlain), c.plainBuf...)
			for r := c.plainRows; r < row; r++ {
				col = append(col, 0)
			}
		} else {
			for len(c.ids) < row {
				c.ids = append(c.ids, 0)
			}
		}
		var ref ColumnRef
		switch {
		case c.plain:
			ref = b.addColumn(col)
		case len(c.values) <= maxPackedDict:
			ref = b.addStored(b.appendPackedColumn(b.buf[:0], c))
		default:
			ref = b.addColumn(b.appendStringColumn(append(b.buf[:0], kindDict), c))
		}
		ref.Field = id
		blk.Columns = append(blk.Columns, ref)
		if b.Numbers != nil {
			if !c.plain {
				for _, v := range c.values {
					c.addNum(v, b)
				}
			}
			if !c.nan {
				blk.Nums = append(blk.Nums, NumRange{Field: id, Any: c.nums > 0, Min: c.min, Max: c.max})
			}
		}
	}
	b.blockStreams(&blk, row)
	if blk.Flags&FlagTime != 0 && row > 0 {
		blk.Time = b.addColumn(appendTimeColumn(b.buf[:0], b.times))
	} else {
		blk.Flags &^= FlagTime
		blk.MinTime, blk.MaxTime = 0, 0
	}
	if blk.Flags&FlagColumns == 0 {
		blk.Columns = nil
	}
	b.blocks = append(b.blocks, blk)
	b.rows += int64(row)
	b.raw += int64(len(raw))
}

// frameBlooms appends to the data area the bloom of each of n frames of
// the tokens c collected for field id.
func (b *Builder) frameBlooms(id int, c *colAcc, n int) FrameBlooms {
	fb := FrameBlooms{Field: id, Frames: make([]ColumnRef, n)}
	for len(c.frameStart) <= n {
		c.frameStart = append(c.frameStart, len(c.frameHs))
	}
	for f := range n {
		b.frameSet.reset()
		for _, h := range c.frameHs[c.frameStart[f]:c.frameStart[f+1]] {
			b.frameSet.add(h)
		}
		if b.frameSet.n == 0 {
			fb.Frames[f] = ColumnRef{Field: id}
			continue
		}
		b.hs = b.frameSet.appendTo(b.hs[:0])
		off := len(b.data)
		b.data = appendBloom(b.data, b.hs, bloomBitsPerToken)
		fb.Frames[f] = ColumnRef{Field: id, Off: int64(off), Len: int64(len(b.data) - off), RawLen: int64(xxhash.Sum64(b.data[off:]))}
	}
	return fb
}

// blockStreams sets blk's streams from the _stream values of its rows
// (when they are a dictionary of at most maxBlockStreams), with "{}" when
// some row has none.
func (b *Builder) blockStreams(blk *Block, rows int) {
	id, ok := b.byName["_stream"]
	var vals []string
	if ok {
		c := &b.cols[id]
		if c.n > 0 && (c.skip || c.plain || len(c.values) > maxBlockStreams) {
			return
		}
		if c.n > 0 {
			vals = append(vals, c.values...)
		}
		if c.n < rows {
			vals = append(vals, "{}")
		}
	} else {
		vals = []string{"{}"}
	}
	slices.Sort(vals)
	blk.Streams, blk.StreamsKnown = slices.Compact(vals), true
}

// decideRows: after this many rows of a block, fields that are not hot in
// them stop being collected for the block (their values would be thrown
// away at its end: ids, messages).
const decideRows = 256

// decide marks the fields that get no column in the current block (mostly
// distinct and long: see maxIDAvg), and those whose values are mostly
// distinct, which get a plain column: a dictionary would cost a map entry
// per row and save nothing.
func (b *Builder) decide() {
	for i := range b.cols {
		c := &b.cols[i]
		if c.n == 0 || c.skip || c.plain {
			continue
		}
		distinct := 2*len(c.values) > c.n
		if distinct && c.bytes > maxIDAvg*c.n {
			c.dictTokens(b)
			c.skip = true
			c.frameTokens(b)
			continue
		}
		if distinct && c.n >= decideRows/2 {
			c.dictTokens(b)
			for _, v := range c.values {
				c.addNum(v, b)
			}
			c.plain = true
			for r := range c.ids {
				if id := c.ids[r]; id == 0 {
					c.plainBuf = append(c.plainBuf, 0)
				} else {
					v := c.values[id-1]
					c.plainBuf = binary.AppendUvarint(c.plainBuf, uint64(len(v))+1)
					c.plainBuf = append(c.plainBuf, v...)
				}
			}
			c.plainRows = len(c.ids)
			clear(c.dict)
			c.values, c.ids = c.values[:0], c.ids[:0]
		}
	}
}

// fieldID returns the id of the named field, adding it.
func (b *Builder) fieldID(name string) int {
	id, ok := b.byName[name]
	if !ok {
		name = strings.Clone(name)
		id = len(b.fields)
		b.fields = append(b.fields, name)
		b.byName[name] = id
		b.cols = append(b.cols, colAcc{dict: map[string]uint32{}, skip: notHot[name], plain: name == msgField, bloom: HasBloom(name)})
	}
	return id
}

// addColumn compresses raw into the data area.
func (b *Builder) addColumn(raw []byte) ColumnRef {
	b.buf = raw
	off := len(b.data)
	b.data = b.enc.EncodeAll(raw, b.data)
	return ColumnRef{Off: int64(off), Len: int64(len(b.data) - off), RawLen: int64(len(raw))}
}

// addStored appends col to the data area as is, and its checksum: a
// packed column, which zstd would shrink little and decoding would cost
// more than reading.
func (b *Builder) addStored(col []byte) ColumnRef {
	b.buf = col
	off := len(b.data)
	b.data = append(b.data, col...)
	b.data = binary.LittleEndian.AppendUint32(b.data, uint32(xxhash.Sum64(col)))
	return ColumnRef{Off: int64(off), Len: int64(len(b.data) - off), RawLen: int64(len(col))}
}

// appendPackedColumn appends c as a packed dictionary column (kindPacked:
// at most maxPackedDict values, ids of packedBits bits).
func (b *Builder) appendPackedColumn(dst []byte, c *colAcc) []byte {
	dst = append(dst, kindPacked)
	dst = binary.AppendUvarint(dst, uint64(len(c.values)))
	for _, v := range c.values {
		dst = binary.AppendUvarint(dst, uint64(len(v)))
		dst = append(dst, v...)
	}
	bits := packedBits(len(c.values))
	per := 8 / bits
	var counts [maxPackedDict + 1]uint32
	for i := 0; i < len(c.ids); i += per {
		var x byte
		for j, id := range c.ids[i:min(i+per, len(c.ids))] {
			x |= byte(id) << (j * bits)
			counts[id]++
		}
		dst = append(dst, x)
	}
	for _, n := range counts[:len(c.values)+1] {
		dst = binary.AppendUvarint(dst, uint64(n))
	}
	return dst
}

func (b *Builder) appendStringColumn(dst []byte, c *colAcc) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(c.values)))
	for _, v := range c.values {
		dst = binary.AppendUvarint(dst, uint64(len(v)))
		dst = append(dst, v...)
	}
	switch idWidth(len(c.values)) {
	case 1:
		for _, id := range c.ids {
			dst = append(dst, byte(id))
		}
	case 2:
		for _, id := range c.ids {
			dst = binary.LittleEndian.AppendUint16(dst, uint16(id))
		}
	default:
		for _, id := range c.ids {
			dst = binary.LittleEndian.AppendUint32(dst, id)
		}
	}
	return dst
}

func appendTimeColumn(dst []byte, times []int64) []byte {
	var prev int64
	for _, t := range times {
		dst = binary.AppendVarint(dst, t-prev)
		prev = t
	}
	return dst
}

// Rows returns the rows added so far.
func (b *Builder) Rows() int64 { return b.rows }

// Finish returns the sidecar of the segment whose .zst has size zstSize and
// modification time zstMtime (Unix ns). The Builder must not be used after.
func (b *Builder) Finish(zstSize, zstMtime int64) []byte {
	var segBlooms []ColumnRef
	for id := range b.cols {
		c := &b.cols[id]
		if len(c.segHs) == 0 {
			continue
		}
		off := len(b.data)
		b.data = appendBloomOf(b.data, c.segHs, min(len(c.segHs), c.segCount.estimate()), segBloomBitsPerToken)
		segBlooms = append(segBlooms, ColumnRef{Field: id, Off: int64(off), Len: int64(len(b.data) - off), RawLen: int64(xxhash.Sum64(b.data[off:]))})
		c.segHs, c.segCount = nil, nil
	}
	var t []byte
	t = binary.LittleEndian.AppendUint64(t, uint64(zstSize))
	t = binary.LittleEndian.AppendUint64(t, uint64(zstMtime))
	t = binary.LittleEndian.AppendUint64(t, uint64(b.raw))
	t = binary.LittleEndian.AppendUint64(t, uint64(b.rows))
	t = binary.LittleEndian.AppendUint64(t, uint64(len(b.data)))
	t = binary.AppendUvarint(t, uint64(len(b.fields)))
	for _, f := range b.fields {
		t = binary.AppendUvarint(t, uint64(len(f)))
		t = append(t, f...)
	}
	t = binary.AppendUvarint(t, uint64(len(b.blocks)))
	for i := range b.blocks {
		blk := &b.blocks[i]
		for _, v := range []int64{blk.ZOff, blk.ZLen, blk.RawOff, blk.RawLen, int64(blk.Rows), int64(blk.Flags)} {
			t = binary.AppendUvarint(t, uint64(v))
		}
		t = binary.LittleEndian.AppendUint64(t, uint64(blk.MinTime))
		t = binary.LittleEndian.AppendUint64(t, uint64(blk.MaxTime))
		t = binary.AppendUvarint(t, uint64(len(blk.Present)))
		for _, id := range blk.Present {
			t = binary.AppendUvarint(t, uint64(id))
		}
		t = binary.AppendUvarint(t, uint64(len(blk.Columns)))
		for _, c := range blk.Columns {
			t = appendRef(t, c)
		}
		if blk.Flags&FlagTime != 0 {
			t = appendRef(t, blk.Time)
		}
		t = binary.AppendUvarint(t, uint64(len(blk.Nums)))
		for _, n := range blk.Nums {
			t = binary.AppendUvarint(t, uint64(n.Field))
			hasNum := uint64(0)
			if n.Any {
				hasNum = 1
			}
			t = binary.AppendUvarint(t, hasNum)
			t = binary.LittleEndian.AppendUint64(t, math.Float64bits(n.Min))
			t = binary.LittleEndian.AppendUint64(t, math.Float64bits(n.Max))
		}
		if blk.StreamsKnown {
			t = binary.AppendUvarint(t, uint64(len(blk.Streams))+1)
			for _, st := range blk.Streams {
				t = binary.AppendUvarint(t, uint64(len(st)))
				t = append(t, st...)
			}
		} else {
			t = binary.AppendUvarint(t, 0)
		}
		t = binary.AppendUvarint(t, uint64(len(blk.Blooms)))
		for _, c := range blk.Blooms {
			t = appendRef(t, c)
		}
		t = binary.AppendUvarint(t, uint64(len(blk.Frames)))
		for _, f := range blk.Frames {
			t = binary.AppendUvarint(t, uint64(f.ZLen))
			t = binary.AppendUvarint(t, uint64(f.RawLen))
			t = binary.AppendUvarint(t, uint64(f.Rows))
		}
		if blk.Frames != nil {
			t = binary.AppendUvarint(t, uint64(len(blk.FrameBlooms)))
			for _, fb := range blk.FrameBlooms {
				t = binary.AppendUvarint(t, uint64(fb.Field))
				for _, c := range fb.Frames {
					t = binary.AppendUvarint(t, uint64(c.Off))
					t = binary.AppendUvarint(t, uint64(c.Len))
					t = binary.AppendUvarint(t, uint64(c.RawLen))
				}
			}
		}
	}
	t = binary.AppendUvarint(t, uint64(len(segBlooms)))
	for _, c := range segBlooms {
		t = appendRef(t, c)
	}
	out := make([]byte, headerSize, headerSize+len(t)+len(b.data))
	copy(out, magic)
	binary.LittleEndian.PutUint32(out[8:], Version)
	binary.LittleEndian.PutUint64(out[16:], uint64(len(t)))
	binary.LittleEndian.PutUint64(out[24:], xxhash.Sum64(t))
	out = append(out, t...)
	out = append(out, b.data...)
	b.enc.Close()
	return out
}

func appendRef(t []byte, c ColumnRef) []byte {
	for _, v := range []int64{int64(c.Field), c.Off, c.Len, c.RawLen} {
		t = binary.AppendUvarint(t, uint64(v))
	}
	return t
}

// String describes b's progress, for logs.
func (b *Builder) String() string {
	return fmt.Sprintf("%d blocks, %d rows, %d fields, %d column bytes", len(b.blocks), b.rows, len(b.fields), len(b.data))
}
