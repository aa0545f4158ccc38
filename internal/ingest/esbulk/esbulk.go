// Package esbulk reads the Elasticsearch bulk API's body (action and
// document lines, https://www.elastic.co/docs/api/doc/elasticsearch/operation/operation-bulk)
// as the NDJSON lines the ingest pipeline stores, one line per item, and
// writes the bulk response that shippers (Filebeat, Fluent Bit, Vector,
// Logstash, the Elasticsearch clients) check item by item.
//
// Unlike VictoriaLogs, which answers 400 for the whole bulk at its first
// bad document, a bad item is reported in its own place of the response
// and the others are stored, as Elasticsearch does.
package esbulk

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/spate-io/spate/internal/ndjson"
)

// Op is a bulk action.
type Op uint8

// The bulk actions. Index and Create store a document; Delete and Update
// are answered with an item error (logs are append-only).
const (
	Index Op = iota
	Create
	Delete
	Update
)

var opNames = [...]string{Index: "index", Create: "create", Delete: "delete", Update: "update"}

func (o Op) String() string { return opNames[o] }

// Item is one action of a bulk body.
type Item struct {
	Op    Op
	Index string // the action's _index, if any
	ID    string // the action's _id, if any
	// Err is why the item was not given to the pipeline (an empty or
	// missing document, an unsupported action); "" when its line was.
	Err string
}

// MaxActionBytes caps an action line; a longer one ends the body with a
// *SyntaxError.
const MaxActionBytes = 64 << 10

// SyntaxError is a body that is not a bulk body: an action line that is
// not a JSON object with one known action. Items before it were read.
type SyntaxError struct {
	Line int64 // 1-based line of the body
	Msg  string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("malformed action/metadata line [%d]: %s", e.Line, e.Msg)
}

// Reader turns a bulk body into NDJSON lines: for each item, its document
// line as received (the pipeline checks it), or an empty line when the
// item has no document to store (Item.Err says why), so that line k of
// the output is item k. Memory: one 64 KiB buffer and an Item per action;
// documents are streamed, whatever their length. Not safe for concurrent
// use.
type Reader struct {
	br      *bufio.Reader
	items   []Item
	pending []byte // output not yet returned; may alias br's buffer
	inDoc   bool   // passing the rest of a long document line through
	newline bool   // a '\n' to emit after pending (a last line without one)
	line    int64  // body lines read
	err     error
	it      ndjson.Iter
	// lastIndex is the last item's _index, shared by the items after it
	// that name the same.
	lastIndex string
	// lastAction is the last action line parsed (at most MaxActionBytes),
	// lastItem what it gave.
	lastAction []byte
	lastItem   Item
	haveLast   bool
	slowOnly   bool // tests: no fast path
}

// NewReader returns a Reader of the bulk body r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, MaxActionBytes)}
}

// Reset makes the Reader read the bulk body r, as NewReader(r) would, and
// keeps its buffers: its read buffer, its items' array (the Items of the
// body before are overwritten; an array of more than maxKeptItems is
// dropped) and the last action line's Item.
func (r *Reader) Reset(body io.Reader) {
	items := r.items[:0]
	if cap(items) > maxKeptItems {
		items = nil
	}
	clear(r.items) // drop the strings for the GC
	*r = Reader{br: r.br, items: items, lastIndex: r.lastIndex,
		lastAction: r.lastAction, lastItem: r.lastItem, haveLast: r.haveLast}
	r.br.Reset(body)
}

// maxKeptItems bounds the items' array a Reader keeps across Reset: 3.6 MB.
const maxKeptItems = 1 << 16

// Items returns the items read so far, in order; item k (0-based) is the
// output's line k+1. Valid until the next Read.
func (r *Reader) Items() []Item { return r.items }

// Syntax returns the error that ended the body if it was not a bulk body,
// else nil.
func (r *Reader) Syntax() *SyntaxError {
	se, _ := r.err.(*SyntaxError)
	return se
}

// Read implements io.Reader.
// It fills p with as many items' lines as fit (pending output aliases the
// buffered reader, so it is copied out before the next item is read).
func (r *Reader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(r.pending) == 0 {
			if r.newline {
				r.newline = false
				r.pending = newlineBytes
			} else if r.err != nil {
				if n > 0 {
					return n, nil
				}
				return 0, r.err
			} else {
				if r.haveLast && !r.slowOnly {
					if m := r.fast(p[n:]); m > 0 {
						n += m
						continue
					}
				}
				r.step()
				continue
			}
		}
		c := copy(p[n:], r.pending)
		r.pending = r.pending[c:]
		n += c
	}
	return n, nil
}

var newlineBytes = []byte{'\n'}

// fast copies into dst the documents of the items already buffered that
// step would read the same way: an action line equal to the last one (a
// create or index action) and a document line that starts with '{', both
// whole in the buffer, as many as fit in dst. It returns the bytes
// copied; 0 leaves the next item to step. It saves step's two ReadSlice
// calls and its checks per item.
func (r *Reader) fast(dst []byte) int {
	a := len(r.lastAction)
	if op := r.lastItem.Op; op != Create && op != Index || a == 0 || r.lastAction[a-1] != '\n' {
		return 0 // and not a last line of a body before Reset, without its '\n'
	}
	buf, _ := r.br.Peek(r.br.Buffered())
	used, out := 0, 0
	for {
		rest := buf[used:]
		if len(rest) <= a || !bytes.Equal(rest[:a], r.lastAction) || rest[a] != '{' {
			break
		}
		d := bytes.IndexByte(rest[a:], '\n')
		if d < 0 || d+1 > len(dst)-out {
			break
		}
		out += copy(dst[out:], rest[a:a+d+1])
		r.items = append(r.items, r.lastItem)
		r.line += 2
		used += a + d + 1
	}
	r.br.Discard(used)
	return out
}

// step reads the next piece of the body into pending, or sets err.
func (r *Reader) step() {
	if r.inDoc {
		s, err := r.br.ReadSlice('\n')
		r.pending = s
		switch {
		case err == nil:
			r.inDoc = false
		case errors.Is(err, bufio.ErrBufferFull):
		case err == io.EOF:
			r.inDoc, r.newline, r.err = false, true, io.EOF
		default:
			r.inDoc, r.err = false, err
		}
		return
	}
	// An action line; blank lines between items are skipped, as
	// Elasticsearch and VictoriaLogs skip them.
	var action []byte
	for {
		s, err := r.br.ReadSlice('\n')
		if len(s) > 0 || err == nil {
			r.line++
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			r.err = &SyntaxError{Line: r.line, Msg: fmt.Sprintf("longer than %d bytes", MaxActionBytes)}
			return
		case err != nil && err != io.EOF:
			r.err = err
			return
		}
		if len(bytes.TrimSpace(s)) > 0 {
			action = s
			break
		}
		if err == io.EOF {
			r.err = io.EOF
			return
		}
	}
	it, err := r.parseAction(action)
	if err != nil {
		r.err = &SyntaxError{Line: r.line, Msg: err.Error()}
		return
	}
	switch it.Op {
	case Delete:
		it.Err = "delete is not supported: logs are append-only"
		r.items = append(r.items, it)
		r.pending = newlineBytes
		return
	case Update:
		it.Err = "update is not supported: logs are append-only"
	}
	// The document line.
	s, err := r.br.ReadSlice('\n')
	if len(s) > 0 || err == nil {
		r.line++
	}
	switch {
	case err == io.EOF && len(s) == 0:
		it.Err = "the action has no document line after it"
		r.err = io.EOF
	case err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull):
		r.err = err
		return
	case it.Err != "":
		// Update: skip its document.
		for errors.Is(err, bufio.ErrBufferFull) {
			_, err = r.br.ReadSlice('\n')
		}
		if err != nil {
			r.err = err
		}
	case len(bytes.TrimSpace(s)) == 0 && !errors.Is(err, bufio.ErrBufferFull):
		it.Err = "the document is empty"
		if err != nil {
			r.err = err
		}
	default:
		r.items = append(r.items, it)
		r.pending = s
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			r.inDoc = true
		case err == io.EOF:
			r.newline, r.err = true, io.EOF
		}
		return
	}
	r.items = append(r.items, it)
	r.pending = newlineBytes
}

// parseAction reads an action line: one JSON object with one key, the
// action, whose value is an object of its metadata.
// Shippers mostly repeat one action line for every document of a bulk
// ({"create":{"_index":"filebeat-8"}}): a line equal to the one before
// gives the same Item without being parsed again.
func (r *Reader) parseAction(line []byte) (Item, error) {
	if r.haveLast && bytes.Equal(line, r.lastAction) {
		return r.lastItem, nil
	}
	it, ok := r.fastAction(line)
	if !ok {
		var err error
		if it, err = slowAction(line); err != nil {
			return Item{}, err
		}
	}
	r.lastAction = append(r.lastAction[:0], line...)
	r.lastItem, r.haveLast = it, true
	return it, nil
}

// slowAction is parseAction's slow path: anything but {"op":{...}} with a
// plain key, and every error, through encoding/json.
func slowAction(line []byte) (Item, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return Item{}, fmt.Errorf("not a JSON object: %v", err)
	}
	if len(m) != 1 {
		return Item{}, fmt.Errorf("expected one action, found %d keys", len(m))
	}
	var it Item
	for k, v := range m {
		op, ok := parseOp(k)
		if !ok {
			return Item{}, fmt.Errorf("unknown action %q; expected index, create, delete or update", k)
		}
		it.Op = op
		var meta struct {
			Index json.RawMessage `json:"_index"`
			ID    json.RawMessage `json:"_id"`
		}
		if err := json.Unmarshal(v, &meta); err != nil {
			return Item{}, fmt.Errorf("the %s action's metadata is not an object", k)
		}
		it.Index, it.ID = jsonText(meta.Index), jsonText(meta.ID)
	}
	return it, nil
}

func parseOp(k string) (Op, bool) {
	switch k {
	case "index":
		return Index, true
	case "create":
		return Create, true
	case "delete":
		return Delete, true
	case "update":
		return Update, true
	}
	return 0, false
}

// fastAction reads the usual action line, {"op":{"_index":"x",...}}, with
// the line's iterator instead of encoding/json; ok is false for anything
// else. The _index of consecutive items is usually the same: it is kept
// without allocating again.
func (r *Reader) fastAction(line []byte) (it Item, ok bool) {
	s := bytes.TrimSpace(line)
	if len(s) < len(`{"index":{}}`) || s[0] != '{' || s[1] != '"' || s[len(s)-1] != '}' {
		return it, false
	}
	q := bytes.IndexByte(s[2:], '"')
	if q < 0 {
		return it, false
	}
	op, found := parseOp(string(s[2 : 2+q]))
	if !found {
		return it, false
	}
	meta := bytes.TrimLeft(s[2+q+1:], " \t")
	if len(meta) == 0 || meta[0] != ':' {
		return it, false
	}
	meta = bytes.TrimSpace(meta[1 : len(meta)-1])
	if len(meta) == 0 || meta[0] != '{' {
		return it, false
	}
	it.Op = op
	r.it.Reset(meta)
	for r.it.Next() {
		if r.it.Depth() != 0 || r.it.Kind() == ndjson.KindNull {
			continue
		}
		switch k := r.it.Key(); string(k) {
		case "_index":
			v := r.it.Value()
			if string(v) != r.lastIndex {
				r.lastIndex = string(v)
			}
			it.Index = r.lastIndex
		case "_id":
			it.ID = string(r.it.Value())
		}
	}
	return it, r.it.Err() == nil
}

// jsonText returns a JSON string's value, or other JSON as its text.
func jsonText(v json.RawMessage) string {
	if len(v) == 0 || string(v) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}

// Outcome is what became of one item.
type Outcome struct {
	Status int    // HTTP status of the item: 201 stored, 400, 429, 503
	Type   string // the error type Elasticsearch would give; "" when stored
	Reason string
}

// AppendResponse appends the bulk response for items and their outcomes
// (len(out) == len(items)): {"took":..,"errors":..,"items":[..]}, each
// item under its action's name with _index, _id when given, status and
// either result "created" or an error object: what Elasticsearch answers,
// less the fields (_version, _shards, _seq_no) that have no meaning for
// logs and that clients do not read.
func AppendResponse(dst []byte, tookMs int64, items []Item, out []Outcome) []byte {
	errs := false
	for _, o := range out {
		errs = errs || o.Status >= 300
	}
	dst = append(dst, `{"took":`...)
	dst = strconv.AppendInt(dst, tookMs, 10)
	dst = append(dst, `,"errors":`...)
	dst = strconv.AppendBool(dst, errs)
	dst = append(dst, `,"items":[`...)
	for i, it := range items {
		if i > 0 {
			dst = append(dst, ',')
		}
		o := out[i]
		dst = append(dst, `{"`...)
		dst = append(dst, it.Op.String()...)
		dst = append(dst, `":{`...)
		if it.Index != "" {
			dst = append(dst, `"_index":`...)
			dst = appendJSONString(dst, it.Index)
			dst = append(dst, ',')
		}
		if it.ID != "" {
			dst = append(dst, `"_id":`...)
			dst = appendJSONString(dst, it.ID)
			dst = append(dst, ',')
		}
		dst = append(dst, `"status":`...)
		dst = strconv.AppendInt(dst, int64(o.Status), 10)
		if o.Status < 300 {
			dst = append(dst, `,"result":"created"}}`...)
			continue
		}
		dst = append(dst, `,"error":{"type":`...)
		dst = appendJSONString(dst, o.Type)
		dst = append(dst, `,"reason":`...)
		dst = appendJSONString(dst, o.Reason)
		dst = append(dst, `}}}`...)
	}
	return append(dst, "]}\n"...)
}

// AppendError appends the body Elasticsearch gives a request that failed
// as a whole: {"error":{"root_cause":[..],"type":..,"reason":..},"status":..}.
func AppendError(dst []byte, status int, typ, reason string) []byte {
	one := func(dst []byte) []byte {
		dst = append(dst, `{"type":`...)
		dst = appendJSONString(dst, typ)
		dst = append(dst, `,"reason":`...)
		dst = appendJSONString(dst, reason)
		return append(dst, '}')
	}
	dst = append(dst, `{"error":{"root_cause":[`...)
	dst = one(dst)
	dst = append(dst, `],"type":`...)
	dst = appendJSONString(dst, typ)
	dst = append(dst, `,"reason":`...)
	dst = appendJSONString(dst, reason)
	dst = append(dst, `},"status":`...)
	dst = strconv.AppendInt(dst, int64(status), 10)
	return append(dst, "}\n"...)
}

func appendJSONString(dst []byte, s string) []byte { return ndjson.AppendQuoted(dst, s) }
