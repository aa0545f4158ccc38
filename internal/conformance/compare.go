package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Compare checks got against c.Expected under the README's rules and returns
// nil if they match, or an error describing the first difference with both
// rows. Both sides are normalised first: empty values are dropped (rule 2),
// numbers are rewritten in shortest plain decimal form (rule 3), RFC3339
// times are converted to UTC with the fraction trimmed (rule 4), and JSON
// object or array text is rewritten canonically (rule 5: keys sorted, array
// order kept, the same rules applied inside). Rows compare as a sequence if
// c.Ordered is set and as a multiset otherwise (rule 6). With c.Approx set,
// values that are both numbers need only agree within the relative error
// the note gives.
//
// An error case (c.Error set) has no rows to compare: the query must fail,
// which the caller checks. Compare reports an error for it.
func Compare(c Case, got []map[string]string) error {
	if c.Error != nil {
		return fmt.Errorf("case %s expects the query to fail (VictoriaLogs answered %d), but it returned %d rows", c.ID, *c.Error, len(got))
	}
	rel := 0.0
	if c.Approx != nil {
		r, err := parseApprox(*c.Approx)
		if err != nil {
			return fmt.Errorf("case %s: %w", c.ID, err)
		}
		rel = r
	}
	want := normalizeRows(c.Expected)
	have := normalizeRows(got)
	if c.Ordered {
		return compareOrdered(want, have, rel)
	}
	return compareMultiset(want, have, rel)
}

// parseApprox reads X from a note "rel=X: why".
func parseApprox(note string) (float64, error) {
	rest, ok := strings.CutPrefix(note, "rel=")
	if !ok {
		return 0, fmt.Errorf("approx note %q does not start with \"rel=\"", note)
	}
	numText, _, ok := strings.Cut(rest, ":")
	if !ok {
		return 0, fmt.Errorf("approx note %q has no ':' after the tolerance", note)
	}
	x, err := strconv.ParseFloat(strings.TrimSpace(numText), 64)
	if err != nil || x < 0 || math.IsNaN(x) {
		return 0, fmt.Errorf("cannot parse tolerance in approx note %q", note)
	}
	return x, nil
}

func compareOrdered(want, have []map[string]string, rel float64) error {
	n := min(len(want), len(have))
	for i := range n {
		if !rowsEqual(want[i], have[i], rel) {
			return fmt.Errorf("row %d differs:\n  got  %s\n  want %s", i, rowText(have[i]), rowText(want[i]))
		}
	}
	switch {
	case len(have) > len(want):
		return fmt.Errorf("got %d rows, want %d; first extra row %d: %s", len(have), len(want), n, rowText(have[n]))
	case len(have) < len(want):
		return fmt.Errorf("got %d rows, want %d; first missing row %d: %s", len(have), len(want), n, rowText(want[n]))
	}
	return nil
}

func compareMultiset(want, have []map[string]string, rel float64) error {
	used := make([]bool, len(have))
	if rel == 0 {
		// Exact: match rows by their canonical text.
		byText := make(map[string][]int)
		for i, r := range have {
			t := rowText(r)
			byText[t] = append(byText[t], i)
		}
		for _, w := range want {
			t := rowText(w)
			idx := byText[t]
			if len(idx) == 0 {
				return missingRowError(w, want, have, used)
			}
			used[idx[0]] = true
			byText[t] = idx[1:]
		}
	} else {
		// Approximate: greedy matching; the tolerance is far below the gap
		// between distinct answers, so greedy finds a matching when one exists.
		for _, w := range want {
			found := false
			for i, h := range have {
				if !used[i] && rowsEqual(w, h, rel) {
					used[i] = true
					found = true
					break
				}
			}
			if !found {
				return missingRowError(w, want, have, used)
			}
		}
	}
	for i, u := range used {
		if !u {
			return fmt.Errorf("got %d rows, want %d; unexpected row: %s", len(have), len(want), rowText(have[i]))
		}
	}
	return nil
}

func missingRowError(w map[string]string, want, have []map[string]string, used []bool) error {
	msg := fmt.Sprintf("got %d rows, want %d; missing row: %s", len(have), len(want), rowText(w))
	// Show the closest unmatched row: the one sharing most key=value pairs.
	best, bestScore := -1, -1
	for i, h := range have {
		if used[i] {
			continue
		}
		score := 0
		for k, v := range w {
			if h[k] == v {
				score++
			}
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	if best >= 0 {
		msg += "\n  closest unmatched got row: " + rowText(have[best])
	}
	return fmt.Errorf("%s", msg)
}

// rowsEqual reports whether two normalised rows have the same fields with
// equal values, numbers within relative error rel.
func rowsEqual(a, b map[string]string, rel float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, va := range a {
		vb, ok := b[k]
		if !ok {
			return false
		}
		if va == vb {
			continue
		}
		if rel == 0 {
			return false
		}
		fa, errA := strconv.ParseFloat(va, 64)
		fb, errB := strconv.ParseFloat(vb, 64)
		if errA != nil || errB != nil || math.IsNaN(fa) || math.IsNaN(fb) {
			return false // NaN is near nothing: it would pass the test below
		}
		if math.Abs(fa-fb) > rel*math.Max(math.Abs(fa), math.Abs(fb)) {
			return false
		}
	}
	return true
}

// rowText prints a row as JSON with sorted keys.
func rowText(r map[string]string) string {
	b, _ := json.Marshal(r) // map keys are sorted by encoding/json
	return string(b)
}

// normalizeRows applies rules 2-5 to every value and drops empty fields.
func normalizeRows(rows []map[string]string) []map[string]string {
	out := make([]map[string]string, len(rows))
	for i, r := range rows {
		n := make(map[string]string, len(r))
		for k, v := range r {
			if v == "" {
				continue
			}
			n[k] = normalizeValue(v)
		}
		out[i] = n
	}
	return out
}

// normalizeValue rewrites one text value: a JSON number in shortest plain
// decimal form, an RFC3339 time in UTC with the fraction trimmed, JSON object
// or array text canonically; anything else stays as it is.
func normalizeValue(s string) string {
	if IsJSONNumber(s) {
		return plainDecimal(s)
	}
	if t, ok := parseRFC3339(s); ok {
		return t.UTC().Format(time.RFC3339Nano)
	}
	if len(s) > 0 && (s[0] == '{' || s[0] == '[') && json.Valid([]byte(s)) {
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err == nil {
			return canonicalJSON(v)
		}
	}
	return s
}

// parseRFC3339 parses s as an RFC3339 time with an optional fraction. It
// requires the 'T' form with seconds and a zone, so plain dates and numbers
// are not mistaken for times.
func parseRFC3339(s string) (time.Time, bool) {
	if len(s) < len("2006-01-02T15:04:05Z") || s[4] != '-' || (s[10] != 'T' && s[10] != 't') {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}

// canonicalJSON prints a decoded JSON structure with object keys sorted,
// every scalar turned into normalised text (so 1 and "1" are the same), keys
// with empty values dropped (rule 2 inside objects) and array order kept.
// Nested structures are printed as quoted canonical text, so an object and a
// string holding the same object's JSON text compare equal.
func canonicalJSON(v any) string {
	var buf bytes.Buffer
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		buf.WriteByte('{')
		first := true
		for _, k := range keys {
			t := elementText(v[k])
			if t == "" {
				continue
			}
			if !first {
				buf.WriteByte(',')
			}
			first = false
			writeJSONString(&buf, k)
			buf.WriteByte(':')
			writeJSONString(&buf, t)
		}
		buf.WriteByte('}')
	case []any:
		buf.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeJSONString(&buf, elementText(e))
		}
		buf.WriteByte(']')
	default:
		return elementText(v)
	}
	return buf.String()
}

// elementText is the normalised text of a value inside a JSON structure.
func elementText(v any) string {
	switch v := v.(type) {
	case map[string]any, []any:
		return canonicalJSON(v)
	}
	s, err := valueText(v)
	if err != nil || s == "" {
		return ""
	}
	return normalizeValue(s)
}

func writeJSONString(buf *bytes.Buffer, s string) {
	b, _ := json.Marshal(s)
	buf.Write(b)
}

// IsJSONNumber reports whether s matches the JSON number grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
// (The naive evaluator uses it too.)
func IsJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || !isDigit(s[i]) {
			return false
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || !isDigit(s[i]) {
			return false
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	return i == len(s)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// maxPlainExponent bounds the exponents plainDecimal writes out in full, so
// text such as "1e999999999" cannot make it allocate a gigabyte.
const maxPlainExponent = 1000

// plainDecimal rewrites a JSON number exactly (no float rounding) in shortest
// plain decimal form: no exponent, no leading zeros in the integer part
// other than a single "0", no trailing zeros in the fraction, no "-0".
// "1470.0", "1470" and "1.47e3" all give "1470"; "2.5E-3" gives "0.0025".
func plainDecimal(s string) string {
	orig := s
	neg := false
	if s[0] == '-' {
		neg = true
		s = s[1:]
	}
	mant, expText, _ := strings.Cut(strings.ToLower(s), "e")
	intPart, fracPart, _ := strings.Cut(mant, ".")
	exp := 0
	if expText != "" {
		e, err := strconv.Atoi(expText)
		if err != nil || e > maxPlainExponent || e < -maxPlainExponent {
			return orig // too many digits to write out: leave the text alone
		}
		exp = e
	}
	digits := intPart + fracPart
	point := len(intPart) + exp // position of the decimal point in digits
	// Strip leading zeros, moving the point with them.
	for len(digits) > 0 && digits[0] == '0' {
		digits = digits[1:]
		point--
	}
	digits = strings.TrimRight(digits, "0")
	if digits == "" {
		return "0"
	}
	var out string
	switch {
	case point <= 0:
		out = "0." + strings.Repeat("0", -point) + digits
	case point >= len(digits):
		out = digits + strings.Repeat("0", point-len(digits))
	default:
		out = digits[:point] + "." + digits[point:]
	}
	if neg {
		out = "-" + out
	}
	return out
}
