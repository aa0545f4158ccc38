package timeparse

import (
	"math/rand/v2"
	"testing"
	"time"
	_ "time/tzdata" // the zones below, whatever the machine has
)

func TestParseInFormats(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	utc := func(y int, mo time.Month, d, h, mi, s, ns int) int64 {
		return time.Date(y, mo, d, h, mi, s, ns, time.UTC).UnixNano()
	}
	now := time.Now()
	for _, c := range []struct {
		in   string
		loc  *time.Location
		want int64
	}{
		// RFC 3339 relatives.
		{"2026-11-24 20:00:00", time.UTC, utc(2026, 11, 24, 20, 0, 0, 0)},
		{"2026-11-24 20:00:00", berlin, utc(2026, 11, 24, 19, 0, 0, 0)},
		{"2026-07-24T20:00:00", berlin, utc(2026, 7, 24, 18, 0, 0, 0)}, // summer time
		{"2026-11-24T20:00:00.123", time.UTC, utc(2026, 11, 24, 20, 0, 0, 123e6)},
		{"2026-11-24 20:00:00,123", time.UTC, utc(2026, 11, 24, 20, 0, 0, 123e6)}, // Python logging
		{"2026-11-24 9:05:00", time.UTC, utc(2026, 11, 24, 9, 5, 0, 0)},           // a one-digit hour, as package time reads it
		{"2026-11-24T20:00:00.123456789012Z", time.UTC, utc(2026, 11, 24, 20, 0, 0, 123456789)},
		{"2026-11-24T20:00:00+0100", time.UTC, utc(2026, 11, 24, 19, 0, 0, 0)},
		{"2026-11-24T20:00:00-05", time.UTC, utc(2026, 11, 25, 1, 0, 0, 0)},
		{"2026-11-24 20:00:00 +01:00", time.UTC, utc(2026, 11, 24, 19, 0, 0, 0)},
		{"2026-11-24 20:00:00 UTC", berlin, utc(2026, 11, 24, 20, 0, 0, 0)},
		{"2026-11-24T20:00:00.5+05:30", time.UTC, utc(2026, 11, 24, 14, 30, 0, 5e8)},
		// nginx and Apache.
		{"10/Oct/2026:13:55:36 -0700", time.UTC, utc(2026, 10, 10, 20, 55, 36, 0)},
		{"10/Oct/2026:13:55:36 +0000", berlin, utc(2026, 10, 10, 13, 55, 36, 0)},
		{"10/Oct/2026:13:55:36", berlin, utc(2026, 10, 10, 11, 55, 36, 0)},
		{"10/Oct/2026:13:55:36.250 +0000", time.UTC, utc(2026, 10, 10, 13, 55, 36, 25e7)},
		// Unix, as before.
		{"1767323045", berlin, utc(2026, 1, 2, 3, 4, 5, 0)},
		{"1767323045123", berlin, utc(2026, 1, 2, 3, 4, 5, 123e6)},
	} {
		got, ok := ParseIn(c.in, c.loc)
		if !ok || got != c.want {
			t.Errorf("ParseIn(%q, %v) = %v, %v; want %v", c.in, c.loc, time.Unix(0, got).UTC(), ok, time.Unix(0, c.want).UTC())
		}
	}
	// Syslog: the year is inferred.
	jan := time.Date(2027, 1, 3, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"Jan  3 11:00:00", utc(2027, 1, 3, 11, 0, 0, 0)},
		{"Jan 3 11:00:00", 0},                                 // RFC 3164 pads the day with a space
		{"Dec 31 23:59:59", utc(2026, 12, 31, 23, 59, 59, 0)}, // last year's
		{"Jan  4 11:00:00", utc(2027, 1, 4, 11, 0, 0, 0)},     // within a day ahead: this year's
		{"Oct 11 22:14:15.123", utc(2026, 10, 11, 22, 14, 15, 123e6)},
		{"Oct 11 22:14:15 +0200", utc(2026, 10, 11, 20, 14, 15, 0)},
	} {
		got, ok := parseSyslog(c.in, time.UTC, jan)
		if c.want == 0 {
			if ok {
				t.Errorf("parseSyslog(%q) = %v, want failure", c.in, time.Unix(0, got).UTC())
			}
			continue
		}
		if !ok || got != c.want {
			t.Errorf("parseSyslog(%q) = %v, %v; want %v", c.in, time.Unix(0, got).UTC(), ok, time.Unix(0, c.want).UTC())
		}
	}
	if ns, ok := ParseIn("Oct 11 22:14:15", time.UTC); !ok || time.Unix(0, ns).After(now.Add(25*time.Hour)) {
		t.Errorf("syslog time now: %v %v", time.Unix(0, ns), ok)
	}
	for _, bad := range []string{
		"2026-11-24 20:00", "2026-11-24T20:00:00.", "2026-11-24T20:00:00,", "2026-11-24T20:00:00+1", "2026-11-24T20:00:00+01:0",
		"2026-11-24T20:00:00 CET", "2026-11-31 20:00:00", "2026-11-24 24:00:00", "10/Okt/2026:13:55:36 -0700",
		"32/Oct/2026:13:55:36 -0700", "Oct 32 22:14:15", "Foo 11 22:14:15", "Oct 11 22:14", "Tuesday", "2026/11/24 20:00:00",
	} {
		if got, ok := ParseIn(bad, time.UTC); ok {
			t.Errorf("ParseIn(%q) = %v, want failure", bad, time.Unix(0, got).UTC())
		}
	}
}

// TestParseInOracle formats random instants in several layouts and zones
// with package time and checks that ParseIn reads them back as
// time.ParseInLocation does.
func TestParseInOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var locs []*time.Location
	for _, name := range []string{"UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe"} {
		l, err := time.LoadLocation(name)
		if err != nil {
			t.Fatal(err)
		}
		locs = append(locs, l)
	}
	layouts := []string{
		"2006-01-02 15:04:05", "2006-01-02T15:04:05.000", "2006-01-02 15:04:05.000000", "2006-01-02T15:04:05.999999999",
		"2006-01-02T15:04:05Z07:00", "2006-01-02 15:04:05.000-0700", "02/Jan/2006:15:04:05 -0700", "02/Jan/2006:15:04:05",
	}
	for range 20000 {
		ns := r.Int64N(int64(200*365*24*time.Hour)) - int64(50*365*24*time.Hour) // 1920..2120
		loc := locs[r.IntN(len(locs))]
		layout := layouts[r.IntN(len(layouts))]
		s := time.Unix(0, ns).In(loc).Format(layout)
		want, err := time.ParseInLocation(layout, s, loc)
		if err != nil {
			t.Fatalf("oracle cannot read %q back: %v", s, err)
		}
		got, ok := ParseIn(s, loc)
		if !ok || got != want.UnixNano() {
			t.Fatalf("ParseIn(%q, %v) = %v, %v; time says %v", s, loc, time.Unix(0, got).UTC(), ok, want.UTC())
		}
	}
}

func TestLayout(t *testing.T) {
	for _, c := range []struct {
		spec, in string
		want     int64
	}{
		{"unix_ms", "1767323045", 1767323045 * 1e6},
		{"unix_s", "1767323045123", 0}, // past int64 nanoseconds
		{"unix_us", "1767323045123456", 1767323045123456 * 1e3},
		{"unix_ns", "17", 17},
		{"rfc3339", "2026-01-02 03:04:05", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano()},
		{"rfc3339", "1767323045", 0},
		{"clf", "02/Jan/2026:03:04:05 +0000", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano()},
		{"2006/01/02 15:04:05.000", "2026/01/02 03:04:05.250", time.Date(2026, 1, 2, 3, 4, 5, 25e7, time.UTC).UnixNano()},
		{"Jan 2, 2006 at 3:04pm (MST)", "Feb 3, 2026 at 4:05pm (UTC)", time.Date(2026, 2, 3, 16, 5, 0, 0, time.UTC).UnixNano()},
	} {
		l, err := ParseLayout(c.spec)
		if err != nil {
			t.Fatalf("ParseLayout(%q): %v", c.spec, err)
		}
		got, ok := l.Parse(c.in, time.UTC)
		if c.want == 0 {
			if ok {
				t.Errorf("%s: Parse(%q) = %d, want failure", c.spec, c.in, got)
			}
		} else if !ok || got != c.want {
			t.Errorf("%s: Parse(%q) = %d, %v; want %d", c.spec, c.in, got, ok, c.want)
		}
		if l.String() != c.spec {
			t.Errorf("String() = %q, want %q", l.String(), c.spec)
		}
	}
	for _, bad := range []string{"%Y-%m-%d", "yyyy-mm-dd", "15:04:05"} {
		if _, err := ParseLayout(bad); err == nil {
			t.Errorf("ParseLayout(%q) accepted", bad)
		}
	}
}

// FuzzParseIn: no input panics, and every value package time writes in
// the layouts ParseIn detects (and reads back), ParseIn reads the same.
func FuzzParseIn(f *testing.F) {
	for _, s := range []string{"2026-11-24 20:00:00", "2026-11-24T20:00:00,5+01", "10/Oct/2026:13:55:36 -0700", "Oct 11 22:14:15", "1767323045.5", "-"} {
		f.Add(s)
	}
	layouts := []string{"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999Z07:00", "02/Jan/2006:15:04:05 -0700"}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := ParseIn(s, time.UTC)
		for _, l := range layouts {
			want, err := time.ParseInLocation(l, s, time.UTC)
			// Only what time writes in the layout: time reads more (runs of
			// spaces, "OCT", a one-digit hour in CLF) than the shapes
			// ParseIn takes.
			if err != nil || want.Year() < 1679 || want.Year() > 2260 || want.Format(l) != s {
				continue
			}
			if !ok || got != want.UnixNano() {
				t.Fatalf("ParseIn(%q) = %v, %v; time with %q says %v", s, time.Unix(0, got).UTC(), ok, l, want.UTC())
			}
		}
	})
}
