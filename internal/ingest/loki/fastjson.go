package loki

import (
	"math/bits"
	"strconv"
	"strings"

	"github.com/spate-io/spate/internal/ndjson"
)

// This file parses JSON with the grammar of github.com/valyala/fastjson
// v1.6.10, which VictoriaLogs uses for Loki bodies and for the JSON
// messages it flattens. It is looser than RFC 8259, and the differences
// decide which bodies VictoriaLogs takes and which messages it splits
// into fields, so they are kept:
//
//   - a string runs to the first '"' after an even number of backslashes;
//     its contents are not checked (control bytes, bad escapes and invalid
//     UTF-8 pass), and are decoded best effort (see ndjson.AppendUnescapeLenient);
//   - a number is any run of the bytes 0-9 . - + e E, or "inf" / "nan"
//     in any case, optionally after one sign;
//   - nesting deeper than maxDepth values is an error;
//   - whitespace is only ' ', '\t', '\n' and '\r'.
//
// The parse builds a flat tree (jtree) whose nodes point into the input.

const maxDepth = 300 // fastjson.MaxDepth

// Node kinds.
const (
	jNull uint8 = iota
	jObject
	jArray
	jString
	jNumber
	jTrue
	jFalse
)

// jnode is one parsed value. For a string, [start,end) are its raw
// contents, without the quotes; for the others, its text. A container's
// children are jtree.kids[kids:kids+n]: an object's are key, value pairs
// (the keys are string nodes).
type jnode struct {
	start, end int32
	kids, n    int32
	kind       uint8
	esc        bool // a string whose contents hold a backslash
}

// jtree is a parsed JSON value. Its zero value is ready for parse, which
// reuses the slices.
type jtree struct {
	s     string
	nodes []jnode
	kids  []int32
	stack []int32 // children of the open containers
	// arrays and members count the arrays and object members parsed.
	arrays, members int
}

// jsonError is a syntax error at a byte offset of the parsed text.
type jsonError struct {
	msg string
	off int
}

func (e *jsonError) Error() string { return e.msg + " at offset " + strconv.Itoa(e.off) }

// parse parses s (which the tree then references) and returns its root
// node. Cost: one pass over s, recursion depth at most maxDepth; no
// allocation once the tree's slices have grown.
func (t *jtree) parse(s string) (int32, error) {
	t.s = s
	t.nodes = t.nodes[:0]
	t.kids = t.kids[:0]
	t.stack = t.stack[:0]
	t.arrays, t.members = 0, 0
	root, i, err := t.value(skipWS(s, 0), 0)
	if err != nil {
		return -1, err
	}
	if i = skipWS(s, i); i < len(s) {
		return -1, &jsonError{"unexpected tail after the JSON value", i}
	}
	return root, nil
}

func skipWS(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r') {
		i++
	}
	return i
}

func isNumByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E'
}

func (t *jtree) add(kind uint8, start, end int) int32 {
	t.nodes = append(t.nodes, jnode{start: int32(start), end: int32(end), kind: kind})
	return int32(len(t.nodes) - 1)
}

// addString adds a string node; esc: its contents hold a backslash.
func (t *jtree) addString(start, end int, esc bool) int32 {
	t.nodes = append(t.nodes, jnode{start: int32(start), end: int32(end), kind: jString, esc: esc})
	return int32(len(t.nodes) - 1)
}

// value parses the value at s[i] (not whitespace) nested at depth (0 for
// the root) and returns its node and the index just past it.
func (t *jtree) value(i, depth int) (int32, int, error) {
	s := t.s
	if i >= len(s) {
		return -1, i, &jsonError{"unexpected end of JSON", i}
	}
	depth++
	if depth > maxDepth {
		return -1, i, &jsonError{"too deep nesting of JSON values; it exceeds " + strconv.Itoa(maxDepth), i}
	}
	switch s[i] {
	case '{':
		return t.object(i, depth)
	case '[':
		return t.array(i, depth)
	case '"':
		end, esc, ok := stringEnd(s, i+1)
		if !ok {
			return -1, len(s), &jsonError{`missing closing '"' of a string`, i}
		}
		return t.addString(i+1, end, esc), end + 1, nil
	case 't':
		if strings.HasPrefix(s[i:], "true") {
			return t.add(jTrue, i, i+4), i + 4, nil
		}
		return -1, i, &jsonError{"unexpected value", i}
	case 'f':
		if strings.HasPrefix(s[i:], "false") {
			return t.add(jFalse, i, i+5), i + 5, nil
		}
		return -1, i, &jsonError{"unexpected value", i}
	case 'n':
		if strings.HasPrefix(s[i:], "null") {
			return t.add(jNull, i, i+4), i + 4, nil
		}
		if len(s)-i >= 3 && strings.EqualFold(s[i:i+3], "nan") {
			return t.add(jNumber, i, i+3), i + 3, nil
		}
		return -1, i, &jsonError{"unexpected value", i}
	}
	j := i
	for j < len(s) && isNumByte(s[j]) {
		j++
	}
	if j < len(s) && (j == i || j == i+1 && (s[i] == '-' || s[i] == '+')) {
		if len(s)-j >= 3 && (strings.EqualFold(s[j:j+3], "inf") || strings.EqualFold(s[j:j+3], "nan")) {
			return t.add(jNumber, i, j+3), j + 3, nil
		}
		return -1, i, &jsonError{"unexpected character " + strconv.QuoteRune(rune(s[i])), i}
	}
	return t.add(jNumber, i, j), j, nil
}

// stringEnd returns the index of the quote closing the string whose
// contents start at s[i]: the first '"' after an even number of
// backslashes; esc reports whether the contents hold a backslash. Cost:
// one word per 8 bytes up to the first quote or backslash.
func stringEnd(s string, i int) (end int, esc, ok bool) {
	for {
		for i+8 <= len(s) {
			m := quoteOrBackslash(load64(s, i))
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) / 8
			break
		}
		for i < len(s) && s[i] != '"' && s[i] != '\\' {
			i++
		}
		if i >= len(s) {
			return len(s), esc, false
		}
		if s[i] == '"' {
			return i, esc, true
		}
		esc = true
		i += 2 // the backslash and the byte it escapes
		if i > len(s) {
			return len(s), esc, false
		}
	}
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// quoteOrBackslash returns a word whose lowest set bit is the high bit of
// the first byte of w (little endian) that is '"' or '\\'; 0 if none is.
// The bits above the lowest may be false positives.
func quoteOrBackslash(w uint64) uint64 {
	q, b := w^(lsb*'"'), w^(lsb*'\\')
	return ((q-lsb)&^q | (b-lsb)&^b) & msb
}

// load64 returns the 8 bytes of s at i as a little-endian word.
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// finish makes the container node [start,end) of the children pushed on
// the stack since mark.
func (t *jtree) finish(kind uint8, start, end, mark int) int32 {
	k := len(t.kids)
	t.kids = append(t.kids, t.stack[mark:]...)
	t.stack = t.stack[:mark]
	if kind == jArray {
		t.arrays++
	} else {
		t.members += (len(t.kids) - k) / 2
	}
	t.nodes = append(t.nodes, jnode{start: int32(start), end: int32(end), kids: int32(k), n: int32(len(t.kids) - k), kind: kind})
	return int32(len(t.nodes) - 1)
}

func (t *jtree) array(start, depth int) (int32, int, error) {
	s := t.s
	mark := len(t.stack)
	i := skipWS(s, start+1)
	if i >= len(s) {
		return -1, i, &jsonError{"missing ']'", i}
	}
	if s[i] == ']' {
		return t.finish(jArray, start, i+1, mark), i + 1, nil
	}
	for {
		v, j, err := t.value(skipWS(s, i), depth)
		if err != nil {
			return -1, j, err
		}
		t.stack = append(t.stack, v)
		i = skipWS(s, j)
		if i >= len(s) {
			return -1, i, &jsonError{"unexpected end of array", i}
		}
		switch s[i] {
		case ',':
			i++
		case ']':
			return t.finish(jArray, start, i+1, mark), i + 1, nil
		default:
			return -1, i, &jsonError{"missing ',' after array value", i}
		}
	}
}

func (t *jtree) object(start, depth int) (int32, int, error) {
	s := t.s
	mark := len(t.stack)
	i := skipWS(s, start+1)
	if i >= len(s) {
		return -1, i, &jsonError{"missing '}'", i}
	}
	if s[i] == '}' {
		return t.finish(jObject, start, i+1, mark), i + 1, nil
	}
	for {
		i = skipWS(s, i)
		if i >= len(s) || s[i] != '"' {
			return -1, i, &jsonError{`cannot find opening '"' for object key`, i}
		}
		end, esc, ok := stringEnd(s, i+1)
		if !ok {
			return -1, len(s), &jsonError{`missing closing '"' of an object key`, i}
		}
		t.stack = append(t.stack, t.addString(i+1, end, esc))
		i = skipWS(s, end+1)
		if i >= len(s) || s[i] != ':' {
			return -1, i, &jsonError{"missing ':' after object key", i}
		}
		v, j, err := t.value(skipWS(s, i+1), depth)
		if err != nil {
			return -1, j, err
		}
		t.stack = append(t.stack, v)
		i = skipWS(s, j)
		if i >= len(s) {
			return -1, i, &jsonError{"unexpected end of object", i}
		}
		switch s[i] {
		case ',':
			i++
		case '}':
			return t.finish(jObject, start, i+1, mark), i + 1, nil
		default:
			return -1, i, &jsonError{"missing ',' after object value", i}
		}
	}
}

// raw returns the node's raw text (a string's contents without quotes).
func (t *jtree) raw(n int32) string {
	nd := &t.nodes[n]
	return t.s[nd.start:nd.end]
}

// children returns the node's children.
func (t *jtree) children(n int32) []int32 {
	nd := &t.nodes[n]
	return t.kids[nd.kids : nd.kids+nd.n]
}

// get returns the value of key in object obj, or -1, as fastjson's
// Object.Get: first by comparing the raw keys, unless *unescaped (the
// object's keys were decoded by an earlier get or visit), then by
// comparing the decoded keys, which sets *unescaped. key has no
// backslash. A non-object has no keys.
func (t *jtree) get(obj int32, key string, unescaped *bool, scratch []byte) int32 {
	if obj < 0 || t.nodes[obj].kind != jObject {
		return -1
	}
	kids := t.children(obj)
	if !*unescaped {
		for i := 0; i < len(kids); i += 2 {
			if t.raw(kids[i]) == key {
				return kids[i+1]
			}
		}
		*unescaped = true
	}
	for i := 0; i < len(kids); i += 2 {
		raw := t.raw(kids[i])
		if strings.IndexByte(raw, '\\') < 0 {
			if raw == key {
				return kids[i+1]
			}
			continue
		}
		if string(ndjson.AppendUnescapeLenient(scratch[:0], raw)) == key {
			return kids[i+1]
		}
	}
	return -1
}

// appendRaw appends node n as fastjson marshals a value it has not
// decoded: the text without whitespace outside strings, strings, keys and
// numbers as written.
func (t *jtree) appendRaw(dst []byte, n int32) []byte {
	nd := &t.nodes[n]
	switch nd.kind {
	case jString:
		dst = append(dst, '"')
		dst = append(dst, t.s[nd.start:nd.end]...)
		return append(dst, '"')
	case jObject:
		return t.appendObject(dst, n, false)
	case jArray:
		dst = append(dst, '[')
		for i, k := range t.children(n) {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = t.appendRaw(dst, k)
		}
		return append(dst, ']')
	default:
		return append(dst, t.s[nd.start:nd.end]...)
	}
}

// appendObject appends object n as appendRaw does; with decodedKeys its
// own keys (not those of nested objects) are decoded and re-quoted, as
// fastjson marshals an object it has visited.
func (t *jtree) appendObject(dst []byte, n int32, decodedKeys bool) []byte {
	dst = append(dst, '{')
	kids := t.children(n)
	for i := 0; i < len(kids); i += 2 {
		if i > 0 {
			dst = append(dst, ',')
		}
		raw := t.raw(kids[i])
		if decodedKeys {
			dst = appendQuoteKey(dst, raw)
		} else {
			dst = append(dst, '"')
			dst = append(dst, raw...)
			dst = append(dst, '"')
		}
		dst = append(dst, ':')
		dst = t.appendRaw(dst, kids[i+1])
	}
	return append(dst, '}')
}

// appendQuoteKey appends the decoded key raw quoted as fastjson quotes a
// string: as is between quotes unless it holds '"', '\\' or a control
// byte, else with strconv.AppendQuote.
func appendQuoteKey(dst []byte, raw string) []byte {
	var tmp [64]byte
	k := ndjson.AppendUnescapeLenient(tmp[:0], raw)
	for _, c := range k {
		if c == '"' || c == '\\' || c < 0x20 {
			return strconv.AppendQuote(dst, string(k))
		}
	}
	dst = append(dst, '"')
	dst = append(dst, k...)
	return append(dst, '"')
}
