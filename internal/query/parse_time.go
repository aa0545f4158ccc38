package query

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// This file parses _time filters the way VictoriaLogs v1.26 does
// (lib/logstorage/parser.go parseFilterTimeRange, getMatchingEndTime and
// lib/timeutil ParseTimeAt):
//
//	_time:5m                  [now-5m, now]
//	_time:<5m, _time:<=5m     [now-5m+1ns, now], [now-5m, now]
//	_time:>5m, _time:>=5m     (-inf, now-5m-1ns], (-inf, now-5m]
//	_time:A                   the whole unit A names: [A, end(A)]
//	_time:[A, B]  _time:(A, B)  and mixed brackets; '(' adds 1ns to A,
//	                          ')' takes 1ns from B, ']' extends B to end(B)
//	_time:>A, >=A, <A, <=A    [A+1ns, inf), [A, inf), (-inf, A-1ns], (-inf, end(A)]
//	... offset D              shifts both bounds D into the past
//
// end(A) is the last nanosecond of the unit A is written in: a year for
// "2026", a day for "2026-01-02Z", a second for "...T00:01:00Z", a
// millisecond for ".123", a microsecond for ".123456" and A itself for other
// fractions and for relative times ("now-1h"). A is an RFC3339 time at any
// precision ("2026", "2026-01", "2026-01-02", "2026-01-02T15",
// "2026-01-02T15:04", "2026-01-02T15:04:05", optional fraction, optional "Z"
// or "+hh:mm"), a Unix timestamp in s, ms, µs or ns (guessed from its size),
// "now", "now-1h" or a bare duration ("1h" means now-1h).
//
// Times without a zone are taken as UTC. (VictoriaLogs uses the server's
// local zone; spate stays deterministic.)

// parseTimeFilter parses what follows "_time:".
func (p *parser) parseTimeFilter() (Filter, error) {
	now := p.now
	switch {
	case p.atEOF():
		return nil, p.errorf(p.cur().pos, "missing value after '_time:'")
	case p.isKw("day_range", "week_range"):
		return p.parseDayWeekRange()
	case p.isKw("offset"):
		// "_time:offset 1h" is every row older than now-1h.
		off, offText, err := p.parseTimeOffset()
		if err != nil {
			return nil, err
		}
		return &FilterTime{Min: math.MinInt64, Max: subSaturated(now, off), Text: offText}, nil
	}

	var ft *FilterTime
	var err error
	switch {
	case p.isPunct(">"), p.isPunct("<"):
		ft, err = p.parseTimeCompare()
	case p.isPunct("["), p.isPunct("("):
		ft, err = p.parseTimeRange()
	default:
		ft, err = p.parseTimeEq()
	}
	if err != nil {
		return nil, err
	}
	if p.isKw("offset") {
		off, offText, err := p.parseTimeOffset()
		if err != nil {
			return nil, err
		}
		ft.Min = subSaturated(ft.Min, off)
		ft.Max = subSaturated(ft.Max, off)
		ft.Text += " " + offText
	}
	return ft, nil
}

// parseTimeOffset parses "offset D" and returns D in nanoseconds and the
// canonical text "offset D".
func (p *parser) parseTimeOffset() (int64, string, error) {
	p.next() // offset
	pos := p.cur().pos
	s, err := p.compound(stopsGeneric, "duration after 'offset'")
	if err != nil {
		return 0, "", err
	}
	d, ok := parseDurationLit(s)
	if !ok {
		return 0, "", p.errorf(pos, "cannot parse offset %q as duration", s)
	}
	return d, "offset " + s, nil
}

// parseTimeCompare parses "_time:>A", ">=A", "<A" and "<=A", where A is a
// time or a duration.
func (p *parser) parseTimeCompare() (*FilterTime, error) {
	op := p.cur().text
	p.next()
	if p.isPunct("=") && !p.cur().space {
		p.next()
		op += "="
	}
	now := p.now
	if p.isLikelyTimestamp() {
		t, s, err := p.parseTimeValue()
		if err != nil {
			return nil, err
		}
		ft := &FilterTime{Min: math.MinInt64, Max: math.MaxInt64, Text: op + s}
		switch op {
		case ">":
			ft.Min = addSaturatedNs(t, 1)
		case ">=":
			ft.Min = t
		case "<":
			ft.Max = subSaturated(t, 1)
		case "<=":
			ft.Max = endOfTimeUnit(t, s)
		}
		return ft, nil
	}
	d, s, err := p.parseTimeDuration()
	if err != nil {
		return nil, err
	}
	ft := &FilterTime{Text: op + s}
	switch op {
	case ">":
		ft.Min, ft.Max = math.MinInt64, subSaturated(now, addSaturatedNs(d, 1))
	case ">=":
		ft.Min, ft.Max = math.MinInt64, subSaturated(now, d)
	case "<":
		ft.Min, ft.Max = subSaturated(now, d-1), now
	case "<=":
		ft.Min, ft.Max = subSaturated(now, d), now
	}
	return ft, nil
}

// parseTimeRange parses "_time:[A, B]" with '[' or '(' and ']' or ')'.
func (p *parser) parseTimeRange() (*FilterTime, error) {
	open := p.cur().text
	p.next()
	start, startText, err := p.parseTimeValue()
	if err != nil {
		return nil, err
	}
	if !p.isPunct(",") {
		return nil, p.errorf(p.cur().pos, "missing ',' after the start time %q of the _time range; got %s", startText, p.describe())
	}
	p.next()
	end, endText, err := p.parseTimeValue()
	if err != nil {
		return nil, err
	}
	if !p.isPunct("]") && !p.isPunct(")") {
		return nil, p.errorf(p.cur().pos, "the _time range must end with ']' or ')'; got %s", p.describe())
	}
	closing := p.cur().text
	p.next()
	if open == "(" {
		start = addSaturatedNs(start, 1)
	}
	if closing == "]" {
		end = endOfTimeUnit(end, endText)
	} else {
		end = subSaturated(end, 1)
	}
	return &FilterTime{Min: start, Max: end, Text: open + startText + ", " + endText + closing}, nil
}

// parseTimeEq parses "_time:A" (the whole unit A names) and "_time:D" (the
// last D up to now), with an optional '='.
func (p *parser) parseTimeEq() (*FilterTime, error) {
	prefix := ""
	if p.isPunct("=") {
		p.next()
		prefix = "="
	}
	if p.isLikelyTimestamp() {
		t, s, err := p.parseTimeValue()
		if err != nil {
			return nil, err
		}
		return &FilterTime{Min: t, Max: endOfTimeUnit(t, s), Text: prefix + s}, nil
	}
	d, s, err := p.parseTimeDuration()
	if err != nil {
		return nil, err
	}
	return &FilterTime{Min: subSaturated(p.now, d), Max: p.now, Text: prefix + s}, nil
}

// parseTimeDuration parses the duration of "_time:5m" and returns its
// absolute value in nanoseconds.
func (p *parser) parseTimeDuration() (int64, string, error) {
	pos := p.cur().pos
	s, err := p.compound(stopsGeneric, "duration or time in _time filter")
	if err != nil {
		return 0, "", err
	}
	d, ok := parseDurationLit(s)
	if !ok {
		return 0, "", &ParseError{Query: p.src, Pos: pos,
			Msg:  fmt.Sprintf("cannot parse %q as duration or time in _time filter", s),
			Hint: `use a duration such as 5m or 1h30m, or a time such as 2026-01-02T15:04:05Z`}
	}
	if d < 0 {
		d = -d
	}
	return d, s, nil
}

// isLikelyTimestamp reports whether the current token starts a time rather
// than a duration: "now" or four digits followed by the end, '-', '+' or 'Z'.
func (p *parser) isLikelyTimestamp() bool {
	if p.isKw("now") {
		return true
	}
	s := p.cur().text
	if len(s) < 4 {
		return false
	}
	for i := range 4 {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	if len(s) == 4 {
		return true
	}
	c := s[4]
	return c == '-' || c == '+' || c == 'Z' || c == 'z'
}

// parseTimeValue reads a time bound and returns it in Unix nanoseconds with
// its text.
func (p *parser) parseTimeValue() (int64, string, error) {
	pos := p.cur().pos
	s, err := p.compound(stopsGeneric, "time in _time filter")
	if err != nil {
		return 0, "", err
	}
	t, err := parseTimeLit(s, p.now)
	if err != nil {
		return 0, "", &ParseError{Query: p.src, Pos: pos, Msg: fmt.Sprintf("cannot parse time %q: %s", s, err),
			Hint: "use RFC3339 such as 2026-01-02T15:04:05Z (any precision), a Unix timestamp, now or now-1h"}
	}
	return t, s, nil
}

// parseTimeLit parses a time bound of a _time filter into Unix nanoseconds;
// see the comment at the top of this file for the accepted forms. A time
// without a zone is UTC.
func parseTimeLit(s string, now int64) (int64, error) {
	return ParseTime(s, now, time.UTC)
}

// ParseTime parses a time as VictoriaLogs reads _time filter bounds and the
// start, end and time args of its HTTP API: RFC 3339, partial dates (2026,
// 2026-01, 2026-01-02, 2026-01-02T15, 2026-01-02T15:04), Unix seconds,
// milliseconds, microseconds or nanoseconds (by magnitude), "now", or a
// duration back from now ("5m", "-5m", "now-1h"). A time without a zone
// (neither Z nor ±hh:mm) is in loc.
func ParseTime(s string, now int64, loc *time.Location) (int64, error) {
	if s == "now" {
		return now, nil
	}
	orig := s
	tzOffset := int64(0)
	zoned := strings.HasSuffix(s, "Z")
	if len(s) > 6 {
		tz := s[len(s)-6:]
		if (tz[0] == '-' || tz[0] == '+') && tz[3] == ':' {
			h, err1 := strconv.ParseUint(tz[1:3], 10, 64)
			m, err2 := strconv.ParseUint(tz[4:], 10, 64)
			if err1 != nil || err2 != nil {
				return 0, fmt.Errorf("cannot parse zone offset %q", tz)
			}
			tzOffset = int64(h*3600+m*60) * 1e9
			if tz[0] == '+' {
				tzOffset = -tzOffset
			}
			s = s[:len(s)-6]
			zoned = true
		}
	}
	s = strings.TrimSuffix(s, "Z")
	if s != "" && (s[len(s)-1] > '9' || s[0] == '-') || strings.HasPrefix(s, "now") {
		// A time relative to now: "now-1h" or "1h".
		rel := strings.TrimPrefix(s, "now")
		d, ok := parseDurationLit(rel)
		if !ok {
			return 0, fmt.Errorf("cannot parse duration %q", rel)
		}
		if d < 0 {
			d = -d
		}
		return subSaturated(now, d), nil
	}
	layout := ""
	switch {
	case len(s) == 4:
		layout = "2006"
	case !strings.Contains(orig, "-") || strings.ContainsAny(orig, "eE"):
		ns, ok := parseUnixTimeLit(orig)
		if !ok {
			return 0, fmt.Errorf("cannot parse numeric timestamp")
		}
		return ns, nil
	case len(s) == 7:
		layout = "2006-01"
	case len(s) == 10:
		layout = "2006-01-02"
	case len(s) == 13:
		layout = "2006-01-02T15"
	case len(s) == 16:
		layout = "2006-01-02T15:04"
	case len(s) == 19:
		layout = "2006-01-02T15:04:05"
	}
	if !zoned {
		loc = cmp.Or(loc, time.UTC)
	} else {
		loc = time.UTC
	}
	if layout != "" {
		t, err := time.ParseInLocation(layout, s, loc)
		if err != nil {
			return 0, err
		}
		return checkedUnixNano(t, tzOffset)
	}
	t, err := time.Parse(time.RFC3339Nano, orig)
	if err != nil {
		// RFC3339 without a zone: in loc.
		t, err = time.ParseInLocation("2006-01-02T15:04:05.999999999", orig, loc)
		if err != nil {
			return 0, err
		}
	}
	return checkedUnixNano(t, 0)
}

// checkedUnixNano returns t in Unix nanoseconds plus tzOffset, or an error if
// that does not fit in int64.
func checkedUnixNano(t time.Time, tzOffset int64) (int64, error) {
	// Keep a margin of two days for the zone offset.
	const margin = 2 * 86400
	secs := t.Unix()
	if secs <= math.MinInt64/1_000_000_000+margin || secs >= math.MaxInt64/1_000_000_000-margin {
		return 0, fmt.Errorf("time %s is out of range", t.Format(time.RFC3339))
	}
	return t.UnixNano() + tzOffset, nil
}

// parseUnixTimeLit parses a Unix timestamp: an integer or a decimal fraction
// ("1767312060.123"), optionally in scientific notation ("1.7e9"). The unit
// is guessed from the size of the integer part, as in VictoriaLogs: seconds,
// then milliseconds, microseconds and nanoseconds as it grows.
func parseUnixTimeLit(s string) (int64, bool) {
	intStr, fracStr := s, ""
	if n := strings.IndexAny(s, "eE"); n >= 0 {
		exp, err := strconv.ParseInt(s[n+1:], 10, 64)
		if err != nil || exp > 30 || exp < -30 {
			return 0, false
		}
		var ok bool
		intStr, fracStr, ok = shiftDecimal(s[:n], int(exp))
		if !ok {
			return 0, false
		}
	} else if i, f, ok := strings.Cut(s, "."); ok {
		intStr, fracStr = i, f
	}
	n, err := strconv.ParseInt(intStr, 10, 64)
	if err != nil {
		return 0, false
	}
	for i := 0; i < len(fracStr); i++ {
		if fracStr[i] < '0' || fracStr[i] > '9' {
			return 0, false
		}
	}
	neg := n < 0 || strings.HasPrefix(intStr, "-")
	mult, maxFrac := int64(1), 0
	switch {
	case n <= math.MaxInt64/1_000_000_000 && n >= math.MinInt64/1_000_000_000:
		mult, maxFrac = 1e9, 9
	case n <= math.MaxInt64/1_000_000 && n >= math.MinInt64/1_000_000:
		mult, maxFrac = 1e6, 6
	case n <= math.MaxInt64/1_000 && n >= math.MinInt64/1_000:
		mult, maxFrac = 1e3, 3
	}
	if len(fracStr) > maxFrac {
		fracStr = fracStr[:maxFrac]
	}
	ns := n * mult
	if fracStr != "" {
		frac, _ := strconv.ParseInt(fracStr, 10, 64)
		frac *= mult / int64(math.Pow10(len(fracStr)))
		if neg {
			if ns < math.MinInt64+frac {
				return 0, false
			}
			ns -= frac
		} else {
			if ns > math.MaxInt64-frac {
				return 0, false
			}
			ns += frac
		}
	}
	return ns, true
}

// shiftDecimal moves the decimal point of the decimal number s by exp places
// and returns the integer and fraction digits.
func shiftDecimal(s string, exp int) (string, string, bool) {
	sign := ""
	if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
		if s[0] == '-' {
			sign = "-"
		}
		s = s[1:]
	}
	i, f, _ := strings.Cut(s, ".")
	digits := i + f
	if digits == "" {
		return "", "", false
	}
	for k := 0; k < len(digits); k++ {
		if digits[k] < '0' || digits[k] > '9' {
			return "", "", false
		}
	}
	point := len(i) + exp
	switch {
	case point <= 0:
		return sign + "0", strings.Repeat("0", -point) + digits, true
	case point >= len(digits):
		return sign + digits + strings.Repeat("0", point-len(digits)), "", true
	default:
		return sign + digits[:point], digits[point:], true
	}
}

// endOfTimeUnit returns the last nanosecond of the unit that the time text s,
// parsed as t, names: "2026" names a year, "2026-01-02Z" a day,
// "2026-01-01T00:01:00Z" a second, "....123Z" a millisecond. Unix timestamps
// name a second, millisecond, microsecond or nanosecond by their digit count.
// Other texts, such as "now-1h" or a fraction of other length, name t itself.
func endOfTimeUnit(t int64, s string) int64 {
	s = stripTimeZone(s)
	start := time.Unix(0, t).UTC()
	var end time.Time
	switch {
	case len(s) == 4 && isDigitsOnly(s):
		end = start.AddDate(1, 0, 0)
	case isDigitsOnly(s):
		switch {
		case len(s) <= 10:
			end = start.Add(time.Second)
		case len(s) <= 13:
			end = start.Add(time.Millisecond)
		case len(s) <= 16:
			end = start.Add(time.Microsecond)
		default:
			return t
		}
	case len(s) <= 4 || s[4] != '-':
		// A fractional Unix timestamp, or a relative time.
		i, f, ok := strings.Cut(s, ".")
		if !ok || !isDigitsOnly(i) || !isDigitsOnly(f) {
			return t
		}
		switch len(f) {
		case 3:
			end = start.Add(time.Millisecond)
		case 6:
			end = start.Add(time.Microsecond)
		default:
			return t
		}
	case len(s) == len("2006-01"):
		end = start.AddDate(0, 1, 0)
	case len(s) == len("2006-01-02"):
		end = start.Add(24 * time.Hour)
	case len(s) == len("2006-01-02T15"):
		end = start.Add(time.Hour)
	case len(s) == len("2006-01-02T15:04"):
		end = start.Add(time.Minute)
	case len(s) == len("2006-01-02T15:04:05"):
		end = start.Add(time.Second)
	case len(s) == len("2006-01-02T15:04:05.000"):
		end = start.Add(time.Millisecond)
	case len(s) == len("2006-01-02T15:04:05.000000"):
		end = start.Add(time.Microsecond)
	default:
		return t
	}
	if !end.Before(maxTimeNs) {
		return math.MaxInt64
	}
	return end.UnixNano() - 1
}

// maxTimeNs is the latest time that Unix nanoseconds in int64 can hold.
var maxTimeNs = time.Unix(0, math.MaxInt64)

// stripTimeZone removes a trailing "Z" or "±hh:mm" from a time text.
func stripTimeZone(s string) string {
	if strings.HasSuffix(s, "Z") {
		return s[:len(s)-1]
	}
	if len(s) < 6 {
		return s
	}
	tz := s[len(s)-6:]
	if (tz[0] == '-' || tz[0] == '+') && tz[3] == ':' {
		return s[:len(s)-6]
	}
	return s
}

// isDigitsOnly reports whether s is a non-empty run of ASCII digits.
func isDigitsOnly(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// subSaturated returns a-b clamped to the int64 range; a bound at
// math.MinInt64 or math.MaxInt64 (unbounded) stays where it is.
func subSaturated(a, b int64) int64 {
	if a == math.MaxInt64 || a == math.MinInt64 {
		return a
	}
	if b >= 0 {
		if a < math.MinInt64+b {
			return math.MinInt64
		}
		return a - b
	}
	if a > math.MaxInt64+b {
		return math.MaxInt64
	}
	return a - b
}

// addSaturatedNs returns a+b (b >= 0) clamped to the int64 range, keeping
// unbounded values unbounded.
func addSaturatedNs(a, b int64) int64 {
	if a == math.MaxInt64 || a == math.MinInt64 {
		return a
	}
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
