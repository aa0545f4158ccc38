package timeparse

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spate-io/spate/internal/bytesutil"
)

// parseISO parses what ParseRFC3339's fast path leaves: a date, 'T', 't'
// or ' ', a time with seconds (the hour may have one digit), an optional fraction after '.' or ','
// (any length; digits past nanoseconds are dropped) and an optional zone
// (Z, ±HH:MM, ±HHMM, ±HH); without one the wall time is in loc.
func parseISO(s string, loc *time.Location) (int64, bool) {
	if len(s) >= 18 && len(s) < 64 && s[12] == ':' && s[11] >= '0' && s[11] <= '9' {
		// A one-digit hour, as package time reads it ("2026-11-24 9:00:00"):
		// read it with the zero in front (a rare path; it allocates).
		var b [64]byte
		n := copy(b[:], s[:11])
		b[n] = '0'
		n++
		n += copy(b[n:], s[11:])
		return parseISO(string(b[:n]), loc)
	}
	if len(s) < 19 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || s[13] != ':' || s[16] != ':' {
		return 0, false
	}
	year, ok1 := bytesutil.ParseDigits(s[0:4])
	month, ok2 := bytesutil.ParseDigits(s[5:7])
	day, ok3 := bytesutil.ParseDigits(s[8:10])
	hour, ok4 := bytesutil.ParseDigits(s[11:13])
	minute, ok5 := bytesutil.ParseDigits(s[14:16])
	sec, ok6 := bytesutil.ParseDigits(s[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) {
		return 0, false
	}
	frac, rest, ok := fraction(s[19:])
	if !ok {
		return 0, false
	}
	return assemble(year, month, day, hour, minute, sec, frac, rest, loc)
}

// fraction reads an optional ".digits" or ",digits" at the start of s and
// returns it in nanoseconds with what follows.
func fraction(s string) (int64, string, bool) {
	if len(s) == 0 || s[0] != '.' && s[0] != ',' {
		return 0, s, true
	}
	i, scale, frac := 1, int64(1e9), int64(0)
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		if i <= 9 {
			scale /= 10
			frac += int64(s[i]-'0') * scale
		}
		i++
	}
	if i == 1 {
		return 0, s, false
	}
	return frac, s[i:], true
}

// zone parses a zone suffix: "" (none), "Z", "z", "UTC", or ±HH:MM, ±HHMM,
// ±HH, optionally after one space; off is seconds east of UTC.
func zone(s string) (off int, named, ok bool) {
	s = strings.TrimPrefix(s, " ")
	switch s {
	case "":
		return 0, false, true
	case "Z", "z", "UTC", "GMT":
		return 0, true, true
	}
	if s[0] != '+' && s[0] != '-' {
		return 0, false, false
	}
	d := s[1:]
	var h, m int
	var okh, okm bool
	switch {
	case len(d) == 5 && d[2] == ':':
		h, okh = bytesutil.ParseDigits(d[:2])
		m, okm = bytesutil.ParseDigits(d[3:])
	case len(d) == 4:
		h, okh = bytesutil.ParseDigits(d[:2])
		m, okm = bytesutil.ParseDigits(d[2:])
	case len(d) == 2:
		h, okh = bytesutil.ParseDigits(d)
		okm = true
	}
	if !okh || !okm || h > 23 || m > 59 {
		return 0, false, false
	}
	off = h*3600 + m*60
	if s[0] == '-' {
		off = -off
	}
	return off, true, true
}

// assemble checks the fields and returns the instant: the zone in rest,
// or the wall time in loc when rest names none.
func assemble(year, month, day, hour, minute, sec int, frac int64, rest string, loc *time.Location) (int64, bool) {
	if month < 1 || month > 12 || day < 1 || day > daysIn(month, year) || hour > 23 || minute > 59 || sec > 59 ||
		year <= 1678 || year >= 2261 {
		return 0, false
	}
	off, named, ok := zone(rest)
	if !ok {
		return 0, false
	}
	if !named {
		if loc == nil {
			loc = time.Local
		}
		return time.Date(year, time.Month(month), day, hour, minute, sec, int(frac), loc).UnixNano(), true
	}
	days := daysFromCivil(year, month, day)
	return (days*86400+int64(hour*3600+minute*60+sec-off))*1e9 + frac, true
}

// months are the English month abbreviations of CLF and syslog.
var months = [12]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

func monthOf(s string) (int, bool) {
	for i, m := range months {
		if s == m {
			return i + 1, true
		}
	}
	return 0, false
}

// parseCLF parses "02/Jan/2006:15:04:05 -0700" (the zone optional, a
// fraction allowed after the seconds).
func parseCLF(s string, loc *time.Location) (int64, bool) {
	if len(s) < 20 || s[2] != '/' || s[6] != '/' || s[11] != ':' || s[14] != ':' || s[17] != ':' {
		return 0, false
	}
	day, ok1 := bytesutil.ParseDigits(s[0:2])
	month, ok2 := monthOf(s[3:6])
	year, ok3 := bytesutil.ParseDigits(s[7:11])
	hour, ok4 := bytesutil.ParseDigits(s[12:14])
	minute, ok5 := bytesutil.ParseDigits(s[15:17])
	sec, ok6 := bytesutil.ParseDigits(s[18:20])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) {
		return 0, false
	}
	frac, rest, ok := fraction(s[20:])
	if !ok {
		return 0, false
	}
	return assemble(year, month, day, hour, minute, sec, frac, rest, loc)
}

// parseSyslog parses RFC 3164's "Jan _2 15:04:05" (a fraction and a zone
// allowed after it). The year is now's in loc, or the year before when
// that would put the time more than a day after now (December's lines
// read in January).
func parseSyslog(s string, loc *time.Location, now time.Time) (int64, bool) {
	if len(s) < 15 || s[3] != ' ' || s[6] != ' ' || s[9] != ':' || s[12] != ':' {
		return 0, false
	}
	month, ok1 := monthOf(s[0:3])
	dd := s[4:6]
	if dd[0] == ' ' {
		dd = dd[1:]
	}
	day, ok2 := bytesutil.ParseDigits(dd)
	hour, ok3 := bytesutil.ParseDigits(s[7:9])
	minute, ok4 := bytesutil.ParseDigits(s[10:12])
	sec, ok5 := bytesutil.ParseDigits(s[13:15])
	if !(ok1 && ok2 && ok3 && ok4 && ok5) {
		return 0, false
	}
	frac, rest, ok := fraction(s[15:])
	if !ok {
		return 0, false
	}
	if loc == nil {
		loc = time.Local
	}
	year := now.In(loc).Year()
	if month == 2 && day == 29 && daysIn(2, year) == 28 {
		year-- // only a leap year has it
	}
	ns, ok := assemble(year, month, day, hour, minute, sec, frac, rest, loc)
	if ok && ns > now.Add(24*time.Hour).UnixNano() {
		return assemble(year-1, month, day, hour, minute, sec, frac, rest, loc)
	}
	return ns, ok
}

// A Layout reads time values one way, for values whose shape detection
// would miss or misread (--time-format). The zero Layout detects (ParseIn).
type Layout struct {
	name string
	unit int64  // Unix timestamps in this unit (ns per unit); 0 for others
	go_  string // a Go reference layout
}

// Layouts are the named layouts ParseLayout takes besides Go reference
// layouts.
var Layouts = []string{"auto", "rfc3339", "unix", "unix_s", "unix_ms", "unix_us", "unix_ns", "clf", "syslog"}

// ParseLayout returns the layout named by spec: one of Layouts, or a Go
// reference layout such as "2006-01-02 15:04:05.000" (see package time;
// without a zone in it, values are wall times in the location given to
// Parse).
func ParseLayout(spec string) (Layout, error) {
	switch spec {
	case "", "auto":
		return Layout{}, nil
	case "rfc3339", "clf", "syslog", "unix":
		return Layout{name: spec}, nil
	case "unix_s":
		return Layout{name: spec, unit: 1e9}, nil
	case "unix_ms":
		return Layout{name: spec, unit: 1e6}, nil
	case "unix_us":
		return Layout{name: spec, unit: 1e3}, nil
	case "unix_ns":
		return Layout{name: spec, unit: 1}, nil
	}
	if !strings.ContainsAny(spec, "0123456789") || strings.Contains(spec, "%") {
		return Layout{}, fmt.Errorf("time format %q: want one of %s, or a Go layout of the reference time Mon Jan 2 15:04:05 MST 2006 such as \"2006-01-02 15:04:05.000\"", spec, strings.Join(Layouts, ", "))
	}
	// A layout must be able to read back the reference time it formats.
	ref := time.Date(2006, 1, 2, 15, 4, 5, 123456789, time.UTC)
	if _, err := time.Parse(spec, ref.Format(spec)); err != nil {
		return Layout{}, fmt.Errorf("time format %q cannot read the times it describes: %w", spec, err)
	}
	if !strings.Contains(spec, "2006") && !strings.Contains(spec, "06") {
		return Layout{}, errors.New("time format " + fmt.Sprintf("%q", spec) + " has no year (2006 or 06)")
	}
	return Layout{name: "go", go_: spec}, nil
}

// String returns the spec the layout was made from.
func (l Layout) String() string {
	switch l.name {
	case "":
		return "auto"
	case "go":
		return l.go_
	}
	return l.name
}

// Parse reads s with the layout; values without a zone are in loc.
func (l Layout) Parse(s string, loc *time.Location) (int64, bool) {
	if loc == nil {
		loc = time.Local
	}
	switch l.name {
	case "":
		return ParseIn(s, loc)
	case "rfc3339":
		if len(s) >= 19 && s[4] == '-' {
			return ParseIn(s, loc)
		}
		return 0, false
	case "clf":
		return parseCLF(s, loc)
	case "syslog":
		return parseSyslog(s, loc, time.Now())
	case "unix":
		return parseUnix(s)
	case "go":
		t, err := time.ParseInLocation(l.go_, s, loc)
		if err != nil || t.Before(minTime) || t.After(maxTime) {
			return 0, false
		}
		return t.UnixNano(), true
	}
	// A Unix timestamp in a fixed unit.
	return parseUnixIn(s, l.unit)
}
