package query

import (
	"math"
	"strings"
	"time"
)

// This file holds the filters _time:day_range[...] and
// _time:week_range[...], as VictoriaLogs v1.52.1 defines them (its
// filter_day_range.go, filter_week_range.go and parser.go
// parseFilterDayRange, parseFilterWeekRange): type, String, parsing and
// matching.

// FilterDayRange matches rows whose _time, shifted by Offset, falls from
// Start to End (both included) nanoseconds after the start of its day in
// UTC: "_time:day_range[08:00, 18:00)". Offset is the "offset D" written
// after the range, else the zone offset of the parser's now (the server's
// local zone, as in VictoriaLogs). Times before 1970 (after the shift)
// match only at midnight, as in VictoriaLogs, whose remainder of the day is
// negative there. Text is "[08:00, 18:00) offset 2h" as written, for
// String().
type FilterDayRange struct {
	Start, End, Offset int64
	Text               string
}

// FilterWeekRange matches rows whose _time, shifted by Offset, falls on a
// weekday from Start to End (both included; Sunday is 0, so a range that
// wraps past Saturday matches nothing), as in
// "_time:week_range[Mon, Fri]". Offset and Text are as in FilterDayRange.
type FilterWeekRange struct {
	Start, End time.Weekday
	Offset     int64
	Text       string
}

func (*FilterDayRange) isFilter()  {}
func (*FilterWeekRange) isFilter() {}

func (f *FilterDayRange) String() string  { return "_time:day_range" + f.Text }
func (f *FilterWeekRange) String() string { return "_time:week_range" + f.Text }

// parseDayWeekRange parses "day_range[A, B] offset D" or the same of
// week_range after "_time:"; the current token is the name.
func (p *parser) parseDayWeekRange() (Filter, error) {
	name := strings.ToLower(p.cur().text)
	p.next()
	if !p.isPunct("[") && !p.isPunct("(") {
		return nil, p.errorHint(p.cur().pos, "write _time:"+name+"[A, B]", "missing '[' or '(' after %s; got %s", name, p.describe())
	}
	open := p.cur().text
	p.next()
	var bounds [2]int64
	var texts [2]string
	for i, which := range []string{"start", "end"} {
		pos := p.cur().pos
		s, err := p.compound(stopsGeneric, which+" of "+name)
		if err != nil {
			return nil, err
		}
		n, ok := int64(0), false
		if name == "day_range" {
			n, ok = parseHHMM(s)
		} else {
			n, ok = parseWeekday(s)
		}
		if !ok {
			if name == "day_range" {
				return nil, p.errorHint(pos, "write the time of day as hh:mm or hhmm: _time:day_range[08:00, 18:00)", "cannot parse %s %q of day_range as hh:mm", which, s)
			}
			return nil, p.errorHint(pos, "write a weekday as Sun, Mon, ... or Sunday, Monday, ...: _time:week_range[Mon, Fri]", "cannot parse %s %q of week_range as a weekday", which, s)
		}
		bounds[i], texts[i] = n, s
		if i == 0 {
			if err := p.expectPunct(",", "between the bounds of "+name); err != nil {
				return nil, err
			}
		}
	}
	if !p.isPunct("]") && !p.isPunct(")") {
		return nil, p.errorf(p.cur().pos, "%s must end with ']' or ')'; got %s", name, p.describe())
	}
	closing := p.cur().text
	p.next()
	offset := p.zoneOffset
	offText := ""
	if p.isKw("offset") {
		d, s, err := p.parseTimeOffset()
		if err != nil {
			return nil, err
		}
		offset, offText = d, " "+s
	}
	text := open + texts[0] + ", " + texts[1] + closing + offText
	start, end := bounds[0], bounds[1]
	if name == "day_range" {
		// An exclusive bound moves by 1ns; an end before 00:00 wraps to the
		// day's last nanosecond.
		if open == "(" {
			start++
		}
		if closing == ")" {
			if end--; end < 0 {
				end = nsPerDay - 1
			}
		}
		return &FilterDayRange{Start: start, End: end, Offset: offset, Text: text}, nil
	}
	// An exclusive bound moves by a day, wrapping round the week.
	if open == "(" {
		if start++; start > int64(time.Saturday) {
			start = int64(time.Sunday)
		}
	}
	if closing == ")" {
		if end--; end < int64(time.Sunday) {
			end = int64(time.Saturday)
		}
	}
	return &FilterWeekRange{Start: time.Weekday(start), End: time.Weekday(end), Offset: offset, Text: text}, nil
}

// parseHHMM reads "hh:mm" or "hhmm" (hours up to 24, minutes up to 60) as
// nanoseconds after midnight, at most the day's last nanosecond.
func parseHHMM(s string) (int64, bool) {
	var h, m string
	switch {
	case len(s) == 5 && s[2] == ':':
		h, m = s[:2], s[3:]
	case len(s) == 4:
		h, m = s[:2], s[2:]
	default:
		return 0, false
	}
	hours, ok1 := twoDigits(h)
	minutes, ok2 := twoDigits(m)
	if !ok1 || !ok2 || hours > 24 || minutes > 60 {
		return 0, false
	}
	return min(hours*int64(time.Hour)+minutes*int64(time.Minute), nsPerDay-1), true
}

// twoDigits reads two decimal digits.
func twoDigits(s string) (int64, bool) {
	if len(s) != 2 || s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9' {
		return 0, false
	}
	return int64(s[0]-'0')*10 + int64(s[1]-'0'), true
}

// parseWeekday reads a weekday's English name or its first three letters,
// in any case.
func parseWeekday(s string) (int64, bool) {
	s = strings.ToLower(s)
	for d := time.Sunday; d <= time.Saturday; d++ {
		name := strings.ToLower(d.String())
		if s == name || s == name[:3] {
			return int64(d), true
		}
	}
	return 0, false
}

// addSaturatedInt returns a+b, held at the int64 bounds.
func addSaturatedInt(a, b int64) int64 {
	switch {
	case b > 0 && a > math.MaxInt64-b:
		return math.MaxInt64
	case b < 0 && a < math.MinInt64-b:
		return math.MinInt64
	}
	return a + b
}

type matchDayRange struct{ f FilterDayRange }

func (m *matchDayRange) match(r *Row) bool {
	switch {
	case m.f.Start > m.f.End:
		return false
	case m.f.Start == 0 && m.f.End == nsPerDay-1:
		return true // the whole day: every row, as in VictoriaLogs
	}
	t, ok := rowTime(r)
	if !ok {
		return false
	}
	d := addSaturatedInt(t, m.f.Offset) % nsPerDay
	return d >= m.f.Start && d <= m.f.End
}

type matchWeekRange struct{ f FilterWeekRange }

func (m *matchWeekRange) match(r *Row) bool {
	switch {
	case m.f.Start > m.f.End:
		return false
	case m.f.Start == time.Sunday && m.f.End == time.Saturday:
		return true // the whole week: every row, as in VictoriaLogs
	}
	t, ok := rowTime(r)
	if !ok {
		return false
	}
	d := time.Unix(0, addSaturatedInt(t, m.f.Offset)).UTC().Weekday()
	return d >= m.f.Start && d <= m.f.End
}
