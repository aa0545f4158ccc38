package naive

import (
	"math"
	"sort"
	"strings"
	"testing"
)

func TestCompareNatural(t *testing.T) {
	f := func(a, b string, want int) {
		t.Helper()
		if got := compareNatural(a, b); got != want {
			t.Errorf("compareNatural(%q, %q) = %d; want %d", a, b, got, want)
		}
		if got := compareNatural(b, a); got != -want {
			t.Errorf("compareNatural(%q, %q) = %d; want %d", b, a, got, -want)
		}
	}
	f("", "", 0)
	f("", "0", -1)
	f("", "a", -1)
	f("a", "b", -1)
	f("9", "10", -1)
	f("x9", "x10", -1)
	f("x10y", "x10z", -1)
	f("1.5e2", "12.5", -1) // digit runs: 1 < 12
	f("007", "7", 1)       // equal value: the longer run is bigger
	f("07", "7", 1)
	f("9", "a", -1) // digits before other bytes
	f("slow", "134276.093", 1)
	f("-12.5", "0.5", 1) // '-' is not a digit
	f("ERROR", "Error", -1)
	f("Error", "debug", -1)
	f("a", "ab", -1)
	f("file99999999999999999999999", "file100000000000000000000000", -1) // any length
}

func TestSortOrder(t *testing.T) {
	f := func(field string, in []string, want string) {
		t.Helper()
		got := append([]string(nil), in...)
		sort.SliceStable(got, func(i, j int) bool { return compareSortKey(field, got[i], got[j]) < 0 })
		if s := strings.Join(got, " "); s != want {
			t.Errorf("sort %q by %s = %q; want %q", in, field, s, want)
		}
	}
	// Plain numbers numerically.
	f("latency_ms", []string{"1234.5", "12.5", "0.5", "-12.5"}, "-12.5 0.5 12.5 1234.5")
	// "1.5e2" is not a plain number: it compares naturally with the others,
	// which is not a total order (naturally "1.5e2" < "-12.5", numerically
	// -12.5 < 0.5, naturally 0.5 < "1.5e2"). The result then depends on the
	// algorithm; for a few rows both VictoriaLogs and SliceStable
	// insertion-sort in input order. This is pipe-sort-10's input order.
	f("latency_ms", []string{"12.5", "1234.5", "0.5", "-12.5", "1.5e2"}, "-12.5 0.5 1.5e2 12.5 1234.5")
	// Empty first.
	f("bytes", []string{"10", "", "9"}, " 9 10")
	// Strings naturally.
	f("host", []string{"h10", "h9", "h1"}, "h1 h9 h10")
	// _time as time: a trimmed fraction does not sort as text would.
	f("_time", []string{"2026-01-01T00:00:00.5Z", "2026-01-01T00:00:00.05Z", "2026-01-01T00:00:00Z"},
		"2026-01-01T00:00:00Z 2026-01-01T00:00:00.05Z 2026-01-01T00:00:00.5Z")
}

func TestCompareValues(t *testing.T) {
	f := func(a, b string, want int) {
		t.Helper()
		if got := compareValues(a, b); got != want {
			t.Errorf("compareValues(%q, %q) = %d; want %d", a, b, got, want)
		}
	}
	f("", "1", -1)
	f("", "a", -1)
	f("9", "10", -1)
	f("-5", "3", -1)
	f("1.5e2", "12.5", 1) // numbers here include exponents
	f("1e3", "999", 1)
	f("slow", "134276.093", 1)
	f("1h", "59m", 1) // durations
	f("2026-01-01T00:00:00.5Z", "2026-01-01T00:00:00.05Z", 1)
	f("18446744073709551615", "18446744073709551614", 1)
}

func TestNumbers(t *testing.T) {
	f := func(s string, plain, anyNum, mathNum float64) {
		t.Helper()
		check := func(name string, got float64, ok bool, want float64) {
			t.Helper()
			if math.IsNaN(want) {
				if ok && !math.IsNaN(got) {
					t.Errorf("%s(%q) = %v; want no number", name, s, got)
				}
				return
			}
			if !ok || got != want {
				t.Errorf("%s(%q) = %v, %v; want %v", name, s, got, ok, want)
			}
		}
		p, ok := plainNumber(s)
		check("plainNumber", p, ok, plain)
		a, ok := anyNumber(s)
		check("anyNumber", a, ok, anyNum)
		m := mathNumber(s)
		check("mathNumber", m, !math.IsNaN(m), mathNum)
	}
	nan := math.NaN()
	f("500", 500, 500, 500)
	f("-12.5", -12.5, -12.5, -12.5)
	f("0", 0, 0, 0)
	f("1.5e2", nan, 150, 150)
	f("1e3", nan, 1000, 1000)
	f("1_000", nan, 1000, 1000)
	f("007", nan, 7, 7)
	f("+5", nan, 5, 5)
	f("10KiB", nan, 10240, 10240)
	f("1.5MB", nan, 1.5e6, 1.5e6)
	f("1.5s", nan, 1.5e9, 1.5e9)
	f("1h30m", nan, 5400e9, 5400e9)
	f("3623ms", nan, 3623e6, 3623e6)
	f("2026-01-01T00:00:01Z", nan, nan, 1767225601e9)
	f("10.0.0.1", nan, nan, 167772161)
	f("slow", nan, nan, nan)
	f("5xx", nan, nan, nan)
	f("", nan, nan, nan)
	f("1.", nan, 1, 1)
	f(".5", nan, 0.5, 0.5)
	f("2026-01-01", nan, nan, nan)
}

func TestParseLogTimestamp(t *testing.T) {
	f := func(s, want string) {
		t.Helper()
		ns, ok := parseLogTimestamp(s)
		got := ""
		if ok {
			got = formatTime(ns)
		}
		if got != want {
			t.Errorf("parseLogTimestamp(%q) = %q; want %q", s, got, want)
		}
	}
	f("2026-01-01T00:03:00Z", "2026-01-01T00:03:00Z")
	f("2026-01-01T00:00:00.050Z", "2026-01-01T00:00:00.05Z")
	f("2026-01-02T00:00:00.123456789Z", "2026-01-02T00:00:00.123456789Z")
	f("2026-01-02T02:30:00+02:00", "2026-01-02T00:30:00Z")
	f("1767398400", "2026-01-03T00:00:00Z")              // seconds
	f("1767312060123", "2026-01-02T00:01:00.123Z")       // milliseconds
	f("1767312060123456", "2026-01-02T00:01:00.123456Z") // microseconds
	f("1767312060123456789", "2026-01-02T00:01:00.123456789Z")
	f("1767398400.5", "2026-01-03T00:00:00.5Z")
	f("", "")
	f("0", "")
	f("not-a-time", "")
	f("2026-13-01T00:00:00Z", "")
}
