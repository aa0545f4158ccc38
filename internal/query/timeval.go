package query

import (
	"math"
	"strconv"
	"time"

	"github.com/spate-io/spate/internal/bytesutil"
)

func unsafeString(b []byte) string { return bytesutil.ToUnsafeString(b) }

// parseTimeValue parses a log's time field: RFC 3339 with any offset and
// fraction, or a Unix timestamp (a JSON number or numeric string) whose unit
// is guessed from its magnitude as VictoriaLogs does: seconds below 1e10
// (fractions allowed), milliseconds below 1e13, microseconds below 1e16, else
// nanoseconds. It returns Unix nanoseconds.
func parseTimeValue(s string) (int64, bool) {
	if len(s) == 0 {
		return 0, false
	}
	if c := s[0]; c >= '0' && c <= '9' && len(s) >= 20 && s[4] == '-' {
		return parseRFC3339(s)
	}
	return parseUnixTimestamp(s)
}

// parseUnixTimestamp parses a Unix timestamp in s, n or ms, µs, ns guessed
// from its magnitude.
func parseUnixTimestamp(s string) (int64, bool) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		a := n
		if a < 0 {
			a = -a
		}
		switch {
		case a < 1e10:
			return n * 1e9, true
		case a < 1e13:
			return n * 1e6, true
		case a < 1e16:
			return n * 1e3, true
		default:
			return n, true
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	a := math.Abs(f)
	switch {
	case a < 1e10:
		return int64(math.Round(f * 1e9)), true
	case a < 1e13:
		return int64(math.Round(f * 1e6)), true
	case a < 1e16:
		return int64(math.Round(f * 1e3)), true
	default:
		return int64(f), true
	}
}

// parseRFC3339 parses "YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)" without
// allocating; anything else falls back to time.Parse.
func parseRFC3339(s string) (int64, bool) {
	// Fast path: the fixed-width layout.
	if len(s) < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
		s[13] != ':' || s[16] != ':' {
		return parseRFC3339Slow(s)
	}
	year, ok1 := bytesutil.ParseDigits(s[0:4])
	month, ok2 := bytesutil.ParseDigits(s[5:7])
	day, ok3 := bytesutil.ParseDigits(s[8:10])
	hour, ok4 := bytesutil.ParseDigits(s[11:13])
	minute, ok5 := bytesutil.ParseDigits(s[14:16])
	sec, ok6 := bytesutil.ParseDigits(s[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || month < 1 || month > 12 || day < 1 ||
		day > daysIn(month, year) || hour > 23 || minute > 59 || sec > 59 {
		return parseRFC3339Slow(s)
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
			return parseRFC3339Slow(s)
		}
	}
	var off int64
	switch {
	case i == len(s)-1 && (s[i] == 'Z' || s[i] == 'z'):
	case i == len(s)-6 && (s[i] == '+' || s[i] == '-') && s[i+3] == ':':
		oh, ok1 := bytesutil.ParseDigits(s[i+1 : i+3])
		om, ok2 := bytesutil.ParseDigits(s[i+4 : i+6])
		if !ok1 || !ok2 || oh > 23 || om > 59 {
			return parseRFC3339Slow(s)
		}
		off = int64(oh*3600+om*60) * 1e9
		if s[i] == '-' {
			off = -off
		}
	default:
		return parseRFC3339Slow(s)
	}
	days := daysFromCivil(year, month, day)
	ns := (days*86400+int64(hour*3600+minute*60+sec))*1e9 + frac - off
	return ns, true
}

func parseRFC3339Slow(s string) (int64, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, false
	}
	return t.UnixNano(), true
}

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

// appendTime appends ns as VictoriaLogs prints _time: RFC 3339 in UTC with
// nanoseconds and trailing fractional zeros trimmed.
func appendTime(dst []byte, ns int64) []byte {
	return time.Unix(0, ns).UTC().AppendFormat(dst, time.RFC3339Nano)
}

// formatTime is appendTime into a new string.
func formatTime(ns int64) string {
	return string(appendTime(nil, ns))
}
