package query

import (
	"math"
	"strconv"
	"strings"

	"github.com/spate-io/spate/internal/timeparse"
)

// parseNumber parses a field value as a number, the way values "act as
// numbers" in filters and stats: decimal integers and floats with optional
// sign, fraction and exponent. It refuses what strconv.ParseFloat would also
// take but a log value does not mean as a number (inf, nan, hex, '_').
func parseNumber(s string) (float64, bool) {
	if len(s) == 0 || len(s) > 64 {
		return 0, false
	}
	// Fast path: a short unsigned integer.
	if len(s) <= 15 {
		n := 0
		i := 0
		for ; i < len(s); i++ {
			c := s[i]
			if c < '0' || c > '9' {
				break
			}
			n = n*10 + int(c-'0')
		}
		if i == len(s) {
			return float64(n), true
		}
	}
	// Slow path: check the JSON-like number shape, then ParseFloat.
	i := 0
	minus := s[0] == '-'
	if minus || s[0] == '+' {
		i++
	}
	var m uint64 // the digits as an integer, when there are at most 15
	digits, fracDigits := 0, 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		m = m*10 + uint64(s[i]-'0')
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			m = m*10 + uint64(s[i]-'0')
			i++
			digits++
			fracDigits++
		}
	}
	if digits == 0 {
		return 0, false
	}
	if i == len(s) && digits <= 15 {
		// Fast path: a decimal of at most 15 digits ("29.972"), what
		// strconv's atof64exact reads: m < 10^15 < 2^52 and 10^fracDigits
		// are exact float64s, and IEEE division rounds correctly, so this
		// is ParseFloat's answer to the bit (FuzzIndexNumbers).
		f := float64(m) / exactPow10[fracDigits]
		if minus {
			f = -f
		}
		return f, true
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		ed := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			ed++
		}
		if ed == 0 {
			return 0, false
		}
	}
	if i != len(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false // 1e400 is out of range: VictoriaLogs reads no number
	}
	return f, true
}

// exactPow10 holds the powers of ten parseNumber divides by, all exact
// float64s.
var exactPow10 = [16]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// anyNumber parses a field value as VictoriaLogs' tryParseNumber does, what
// sum, avg and quantile read and min and max compare: parseNumber's
// decimals, then a duration ("1.5s", in nanoseconds), a byte size ("2KB")
// or what strconv reads of text that starts like a number ("1_000",
// "0x1F", "inf"). It never returns NaN.
func anyNumber(s string) (float64, bool) {
	if f, ok := parseNumber(s); ok {
		return f, true
	}
	if s == "" || !numberStart(s[0]) {
		return 0, false
	}
	// VictoriaLogs' values take µs, not the us that query literals may
	// spell it with; no other duration holds "us".
	if ns, ok := parseDurationLit(s); ok && !strings.Contains(s, "us") {
		return float64(ns), true
	}
	if n, ok := parseBytesLit(s); ok {
		return float64(n), true
	}
	return parseStrconvLit(s)
}

// mathNumber parses a field value as VictoriaLogs' parseMathNumber does,
// what the comparison and range filters and math read: anyNumber, then an
// RFC 3339 timestamp (Unix nanoseconds) or an IPv4 address (its uint32).
// The sidecar's numeric ranges are of these numbers (IndexNumbers).
func mathNumber(s string) (float64, bool) {
	// Fast path: what does not start like a number, the common case for
	// the values of a sidecar's numeric columns (IndexNumbers). parseNumber
	// takes only a sign, a digit or a '.' first, anyNumber's other parsers
	// run only after numberStart, and the two below only after a digit.
	if s == "" || !numberStart(s[0]) {
		return 0, false
	}
	// Fast path: an IPv4 address, which anyNumber would try four ways and
	// none takes: parseNumber and parseStrconvLit take one '.' at most,
	// durations and byte sizes need a unit or one '.', and
	// parseTimestampLit needs 19 bytes.
	if n, ok := parseIPv4Lit(s); ok {
		return float64(n), true
	}
	if f, ok := anyNumber(s); ok {
		return f, true
	}
	if s[0] < '0' || s[0] > '9' {
		return 0, false
	}
	if ns, ok := parseTimestampLit(s); ok {
		return float64(ns), true
	}
	return 0, false
}

// numberStart reports whether c may start what anyNumber reads beyond
// parseNumber: a digit, a sign, a dot, or the i of inf.
func numberStart(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'i' || c == 'I'
}

// formatNumber prints f as VictoriaLogs does: the shortest text that parses
// back to f, never with an exponent (1e-08 is 0.00000001), -0 as "-0".
func formatNumber(f float64) string {
	var buf [32]byte // the text of most numbers fits: one allocation, the string's
	return string(appendNumber(buf[:0], f))
}

func appendNumber(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "+Inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-Inf"...)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 && (f != 0 || !math.Signbit(f)) {
		// Fast path: counts and sums of integers. Below 2^53 every
		// integer is a float64 and neighbours are at most 1 apart, so the
		// shortest text that parses back to f is f's own digits, which
		// AppendInt prints several times faster.
		return strconv.AppendInt(dst, int64(f), 10)
	}
	return strconv.AppendFloat(dst, f, 'f', -1, 64)
}

// plainNumber reports whether appendNumber prints f as a number (not NaN
// or an infinity), which parsePlainNumber reads back to f.
func plainNumber(f float64) bool {
	return !math.IsNaN(f) && !math.IsInf(f, 0)
}

// parsePlainNumber parses a number without an exponent ("-12.5", "150"):
// the numbers sort compares by value. "1.5e2" is not one: sort compares it
// as text, as VictoriaLogs does.
func parsePlainNumber(s string) (float64, bool) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == 'e' || c == 'E' {
			return 0, false
		}
	}
	return parseNumber(s)
}

// isTimeText reports whether s looks like an RFC 3339 timestamp.
func isTimeText(s string) bool {
	return len(s) >= 20 && s[4] == '-' && s[7] == '-' && s[10] == 'T' && s[0] >= '0' && s[0] <= '9'
}

// lessNatural is the order of sort: empty values first, two numbers by
// value, two timestamps by time, otherwise strings with runs of digits
// compared by their numeric value ("a2" < "a10").
func lessNatural(a, b string) bool {
	return compareNatural(a, b) < 0
}

func compareNatural(a, b string) int {
	if a == b {
		return 0
	}
	if a == "" {
		return -1
	}
	if b == "" {
		return 1
	}
	if fa, ok := parsePlainNumber(a); ok {
		if fb, ok := parsePlainNumber(b); ok {
			switch {
			case fa < fb:
				return -1
			case fa > fb:
				return 1
			}
			return compareString(a, b)
		}
	}
	if isTimeText(a) && isTimeText(b) {
		if ta, ok := timeparse.ParseRFC3339(a); ok {
			if tb, ok := timeparse.ParseRFC3339(b); ok {
				switch {
				case ta < tb:
					return -1
				case ta > tb:
					return 1
				}
			}
		}
	}
	return naturalCompare(a, b)
}

// naturalLess is naturalCompare(a, b) < 0.
func naturalLess(a, b string) bool { return naturalCompare(a, b) < 0 }

// naturalCompare orders strings naturally, as VictoriaLogs' LessNatural:
// runs of digits by their numeric value (at any length), then the shorter
// run first ("1" < "01"); a digit before any other byte ("200" < "/api");
// other bytes as bytes; a proper prefix first. It is 0 only for equal
// strings.
func naturalCompare(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ca, cb := a[i], b[j]
		da, db := isDigit(ca), isDigit(cb)
		switch {
		case da && db:
			si, sj := i, j
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			ra, rb := trimZeros(a[si:i]), trimZeros(b[sj:j])
			if len(ra) != len(rb) {
				return cmpInt(len(ra), len(rb))
			}
			if ra != rb {
				return compareString(ra, rb)
			}
			if i-si != j-sj {
				return cmpInt(i-si, j-sj)
			}
			continue
		case da:
			return -1
		case db:
			return 1
		case ca != cb:
			return cmpInt(int(ca), int(cb))
		}
		i++
		j++
	}
	return cmpInt(len(a)-i, len(b)-j)
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

func compareString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func trimZeros(s string) string {
	for len(s) > 1 && s[0] == '0' {
		s = s[1:]
	}
	return s
}

// valueKey is a value as min, max, row_min and row_max order it (lessKey),
// parsed once: whichever of an int64, a uint64, a time (Unix ns) and an
// anyNumber it is.
type valueKey struct {
	s                            string
	isInt, isUint, isTime, isNum bool
	i                            int64
	u                            uint64
	t                            int64
	f                            float64
}

// keyOf parses s for lessKey. The key aliases s.
func keyOf(s string) valueKey {
	k := valueKey{s: s}
	// Fast path: a decimal integer of up to 18 digits, optionally signed,
	// is an int64, a uint64 without a minus, and a number.
	if n := len(s); n > 0 && n <= 19 {
		i, neg := 0, false
		if s[0] == '-' || s[0] == '+' {
			neg, i = s[0] == '-', 1
		}
		if i < n && n-i <= 18 {
			v := int64(0)
			j := i
			for ; j < n && s[j] >= '0' && s[j] <= '9'; j++ {
				v = v*10 + int64(s[j]-'0')
			}
			if j == n {
				if neg {
					v = -v
				}
				k.isInt, k.i = true, v
				k.isUint, k.u = !neg, uint64(v)
				k.isNum, k.f = true, float64(v)
				return k
			}
		}
	}
	if s == "" {
		return k
	}
	if t := s; allDigits(strings.TrimPrefix(strings.TrimPrefix(t, "-"), "+")) || t[0] == '+' && allDigits(t[1:]) {
		// 19 digits or more: strconv says whether they fit.
		if v, err := strconv.ParseInt(s, 10, 64); err == nil {
			k.isInt, k.i = true, v
		}
		if v, err := strconv.ParseUint(s, 10, 64); err == nil {
			k.isUint, k.u = true, v
		}
	}
	if isTimeText(s) {
		k.t, k.isTime = timeparse.ParseRFC3339(s)
	}
	k.f, k.isNum = anyNumber(s)
	return k
}

// allDigits reports whether s is one or more decimal digits.
func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// lessKey reports whether a's value orders before b's in VictoriaLogs'
// lessString order: two integers numerically, two RFC 3339 times by time,
// two anyNumbers numerically, otherwise naturally (see naturalCompare; ""
// is the smallest).
func lessKey(a, b *valueKey) bool {
	switch {
	case a.s == b.s:
		return false
	case a.isInt && b.isInt:
		return a.i < b.i
	case a.isUint && b.isUint:
		return a.u < b.u
	case a.isTime && b.isTime:
		return a.t < b.t
	case a.isNum && b.isNum:
		return a.f < b.f
	}
	return naturalLess(a.s, b.s)
}
