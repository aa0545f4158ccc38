package timeparse

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	f := func(s string, want time.Time) {
		t.Helper()
		got, ok := Parse(s)
		if !ok {
			t.Fatalf("Parse(%q) failed, want %v", s, want)
		}
		if got != want.UnixNano() {
			t.Fatalf("Parse(%q) = %v, want %v", s, time.Unix(0, got).UTC(), want)
		}
	}
	d := func(y int, mo time.Month, day, h, mi, s, ns int) time.Time {
		return time.Date(y, mo, day, h, mi, s, ns, time.UTC)
	}
	f("2026-01-02T03:04:05Z", d(2026, 1, 2, 3, 4, 5, 0))
	f("2026-01-02t03:04:05z", d(2026, 1, 2, 3, 4, 5, 0))
	f("2026-01-02 03:04:05Z", d(2026, 1, 2, 3, 4, 5, 0))
	f("2026-01-02T03:04:05.5Z", d(2026, 1, 2, 3, 4, 5, 5e8))
	f("2026-01-02T03:04:05.123456789Z", d(2026, 1, 2, 3, 4, 5, 123456789))
	f("2026-01-02T03:04:05.1234567891Z", d(2026, 1, 2, 3, 4, 5, 123456789)) // past ns: truncated
	f("2026-01-02T04:04:05+01:00", d(2026, 1, 2, 3, 4, 5, 0))
	f("2026-01-01T23:04:05-04:00", d(2026, 1, 2, 3, 4, 5, 0))
	f("2024-02-29T00:00:00Z", d(2024, 2, 29, 0, 0, 0, 0))
	f("1969-12-31T23:59:59Z", d(1969, 12, 31, 23, 59, 59, 0))
	// Unix timestamps, unit from magnitude.
	f("1767323045", d(2026, 1, 2, 3, 4, 5, 0))
	f("1767323045.25", d(2026, 1, 2, 3, 4, 5, 25e7))
	f("1767323045123", d(2026, 1, 2, 3, 4, 5, 123e6))
	f("1767323045123456", d(2026, 1, 2, 3, 4, 5, 123456e3))
	f("1767323045123456789", d(2026, 1, 2, 3, 4, 5, 123456789))
	f("0", time.Unix(0, 0))
	f("-1", time.Unix(-1, 0))
	f("1.5e9", time.Unix(15e8, 0))
	f("1.5", time.Unix(1, 5e8))
	f("-1.5", time.Unix(-2, 5e8))
	f("1767323045123.4567", d(2026, 1, 2, 3, 4, 5, 123456700))
	f("1767323045.1234567891", d(2026, 1, 2, 3, 4, 5, 123456789))
	f("9223372036", time.Unix(9223372036, 0))

	bad := func(s string) {
		t.Helper()
		if got, ok := Parse(s); ok {
			t.Fatalf("Parse(%q) = %v, want failure", s, time.Unix(0, got).UTC())
		}
	}
	bad("")
	bad("yesterday")
	bad("2026-01-02")
	bad("2026-13-02T03:04:05Z")
	bad("2026-02-30T03:04:05Z")
	bad("2025-02-29T00:00:00Z")
	bad("2026-01-02T24:00:00Z")
	bad("2026-01-02T03:04:05.Z")
	bad("2026-01-02T03:04:05+25:00")
	bad("0001-01-01T00:00:00Z") // outside int64 nanoseconds
	bad("2263-01-01T00:00:00Z")
	bad("NaN")
	bad("Inf")
	bad("0x10")
	bad("1.5x")
	bad("9223372037") // seconds past int64 nanoseconds
	bad("9.3e18")
	bad("1e400")
}

// TestParseRFC3339Oracle checks the fast path against time.Parse on
// well-formed and slightly broken values.
func TestParseRFC3339Oracle(t *testing.T) {
	for _, s := range []string{
		"2026-11-25T13:44:54Z", "2026-11-25T13:44:54.000000001Z", "2026-11-25T13:44:54.1+05:30",
		"0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z", "2000-02-29T12:00:00-00:00",
		"1900-02-29T00:00:00Z", "2026-11-25T13:44:60Z", "2026-11-25T13:60:00Z", "2026-00-10T00:00:00Z",
		"2026-11-25T13:44:54+0530", "2026-11-25T13:44:54 +05:30", "２026-11-25T13:44:54Z",
	} {
		want, err := time.Parse(time.RFC3339Nano, s)
		if err == nil && (want.Before(minTime) || want.After(maxTime)) {
			err = errors.New("out of range")
		}
		got, ok := ParseRFC3339(s)
		if ok != (err == nil) || ok && got != want.UnixNano() {
			t.Errorf("ParseRFC3339(%q) = %v, %v; time.Parse: %v, %v", s, time.Unix(0, got).UTC(), ok, want, err)
		}
	}
}

func FuzzParseRFC3339(f *testing.F) {
	f.Add("2026-11-25T13:44:54.123Z")
	f.Add("2026-11-25T13:44:54+01:00")
	f.Add("0000-01-01t00:00:00z")
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := ParseRFC3339(s)
		// The fast path also takes 't' or ' ' for 'T' and 'z' for 'Z';
		// time.Parse is the oracle for the value with those normalised.
		norm := []byte(s)
		if len(norm) > 10 && (norm[10] == 't' || norm[10] == ' ') {
			norm[10] = 'T'
		}
		if n := len(norm); n > 0 && norm[n-1] == 'z' {
			norm[n-1] = 'Z'
		}
		inRange := func(s string) (time.Time, bool) {
			t, err := time.Parse(time.RFC3339Nano, s)
			return t, err == nil && !t.Before(minTime) && !t.After(maxTime)
		}
		if want, good := inRange(string(norm)); ok && (!good || got != want.UnixNano()) {
			t.Fatalf("ParseRFC3339(%q) = %d; time.Parse(%q): %v, in range %v", s, got, norm, want, good)
		}
		if want, good := inRange(s); !ok && good {
			t.Fatalf("ParseRFC3339(%q) failed; time.Parse: %v", s, want)
		}
	})
}

func TestMeansNow(t *testing.T) {
	for _, s := range []string{"", "0", "-"} {
		if !MeansNow([]byte(s)) {
			t.Errorf("MeansNow(%q) = false", s)
		}
	}
	for _, s := range []string{"00", "-0", "1", " ", "--", "0.0", "null"} {
		if MeansNow([]byte(s)) {
			t.Errorf("MeansNow(%q) = true", s)
		}
	}
}

func TestAppendRFC3339(t *testing.T) {
	f := func(ns int64, want string) {
		t.Helper()
		if got := string(AppendRFC3339([]byte("x"), ns)); got != "x"+want {
			t.Fatalf("AppendRFC3339(%d) = %q, want %q", ns, got, "x"+want)
		}
		if got := FormatRFC3339(ns); got != want {
			t.Fatalf("FormatRFC3339(%d) = %q, want %q", ns, got, want)
		}
		if back, ok := Parse(want); !ok || back != ns {
			t.Fatalf("Parse(%q) = %d, %v; want %d", want, back, ok, ns)
		}
	}
	f(0, "1970-01-01T00:00:00Z")
	f(1767323045_120000000, "2026-01-02T03:04:05.12Z")
	f(1767323045_000000001, "2026-01-02T03:04:05.000000001Z")
	f(-1, "1969-12-31T23:59:59.999999999Z")
	// Against time.Time's formatting, over the whole int64 range (years
	// outside 0..9999 take time's path) and around day boundaries.
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 200000 {
		ns := r.Int64()
		switch i % 4 {
		case 1:
			ns = ns % (250 * 365 * 86400e9) // within ±250 years of 1970
		case 2:
			ns = (ns % 20000) * 86400e9 / 2 // midnights and noons
		case 3:
			ns = ns % (100 * 365 * 86400e9) / 1e9 * 1e9 // whole seconds
		}
		want := time.Unix(0, ns).UTC().Format(time.RFC3339Nano)
		if got := string(AppendRFC3339(nil, ns)); got != want {
			t.Fatalf("AppendRFC3339(%d) = %q, want %q", ns, got, want)
		}
	}
}
