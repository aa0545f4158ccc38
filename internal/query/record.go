package query

import (
	"bytes"
	"slices"
	"strings"
	"time"

	"github.com/spate-io/spate/internal/logstream"
	"github.com/spate-io/spate/internal/ndjson"
	"github.com/spate-io/spate/internal/timeparse"
)

// missingMsg is the _msg of a log without a message field, as VictoriaLogs
// writes it.
const missingMsg = "missing _msg field; see https://docs.victoriametrics.com/victorialogs/keyconcepts/#message-field"

// Default field names tried, in order of preference, when no --msg-field or
// --time-field is given.
var (
	defaultMsgFields  = []string{"_msg", "msg", "message", "log"}
	onlyMsgField      = []string{"_msg"}
	defaultTimeFields = timeparse.DefaultFields
)

// fieldSet is the set of log fields a query needs: all of them, or named
// ones and name prefixes.
type fieldSet struct {
	all      bool
	names    []string
	prefixes []string
}

func allFields() fieldSet { return fieldSet{all: true} }

func (s *fieldSet) has(name string) bool {
	if s.all {
		return true
	}
	for _, n := range s.names {
		if n == name {
			return true
		}
	}
	for _, p := range s.prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// hasBytes is has for a name in bytes; it does not allocate.
func (s *fieldSet) hasBytes(name []byte) bool {
	if s.all {
		return true
	}
	for _, n := range s.names {
		if string(name) == n {
			return true
		}
	}
	for _, p := range s.prefixes {
		if len(name) >= len(p) && string(name[:len(p)]) == p {
			return true
		}
	}
	return false
}

// add adds a name, or a prefix pattern ending in '*' ("*" alone means all).
func (s *fieldSet) add(name string) {
	if s.all {
		return
	}
	if name == "*" {
		*s = allFields()
		return
	}
	if p, ok := strings.CutSuffix(name, "*"); ok {
		s.prefixes = append(s.prefixes, p)
		return
	}
	if !s.has(name) {
		s.names = append(s.names, name)
	}
}

// remove removes a plain name (patterns are kept: removing from "all" or a
// prefix would need a complement, and over-reading is harmless).
func (s *fieldSet) remove(name string) {
	if s.all || strings.HasSuffix(name, "*") {
		return
	}
	for i, n := range s.names {
		if n == name {
			s.names = append(s.names[:i], s.names[i+1:]...)
			return
		}
	}
}

// recordBuilder turns one log line into a Row holding the fields a query
// needs. Each worker owns one; it is not safe for concurrent use.
type recordBuilder struct {
	_          falseSharingPad // see workerState
	it         ndjson.Iter
	need       fieldSet
	needMsg    bool // _msg is needed
	needTime   bool // the parsed _time is needed (Row.Time)
	needTimeTx bool // the _time text is needed as a field
	// timeText is the time value of the line built last as the line has
	// it (before it is parsed and written again as _time); it aliases the
	// line or the arena.
	timeText   string
	msgFields  []string
	timeFields []string
	autoTime   bool             // timeFields are the default list (no --time-field)
	timeLoc    *time.Location   // zone of time values without one
	timeLayout timeparse.Layout // how time values are read
	arena      *arena
	// With Options.StoreFields: whether _stream and _stream_id are needed,
	// and the _stream_id of the stream {} in the tenant.
	needStream, needStreamID bool
	emptyStreamID            string

	// Early rejection (see earlyFilter): the worker's filter, its fields
	// and plan.earlyFinders; early is nil when it is off.
	early        matcher
	earlyNames   []string
	earlyFinders []*candFinder
	scratch      []byte // for candFinder.containsIn

	keys keyTable
	// byToken caches keys.lookup and the need check of keyOther keys by
	// ndjson KeyToken (index token%512: the key's ordinal and, for files of
	// several layouts, which of the Iter's 16 prediction sets): the keys of
	// a file's lines mostly repeat, and the Iter vouches for a repeat
	// without the key's bytes. Allocated by the first JSON line build
	// sees (20 KiB, with pointers: a query answered from the index, or by
	// a needle in a few blocks, builds no line and paid for it each time).
	byToken *[512]tokenClass
	// names interns the names of keyPrefixed keys for byToken, so that a
	// token seen again after its slot was taken (files of several
	// layouts) costs a lookup, not an allocation; at most maxNames.
	names map[string]string

	// Counters, read by the executor after the scan.
	badLines   int64    // lines that start like JSON but are not valid
	plainLines int64    // lines that are not JSON objects (plain text)
	badTimes   int64    // JSON logs whose time field could not be parsed
	named      []string // the message and time candidates the query names (plan.named)
	kv         []Field  // scratch of buildAs
	vals       []string // scratch of buildAs
	// renamed counts the lines where a field the query names became _msg
	// ([0]) or _time ([1]).
	renamed [2]renamedCount
	// badTime is the first value counted in badTimes (a copy) and
	// badTimeField its field, for the report; the executor adds where.
	badTime, badTimeField string
	earlyLines            int64 // lines the filter rejected before their end (see build)
	_                     falseSharingPad
}

// renamedCount counts lines whose field name became _msg or _time; name is
// the first such field.
type renamedCount struct {
	name  string
	lines int64
}

func (c *renamedCount) add(name string) {
	if c.lines == 0 {
		c.name = name
	}
	c.lines++
}

func newRecordBuilder(p *plan, a *arena) *recordBuilder {
	b := &recordBuilder{
		need:       p.need,
		needMsg:    p.need.has("_msg"),
		needTime:   p.needTime || p.need.has("_time"),
		needTimeTx: p.need.has("_time"),
		msgFields:  defaultMsgFields,
		timeFields: defaultTimeFields,
		arena:      a,
		timeLoc:    p.opts.TimeZone,
		timeLayout: p.opts.TimeFormat,
	}
	if b.timeLoc == nil {
		b.timeLoc = time.Local
	}
	switch {
	case p.opts.MsgField == "_msg":
		b.msgFields = onlyMsgField
	case p.opts.MsgField != "":
		// A line without the named field keeps its own _msg, as with
		// VictoriaLogs' _msg_field.
		b.msgFields = []string{p.opts.MsgField, "_msg"}
	}
	if p.opts.StoreFields {
		b.needStream, b.needStreamID = p.need.has("_stream"), p.need.has("_stream_id")
		if b.needStreamID && !b.needStream {
			// Only a log without _stream has the empty stream's ID.
			b.need.names = slices.Clone(b.need.names)
			b.need.add("_stream")
			b.needStream = true
		}
		b.emptyStreamID = string(logstream.AppendID(nil, p.opts.AccountID, p.opts.ProjectID, logstream.AppendCanonical(nil, nil)))
	}
	if p.opts.TimeField != "" {
		b.timeFields = []string{p.opts.TimeField}
	}
	b.autoTime = p.opts.TimeField == ""
	// Only these can be renamed (see finish); usually none.
	for _, n := range p.named {
		if n != "_msg" && n != "_time" && (slices.Contains(b.msgFields, n) || slices.Contains(b.timeFields, n)) {
			b.named = append(b.named, n)
		}
	}
	// Message and time candidates are classified only when the query can
	// tell them apart from other keys: when it needs _msg or _time, or one
	// of the candidates by name (a candidate that loses to a better one is
	// an ordinary field). Otherwise they are keyOther keys, which Next then
	// skips like every other key the query ignores.
	if b.needMsg || slices.ContainsFunc(b.msgFields, b.need.has) {
		for i, n := range b.msgFields {
			b.keys.add(n, keyMsg, i)
			if n == "_msg" {
				// VictoriaLogs names a top-level empty key _msg.
				b.keys.empty = keyCand{name: n, class: keyMsg, prio: i}
			}
		}
	}
	if b.needTime || slices.ContainsFunc(b.timeFields, b.need.has) {
		for i, n := range b.timeFields {
			b.keys.add(n, keyTime, i)
		}
	}
	for _, n := range b.need.names {
		b.keys.add(n, keyNeed, 0)
	}
	return b
}

// Key classes of keyTable.
const (
	keyOther = iota // not a special key; kept only if need says so
	keyMsg          // a candidate message field
	keyTime         // a candidate time field
	keyNeed         // a needed field
)

// keyTable classifies a key with one table lookup by first byte and a few
// length-checked comparisons, instead of comparing it with every candidate
// name (this runs for every key of every parsed line).
type keyTable struct {
	byFirst [256][]keyCand
	empty   keyCand // the class of the empty key; the zero keyCand: keyOther
}

type keyCand struct {
	name  string
	class int
	prio  int
}

func (t *keyTable) add(name string, class, prio int) {
	if name == "" {
		return
	}
	for _, c := range t.byFirst[name[0]] {
		if c.name == name && c.class != keyNeed {
			return // a msg or time candidate wins over a plain need
		}
	}
	t.byFirst[name[0]] = append(t.byFirst[name[0]], keyCand{name: name, class: class, prio: prio})
}

// lookup returns key's class, priority and the candidate's name (which can
// stand in for the key without copying it).
func (t *keyTable) lookup(key []byte) (int, int, string) {
	if len(key) == 0 {
		return t.empty.class, t.empty.prio, t.empty.name
	}
	for _, c := range t.byFirst[key[0]] {
		if len(c.name) == len(key) && c.name == string(key) {
			return c.class, c.prio, c.name
		}
	}
	return keyOther, 0, ""
}

// earlyFilter reports the fields of f when the record builder may reject a
// line as soon as it has seen them all (see recordBuilder.build): f reads
// only ordinary fields, each the value of one key (not _msg, _time or the
// parsed time), and f rejects a line that is not JSON, whose row has none
// of them. Then the answer does not depend on the rest of the line, once
// the rest cannot set those fields again.
func earlyFilter(f Filter) ([]string, bool) {
	var names []string
	ok := true
	var walk func(Filter)
	walk = func(f Filter) {
		switch f := f.(type) {
		case *FilterAnd:
			for _, c := range f.Filters {
				walk(c)
			}
			return
		case *FilterOr:
			for _, c := range f.Filters {
				walk(c)
			}
			return
		case *FilterNot:
			walk(f.Filter)
			return
		}
		field, leaf := filterField(f)
		if !leaf { // all, time filters, anything new
			ok = false
			return
		}
		seg := field[strings.LastIndexByte(field, '.')+1:]
		if seg == "" || strings.HasPrefix(field, "_") || strings.HasSuffix(field, "*") {
			ok = false // _msg, _time, _stream...; patterns
			return
		}
		if !slices.Contains(names, field) {
			names = append(names, field)
		}
	}
	walk(f)
	if !ok || len(names) == 0 || len(names) > 64 {
		return nil, false
	}
	m, err := compileFilter(f)
	if err != nil || m.match(&Row{}) {
		return nil, false // a plain-text line could match
	}
	return names, true
}

// build fills r from line (without its '\n') and reports true; or, when
// the builder's filter has rejected the line early, it reports false and
// r is not the whole record. r's strings alias line and the arena: they
// are valid until the arena is reset or the chunk released. The bytes past
// len(line) up to cap(line) must be readable and unchanging during the
// call: early rejection may load them (see candFinder.containsIn).
//
// Early rejection: once a line has set every field of the filter and the
// rest of the line can no longer set them (it holds no backslash and none
// of their last segments: see Iter.Rest), the filter's answer is final.
// If it is no, the line is rejected without walking the rest. A line
// that is not valid JSON past that point would be plain text, whose row
// the filter rejects too (earlyFilter checks), so the answer is exact; but
// such a line is not counted in badLines, as for lines the literal
// prefilter skips.
func (b *recordBuilder) build(line []byte, r *Row) bool {
	r.reuse()
	b.timeText = ""
	if len(line) == 0 || line[0] != '{' {
		// Fast path for plain text: a line that does not start with '{'
		// (after optional JSON whitespace) is not a JSON object.
		i := 0
		for i < len(line) && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r') {
			i++
		}
		if i == len(line) || line[i] != '{' {
			if handled, keep := b.prefixed(line, r); handled {
				return keep
			}
			b.plainLines++
			b.plain(line, r)
			return true
		}
	}
	if b.byToken == nil {
		b.byToken = new([512]tokenClass)
	}
	msgPrio, timePrio := len(b.msgFields), len(b.timeFields)
	var msg, tm string
	var msgName, timeName string
	var msgEmpty bool // the message candidate taken is "" or null
	var timeNow bool  // the time candidate taken means "now" (nowValue)
	var seen uint64   // b.earlyNames set so far, by index
	it := &b.it
	it.Reset(line)
	for it.Next() {
		class, p, cname := b.classify()
		switch {
		case class == keyMsg && (p < msgPrio || msgEmpty):
			// As VictoriaLogs' _msg_field, the message is the best
			// candidate that is not empty: an empty one is taken only
			// while no other has come, and goes when one does.
			empty := b.emptyValue()
			switch {
			case msgPrio == len(b.msgFields): // the first candidate
			case empty:
				continue // passed over
			case msgEmpty: // an empty candidate goes
			default:
				b.keep(r, msgName, msg) // a better candidate demotes the previous one
			}
			msgPrio, msgName, msgEmpty = p, cname, empty
			if b.needMsg || b.need.has(cname) {
				msg = b.value()
			}
		case class == keyTime && (p < timePrio || timeNow):
			// A value that means "now" to VictoriaLogs ("", null, "0",
			// "-") is no time: it is taken only while no other candidate
			// has come, and goes when one does, as at ingestion.
			now := b.nowValue()
			if now && p > 0 && b.autoTime && !b.emptyValue() {
				// "0" or "-" not in _time (in ts, time, ...), which
				// VictoriaLogs does not read as a time: an ordinary
				// field, as spate serve stores it.
				if b.need.has(cname) {
					r.Set(cname, b.value())
				}
				continue
			}
			switch {
			case timePrio == len(b.timeFields): // the first candidate
			case now:
				continue // passed over
			case timeNow: // a "now" candidate goes
			default:
				b.keep(r, timeName, tm)
			}
			timePrio, timeName, timeNow = p, cname, now
			if b.needTime || b.need.has(cname) {
				tm = b.value()
			}
		case class == keyNeed:
			r.Set(cname, b.value())
			if b.early != nil && b.rejectEarly(cname, &seen, r) {
				b.earlyLines++
				return false
			}
		case class == keyPrefixed:
			if cname == "" {
				cname = b.arena.add(it.Key()) // no token: a key the Iter had to scan
			}
			r.Set(cname, b.value())
		case class != keyOther:
			// A message or time candidate that lost to a better one.
			if b.need.has(cname) {
				r.Set(cname, b.value())
			}
		}
	}
	if it.Err() != nil {
		b.badLines++
		b.plain(line, r)
		return true
	}
	b.finish(r, msg, msgName, tm, timeName, timeNow)
	return true
}

// finish sets what every structured log gets after its fields: _msg (the
// winning message candidate's value msg, from field msgName), the stream
// fields of stores, and _time from tm (field timeName).
func (b *recordBuilder) finish(r *Row, msg, msgName, tm, timeName string, timeNow bool) {
	b.timeText = tm
	if b.needMsg {
		if msg == "" {
			msg = missingMsg
		}
		r.Set("_msg", msg)
	}
	// A field the query names that became _msg or _time is not a field of
	// the row (VictoriaLogs' model): count it, so the user hears of it.
	if len(b.named) > 0 {
		if msgName != "" && slices.Contains(b.named, msgName) {
			b.renamed[0].add(msgName)
		}
		if timeName != "" && slices.Contains(b.named, timeName) {
			b.renamed[1].add(timeName)
		}
	}
	if (b.needStream || b.needStreamID) && r.index("_stream") < 0 {
		if b.needStream {
			r.Set("_stream", "{}")
		}
		if b.needStreamID && r.index("_stream_id") < 0 {
			r.Set("_stream_id", b.emptyStreamID)
		}
	}
	// A time that means "now" to VictoriaLogs (nowValue, or 0: 1970-01-01
	// exactly, "0.0") is no time for a line read in place: the row has no
	// _time, and the field is not kept (but for ts, time, ... without
	// --time-field, which VictoriaLogs does not read as times: they stay
	// fields, as spate serve stores them).
	if b.needTime && tm != "" && !timeNow {
		ns, ok := b.timeLayout.Parse(tm, b.timeLoc)
		switch {
		case ok && ns == 0:
			if b.autoTime && timeName != "_time" && (b.needTimeTx || b.need.has(timeName)) {
				r.Set(timeName, tm)
			}
		case ok:
			r.Time, r.HasTime = ns, true
			if b.needTimeTx {
				r.Set("_time", b.arena.take(timeparse.AppendRFC3339(b.arena.appendBuf(40), ns)))
				r.HasTime = true
			}
		default:
			// Kept as it is, under its own name: the row has no _time.
			if b.needTimeTx || b.need.has(timeName) {
				r.Set(timeName, tm)
			}
			if b.badTimes == 0 {
				b.badTime, b.badTimeField = strings.Clone(tm), timeName
			}
			b.badTimes++
		}
	}
}

// prefixed reads a line that a container runtime or kubectl put a
// timestamp in front of: "TIME {json}" (kubectl logs --timestamps) or
// "TIME stdout F {json}" (CRI log files, /var/log/containers), the rest
// being JSON or text; and plain text that starts with an RFC 3339 time and
// a space. The rest becomes the row as a line of its own would (plain
// text without the CRI prefix keeps its whole line as _msg);
// TIME becomes its _time when it has none (else the field timestamp), and
// the CRI stream and tag the fields stream and logtag. handled is false,
// with r left alone, for a line without such a prefix; keep is build's
// answer for the line (false: the filter rejected its JSON early).
func (b *recordBuilder) prefixed(line []byte, r *Row) (handled, keep bool) {
	if len(line) < 21 || line[4] != '-' || line[10] != 'T' || line[0] < '0' || line[0] > '9' {
		return false, false
	}
	sp := bytes.IndexByte(line[:min(len(line), 40)], ' ')
	if sp < 20 {
		return false, false
	}
	ns, ok := timeparse.ParseIn(unsafeString(line[:sp]), b.timeLoc)
	if !ok {
		return false, false
	}
	ts, rest := unsafeString(line[:sp]), line[sp+1:]
	var stream, tag string
	if n := len(rest); n >= 9 && (bytes.HasPrefix(rest, []byte("stdout ")) || bytes.HasPrefix(rest, []byte("stderr "))) &&
		(rest[7] == 'F' || rest[7] == 'P') && rest[8] == ' ' {
		stream, tag, rest = unsafeString(rest[:6]), unsafeString(rest[7:8]), rest[9:]
	}
	if len(rest) > 0 && rest[0] == '{' {
		if !b.build(rest, r) {
			return true, false // rejected early: the filter said no
		}
	} else {
		r.Reset()
		b.plainLines++
		if stream == "" {
			rest = line // plain text keeps its whole line as _msg
		}
		b.plain(rest, r)
	}
	if !r.HasTime && r.index("_time") < 0 {
		r.Time, r.HasTime = ns, true
		if b.needTimeTx {
			r.Set("_time", b.arena.take(timeparse.AppendRFC3339(b.arena.appendBuf(40), ns)))
		}
	} else if b.need.has("timestamp") && r.index("timestamp") < 0 {
		r.Set("timestamp", ts)
	}
	if stream != "" {
		if b.need.has("stream") {
			r.Set("stream", stream)
		}
		if b.need.has("logtag") {
			r.Set("logtag", tag)
		}
	}
	return true, true
}

// rejectEarly notes that the line set the needed field name; once it has
// set every filter field, it reports whether the filter rejects r for good
// (see build).
func (b *recordBuilder) rejectEarly(name string, seen *uint64, r *Row) bool {
	i := slices.Index(b.earlyNames, name)
	if i < 0 {
		return false
	}
	*seen |= 1 << i
	if *seen != 1<<len(b.earlyNames)-1 {
		return false
	}
	if b.early.match(r) {
		return false // read on: the filter runs again on the whole row
	}
	// The filter says no so far: it is final unless the rest of the line
	// can set a filter field again.
	rest := b.it.Rest()
	for _, f := range b.earlyFinders {
		if f.containsIn(rest, &b.scratch) {
			return false
		}
	}
	return true
}

// tokenClass is a cached classification of the key with KeyToken tok.
type tokenClass struct {
	tok   uint64
	class int
	prio  int
	cname string
}

// keyPrefixed is the class of a key that is not special but that the query
// needs by a prefix (http*) or because it needs every field.
const keyPrefixed = keyNeed + 1

// classify returns the class, priority and candidate name of the current
// leaf's key, as keys.lookup does, with keyPrefixed for the keyOther keys
// that need says to keep.
func (b *recordBuilder) classify() (int, int, string) {
	it := &b.it
	tok := it.KeyToken()
	c := &b.byToken[tok%uint64(len(b.byToken))]
	if tok != 0 && c.tok == tok {
		return c.class, c.prio, c.cname
	}
	key := it.Key()
	class, p, cname := b.keys.lookup(key)
	if class == keyOther && (b.need.all || (len(b.need.prefixes) > 0 && b.need.hasBytes(key))) {
		class = keyPrefixed
	}
	if tok != 0 {
		if class == keyPrefixed {
			// The key's name for every later line with this token: build
			// sets the field without copying the key, and the same string
			// each time compares equal by pointer.
			cname = b.internName(key)
		}
		*c = tokenClass{tok: tok, class: class, prio: p, cname: cname}
		if class == keyOther {
			it.Skip(tok) // build ignores it: Next need not stop there again
		}
	}
	return class, p, cname
}

// maxNames bounds recordBuilder.names: past it, keys are copied into the
// arena per line again, as for keys without a token.
const maxNames = 4096

// internName returns the interned copy of key, or "" when names is full.
// Cost: a map lookup; an allocation per distinct name only.
func (b *recordBuilder) internName(key []byte) string {
	if name, ok := b.names[string(key)]; ok {
		return name
	}
	if len(b.names) >= maxNames {
		return ""
	}
	if b.names == nil {
		b.names = make(map[string]string)
	}
	name := string(key)
	b.names[name] = name
	return name
}

// keep adds a demoted message or time candidate as an ordinary field.
func (b *recordBuilder) keep(r *Row, name, value string) {
	if b.need.has(name) {
		r.Set(name, value)
	}
}

// emptyValue reports whether the current value is "" or null, without
// decoding it.
func (b *recordBuilder) emptyValue() bool {
	k := b.it.Kind()
	return k == ndjson.KindNull || k == ndjson.KindString && len(b.it.Raw()) == 0
}

// nowValue reports whether the current value is one that VictoriaLogs
// reads as the ingestion time: "", null, "0" or "-" (as a string or a
// number), without decoding it.
func (b *recordBuilder) nowValue() bool {
	switch b.it.Kind() {
	case ndjson.KindNull:
		return true
	case ndjson.KindString, ndjson.KindNumber:
		return timeparse.MeansNow(b.it.Raw())
	}
	return false
}

// value returns the current leaf's text, copied into the arena only when it
// does not alias the line.
func (b *recordBuilder) value() string {
	it := &b.it
	switch it.Kind() {
	case ndjson.KindString:
		if !it.Escaped() {
			return unsafeString(it.Raw())
		}
		return b.arena.add(it.Value())
	case ndjson.KindNumber:
		return unsafeString(it.Raw())
	case ndjson.KindTrue:
		return "true"
	case ndjson.KindFalse:
		return "false"
	case ndjson.KindNull:
		return ""
	}
	return b.arena.add(it.Value())
}

// plain makes r a plain-text log: the whole line is its _msg.
func (b *recordBuilder) plain(line []byte, r *Row) {
	r.Reset()
	if b.needMsg {
		r.Set("_msg", unsafeString(line))
	}
}
