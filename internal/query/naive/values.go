package naive

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// This file holds the value semantics every filter, pipe and stats function
// shares: when text counts as a number or a time, and how values order.
// VictoriaLogs has three notions of "number", used in different places; the
// names here follow the places:
//
//   - plainNumber: [-]digits[.digits], what `sort` compares numerically
//     (VictoriaLogs' tryParseFloat64; "1.5e2" is not one).
//   - anyNumber: plainNumber, a duration ("1.5s", "3h5m", in nanoseconds), a
//     byte size ("10KiB"), or anything strconv.ParseFloat takes that starts
//     like a number ("1e3", "1_000", "007"); what sum/avg add up and what
//     min/max/quantile compare (VictoriaLogs' tryParseNumber).
//   - mathNumber: anyNumber, an RFC3339 time (in Unix nanoseconds) or an IPv4
//     address (as uint32); what range/compare filters and `math` read
//     (VictoriaLogs' parseMathNumber).

// plainNumber parses s as -?(0|[1-9][0-9]*)(\.[0-9]+)?.
func plainNumber(s string) (float64, bool) {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	start := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	intLen := i - start
	if intLen == 0 || (intLen > 1 && s[start] == '0') {
		return 0, false
	}
	if i < len(s) && s[i] == '.' {
		i++
		fracStart := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == fracStart {
			return 0, false
		}
	}
	if i != len(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	return f, true
}

// anyNumber parses s as VictoriaLogs' tryParseNumber does.
func anyNumber(s string) (float64, bool) {
	if s == "" {
		return 0, false
	}
	if f, ok := plainNumber(s); ok {
		return f, true
	}
	if ns, ok := parseDuration(s); ok && !strings.Contains(s, "us") { // µs only, as tryParseDuration
		return float64(ns), true
	}
	if n, ok := parseBytes(s); ok {
		return n, true
	}
	if looksLikeNumber(s) {
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f, true
		}
		if n, err := strconv.ParseInt(s, 0, 64); err == nil {
			return float64(n), true
		}
	}
	return 0, false
}

// looksLikeNumber: an optional sign, then "inf" or an optional '.' and a
// digit; at most one '.', no ':' and at most two '-' (else it is likely an IP
// address or a timestamp).
func looksLikeNumber(s string) bool {
	t := s
	if t != "" && (t[0] == '-' || t[0] == '+') {
		t = t[1:]
	}
	if t == "" {
		return false
	}
	if !strings.EqualFold(t, "inf") {
		if t[0] == '.' {
			t = t[1:]
		}
		if t == "" || !isDigit(t[0]) {
			return false
		}
	}
	return strings.Count(s, ".") <= 1 && !strings.Contains(s, ":") && strings.Count(s, "-") <= 2
}

// mathNumber parses s as VictoriaLogs' parseMathNumber does; NaN if s is
// none of the accepted forms.
func mathNumber(s string) float64 {
	if f, ok := anyNumber(s); ok {
		return f
	}
	if ns, ok := parseTime(s); ok {
		return float64(ns)
	}
	if ip, ok := parseIPv4(s); ok {
		return float64(ip)
	}
	return math.NaN()
}

// durationUnits are the units of a duration, in the order they are tried:
// "ms" must come before "m" and "s".
var durationUnits = []struct {
	name string
	ns   float64
}{
	{"ns", 1}, {"us", 1e3}, {"µs", 1e3}, {"ms", 1e6},
	{"s", 1e9}, {"m", 60e9}, {"h", 3600e9}, {"d", 24 * 3600e9},
	{"w", 7 * 24 * 3600e9}, {"y", 365 * 24 * 3600e9},
}

// parseDuration parses a sequence of <number><unit> ("1h30m", "1.5s",
// "-5m") into nanoseconds. A bare number is not a duration.
func parseDuration(s string) (int64, bool) {
	neg := false
	if strings.HasPrefix(s, "-") {
		neg = true
		s = s[1:]
	}
	if s == "" {
		return 0, false
	}
	total := 0.0
	for s != "" {
		i := 0
		for i < len(s) && (isDigit(s[i]) || s[i] == '.' || s[i] == '_') {
			i++
		}
		if i == 0 {
			return 0, false
		}
		f, err := strconv.ParseFloat(s[:i], 64)
		if err != nil {
			return 0, false
		}
		s = s[i:]
		found := false
		for _, u := range durationUnits {
			if strings.HasPrefix(s, u.name) {
				total += f * u.ns
				s = s[len(u.name):]
				found = true
				break
			}
		}
		if !found {
			return 0, false
		}
	}
	if neg {
		total = -total
	}
	return int64(total), true
}

// byteUnits are the byte-size suffixes, longest first.
var byteUnits = []struct {
	name string
	mult float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40},
	{"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"B", 1},
}

// parseBytes parses <number><unit> such as "10KiB" or "1.5MB".
func parseBytes(s string) (float64, bool) {
	i := 0
	for i < len(s) && (isDigit(s[i]) || s[i] == '.' || s[i] == '_') {
		i++
	}
	if i == 0 || i == len(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s[:i], 64)
	if err != nil {
		return 0, false
	}
	for _, u := range byteUnits {
		if s[i:] == u.name {
			return f * u.mult, true
		}
	}
	return 0, false
}

// parseIPv4 parses a dotted quad into its uint32 value.
func parseIPv4(s string) (uint32, bool) {
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return 0, false
	}
	var n uint32
	for _, p := range parts {
		if p == "" || len(p) > 3 {
			return 0, false
		}
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 || v > 255 || !isDigit(p[0]) {
			return 0, false
		}
		n = n<<8 | uint32(v)
	}
	return n, true
}

// parseTime parses an RFC3339 time with any offset and fraction into Unix
// nanoseconds.
func parseTime(s string) (int64, bool) {
	if len(s) < len("2006-01-02T15:04:05Z") || s[4] != '-' {
		return 0, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, false
	}
	return t.UnixNano(), true
}

// formatTime prints Unix nanoseconds as VictoriaLogs prints _time:
// RFC3339Nano in UTC with trailing fractional zeros trimmed.
func formatTime(ns int64) string {
	return time.Unix(0, ns).UTC().Format(time.RFC3339Nano)
}

// formatFloat prints a computed number: shortest text, no exponent, "NaN",
// "+Inf" and "-Inf" for the special values.
func formatFloat(f float64) string {
	return strconv.FormatFloat(f, 'f', -1, 64)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// compareNatural orders strings naturally: runs of ASCII digits compare by
// their numeric value (then the shorter run, i.e. fewer leading zeros,
// first), a digit sorts before any other byte, other bytes compare as bytes,
// and a proper prefix sorts first. So "" < "9" < "10" < "a" and
// "1.5e2" < "12.5".
func compareNatural(a, b string) int {
	for a != "" && b != "" {
		ca, cb := a[0], b[0]
		da, db := isDigit(ca), isDigit(cb)
		switch {
		case da && db:
			ra, rb := digitRun(a), digitRun(b)
			if c := compareDigitRuns(ra, rb); c != 0 {
				return c
			}
			if len(ra) != len(rb) {
				return cmpInt(len(ra), len(rb))
			}
			a, b = a[len(ra):], b[len(rb):]
		case da:
			return -1
		case db:
			return 1
		case ca != cb:
			return cmpInt(int(ca), int(cb))
		default:
			a, b = a[1:], b[1:]
		}
	}
	return cmpInt(len(a), len(b))
}

func digitRun(s string) string {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return s[:i]
}

// compareDigitRuns compares two runs of decimal digits by numeric value, at
// any length.
func compareDigitRuns(a, b string) int {
	a = strings.TrimLeft(a, "0")
	b = strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		return cmpInt(len(a), len(b))
	}
	return strings.Compare(a, b)
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// compareValues orders values the way min, max, quantile, row_min, row_max
// and uniq_values do (VictoriaLogs' lessString): two integers numerically,
// two RFC3339 times by time, two anyNumbers numerically, otherwise naturally.
// Empty sorts before everything.
func compareValues(a, b string) int {
	if a == b {
		return 0
	}
	if ia, err := strconv.ParseInt(a, 10, 64); err == nil {
		if ib, err := strconv.ParseInt(b, 10, 64); err == nil {
			return cmpInt64(ia, ib)
		}
	}
	if ua, err := strconv.ParseUint(a, 10, 64); err == nil {
		if ub, err := strconv.ParseUint(b, 10, 64); err == nil {
			switch {
			case ua < ub:
				return -1
			case ua > ub:
				return 1
			}
			return 0
		}
	}
	if ta, ok := parseTime(a); ok {
		if tb, ok := parseTime(b); ok {
			return cmpInt64(ta, tb)
		}
	}
	if fa, ok := anyNumber(a); ok {
		if fb, ok := anyNumber(b); ok {
			return cmpFloat(fa, fb)
		}
	}
	return compareNatural(a, b)
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// compareSortKey orders the values of one `sort` key, following the corpus
// README: _time values as times, two plainNumbers numerically, otherwise
// naturally (empty first).
//
// Over a column mixing plain numbers and other values this is not a total
// order (naturally "1.5e2" < "-12.5" < ... numerically -12.5 < 0.5,
// naturally 0.5 < "1.5e2"), and the result depends on the sort algorithm.
// VictoriaLogs' result does too (it changed between runs); for a handful of
// rows it insertion-sorts each block in input order, which is also what
// sort.SliceStable does for up to 20 rows.
func compareSortKey(field, a, b string) int {
	if field == "_time" {
		ta, okA := parseTime(a)
		tb, okB := parseTime(b)
		if okA && okB {
			return cmpInt64(ta, tb)
		}
	}
	fa, okA := plainNumber(a)
	fb, okB := plainNumber(b)
	if okA && okB {
		return cmpFloat(fa, fb)
	}
	return compareNatural(a, b)
}

// mustParseFloat parses text already known to be a number; out-of-range
// values come back as ±Inf, as strconv returns them.
func mustParseFloat(s string) float64 {
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// jsonQuote returns v as a JSON string literal as VictoriaLogs writes the
// JSON it builds inside values (quicktemplate's escaping): '<' and '\”
// as \u003c and \u0027, control bytes as \u00xx but \b \f \n \r \t,
// invalid UTF-8 left as is.
func jsonQuote(v string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range []byte(v) {
		switch {
		case c == '"' || c == '\\':
			b.WriteString(`\` + string(c))
		case c == '<' || c == '\'' || c < 0x20 && !strings.ContainsRune("\b\f\n\r\t", rune(c)):
			fmt.Fprintf(&b, `\u%04x`, c)
		case c < 0x20:
			b.WriteString(map[byte]string{'\b': `\b`, '\f': `\f`, '\n': `\n`, '\r': `\r`, '\t': `\t`}[c])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
