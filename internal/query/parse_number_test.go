package query

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func TestParseNumberLit(t *testing.T) {
	f := func(in string, want float64) {
		t.Helper()
		got, ok := parseNumberLit(in)
		if !ok {
			t.Fatalf("parseNumberLit(%q): cannot parse", in)
		}
		if got != want {
			t.Fatalf("parseNumberLit(%q) = %v; want %v", in, got, want)
		}
	}
	// Plain numbers.
	f("0", 0)
	f("5", 5)
	f("-5", -5)
	f("+5", 5)
	f("1.5", 1.5)
	f("-0.5", -0.5)
	f("0.05", 0.05)
	f(".5", 0.5)
	f("007", 7)
	f("1_000", 1000)
	f("1_000.5", 1000.5)
	f("18446744073709551615", 18446744073709551615)
	f("1e3", 1000)
	f("1.5e2", 150)
	f("2.5E-3", 0.0025)
	f("0x1F", 31)
	f("0x1f", 31)
	f("0o17", 15)
	f("0b101", 5)
	f("inf", math.Inf(1))
	f("+inf", math.Inf(1))
	f("-inf", math.Inf(-1))
	f("Inf", math.Inf(1))

	// Byte sizes.
	f("512B", 512)
	f("3K", 3000)
	f("1KB", 1000)
	f("10KiB", 10240)
	f("1.5MB", 1.5e6)
	f("2Mi", 2<<20)
	f("2Gi", 2<<30)
	f("1GB", 1e9)
	f("1TiB", 1<<40)
	f("1TB", 1e12)
	f("-10KiB", -10240)
	f("1MiB512KiB", 1<<20+512<<10)

	// Durations, in nanoseconds.
	f("10ns", 10)
	f("1µs", 1e3)
	f("1us", 1e3)
	f("100ms", 1e8)
	f("1.5s", 1.5e9)
	f("5m", 300e9)
	f("1h", 3600e9)
	f("1h30m", 5400e9)
	f("1d", 86400e9)
	f("1w", 7*86400e9)
	f("1y", 365*86400e9)
	f("-5m", -300e9)

	// Timestamps and IPv4 addresses.
	f("2026-01-01T00:00:00Z", 1767225600e9)
	f("2026-01-01T00:00:00.5Z", 1767225600.5e9)
	f("2026-01-01T02:00:00+02:00", 1767225600e9)
	f("2026-01-01 00:00:00Z", 1767225600e9)
	f("10.0.0.1", 10<<24+1)
	f("255.255.255.255", math.MaxUint32)
}

func TestParseNumberLitFailure(t *testing.T) {
	f := func(in string) {
		t.Helper()
		if got, ok := parseNumberLit(in); ok {
			t.Fatalf("parseNumberLit(%q) = %v; want failure", in, got)
		}
	}
	f("")
	f("abc")
	f("nan")
	f("NaN")
	f("-")
	f("+")
	f(".")
	f("_")
	f("1..2")
	f("1.2.3")
	f("5x")
	f("--5")
	f("1e400")
	f("10kb")
	f("1.5.5s")
	f("2026-01-01T00:00:00X")
	f("256.0.0.1")
}

func TestParseDurationLit(t *testing.T) {
	f := func(in string, want int64, wantOK bool) {
		t.Helper()
		got, ok := parseDurationLit(in)
		if ok != wantOK || got != want {
			t.Fatalf("parseDurationLit(%q) = %d, %v; want %d, %v", in, got, ok, want, wantOK)
		}
	}
	f("1s", 1e9, true)
	f("1.5h", 5400e9, true)
	f("1h30m15s", 5415e9, true)
	f("1_000ms", 1e9, true)
	f("-2d", -2*86400e9, true)
	f("100000000y", math.MaxInt64, true)
	f("5", 0, false)
	f("h", 0, false)
	f("5mo", 0, false)
	f("5s5", 0, false)
	f("+5s", 0, false)
	f("", 0, false)
}

func TestParseBytesLit(t *testing.T) {
	f := func(in string, want int64, wantOK bool) {
		t.Helper()
		got, ok := parseBytesLit(in)
		if ok != wantOK || got != want {
			t.Fatalf("parseBytesLit(%q) = %d, %v; want %d, %v", in, got, ok, want, wantOK)
		}
	}
	f("10", 10, true)
	f("1.5KiB", 1536, true)
	f("1Ki", 1024, true)
	f("1.5", 0, false)
	f("1kib", 0, false)
	f("KiB", 0, false)
	f("", 0, false)
}

func TestParseUintLit(t *testing.T) {
	f := func(in string, want int64, wantOK bool) {
		t.Helper()
		got, ok := parseUintLit(in)
		if ok != wantOK || got != want {
			t.Fatalf("parseUintLit(%q) = %d, %v; want %d, %v", in, got, ok, want, wantOK)
		}
	}
	f("0", 0, true)
	f("10", 10, true)
	f("1_000", 1000, true)
	f("0x10", 16, true)
	f("1K", 1000, true)
	f("1KiB", 1024, true)
	f("1s", 1e9, true)
	f("inf", math.MaxInt64, true)
	f("99999999999999999999", math.MaxInt64, true)
	f("-1", 0, false)
	f("-1K", 0, false)
	f("1.5", 0, false)
	f("abc", 0, false)
	f("", 0, false)
}

func TestIsNumberPrefixLit(t *testing.T) {
	f := func(in string, want bool) {
		t.Helper()
		if got := isNumberPrefixLit(in); got != want {
			t.Fatalf("isNumberPrefixLit(%q) = %v; want %v", in, got, want)
		}
	}
	f("5", true)
	f("5xx", true)
	f("-5", true)
	f("+.5", true)
	f("inf", true)
	f("-INF", true)
	f("info", false)
	f("x5", false)
	f(".x", false)
	f("-", false)
	f("", false)
}

// TestAppendNumberIntegers checks appendNumber's integer fast path against
// the general formatting (shortest 'f' text) on integers around powers of
// two and ten up to 2^53, random ones, and random larger ones that the
// fast path must leave alone.
func TestAppendNumberIntegers(t *testing.T) {
	general := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) } // -0 is "-0", as in VictoriaLogs
	var fs []float64
	for e := 0; e <= 53; e++ {
		p := math.Ldexp(1, e)
		fs = append(fs, p-1, p, p+1, -p, -(p - 1))
	}
	for p := 1.0; p < 1<<53; p *= 10 {
		fs = append(fs, p-1, p, p+1, -p)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		f := float64(r.Int64N(1 << 53))
		if r.IntN(2) == 0 {
			f = -f
		}
		fs = append(fs, f, math.Trunc(f/float64(1+r.IntN(1000))))
		fs = append(fs, math.Ldexp(float64(r.Int64N(1<<53)), 1+r.IntN(10))) // beyond: the general path
	}
	fs = append(fs, math.Copysign(0, -1), 1<<53, 1<<53+2, 1e20)
	for _, f := range fs {
		if got, want := string(appendNumber(nil, f)), general(f); got != want {
			t.Fatalf("appendNumber(%v) = %q, want %q", f, got, want)
		}
	}
}

// TestAppendNumberNoExponent: VictoriaLogs prints every number with 'f'
// (marshalFloat64String): tiny and huge ones without an exponent, and -0.
func TestAppendNumberNoExponent(t *testing.T) {
	for f, want := range map[float64]string{
		1.5000000000000002e-08: "0.000000015000000000000002",
		3e22:                   "30000000000000000000000",
		-2.5e-7:                "-0.00000025",
		1e21:                   "1000000000000000000000",
		math.Copysign(0, -1):   "-0",
		0.1:                    "0.1",
		123.456:                "123.456",
	} {
		if got := formatNumber(f); got != want {
			t.Errorf("formatNumber(%v) = %q, want %q", f, got, want)
		}
		if g, ok := parsePlainNumber(formatNumber(f)); !ok || g != f || !plainNumber(f) {
			t.Errorf("%v: read back as %v, %v", f, g, ok)
		}
	}
	if s := formatNumber(5e-324); strings.ContainsAny(s, "eE") {
		t.Errorf("formatNumber(5e-324) = %q", s)
	}
}
