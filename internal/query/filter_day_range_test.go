package query

import (
	"math"
	"testing"
	"time"
)

func TestDayWeekRangeParse(t *testing.T) {
	h := int64(time.Hour)
	day := func(q string, now time.Time, start, end, offset int64) {
		t.Helper()
		f, err := ParseFilter(q, now)
		if err != nil {
			t.Fatalf("%s: %s", q, err)
		}
		got := f.(*FilterDayRange)
		if got.Start != start || got.End != end || got.Offset != offset {
			t.Fatalf("%s: got [%d, %d] offset %d; want [%d, %d] offset %d", q, got.Start, got.End, got.Offset, start, end, offset)
		}
	}
	day(`_time:day_range[08:00, 18:00]`, testNow, 8*h, 18*h, 0)
	day(`_time:day_range(08:00, 18:00)`, testNow, 8*h+1, 18*h-1, 0)
	day(`_time:day_range[00:00, 00:00)`, testNow, 0, 24*h-1, 0) // an end before 00:00 wraps
	day(`_time:day_range[2400, 24:60]`, testNow, 24*h-1, 24*h-1, 0)
	day(`_time:day_range[08:00, 18:00] offset 2h`, testNow, 8*h, 18*h, 2*h)
	// Without an offset, the zone of now (the server's local zone).
	day(`_time:day_range[08:00, 18:00]`, testNow.In(time.FixedZone("X", -5*3600)), 8*h, 18*h, -5*h)
	day(`_time:day_range[08:00, 18:00] offset 0s`, testNow.In(time.FixedZone("X", -5*3600)), 8*h, 18*h, 0)

	week := func(q string, start, end time.Weekday) {
		t.Helper()
		f, err := ParseFilter(q, testNow)
		if err != nil {
			t.Fatalf("%s: %s", q, err)
		}
		got := f.(*FilterWeekRange)
		if got.Start != start || got.End != end {
			t.Fatalf("%s: got [%s, %s]; want [%s, %s]", q, got.Start, got.End, start, end)
		}
	}
	week(`_time:week_range[Mon, Fri]`, time.Monday, time.Friday)
	week(`_time:week_range(SUNDAY, sat)`, time.Monday, time.Friday)
	week(`_time:week_range(sat, sun)`, time.Sunday, time.Saturday) // both wrap
}

func TestDayWeekRangeMatch(t *testing.T) {
	at := func(s string) *Row {
		ts, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return &Row{Time: ts.UnixNano(), HasTime: true}
	}
	f := func(q string, r *Row, want bool) {
		t.Helper()
		flt, err := ParseFilter(q, testNow)
		if err != nil {
			t.Fatalf("%s: %s", q, err)
		}
		m, err := compileFilter(flt)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.match(r); got != want {
			t.Fatalf("%s on %+v: got %v, want %v", q, r, got, want)
		}
	}
	f(`_time:day_range[08:00, 18:00)`, at("2026-01-05T08:00:00Z"), true)
	f(`_time:day_range[08:00, 18:00)`, at("2026-01-05T18:00:00Z"), false)
	f(`_time:day_range[08:00, 18:00)`, at("2026-01-05T17:59:59.999999999Z"), true)
	f(`_time:day_range[08:00, 18:00) offset 2h`, at("2026-01-05T06:00:00Z"), true)
	f(`_time:day_range[08:00, 18:00) offset 2h`, at("2026-01-05T16:00:00Z"), false)
	f(`_time:day_range[08:00, 18:00)`, at("2026-01-05T10:00:00+05:00"), false) // 05:00 UTC
	// Before 1970 only midnight matches, as in VictoriaLogs.
	f(`_time:day_range[00:00, 23:00]`, at("1969-12-31T10:00:00Z"), false)
	f(`_time:day_range[00:00, 23:00]`, at("1969-12-31T00:00:00Z"), true)
	// The whole day matches every row, even one without a time; a range
	// that ends before it starts matches none.
	f(`_time:day_range[00:00, 24:00]`, &Row{}, true)
	f(`_time:day_range[00:00, 23:59]`, &Row{}, false)
	f(`_time:day_range[18:00, 08:00]`, at("2026-01-05T20:00:00Z"), false)

	f(`_time:week_range[Mon, Fri]`, at("2026-01-05T00:00:00Z"), true) // Monday
	f(`_time:week_range[Mon, Fri]`, at("2026-01-04T23:59:59Z"), false)
	f(`_time:week_range[Mon, Fri] offset 1s`, at("2026-01-04T23:59:59Z"), true)
	f(`_time:week_range[Mon, Fri] offset -1h`, at("2026-01-05T00:30:00Z"), false)
	f(`_time:week_range[Sat, Sun]`, at("2026-01-04T12:00:00Z"), false) // wraps: nothing
	f(`_time:week_range[Sun, Sat]`, &Row{}, true)
	f(`_time:week_range[Sun, Fri]`, &Row{}, false)
	f(`_time:week_range[Thu, Thu]`, at("1970-01-01T00:00:00Z"), true)
	f(`_time:week_range[Wed, Wed]`, at("1969-12-31T12:00:00Z"), true)
	if addSaturatedInt(math.MaxInt64, 1) != math.MaxInt64 || addSaturatedInt(math.MinInt64, -1) != math.MinInt64 {
		t.Fatal("addSaturatedInt does not saturate")
	}
}
