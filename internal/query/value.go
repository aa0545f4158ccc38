package query

import (
	"math"
	"strconv"

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
	if s[i] == '-' || s[i] == '+' {
		i++
	}
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return 0, false
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
	if err != nil && !math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
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
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ca, cb := a[i], b[j]
		if isDigit(ca) && isDigit(cb) {
			si, sj := i, j
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			da, db := trimZeros(a[si:i]), trimZeros(b[sj:j])
			if len(da) != len(db) {
				if len(da) < len(db) {
					return -1
				}
				return 1
			}
			if da != db {
				if da < db {
					return -1
				}
				return 1
			}
			continue
		}
		if ca != cb {
			if ca < cb {
				return -1
			}
			return 1
		}
		i++
		j++
	}
	switch {
	case len(a)-i < len(b)-j:
		return -1
	case len(a)-i > len(b)-j:
		return 1
	}
	return compareString(a, b)
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

// lessValue is the order of min and max: numerically when both values parse
// as numbers, otherwise as byte strings (so "" is the smallest).
func lessValue(a, b string) bool {
	if fa, ok := parseNumber(a); ok {
		if fb, ok := parseNumber(b); ok {
			return fa < fb
		}
	}
	if isTimeText(a) && isTimeText(b) {
		if ta, ok := timeparse.ParseRFC3339(a); ok {
			if tb, ok := timeparse.ParseRFC3339(b); ok {
				return ta < tb
			}
		}
	}
	return a < b
}
