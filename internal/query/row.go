package query

import (
	"strings"

	"github.com/spate-io/spate/internal/bytesutil"
)

// Field is one named value of a row. Values are text, as in VictoriaLogs: a
// missing field, a JSON null and "" are the same thing.
type Field struct {
	Name, Value string
}

// Row is one log or one result row: its fields in order, with unique names.
//
// Rows handed to pipe processors alias the chunk being scanned and the
// worker's arena: their strings are valid only during the push call that
// carries them. A processor that keeps a row or a value must copy it
// (Row.Clone, strings.Clone).
type Row struct {
	Fields []Field

	// Time is the parsed _time in Unix nanoseconds when HasTime is set. It
	// lets time filters and buckets skip re-parsing the _time text; pipes
	// that change _time clear HasTime.
	Time    int64
	HasTime bool

	// pos orders rows of a scan: the input's index and the line's byte
	// offset in it. It breaks ties in sort and keeps values() in file order.
	pos rowPos
}

// rowPos is a row's position in the scan's input order.
type rowPos struct {
	input int
	off   int64
}

func (a rowPos) less(b rowPos) bool {
	if a.input != b.input {
		return a.input < b.input
	}
	return a.off < b.off
}

// Get returns the value of the named field, "" if it is absent.
func (r *Row) Get(name string) string {
	for i := range r.Fields {
		if r.Fields[i].Name == name {
			return r.Fields[i].Value
		}
	}
	return ""
}

// index returns the position of the named field, or -1.
func (r *Row) index(name string) int {
	for i := range r.Fields {
		if r.Fields[i].Name == name {
			return i
		}
	}
	return -1
}

// Set sets the named field, replacing its value if it exists (keeping its
// position) or appending it.
func (r *Row) Set(name, value string) {
	if name == "_time" {
		r.HasTime = false
	}
	if i := r.index(name); i >= 0 {
		r.Fields[i].Value = value
		return
	}
	r.Fields = append(r.Fields, Field{Name: name, Value: value})
}

// Delete removes the named field if present.
func (r *Row) Delete(name string) {
	if name == "_time" {
		r.HasTime = false
	}
	if i := r.index(name); i >= 0 {
		r.Fields = append(r.Fields[:i], r.Fields[i+1:]...)
	}
}

// reuse empties r as Reset does, without clearing the fields it had:
// their strings stay referenced until overwritten. For the row a worker
// builds every line into, whose strings point into the chunk it reads
// (clearing them cost a by-service count about 7% of its CPU).
func (r *Row) reuse() {
	r.Fields = r.Fields[:0]
	r.Time, r.HasTime = 0, false
	r.pos = rowPos{}
}

// Reset empties r for reuse, keeping its storage.
func (r *Row) Reset() {
	clear(r.Fields)
	r.Fields = r.Fields[:0]
	r.Time, r.HasTime = 0, false
	r.pos = rowPos{}
}

// Clone returns a deep copy of r whose strings own their memory, in one
// allocation for all the text.
func (r *Row) Clone() *Row {
	n := 0
	for _, f := range r.Fields {
		n += len(f.Name) + len(f.Value)
	}
	var b strings.Builder
	b.Grow(n)
	for _, f := range r.Fields {
		b.WriteString(f.Name)
		b.WriteString(f.Value)
	}
	s := b.String()
	c := &Row{Fields: make([]Field, len(r.Fields)), Time: r.Time, HasTime: r.HasTime, pos: r.pos}
	off := 0
	for i, f := range r.Fields {
		c.Fields[i].Name = s[off : off+len(f.Name)]
		off += len(f.Name)
		c.Fields[i].Value = s[off : off+len(f.Value)]
		off += len(f.Value)
	}
	return c
}

// CopyFrom makes r a shallow copy of src, reusing r's storage.
func (r *Row) CopyFrom(src *Row) {
	r.Fields = append(r.Fields[:0], src.Fields...)
	r.Time, r.HasTime, r.pos = src.Time, src.HasTime, src.pos
}

// arena holds the text a worker creates while building a row (unescaped
// strings, dotted names, formatted times, pipe results). Strings taken from it
// stay valid until reset: when a block is full a new one is started instead of
// growing the old one in place, so earlier strings never move.
type arena struct {
	buf []byte
}

const arenaBlock = 64 << 10

// reset makes the arena's memory reusable. Every string taken from it since
// the previous reset becomes invalid.
func (a *arena) reset() { a.buf = a.buf[:0] }

// add copies b into the arena and returns it as a string.
func (a *arena) add(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	a.reserve(len(b))
	start := len(a.buf)
	a.buf = append(a.buf, b...)
	return unsafeString(a.buf[start:])
}

// addString is add for a string.
func (a *arena) addString(s string) string {
	if len(s) == 0 {
		return ""
	}
	a.reserve(len(s))
	start := len(a.buf)
	a.buf = append(a.buf, s...)
	return unsafeString(a.buf[start:])
}

// reserve makes room for n more bytes without moving existing ones.
func (a *arena) reserve(n int) {
	if cap(a.buf)-len(a.buf) >= n {
		return
	}
	size := max(arenaBlock, n)
	a.buf = make([]byte, 0, size)
}

// appendBuf returns the arena's free space as an empty slice to append to;
// finish with take(b) to claim what was appended. If the append outgrew the
// free space, take copies the result into the arena.
func (a *arena) appendBuf(hint int) []byte {
	a.reserve(hint)
	return a.buf[len(a.buf):len(a.buf)]
}

// take claims b, which was built by appending to appendBuf's slice.
func (a *arena) take(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	free := a.buf[len(a.buf):cap(a.buf)]
	if len(free) >= len(b) && &free[:1][0] == &b[:1][0] {
		a.buf = a.buf[:len(a.buf)+len(b)]
		return unsafeString(b)
	}
	return a.add(b)
}

// unsafeString returns b as a string without copying; see
// bytesutil.ToUnsafeString for its lifetime rules.
func unsafeString(b []byte) string { return bytesutil.ToUnsafeString(b) }
