package naive

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/spate-io/spate/internal/query"
)

// patternStep is one "literal<field>" piece of an extract or format pattern:
// the literal text before the placeholder, the placeholder's field ("" for
// <_> and <*>, or after the last placeholder) and its option ("q", "uc",
// "plain", ...; the part before ':' in <opt:field>).
type patternStep struct {
	prefix string
	field  string
	opt    string
}

// parsePatternSteps splits a pattern into steps. Literal text is
// HTML-unescaped ("&lt;" is '<'). A trailing literal becomes a last step
// without a field.
func parsePatternSteps(s string) ([]patternStep, error) {
	var steps []patternStep
	for s != "" {
		n := strings.IndexByte(s, '<')
		if n < 0 {
			steps = append(steps, patternStep{prefix: s})
			break
		}
		prefix := s[:n]
		s = s[n+1:]
		m := strings.IndexByte(s, '>')
		if m < 0 {
			return nil, fmt.Errorf("missing '>' for <%s", s)
		}
		name := s[:m]
		s = s[m+1:]
		step := patternStep{prefix: prefix}
		if i := strings.IndexByte(name, ':'); i >= 0 {
			step.opt = strings.TrimSpace(name[:i])
			name = name[i+1:]
		}
		name = strings.TrimSpace(name)
		if name != "_" && name != "*" {
			step.field = name
		}
		steps = append(steps, step)
	}
	for i := range steps {
		steps[i].prefix = html.UnescapeString(steps[i].prefix)
	}
	return steps, nil
}

// parseExtractPattern parses an extract pattern and checks what extract
// requires: at least one named placeholder, and literal text between any two
// placeholders.
func parseExtractPattern(s string) ([]patternStep, error) {
	steps, err := parsePatternSteps(s)
	if err != nil {
		return nil, err
	}
	named := false
	for i, st := range steps {
		if i > 0 && st.prefix == "" {
			return nil, fmt.Errorf("missing literal text between <%s> and <%s>", steps[i-1].field, st.field)
		}
		if strings.HasSuffix(st.field, "*") {
			return nil, fmt.Errorf("wildcard field %q is not allowed", st.field)
		}
		if st.field != "" {
			named = true
		}
	}
	if !named {
		return nil, fmt.Errorf("pattern %q has no named placeholder <name>", s)
	}
	return steps, nil
}

// applyPattern matches s against the steps as VictoriaLogs' extract does
// and returns one match per step ("" where nothing matched):
//
//   - the first literal is searched anywhere in s (the pattern is not
//     anchored at the start);
//   - a placeholder whose text starts with '"' or '`' takes a whole quoted
//     Go string literal and stores it unquoted (unless its option is
//     "plain"); the next literal must follow right after the closing quote;
//   - otherwise a placeholder runs up to the next occurrence of the next
//     literal, or to the end of s for the last placeholder.
//
// On a mismatch matching stops: placeholders already matched keep their
// values and the rest stay empty.
func applyPattern(steps []patternStep, s string) []string {
	matches := make([]string, len(steps))
	n := strings.Index(s, steps[0].prefix)
	if n < 0 {
		return matches
	}
	s = s[n+len(steps[0].prefix):]
	for i := range steps {
		next := ""
		if i+1 < len(steps) {
			next = steps[i+1].prefix
		}
		if steps[i].opt != "plain" {
			if unquoted, size, ok := unquotePrefix(s); ok {
				matches[i] = unquoted
				s = s[size:]
				if !strings.HasPrefix(s, next) {
					return matches
				}
				s = s[len(next):]
				continue
			}
		}
		if next == "" {
			matches[i] = s
			return matches
		}
		m := strings.Index(s, next)
		if m < 0 {
			return matches
		}
		matches[i] = s[:m]
		s = s[m+len(next):]
	}
	return matches
}

// unquotePrefix unquotes the Go string literal ("..." or `...`) at the start
// of s and returns its value and length in s.
func unquotePrefix(s string) (string, int, bool) {
	if s == "" || (s[0] != '"' && s[0] != '`') {
		return "", 0, false
	}
	q, err := strconv.QuotedPrefix(s)
	if err != nil {
		return "", 0, false
	}
	v, err := strconv.Unquote(q)
	if err != nil {
		return "", 0, false
	}
	return v, len(q), true
}

// storeResult writes an extracted or unpacked value as these pipes do: with
// skip_empty_results an empty result keeps the old value, with
// keep_original_fields a non-empty old value is kept; otherwise the result
// replaces it (an empty result clears the field).
func storeResult(r row, name, v string, keepOriginal, skipEmpty bool) {
	if (v == "" && skipEmpty) || keepOriginal {
		if old := r[name]; old != "" {
			v = old
		}
	}
	r.set(name, v)
}

func orMsg(name string) string {
	if name == "" {
		return "_msg"
	}
	return name
}

// applyExtract is the extract pipe. Rows the if-filter rejects are left
// alone; every other row gets all the pattern's fields (empty where the
// pattern did not match).
func (ev *evaluator) applyExtract(p *query.PipeExtract, rows []row) ([]row, error) {
	steps, err := parseExtractPattern(p.Pattern)
	if err != nil {
		return nil, err
	}
	from := orMsg(p.From)
	for _, r := range rows {
		if p.If != nil && !ev.match(p.If, r) {
			continue
		}
		matches := applyPattern(steps, r[from])
		for i, st := range steps {
			if st.field != "" {
				storeResult(r, st.field, matches[i], p.KeepOriginalFields, p.SkipEmptyResults)
			}
		}
	}
	return rows, nil
}

// applyExtractRegexp is extract_regexp: each named group (?P<name>...) of
// the first match becomes a field; no match gives empty fields.
func (ev *evaluator) applyExtractRegexp(p *query.PipeExtractRegexp, rows []row) ([]row, error) {
	re := ev.regexp(p.Expr)
	if re == nil {
		return nil, ev.err
	}
	names := re.SubexpNames()
	hasNamed := false
	for _, n := range names {
		if n != "" {
			hasNamed = true
		}
	}
	if !hasNamed {
		return nil, fmt.Errorf("regexp %q has no named groups (?P<name>...)", p.Expr)
	}
	from := orMsg(p.From)
	for _, r := range rows {
		if p.If != nil && !ev.match(p.If, r) {
			continue
		}
		m := re.FindStringSubmatch(r[from])
		for i, name := range names {
			if name == "" {
				continue
			}
			v := ""
			if m != nil {
				v = m[i]
			}
			storeResult(r, name, v, p.KeepOriginalFields, p.SkipEmptyResults)
		}
	}
	return rows, nil
}

// applyUnpack is unpack_json and unpack_logfmt. The unpacked fields (with
// Fields, only those matching it; a listed name the value lacks is unpacked
// as empty) are stored with ResultPrefix before their names.
func (ev *evaluator) applyUnpack(p *query.PipeUnpack, rows []row) ([]row, error) {
	var unpack func(string) []field
	switch p.Format {
	case "json":
		unpack = unpackJSON
	case "logfmt":
		unpack = unpackLogfmt
	default:
		return nil, fmt.Errorf("unknown unpack format %q", p.Format)
	}
	from := orMsg(p.From)
	for _, r := range rows {
		if p.If != nil && !ev.match(p.If, r) {
			continue
		}
		fields := unpack(r[from])
		var out []field
		if len(p.Fields) == 0 {
			out = fields
		} else {
			for _, f := range fields {
				if matchAnyPattern(p.Fields, f.name) {
					out = append(out, f)
				}
			}
			for _, want := range p.Fields {
				if strings.HasSuffix(want, "*") {
					continue
				}
				found := false
				for _, f := range fields {
					if f.name == want {
						found = true
					}
				}
				if !found && !(p.Format == "json" && !isJSONObjectStart(r[from])) {
					out = append(out, field{want, ""})
				}
			}
		}
		for _, f := range out {
			storeResult(r, p.ResultPrefix+f.name, f.value, p.KeepOriginalFields, p.SkipEmptyResults)
		}
	}
	return rows, nil
}

// isJSONObjectStart: unpack_json leaves a value alone (not even the listed
// fields are cleared) unless it starts with '{'.
func isJSONObjectStart(s string) bool { return s != "" && s[0] == '{' }

// unpackJSON flattens a JSON object value like ingestion does. A value that
// does not start with '{' gives nothing; one that starts with '{' but does
// not parse gives nothing either (listed fields are then cleared by the
// caller).
func unpackJSON(s string) []field {
	if !isJSONObjectStart(s) {
		return nil
	}
	fields, ok := parseJSONObject(s)
	if !ok {
		return nil
	}
	return fields
}

// unpackLogfmt parses logfmt as VictoriaLogs does: space-separated
// name=value pairs; a value may be a quoted Go string literal; a word without
// '=' is a name with an empty value; a quoted value not followed by a space
// ends the parse.
func unpackLogfmt(s string) []field {
	var fields []field
	add := func(name, value string) {
		name = strings.TrimSpace(name)
		if name == "" && value == "" {
			return
		}
		fields = append(fields, field{name, value})
	}
	for {
		n := strings.IndexAny(s, "= ")
		if n < 0 {
			add(s, "")
			return fields
		}
		name, sep := s[:n], s[n]
		s = s[n+1:]
		if sep == ' ' {
			add(name, "")
			continue
		}
		if s == "" {
			add(name, "")
			return fields
		}
		if v, size, ok := unquotePrefix(s); ok {
			add(name, v)
			s = s[size:]
			if s == "" || s[0] != ' ' {
				return fields
			}
			s = s[1:]
			continue
		}
		m := strings.IndexByte(s, ' ')
		if m < 0 {
			add(name, s)
			return fields
		}
		add(name, s[:m])
		s = s[m+1:]
	}
}

// applyFormat is the format pipe: the pattern's literals with each
// <field> replaced by the field's value ("" if missing), transformed by the
// placeholder's option. Rows the if-filter rejects keep their old value.
func (ev *evaluator) applyFormat(p *query.PipeFormat, rows []row) ([]row, error) {
	steps, err := parsePatternSteps(p.Pattern)
	if err != nil {
		return nil, err
	}
	result := orMsg(p.Result)
	for _, r := range rows {
		if p.If != nil && !ev.match(p.If, r) {
			continue
		}
		var b strings.Builder
		for _, st := range steps {
			b.WriteString(st.prefix)
			if st.field != "" {
				b.WriteString(formatOption(st.opt, r[st.field]))
			}
		}
		storeResult(r, result, b.String(), p.KeepOriginalFields, p.SkipEmptyResults)
	}
	return rows, nil
}

// formatOption applies a format placeholder option to v, as VictoriaLogs
// does. Unknown options, and values an option cannot decode, leave v as it
// is. (duration and duration_seconds are not implemented and leave v too.)
func formatOption(opt, v string) string {
	switch opt {
	case "q":
		return jsonQuote(v)
	case "uc":
		return strings.Map(unicode.ToUpper, v)
	case "lc":
		return strings.Map(unicode.ToLower, v)
	case "base64encode":
		return base64.StdEncoding.EncodeToString([]byte(v))
	case "base64decode":
		if d, err := base64.StdEncoding.DecodeString(v); err == nil {
			return string(d)
		}
	case "hexencode":
		return strings.ToUpper(hex.EncodeToString([]byte(v)))
	case "hexdecode":
		// Pairs that are not hex digits are kept as they are.
		var b strings.Builder
		for len(v) >= 2 {
			if d, err := hex.DecodeString(v[:2]); err == nil {
				b.Write(d)
			} else {
				b.WriteString(v[:2])
			}
			v = v[2:]
		}
		b.WriteString(v)
		return b.String()
	case "hexnumencode":
		if n, err := strconv.ParseUint(v, 10, 64); err == nil {
			return fmt.Sprintf("%016X", n)
		}
	case "hexnumdecode":
		if len(v) <= 16 {
			if n, err := strconv.ParseUint(v, 16, 64); err == nil {
				return strconv.FormatUint(n, 10)
			}
		}
	case "ipv4":
		if n, err := strconv.ParseUint(v, 10, 64); err == nil && n <= math.MaxUint32 {
			return fmt.Sprintf("%d.%d.%d.%d", n>>24, n>>16&0xff, n>>8&0xff, n&0xff)
		}
	case "time":
		if ns, ok := parseLogTimestamp(v); ok {
			return formatTime(ns)
		}
	case "urlencode":
		var b strings.Builder
		for i := 0; i < len(v); i++ {
			c := v[i]
			switch {
			case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '.', c == '_':
				b.WriteByte(c)
			case c == ' ':
				b.WriteByte('+')
			default:
				fmt.Fprintf(&b, "%%%02X", c)
			}
		}
		return b.String()
	case "urldecode":
		// '+' is a space; a '%' not followed by two hex digits is kept.
		var b strings.Builder
		for i := 0; i < len(v); i++ {
			switch c := v[i]; {
			case c == '+':
				b.WriteByte(' ')
			case c == '%' && i+2 < len(v) && isHexPair(v[i+1:i+3]):
				d, _ := hex.DecodeString(v[i+1 : i+3])
				b.Write(d)
				i += 2
			default:
				b.WriteByte(c)
			}
		}
		return b.String()
	}
	return v
}

func isHexPair(s string) bool {
	_, err := hex.DecodeString(s)
	return len(s) == 2 && err == nil
}
