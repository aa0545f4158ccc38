package query

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// This file parses the number literals of LogsQL the way VictoriaLogs does
// (lib/logstorage/values_encoder.go tryParseNumber, tryParseDuration,
// tryParseBytes): plain decimals with '_' separators, durations converted to
// nanoseconds, byte sizes, and whatever strconv.ParseFloat or
// strconv.ParseInt(s, 0, 64) take for text that looks like a number
// (exponents, inf, hex). The functions never return NaN.

// Nanoseconds per duration unit, as in VictoriaLogs (a year is 365 days).
const (
	nsPerMicrosecond = 1e3
	nsPerMillisecond = 1e6
	nsPerSecond      = 1e9
	nsPerMinute      = 60 * nsPerSecond
	nsPerHour        = 60 * nsPerMinute
	nsPerDay         = 24 * nsPerHour
	nsPerWeek        = 7 * nsPerDay
	nsPerYear        = 365 * nsPerDay
)

// parseNumberLit parses s as a number literal of a comparison, a range, a
// stats bucket or a math expression: "5", "-1.5", "1_000", "1e3", "0x1F",
// "inf", "10KiB" (10240), "1.5s" (1.5e9 nanoseconds), a full RFC3339
// timestamp (Unix nanoseconds) or an IPv4 address (its uint32 value).
func parseNumberLit(s string) (float64, bool) {
	if s == "" {
		return 0, false
	}
	if f, ok := parseDecimalLit(s); ok {
		return f, true
	}
	if ns, ok := parseDurationLit(s); ok {
		return float64(ns), true
	}
	if n, ok := parseBytesLit(s); ok {
		return float64(n), true
	}
	if f, ok := parseStrconvLit(s); ok {
		return f, true
	}
	if ns, ok := parseTimestampLit(s); ok {
		return float64(ns), true
	}
	if n, ok := parseIPv4Lit(s); ok {
		return float64(n), true
	}
	return 0, false
}

// parseBoundLit parses the bound of a comparison or range filter: a
// number literal, or NaN ("nan" in any case), which VictoriaLogs takes too
// and which no value satisfies.
func parseBoundLit(s string) (float64, bool) {
	if strings.EqualFold(s, "nan") {
		return math.NaN(), true
	}
	return parseNumberLit(s)
}

// isNumberPrefixLit reports whether s starts like a number: an optional sign,
// then a digit, ".digit" or "inf".
func isNumberPrefixLit(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == '-' || s[0] == '+' {
		s = s[1:]
		if s == "" {
			return false
		}
	}
	if strings.EqualFold(s, "inf") {
		return true
	}
	if s[0] == '.' {
		s = s[1:]
		if s == "" {
			return false
		}
	}
	return s[0] >= '0' && s[0] <= '9'
}

// parseStrconvLit reads what strconv reads of text that starts like a
// number (isLikelyNumberLit): "1e3", "1_000", "inf", "0x1F", "0o17".
func parseStrconvLit(s string) (float64, bool) {
	if !isLikelyNumberLit(s) {
		return 0, false
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f, true
	}
	if n, err := strconv.ParseInt(s, 0, 64); err == nil {
		return float64(n), true
	}
	return 0, false
}

// isLikelyNumberLit reports whether s may be passed to strconv: it starts
// like a number and is not an IP address or a timestamp.
func isLikelyNumberLit(s string) bool {
	if !isNumberPrefixLit(s) {
		return false
	}
	if strings.Count(s, ".") > 1 {
		return false // likely an IP address
	}
	if strings.IndexByte(s, ':') >= 0 || strings.Count(s, "-") > 2 {
		return false // likely a timestamp
	}
	return true
}

// parseUintDigitsLit parses decimal digits with optional '_' separators. A
// leading zero is refused unless s is "0", as in VictoriaLogs.
func parseUintDigitsLit(s string) (uint64, bool) {
	if s == "" || len(s) > len("18_446_744_073_709_551_615") {
		return 0, false
	}
	if len(s) > 1 && s[0] == '0' {
		return 0, false
	}
	n := uint64(0)
	digits := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' {
			continue
		}
		if c < '0' || c > '9' {
			return 0, false
		}
		if n > math.MaxUint64/10 {
			return 0, false
		}
		n1 := n*10 + uint64(c-'0')
		if n1 < n {
			return 0, false
		}
		n = n1
		digits++
	}
	return n, digits > 0
}

// parseDecimalLit parses a plain decimal number: an optional '-', digits with
// optional '_' separators and an optional fraction ("1_000", "-0.5"). It
// takes no exponent, no '+' and no bare leading or trailing dot.
func parseDecimalLit(s string) (float64, bool) {
	if s == "" || len(s) > len("-18_446_744_073_709_551_615") {
		return 0, false
	}
	minus := s[0] == '-'
	if minus {
		s = s[1:]
	}
	intPart, frac, hasDot := strings.Cut(s, ".")
	nInt, ok := parseUintDigitsLit(intPart)
	if !ok {
		return 0, false
	}
	f := float64(nInt)
	if hasDot {
		if frac == "" {
			return 0, false
		}
		// Leading zeros of the fraction are fine ("0.05").
		trimmed := strings.TrimLeft(frac, "0")
		if trimmed == "" {
			trimmed = "0"
		}
		nFrac, ok := parseUintDigitsLit(trimmed)
		if !ok {
			return 0, false
		}
		p10 := math.Pow10(strings.Count(frac, "_") - len(frac))
		f = math.FMA(float64(nFrac), p10, f)
	}
	if minus {
		f = -f
	}
	return f, true
}

// parseFloatPrefixLit parses the decimal number at the start of s and returns
// the rest of s.
func parseFloatPrefixLit(s string) (float64, string, bool) {
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.' || s[i] == '_') {
		i++
	}
	if i == 0 {
		return 0, s, false
	}
	f, ok := parseDecimalLit(s[:i])
	return f, s[i:], ok
}

// addSaturated returns n+f as int64, saturating at math.MaxInt64.
func addSaturated(n int64, f float64) int64 {
	if f >= math.MaxInt64 {
		return math.MaxInt64
	}
	x := int64(f)
	if n < 0 || x < 0 || x > math.MaxInt64-n {
		return math.MaxInt64
	}
	return n + x
}

// durationUnits lists the duration suffixes, longest first where one is a
// prefix of another ("ms" before "m").
var durationUnits = []struct {
	suffix string
	ns     float64
}{
	{"ms", nsPerMillisecond},
	{"ns", 1},
	{"µs", nsPerMicrosecond},
	{"us", nsPerMicrosecond},
	{"y", nsPerYear},
	{"w", nsPerWeek},
	{"d", nsPerDay},
	{"h", nsPerHour},
	{"m", nsPerMinute},
	{"s", nsPerSecond},
}

// parseDurationLit parses a duration such as "5m", "1h30m", "1.5s", "100ms",
// "1µs" (or "1us"), "10ns", "1d", "1w" or "1y" into nanoseconds. A leading
// '-' makes it negative. Every number needs a unit.
func parseDurationLit(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	minus := s[0] == '-'
	if minus {
		s = s[1:]
	}
	if s == "" {
		return 0, false
	}
	ns := int64(0)
	for s != "" {
		f, tail, ok := parseFloatPrefixLit(s)
		if !ok || tail == "" {
			return 0, false
		}
		matched := false
		for _, u := range durationUnits {
			if strings.HasPrefix(tail, u.suffix) {
				ns = addSaturated(ns, f*u.ns)
				s = tail[len(u.suffix):]
				matched = true
				break
			}
		}
		if !matched {
			return 0, false
		}
	}
	if minus {
		ns = -ns
	}
	return ns, true
}

// byteUnits lists the byte-size suffixes, longest first.
var byteUnits = []struct {
	suffix string
	n      float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"B", 1}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12},
}

// parseBytesLit parses a byte size such as "10KiB", "1.5MB", "2Gi", "3K" or
// "512B" (suffixes are case-sensitive, as in VictoriaLogs). A number without
// a suffix is taken only if it is an integer.
func parseBytesLit(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	minus := s[0] == '-'
	if minus {
		s = s[1:]
	}
	if s == "" {
		return 0, false
	}
	n := int64(0)
	for s != "" {
		f, tail, ok := parseFloatPrefixLit(s)
		if !ok {
			return 0, false
		}
		if tail == "" {
			if _, frac := math.Modf(f); frac != 0 {
				return 0, false
			}
			n = addSaturated(n, f)
			break
		}
		matched := false
		for _, u := range byteUnits {
			if strings.HasPrefix(tail, u.suffix) {
				n = addSaturated(n, f*u.n)
				s = tail[len(u.suffix):]
				matched = true
				break
			}
		}
		if !matched {
			return 0, false
		}
	}
	if minus {
		n = -n
	}
	return n, true
}

// parseUintLit parses the N of "limit N", "offset N" and similar: an
// unsigned integer (Go syntax with base prefixes and '_'), "inf", a byte size
// or a duration. Values above math.MaxInt64 are clamped.
func parseUintLit(s string) (int64, bool) {
	if strings.EqualFold(s, "inf") || strings.EqualFold(s, "+inf") {
		return math.MaxInt64, true
	}
	if n, err := strconv.ParseUint(s, 0, 64); err == nil {
		return int64(min(n, math.MaxInt64)), true
	} else if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
		return math.MaxInt64, true
	}
	n, ok := parseBytesLit(s)
	if !ok {
		n, ok = parseDurationLit(s)
	}
	if !ok || n < 0 {
		return 0, false
	}
	return n, true
}

// parseTimestampLit parses a timestamp with at least seconds precision,
// "2006-01-02T15:04:05" (or a space instead of 'T'), an optional fraction
// and an optional zone ("Z", "+02:00", "+0200"), into Unix nanoseconds. A
// timestamp without a zone is taken as UTC.
func parseTimestampLit(s string) (int64, bool) {
	if len(s) < len("2006-01-02T15:04:05") {
		return 0, false
	}
	if s[10] != 'T' && s[10] != ' ' {
		return 0, false
	}
	base := s[:10] + "T" + s[11:19]
	t, err := time.Parse("2006-01-02T15:04:05", base)
	if err != nil {
		return 0, false
	}
	rest := s[19:]
	offset := int64(0)
	switch {
	case strings.HasSuffix(rest, "Z"):
		rest = rest[:len(rest)-1]
	default:
		if n := strings.LastIndexAny(rest, "+-"); n >= 0 {
			off, ok := parseHHMMLit(rest[n+1:])
			if !ok {
				return 0, false
			}
			if rest[n] == '-' {
				off = -off
			}
			offset = off
			rest = rest[:n]
		}
	}
	frac := int64(0)
	if rest != "" {
		if rest[0] != '.' || len(rest) == 1 || len(rest) > 10 {
			return 0, false
		}
		digits := rest[1:]
		for i := 0; i < len(digits); i++ {
			if digits[i] < '0' || digits[i] > '9' {
				return 0, false
			}
		}
		n, _ := strconv.ParseInt(digits, 10, 64)
		frac = n * int64(math.Pow10(9-len(digits)))
	}
	secs := t.Unix()
	if secs <= math.MinInt64/1_000_000_000 || secs >= math.MaxInt64/1_000_000_000 {
		return 0, false
	}
	return secs*1e9 + frac - offset, true
}

// parseHHMMLit parses a zone offset "hh:mm" or "hhmm" into nanoseconds.
func parseHHMMLit(s string) (int64, bool) {
	var hh, mm string
	switch {
	case len(s) == 5 && s[2] == ':':
		hh, mm = s[:2], s[3:]
	case len(s) == 4:
		hh, mm = s[:2], s[2:]
	default:
		return 0, false
	}
	h, err1 := strconv.ParseUint(hh, 10, 8)
	m, err2 := strconv.ParseUint(mm, 10, 8)
	if err1 != nil || err2 != nil || h > 24 || m > 60 {
		return 0, false
	}
	return int64(h)*nsPerHour + int64(m)*nsPerMinute, true
}

// parseIPv4Lit parses a dotted IPv4 address into its uint32 value: four
// parts of 1 to 3 decimal digits, each at most 255, leading zeros allowed
// ("010" is 10), as strconv.ParseUint(part, 10, 8) reads them (no sign, no
// '_'). One pass over the bytes: it runs for every value of a numeric
// column of a sidecar (IndexNumbers), a third of that CPU with
// strings.SplitSeq and ParseUint.
func parseIPv4Lit(s string) (uint32, bool) {
	if len(s) < len("1.1.1.1") || len(s) > len("255.255.255.255") {
		return 0, false
	}
	var n, part uint32
	digits, dots := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			part = part*10 + uint32(c-'0')
			digits++
			if digits > 3 || part > 255 {
				return 0, false
			}
		case c == '.' && digits > 0 && dots < 3:
			n = n<<8 | part
			part, digits = 0, 0
			dots++
		default:
			return 0, false
		}
	}
	if dots != 3 || digits == 0 {
		return 0, false
	}
	return n<<8 | part, true
}
