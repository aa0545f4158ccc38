package syslogline

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/spate-io/spate/internal/bytesutil"
	"github.com/spate-io/spate/internal/ndjson"
)

// Field is one field Parser found: a name and a value.
type Field struct{ Name, Value string }

// Parser splits syslog messages into fields exactly as VictoriaLogs
// v1.52.1 does when it ingests syslog (and in its unpack_syslog pipe),
// where Parse is lenient for `spate query`. The differences from Parse:
//
//   - a message starting with '<' must have a '>' and a priority that is
//     a plain number (no leading zero; '_' is skipped), else the fields
//     end there: no '>' gives none, a bad number gives priority only;
//     any number is taken, facility_keyword and level "unknown" past
//     their tables;
//   - timestamp is rewritten to RFC 3339 in UTC when it comes from an
//     RFC 3164 header: "Mmm dd hh:mm:ss" (as time.Parse reads
//     time.Stamp; anything else is not a header and the whole rest is the
//     message) in Location in the year of Now, or the year before when that
//     puts it more than a day after Now; or an RFC 3339 time;
//   - RFC 5424 structured data is read as VictoriaLogs reads it (each
//     element's text, with \] unescaped, split as logfmt with Go-quoted
//     values), and when it is neither '-' nor well-formed elements the
//     message is left out;
//   - a message "CEF:..." (or an RFC 3164 message whose tag is CEF) is
//     split into cef.* fields, and "@cee:{json}" into the JSON's fields,
//     nested keys dotted, instead of a message field.
//
// A Parser is not safe for concurrent use; reuse one per goroutine. It
// does not allocate once warm, except for values with escapes (structured
// data values with Go escapes or in single quotes, CEF values).
type Parser struct {
	// Location is the time zone of RFC 3164 timestamps and of RFC 3339
	// ones without a zone; nil means UTC.
	Location *time.Location
	// Now gives the year of RFC 3164 timestamps; the zero Time means
	// time.Now().
	Now time.Time
	// Year, when not 0, is the year of RFC 3164 timestamps instead of
	// Now's year in Location (VictoriaLogs' unpack_syslog takes the UTC
	// year of its clock); a time more than a day after Now still goes
	// back a year.
	Year int
	// ZonelessLocation, when set, is the zone of RFC 3339 timestamps
	// without one instead of Location (VictoriaLogs' unpack_syslog reads
	// them at its local zone's current offset, whatever its offset
	// option).
	ZonelessLocation *time.Location

	// Fields holds the fields of the last Parse, in order. Names and values
	// are substrings of the message, constants or Parser-owned bytes, valid
	// until the next Parse.
	Fields []Field

	buf []byte
	it  ndjson.Iter
	// year is the year of Now in Location, once needed (0: not yet).
	year int
}

// Parse splits msg into p.Fields.
func (p *Parser) Parse(msg string) {
	clear(p.Fields)
	p.Fields = p.Fields[:0]
	p.buf = p.buf[:0]
	p.year = 0
	s := msg
	if s == "" {
		return
	}
	if s[0] != '<' {
		p.noHeader(s)
		return
	}
	end := strings.IndexByte(s, '>')
	if end < 0 {
		return
	}
	pri := s[1:end]
	s = s[end+1:]
	p.add("priority", pri)
	n, ok := parseUint(pri)
	if !ok {
		return
	}
	fac, sev := n/8, n%8
	p.add("facility_keyword", keyword(facilities[:], fac))
	p.add("level", keyword(levels[:], sev))
	p.add("facility", p.number(fac))
	p.add("severity", p.number(sev))
	p.noHeader(s)
}

func (p *Parser) add(name, value string) {
	p.Fields = append(p.Fields, Field{Name: name, Value: value})
}

// keep returns the string of p.buf[from:].
func (p *Parser) keep(from int) string { return bytesutil.ToUnsafeString(p.buf[from:]) }

func (p *Parser) number(n uint64) string {
	if n < uint64(len(small)) {
		return small[n]
	}
	at := len(p.buf)
	p.buf = strconv.AppendUint(p.buf, n, 10)
	return p.keep(at)
}

func keyword(tab []string, n uint64) string {
	if n < uint64(len(tab)) {
		return tab[n]
	}
	return "unknown"
}

// parseUint reads a priority as VictoriaLogs does: decimal digits, '_'
// skipped, no leading zero, no overflow.
func parseUint(s string) (uint64, bool) {
	if s == "" || len(s) > 26 || len(s) > 1 && s[0] == '0' {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' {
			continue
		}
		if c < '0' || c > '9' || n > (1<<64-1)/10 {
			return 0, false
		}
		m := n*10 + uint64(c-'0')
		if m < n {
			return 0, false
		}
		n = m
	}
	return n, true
}

func (p *Parser) noHeader(s string) {
	if s == "" {
		return
	}
	if strings.HasPrefix(s, "1 ") {
		p.rfc5424(s[2:])
		return
	}
	p.rfc3164(s)
}

// rfc5424 reads "TIMESTAMP HOSTNAME APP-NAME PROCID MSGID SD MSG".
func (p *Parser) rfc5424(s string) {
	p.add("format", "rfc5424")
	if s == "" {
		return
	}
	for _, name := range [...]string{"timestamp", "hostname", "app_name", "proc_id", "msg_id"} {
		i := strings.IndexByte(s, ' ')
		if i < 0 {
			p.add(name, s)
			return
		}
		p.add(name, s[:i])
		s = s[i+1:]
	}
	switch {
	case strings.HasPrefix(s, "- "):
		s = s[2:]
	case strings.HasPrefix(s, "@cee:"):
	default:
		for {
			var ok bool
			if s, ok = p.sdElement(s); !ok {
				return // the message is left out, as VictoriaLogs does
			}
			if strings.HasPrefix(s, " ") {
				s = s[1:]
				break
			}
		}
	}
	p.message(s)
}

// sdElement reads one "[SD-ID name="value" ...]" and returns what follows
// it; false when it is not one.
func (p *Parser) sdElement(s string) (string, bool) {
	if s == "" || s[0] != '[' {
		return s, false
	}
	s = s[1:]
	n := indexByte2(s, ' ', ']')
	if n < 0 {
		return s, false
	}
	id := s[:n]
	s = s[n:]
	if k, v, ok := strings.Cut(id, "="); ok {
		p.add(k, v) // "[key=value]", as some senders write
		id = ""
	}
	// Find the element's closing ']': outside quoted values, and not
	// right after a backslash.
	i := 0
	for i < len(s) && (s[i] != ']' || i > 0 && s[i-1] == '\\') {
		if s[i] == ' ' {
			i++
			continue
		}
		eq := strings.IndexByte(s[i:], '=')
		if eq < 0 {
			return s, false
		}
		i += eq + 1
		if i >= len(s) {
			return s, false // VictoriaLogs v1.52.1 panics here
		}
		if s[i] == '"' {
			i++
			closed := false
			for ; i < len(s); i++ {
				if s[i] == '"' && s[i-1] != '\\' {
					closed = true
					break
				}
			}
			if !closed {
				return s, false
			}
			i++
		} else {
			e := indexByte2(s[i:], ' ', ']')
			if e < 0 {
				return s, false
			}
			i += e
		}
	}
	if i == len(s) {
		return s, false
	}
	body := strings.TrimSpace(s[:i])
	if strings.Contains(body, `\]`) {
		body = strings.ReplaceAll(body, `\]`, `]`)
	}
	if !p.logfmt(id, body) && id != "" {
		p.add(id, "")
	}
	return s[i+1:], true
}

// logfmt adds the name=value pairs of s, each name prefixed with "id."
// when id is set, and reports whether it added any. Values may be quoted
// as Go strings ("..." or `...`, or '...' with Go escapes).
func (p *Parser) logfmt(id, s string) bool {
	added := false
	emit := func(name, value string) {
		name = strings.TrimSpace(name)
		if name == "" && value == "" {
			return
		}
		if id != "" {
			at := len(p.buf)
			p.buf = append(p.buf, id...)
			p.buf = append(p.buf, '.')
			p.buf = append(p.buf, name...)
			name = p.keep(at)
		}
		p.add(name, value)
		added = true
	}
	for {
		n := indexByte2(s, '=', ' ')
		if n < 0 {
			emit(s, "")
			return added
		}
		name, c := s[:n], s[n]
		s = s[n+1:]
		if c == ' ' {
			emit(name, "")
			continue
		}
		if s == "" {
			emit(name, "")
			return added
		}
		if v, size, ok := unquote(s); ok {
			emit(name, v)
			s = s[size:]
			if s == "" || s[0] != ' ' {
				return added
			}
			s = s[1:]
			continue
		}
		sp := strings.IndexByte(s, ' ')
		if sp < 0 {
			emit(name, s)
			return added
		}
		emit(name, s[:sp])
		s = s[sp+1:]
	}
}

// unquote reads the Go-quoted string at the start of s: its value and
// length.
func unquote(s string) (string, int, bool) {
	if s[0] == '"' {
		// Fast path: ASCII up to the closing quote, with no backslash or
		// newline, which strconv would return as is.
		if e := strings.IndexByte(s[1:], '"'); e >= 0 && plainASCII(s[1:1+e]) {
			return s[1 : 1+e], e + 2, true
		}
	}
	switch s[0] {
	case '"', '`':
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return "", 0, false
		}
		if s[0] == '"' && !strings.ContainsRune(q, '\\') && utf8.ValidString(q) {
			return q[1 : len(q)-1], len(q), true // what Unquote would return, without its copy
		}
		v, err := strconv.Unquote(q)
		if err != nil {
			return "", 0, false
		}
		return v, len(q), true
	case '\'':
		var b []byte
		r := s[1:]
		for !strings.HasPrefix(r, "'") {
			c, _, tail, err := strconv.UnquoteChar(r, '\'')
			if err != nil {
				return "", 0, false
			}
			b = append(b, string(c)...)
			r = tail
		}
		return string(b), len(s) - len(r) + 1, true
	}
	return "", 0, false
}

// plainASCII reports whether s is ASCII without '\\' or '\n'.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || c == '\\' || c == '\n' {
			return false
		}
	}
	return true
}

// indexByte2 returns the index of the first a or b in s, or -1: what
// strings.IndexAny does for two ASCII bytes, without building its set.
func indexByte2(s string, a, b byte) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == a || c == b {
			return i
		}
	}
	return -1
}

// message adds the message: CEF or CEE fields when it is one, else the
// message field.
func (p *Parser) message(s string) {
	n := len(p.Fields)
	ok := false
	switch {
	case strings.HasPrefix(s, "CEF:"):
		ok = p.cef(s[len("CEF:"):])
	case strings.HasPrefix(s, "@cee:"):
		ok = p.cee(s[len("@cee:"):])
	}
	if !ok {
		clear(p.Fields[n:])
		p.Fields = p.Fields[:n]
		p.add("message", s)
	}
}

// cee adds the fields of the JSON object s, nested keys dotted, arrays
// as JSON text, nulls left out; false when s is not a JSON object.
func (p *Parser) cee(s string) bool {
	it := &p.it
	it.Reset(unsafe.Slice(unsafe.StringData(s), len(s)))
	n := len(p.Fields)
	for it.Next() {
		if it.Kind() == ndjson.KindNull {
			continue
		}
		at := len(p.buf)
		p.buf = append(p.buf, it.Key()...)
		name := p.keep(at)
		at = len(p.buf)
		p.buf = append(p.buf, it.Value()...)
		p.add(name, p.keep(at))
	}
	if it.Err() != nil {
		clear(p.Fields[n:])
		p.Fields = p.Fields[:n]
		return false
	}
	return true
}

var cefHeader = [...]string{"cef.version", "cef.device_vendor", "cef.device_product", "cef.device_version",
	"cef.device_event_class_id", "cef.name", "cef.severity"}

// cef adds the fields of a CEF message (after "CEF:"): the seven header
// fields split at unescaped '|', then the extension's key=value pairs as
// cef.extension.KEY; false when it is not one.
func (p *Parser) cef(s string) bool {
	for _, name := range cefHeader {
		n := unescapedIndex(s, '|')
		if n < 0 {
			return false
		}
		p.add(name, cefUnescape(s[:n]))
		s = s[n+1:]
	}
	if s == "" {
		return true
	}
	for {
		n := unescapedIndex(s, '=')
		if n < 0 {
			return false
		}
		at := len(p.buf)
		p.buf = append(p.buf, "cef.extension."...)
		p.buf = append(p.buf, cefUnescape(s[:n])...)
		key := p.keep(at)
		s = s[n+1:]
		n = unescapedIndex(s, '=')
		if n < 0 {
			p.add(key, s) // the last value is kept as written, as VictoriaLogs keeps it
			return true
		}
		n = strings.LastIndexByte(s[:n], ' ')
		if n < 0 {
			return false
		}
		p.add(key, cefUnescape(s[:n]))
		s = s[n+1:]
	}
}

// unescapedIndex is the index of the first c in s not preceded by an odd
// number of backslashes, or -1.
func unescapedIndex(s string, c byte) int {
	off := 0
	for {
		n := strings.IndexByte(s[off:], c)
		if n < 0 {
			return -1
		}
		off += n
		bs := 0
		for j := off; j > 0 && s[j-1] == '\\'; j-- {
			bs++
		}
		if bs%2 == 0 {
			return off
		}
		off++
	}
}

// cefUnescape turns \n and \r into the characters and \x into x.
func cefUnescape(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b = append(b, s[i])
			continue
		}
		i++
		if i == len(s) {
			b = append(b, '\\')
			break
		}
		switch s[i] {
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		default:
			b = append(b, s[i])
		}
	}
	return string(b)
}

// rfc3164 reads "TIMESTAMP HOSTNAME TAG[PID]: MSG".
func (p *Parser) rfc3164(s string) {
	p.add("format", "rfc3164")
	n := len(time.Stamp)
	if len(s) < n {
		p.message(s)
		return
	}
	if s[len("2006-01-02")] != 'T' {
		if !p.stamp(s[:n]) {
			p.message(s)
			return
		}
	} else {
		n = strings.IndexByte(s, ' ')
		if n < 0 {
			p.message(s)
			return
		}
		loc := p.ZonelessLocation
		if loc == nil {
			loc = p.loc()
		}
		ns, ok := ParseTime(s[:n], loc)
		if !ok {
			p.message(s)
			return
		}
		p.addTime(ns)
	}
	s = s[n:]
	if s == "" || s[0] != ' ' {
		if s != "" {
			p.message(s)
		}
		return
	}
	s = s[1:]
	// HOSTNAME, unless the word looks like the tag ("app[pid]:", "app:").
	w, rest, space := strings.Cut(s, " ")
	if !strings.ContainsAny(w, ":[") {
		p.add("hostname", w)
		if !space {
			return
		}
		s = rest
	}
	n = strings.IndexAny(s, "[: ")
	if n < 0 {
		p.add("app_name", s)
		return
	}
	app := s[:n]
	p.add("app_name", app)
	s = s[n:]
	if s[0] == '[' {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return
		}
		p.add("proc_id", s[1:end])
		s = s[end+1:]
	}
	s = strings.TrimPrefix(s, ":")
	s = strings.TrimPrefix(s, " ")
	if s == "" {
		return
	}
	if app == "CEF" {
		n := len(p.Fields)
		if p.cef(s) {
			return
		}
		clear(p.Fields[n:])
		p.Fields = p.Fields[:n]
	}
	p.message(s)
}

func (p *Parser) loc() *time.Location {
	if p.Location == nil {
		return time.UTC
	}
	return p.Location
}

func (p *Parser) now() time.Time {
	if p.Now.IsZero() {
		return time.Now()
	}
	return p.Now
}

// stamp reads an RFC 3164 "Mmm dd hh:mm:ss" into the timestamp field.
func (p *Parser) stamp(s string) bool {
	t, err := time.Parse(time.Stamp, s)
	if err != nil {
		return false
	}
	now := p.now()
	if p.year == 0 {
		p.year = p.Year
		if p.year == 0 {
			p.year = now.In(p.loc()).Year()
		}
	}
	t = time.Date(p.year, t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), p.loc())
	if t.Unix()-24*3600 > now.Unix() {
		t = time.Date(p.year-1, t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), p.loc())
	}
	p.addTime(t.UnixNano())
	return true
}

func (p *Parser) addTime(ns int64) {
	at := len(p.buf)
	p.buf = time.Unix(0, ns).UTC().AppendFormat(p.buf, time.RFC3339Nano)
	p.add("timestamp", p.keep(at))
}

// ParseTime parses an RFC 3339 time as VictoriaLogs does
// (logstorage.TryParseTimestampRFC3339Nano): "YYYY-MM-DD" then 'T' or a
// space, "hh:mm:ss", an optional fraction of at most 9 digits, then 'Z',
// ±hh:mm, ±hhmm or no zone (a wall time in loc). Fields out of range
// roll over as in time.Date; years must be in 1677..2262. It returns Unix
// nanoseconds.
func ParseTime(s string, loc *time.Location) (int64, bool) {
	if len(s) < len("2006-01-02T15:04:05") || s[4] != '-' || s[7] != '-' || s[10] != 'T' && s[10] != ' ' ||
		s[13] != ':' || s[16] != ':' {
		return 0, false
	}
	year, ok1 := digits(s[0:4])
	month, ok2 := digits(s[5:7])
	day, ok3 := digits(s[8:10])
	hour, ok4 := digits(s[11:13])
	minute, ok5 := digits(s[14:16])
	sec, ok6 := digits(s[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || year < 1677 || year > 2262 {
		return 0, false
	}
	s = s[19:]
	zoned, offset := false, 0
	switch {
	case strings.HasSuffix(s, "Z"):
		zoned, s = true, s[:len(s)-1]
	default:
		if i := strings.LastIndexAny(s, "+-"); i >= 0 {
			z := s[i+1:]
			var hh, mm int
			var ok bool
			switch {
			case len(z) == 5 && z[2] == ':':
				hh, ok = digits(z[:2])
				if ok {
					mm, ok = digits(z[3:])
				}
			case len(z) == 4:
				hh, ok = digits(z[:2])
				if ok {
					mm, ok = digits(z[2:])
				}
			}
			if !ok || hh > 24 || mm > 60 {
				return 0, false
			}
			offset = hh*3600 + mm*60
			if s[i] == '-' {
				offset = -offset
			}
			zoned, s = true, s[:i]
		}
	}
	frac := 0
	if s != "" {
		s = strings.TrimPrefix(s, ".")
		if len(s) > 9 {
			return 0, false
		}
		f, ok := digits(s)
		if !ok {
			return 0, false
		}
		for range 9 - len(s) {
			f *= 10
		}
		frac = f
	}
	if !zoned {
		if loc == nil {
			loc = time.UTC
		}
		return time.Date(year, time.Month(month), day, hour, minute, sec, frac, loc).UnixNano(), true
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, 0, time.UTC).Unix() - int64(offset)
	return t*1e9 + int64(frac), true
}

// digits parses s, one to nine decimal digits.
func digits(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
