// Package timeparse reads and writes the time values of log lines: the
// formats `spate serve` accepts at ingestion and `spate query` reads from
// _time and the other time fields. Both import it, so that a line stored by
// one reads back the same way in the other.
//
// Every function here is safe for concurrent use and does not allocate on
// its fast path (RFC 3339 with a 'T', 'Z' or numeric offset, and integer
// Unix timestamps).
package timeparse

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spate-io/spate/internal/bytesutil"
)

// DefaultFields are the fields a log's time is taken from when no time
// field is named, most preferred first. Callers must not modify it.
var DefaultFields = []string{"_time", "ts", "time", "timestamp", "@timestamp"}

// Parse is ParseIn with the local time zone (as VictoriaLogs reads values
// without a zone).
func Parse(s string) (int64, bool) { return ParseIn(s, time.Local) }

// ParseIn parses a log's time value and returns Unix nanoseconds. It
// takes, detected from the value's shape:
//   - RFC 3339 and its common relatives: a 'T', 't' or space between date
//     and time, a fraction after '.' or ',' of any length (truncated to
//     nanoseconds), and a zone of Z, ±HH:MM, ±HHMM, ±HH or none; a value
//     without a zone is a wall time in loc ("2026-11-24 20:00:00",
//     Python's "2026-11-24 20:00:00,123");
//   - a Unix timestamp (a JSON number's text or a numeric string) whose
//     unit is guessed from its magnitude as VictoriaLogs does: seconds
//     below 1e10 (fractions allowed), milliseconds below 1e13,
//     microseconds below 1e16, else nanoseconds;
//   - the Common Log Format of nginx and Apache, "10/Oct/2026:13:55:36
//     -0700" (without the zone: loc);
//   - syslog's RFC 3164 "Oct 11 22:14:15" (also "Oct  1 ..." and a
//     fraction), a wall time in loc in the year that puts it no more than
//     a day after now.
//
// The fast path (RFC 3339 with a 'T', 'Z' or ±HH:MM) does not allocate;
// nor do the others, for a loc without daylight-saving lookups cached by
// the time package.
func ParseIn(s string, loc *time.Location) (int64, bool) {
	if len(s) == 0 {
		return 0, false
	}
	c := s[0]
	switch {
	case c >= '0' && c <= '9' && len(s) >= 18 && s[4] == '-':
		if ns, ok := parseRFC3339Fast(s); ok {
			return ns, true
		}
		if ns, ok := parseISO(s, loc); ok {
			return ns, true
		}
		return parseRFC3339Slow(s) // years at the ends of the range
	case c >= '0' && c <= '9' && len(s) >= 20 && s[2] == '/' && s[6] == '/':
		return parseCLF(s, loc)
	case (c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') && len(s) >= 15 && s[3] == ' ':
		return parseSyslog(s, loc, time.Now())
	}
	return parseUnix(s)
}

// MeansNow reports whether v, a time field's value (a string's contents or
// a number's text), stands for the ingestion time rather than a time:
// empty, "0" or "-" (RFC 5424's nil value), as in VictoriaLogs'
// insertutil.parseTimestamp.
func MeansNow(v []byte) bool {
	return len(v) == 0 || len(v) == 1 && (v[0] == '0' || v[0] == '-')
}

// parseUnix parses a Unix timestamp in s, ms, µs or ns, guessed from the
// magnitude of its integer part. Decimal fractions are exact to the
// nanosecond (truncated past it); exponents go through float64.
func parseUnix(s string) (int64, bool) { return parseUnixIn(s, 0) }

// parseUnixIn is parseUnix in a fixed unit (ns per unit), or guessed from
// the magnitude when unit is 0.
func parseUnixIn(s string, fixed int64) (int64, bool) {
	unitFor := func(n int64) int64 {
		if fixed > 0 {
			return fixed
		}
		return unitOf(n)
	}
	if strings.IndexByte(s, '.') >= 0 {
		// Not an integer: skip ParseInt, whose error allocates.
	} else if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		unit := unitFor(n)
		if unit > 1 && (n > math.MaxInt64/unit || n < math.MinInt64/unit) {
			return 0, false
		}
		return n * unit, true
	}
	if i := strings.IndexByte(s, '.'); i > 0 && i < len(s)-1 && !strings.ContainsAny(s, "eE") {
		// A decimal fraction: integer part and digits, exactly.
		ip, err := strconv.ParseInt(s[:i], 10, 64)
		if err != nil {
			return 0, false
		}
		unit := unitFor(ip)
		if unit > 1 && (ip > math.MaxInt64/unit || ip < math.MinInt64/unit) {
			return 0, false
		}
		var frac int64
		scale := unit
		for _, c := range []byte(s[i+1:]) {
			if c < '0' || c > '9' {
				return 0, false
			}
			scale /= 10
			frac += int64(c-'0') * scale
		}
		if s[0] == '-' {
			return ip*unit - frac, true
		}
		return ip*unit + frac, true
	}
	// Slow path: exponents.
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) >= 9.2e18 {
		return 0, false
	}
	unit := unitFor(int64(f))
	ns := f * float64(unit)
	if math.Abs(ns) >= 9.2e18 {
		return 0, false
	}
	return int64(math.Round(ns)), true
}

// unitOf returns the nanoseconds per unit of a Unix timestamp whose integer
// part is n: seconds below 1e10, milliseconds below 1e13, microseconds
// below 1e16, else nanoseconds.
func unitOf(n int64) int64 {
	if n < 0 {
		n = -n // MinInt64 stays negative: nanoseconds
	}
	switch {
	case n < 0:
		return 1
	case n < 1e10:
		return 1e9
	case n < 1e13:
		return 1e6
	case n < 1e16:
		return 1e3
	}
	return 1
}

// ParseRFC3339 parses "YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)" (a space
// or 't' may stand for the 'T') without allocating; anything else falls back
// to time.Parse with time.RFC3339Nano. It returns Unix nanoseconds.
func ParseRFC3339(s string) (int64, bool) {
	if ns, ok := parseRFC3339Fast(s); ok {
		return ns, true
	}
	return parseRFC3339Slow(s)
}

// parseRFC3339Fast is ParseRFC3339's fixed-width layout, without the
// fallback: false for anything else.
func parseRFC3339Fast(s string) (int64, bool) {
	if len(s) < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
		s[13] != ':' || s[16] != ':' {
		return 0, false
	}
	year, ok1 := bytesutil.ParseDigits(s[0:4])
	month, ok2 := bytesutil.ParseDigits(s[5:7])
	day, ok3 := bytesutil.ParseDigits(s[8:10])
	hour, ok4 := bytesutil.ParseDigits(s[11:13])
	minute, ok5 := bytesutil.ParseDigits(s[14:16])
	sec, ok6 := bytesutil.ParseDigits(s[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || month < 1 || month > 12 || day < 1 ||
		day > daysIn(month, year) || hour > 23 || minute > 59 || sec > 59 ||
		year <= 1678 || year >= 2261 {
		return 0, false
	}
	i := 19
	var frac int64
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		scale := int64(1e9)
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			if i-start < 9 {
				scale /= 10
				frac += int64(s[i]-'0') * scale
			}
			i++
		}
		if i == start {
			return 0, false
		}
	}
	var off int64
	switch {
	case i == len(s)-1 && (s[i] == 'Z' || s[i] == 'z'):
	case i == len(s)-6 && (s[i] == '+' || s[i] == '-') && s[i+3] == ':':
		oh, ok1 := bytesutil.ParseDigits(s[i+1 : i+3])
		om, ok2 := bytesutil.ParseDigits(s[i+4 : i+6])
		if !ok1 || !ok2 || oh > 23 || om > 59 {
			return 0, false
		}
		off = int64(oh*3600+om*60) * 1e9
		if s[i] == '-' {
			off = -off
		}
	default:
		return 0, false
	}
	days := daysFromCivil(year, month, day)
	ns := (days*86400+int64(hour*3600+minute*60+sec))*1e9 + frac - off
	return ns, true
}

// Slow path: layouts the fast path does not take (odd widths, years near
// the ends of the int64 nanosecond range). Times outside that range
// (before 1677-09-21, after 2262-04-11) fail.
func parseRFC3339Slow(s string) (int64, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || t.Before(minTime) || t.After(maxTime) {
		return 0, false
	}
	return t.UnixNano(), true
}

// The times Unix nanoseconds in an int64 can hold.
var (
	minTime = time.Unix(0, math.MinInt64)
	maxTime = time.Unix(0, math.MaxInt64)
)

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil returns the days since 1970-01-01 of a proleptic Gregorian
// date (Howard Hinnant's algorithm).
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era = (y - 399) / 400
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

// AppendRFC3339 appends ns (Unix nanoseconds) as VictoriaLogs prints _time:
// RFC 3339 in UTC with nanoseconds and trailing fractional zeros trimmed
// (time.RFC3339Nano), without going through time.Time: ingestion writes
// one for every line it rebuilds.
func AppendRFC3339(dst []byte, ns int64) []byte {
	secs, frac := ns/1e9, ns%1e9
	if frac < 0 {
		secs, frac = secs-1, frac+1e9
	}
	days, sod := secs/86400, secs%86400
	if sod < 0 {
		days, sod = days-1, sod+86400
	}
	y, m, d := civilFromDays(days)
	if y < 0 || y > 9999 {
		return time.Unix(0, ns).UTC().AppendFormat(dst, time.RFC3339Nano)
	}
	var b [30]byte
	put2(b[0:], y/100)
	put2(b[2:], y%100)
	b[4] = '-'
	put2(b[5:], m)
	b[7] = '-'
	put2(b[8:], d)
	b[10] = 'T'
	put2(b[11:], int(sod/3600))
	b[13] = ':'
	put2(b[14:], int(sod/60%60))
	b[16] = ':'
	put2(b[17:], int(sod%60))
	n := 19
	if frac != 0 {
		f := int(frac)
		b[19] = '.'
		put2(b[20:], f/10000000)
		put2(b[22:], f/100000%100)
		put2(b[24:], f/1000%100)
		put2(b[26:], f/10%100)
		b[28] = byte('0' + f%10)
		n = 29
		for b[n-1] == '0' {
			n--
		}
	}
	b[n] = 'Z'
	return append(dst, b[:n+1]...)
}

// put2 writes v (0 to 99) as two digits.
func put2(b []byte, v int) {
	const digits = "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"
	b[0], b[1] = digits[2*v], digits[2*v+1]
}

// civilFromDays is the inverse of daysFromCivil (Howard Hinnant's
// algorithm).
func civilFromDays(z int64) (y, m, d int) {
	z += 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era = (z - 146096) / 146097
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = int(doy - (153*mp+2)/5 + 1)
	m = int(mp + 3)
	if m > 12 {
		m -= 12
	}
	y = int(yoe + era*400)
	if m <= 2 {
		y++
	}
	return y, m, d
}

// FormatRFC3339 is AppendRFC3339 into a new string.
func FormatRFC3339(ns int64) string {
	return string(AppendRFC3339(nil, ns))
}
