package query

import (
	"math"
	"testing"
	"time"
)

// rfc3339 returns the Unix nanoseconds of an RFC3339 time.
func rfc3339(t *testing.T, s string) int64 {
	t.Helper()
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("bad test time %q: %s", s, err)
	}
	return tm.UnixNano()
}

func TestParseTimeFilter(t *testing.T) {
	now := testNow.UnixNano()
	const minute, hour = int64(time.Minute), int64(time.Hour)
	f := func(in string, wantMin, wantMax int64) {
		t.Helper()
		fl, err := ParseFilter(in, testNow)
		if err != nil {
			t.Fatalf("ParseFilter(%q): unexpected error: %s", in, err)
		}
		ft, ok := fl.(*FilterTime)
		if !ok {
			t.Fatalf("ParseFilter(%q) = %T; want *FilterTime", in, fl)
		}
		if ft.Min != wantMin || ft.Max != wantMax {
			t.Fatalf("ParseFilter(%q) = [%d, %d] (%s, %s)\nwant [%d, %d] (%s, %s)", in,
				ft.Min, ft.Max, fmtNs(ft.Min), fmtNs(ft.Max), wantMin, wantMax, fmtNs(wantMin), fmtNs(wantMax))
		}
	}
	ts := func(s string) int64 { return rfc3339(t, s) }

	// Relative to now.
	f("_time:5m", now-5*minute, now)
	f("_time:1h30m", now-90*minute, now)
	f("_time:-5m", now-5*minute, now)
	f("_time:<5m", now-5*minute+1, now)
	f("_time:<=5m", now-5*minute, now)
	f("_time:>5m", math.MinInt64, now-5*minute-1)
	f("_time:>=5m", math.MinInt64, now-5*minute)
	f("_time:5m offset 1h", now-hour-5*minute, now-hour)
	f("_time:offset 1h", math.MinInt64, now-hour)
	f("_time:[now-1h, now]", now-hour, now)
	f("_time:[now-1h, now)", now-hour, now-1)
	f("_time:(now-1h, now]", now-hour+1, now)
	f("_time:[1h, now]", now-hour, now)
	f("_time:[now-1d, now-1h]", now-24*hour, now-hour)

	// Whole units.
	f("_time:2026", ts("2026-01-01T00:00:00Z"), ts("2027-01-01T00:00:00Z")-1)
	f("_time:2026Z", ts("2026-01-01T00:00:00Z"), ts("2027-01-01T00:00:00Z")-1)
	f("_time:2026-02", ts("2026-02-01T00:00:00Z"), ts("2026-03-01T00:00:00Z")-1)
	f("_time:2026-12Z", ts("2026-12-01T00:00:00Z"), ts("2027-01-01T00:00:00Z")-1)
	f("_time:2026-01-02Z", ts("2026-01-02T00:00:00Z"), ts("2026-01-03T00:00:00Z")-1)
	f("_time:2026-01-02", ts("2026-01-02T00:00:00Z"), ts("2026-01-03T00:00:00Z")-1)
	f("_time:2026-01-02T03Z", ts("2026-01-02T03:00:00Z"), ts("2026-01-02T04:00:00Z")-1)
	f("_time:2026-01-01T00:01Z", ts("2026-01-01T00:01:00Z"), ts("2026-01-01T00:02:00Z")-1)
	f("_time:2026-01-01T00:01:00Z", ts("2026-01-01T00:01:00Z"), ts("2026-01-01T00:01:01Z")-1)
	f("_time:=2026-01-01T00:01:00Z", ts("2026-01-01T00:01:00Z"), ts("2026-01-01T00:01:01Z")-1)
	f("_time:2026-01-01T00:01:00.123Z", ts("2026-01-01T00:01:00.123Z"), ts("2026-01-01T00:01:00.124Z")-1)
	f("_time:2026-01-01T00:01:00.123456Z", ts("2026-01-01T00:01:00.123456Z"), ts("2026-01-01T00:01:00.123457Z")-1)
	f("_time:2026-01-01T00:01:00.5Z", ts("2026-01-01T00:01:00.5Z"), ts("2026-01-01T00:01:00.5Z"))
	f("_time:2026-01-01T00:01:00.123456789Z", ts("2026-01-01T00:01:00.123456789Z"), ts("2026-01-01T00:01:00.123456789Z"))
	f("_time:2026-01-02T02:30:00+02:00", ts("2026-01-02T00:30:00Z"), ts("2026-01-02T00:30:01Z")-1)

	// Ranges: '(' excludes the start, ')' the end, ']' takes the whole unit.
	f("_time:[2026-01-01T00:00:00Z, 2026-01-01T00:01:00Z)", ts("2026-01-01T00:00:00Z"), ts("2026-01-01T00:01:00Z")-1)
	f("_time:[2026-01-01T00:00:00Z, 2026-01-01T00:01:00Z]", ts("2026-01-01T00:00:00Z"), ts("2026-01-01T00:01:01Z")-1)
	f("_time:[2026-01-01T00:00:00Z, 2026-01-01T00:01:00.000Z]", ts("2026-01-01T00:00:00Z"), ts("2026-01-01T00:01:00.001Z")-1)
	f("_time:(2026-01-01T00:00:00Z, 2026-01-01T00:01:00Z)", ts("2026-01-01T00:00:00Z")+1, ts("2026-01-01T00:01:00Z")-1)
	f("_time:[2026-01-01T00:00:10.5Z, 2026-01-01T00:00:10.6Z)", ts("2026-01-01T00:00:10.5Z"), ts("2026-01-01T00:00:10.6Z")-1)
	f("_time:[2026-01-02T02:30:00+02:00, 2026-01-02T04:00:00+02:00]", ts("2026-01-02T00:30:00Z"), ts("2026-01-02T02:00:01Z")-1)
	f("_time:[2026-01-01Z, 2026-01-02Z]", ts("2026-01-01T00:00:00Z"), ts("2026-01-03T00:00:00Z")-1)
	f("_time:[2026-01-01, 2026-01-02)", ts("2026-01-01T00:00:00Z"), ts("2026-01-02T00:00:00Z")-1)
	f("_time:[2026-01-01T00:00:00, 2026-01-01T00:00:01.5]", ts("2026-01-01T00:00:00Z"), ts("2026-01-01T00:00:01.5Z"))

	// Unix timestamps: the digit count names the unit.
	f("_time:[1767225600, 1767225660)", ts("2026-01-01T00:00:00Z"), ts("2026-01-01T00:01:00Z")-1)
	f("_time:[1767225600, 1767225660]", ts("2026-01-01T00:00:00Z"), ts("2026-01-01T00:01:01Z")-1)
	f("_time:[1767225600000, 1767225600123]", ts("2026-01-01T00:00:00Z"), ts("2026-01-01T00:00:00.124Z")-1)
	f("_time:[1767225600.5, 1767225600.123]", ts("2026-01-01T00:00:00.5Z"), ts("2026-01-01T00:00:00.124Z")-1)
	f("_time:[1.7672256e9, 1767225600123456]", ts("2026-01-01T00:00:00Z"), ts("2026-01-01T00:00:00.123457Z")-1)

	// One-sided bounds.
	f("_time:>=2026-01-02T00:00:00Z", ts("2026-01-02T00:00:00Z"), math.MaxInt64)
	f("_time:>2026-01-02T00:00:00Z", ts("2026-01-02T00:00:00Z")+1, math.MaxInt64)
	f("_time:<2026-01-01T00:00:00Z", math.MinInt64, ts("2026-01-01T00:00:00Z")-1)
	f("_time:<=2026-01-01T00:01:00Z", math.MinInt64, ts("2026-01-01T00:01:01Z")-1)
	f("_time:<=2026-01-01T00:00:00.1Z", math.MinInt64, ts("2026-01-01T00:00:00.1Z"))
	f("_time:<=2026-01-01T00:00:00.08Z", math.MinInt64, ts("2026-01-01T00:00:00.08Z"))
	f("_time:<=2026-01-02Z", math.MinInt64, ts("2026-01-03T00:00:00Z")-1)
	f("_time:>=2026-01-02Z offset 1d", ts("2026-01-01T00:00:00Z"), math.MaxInt64)
	f("_time:<=now", math.MinInt64, now)
	f("_time:>now-1h", now-hour+1, math.MaxInt64)
}

// fmtNs formats Unix nanoseconds for test messages.
func fmtNs(ns int64) string {
	switch ns {
	case math.MinInt64:
		return "-inf"
	case math.MaxInt64:
		return "+inf"
	}
	return time.Unix(0, ns).UTC().Format(time.RFC3339Nano)
}

func TestParseTimeLit(t *testing.T) {
	now := testNow.UnixNano()
	f := func(in string, want int64) {
		t.Helper()
		got, err := parseTimeLit(in, now)
		if err != nil {
			t.Fatalf("parseTimeLit(%q): unexpected error: %s", in, err)
		}
		if got != want {
			t.Fatalf("parseTimeLit(%q) = %d (%s); want %d (%s)", in, got, fmtNs(got), want, fmtNs(want))
		}
	}
	ts := func(s string) int64 { return rfc3339(t, s) }
	f("now", now)
	f("now-1h", now-int64(time.Hour))
	f("now-1.5h", now-int64(90*time.Minute))
	f("5m", now-int64(5*time.Minute))
	f("2026", ts("2026-01-01T00:00:00Z"))
	f("2026-03", ts("2026-03-01T00:00:00Z"))
	f("2026-03-04", ts("2026-03-04T00:00:00Z"))
	f("2026-03-04T05", ts("2026-03-04T05:00:00Z"))
	f("2026-03-04T05:06", ts("2026-03-04T05:06:00Z"))
	f("2026-03-04T05:06:07", ts("2026-03-04T05:06:07Z"))
	f("2026-03-04T05:06:07Z", ts("2026-03-04T05:06:07Z"))
	f("2026-03-04T05:06:07.08Z", ts("2026-03-04T05:06:07.08Z"))
	f("2026-03-04T05:06:07.123456789Z", ts("2026-03-04T05:06:07.123456789Z"))
	f("2026-03-04T05:06:07-01:30", ts("2026-03-04T06:36:07Z"))
	f("2026-03-04T05:06:07.5+02:00", ts("2026-03-04T03:06:07.5Z"))
	f("2026-03-04T05:06+02:00", ts("2026-03-04T03:06:00Z"))
	f("1767225600", ts("2026-01-01T00:00:00Z"))
	f("1767225600123", ts("2026-01-01T00:00:00.123Z"))
	f("1767225600123456", ts("2026-01-01T00:00:00.123456Z"))
	f("1767225600123456789", ts("2026-01-01T00:00:00.123456789Z"))
	f("1767225600.25", ts("2026-01-01T00:00:00.25Z"))
	f("1.7672256e9", ts("2026-01-01T00:00:00Z"))
	f("0", 0)

	bad := func(in string) {
		t.Helper()
		if got, err := parseTimeLit(in, now); err == nil {
			t.Fatalf("parseTimeLit(%q) = %d; want an error", in, got)
		}
	}
	bad("")
	bad("abc")
	bad("now+1h")
	bad("2026-13-01")
	bad("2026-01-32")
	bad("2026-01-01T24:00:00Z")
	bad("2026-01-01X")
	bad("12.34.56")
	bad("99999999999999999999")
}

// TestParseTimeZone: ParseTime reads a time without a zone in the given
// location (the HTTP API's start and end use the local zone, as
// VictoriaLogs does), and one with Z or an offset as written.
func TestParseTimeZone(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip(err)
	}
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC).UnixNano()
	for _, c := range []struct {
		in   string
		want string
	}{
		{"2026-11-22T09", "2026-11-22T14:00:00Z"},
		{"2026-11-22T09Z", "2026-11-22T09:00:00Z"},
		{"2026-11-22T09:30:00+01:00", "2026-11-22T08:30:00Z"},
		{"2026-11-22", "2026-11-22T05:00:00Z"},
		{"2026-11-22T09:30:00.5", "2026-11-22T14:30:00.5Z"},
		{"2026-11-22T09:30:00.5Z", "2026-11-22T09:30:00.5Z"},
		{"1795338000", "2026-11-22T09:00:00Z"},
		{"1795338000123", "2026-11-22T09:00:00.123Z"},
		{"-5m", "2026-11-22T09:55:00Z"},
		{"now-1h", "2026-11-22T09:00:00Z"},
		{"now", "2026-11-22T10:00:00Z"},
	} {
		ns, err := ParseTime(c.in, now, ny)
		if got := time.Unix(0, ns).UTC().Format(time.RFC3339Nano); err != nil || got != c.want {
			t.Errorf("ParseTime(%q) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"yesterday", "2026-13-01", "12:00", "1h30x"} {
		if _, err := ParseTime(bad, now, ny); err == nil {
			t.Errorf("ParseTime(%q): no error", bad)
		}
	}
}
