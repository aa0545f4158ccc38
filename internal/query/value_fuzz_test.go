package query

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// FuzzIndexNumbers checks mathNumber (IndexNumbers, the numeric ranges of
// sidecars) and parseNumber against refMathNumber and refParseNumber, the
// code before their fast paths: the same answer, to the bit, for every
// string. Run it longer with
// go test -run xxx -fuzz FuzzIndexNumbers -fuzztime 2m ./internal/query/
func FuzzIndexNumbers(f *testing.F) {
	for _, s := range []string{
		"", "0", "-0", "+0", "-0.0", "00", "007", "200", "78419", "18446744073709551615", "99999999999999999999",
		"29.972", "-1.5", "+1.5", ".5", "5.", "-.5", "1.", ".", "-", "+", "0.000000000000001", "123456789012345.6", "0.0000000000000000", "9007199254740993.5",
		"1234567890123456", "0.1234567890123456789", "1e3", "1E-3", "1e400", "-1e-400", "1.5e", "0x1F", "0o17", "0b101",
		"1_000", "1__0", "_1", "inf", "-Inf", "+inf", "infinity", "NaN", "nan",
		"1.5s", "1h30m", "-5m", "100ms", "1µs", "1us", "10ns", "1d", "1w", "1y", "1.5.s",
		"1KiB", "10KiB", "1.5MB", "2Gi", "3K", "512B", "1.5", "-2KB",
		"10.105.105.47", "10.75.103.33", "1.1.1.1", "255.255.255.255", "256.1.1.1", "01.02.003.004", "0001.1.1.1",
		"1.1.1", "1.1.1.1.1", "1..1.1", ".1.1.1", "1.1.1.", "1.1.1.1a", "+1.1.1.1", "1.1_1.1.1", "-1.1.1.1",
		"2026-01-02T00:00:00.008Z", "2026-01-02 00:00:00", "2026-01-02T00:00:00+02:00", "2026-01-02T00:00:00.123456789-0130",
		"2026-01-02T00:00:00.1234567890Z", "2026-13-02T00:00:00Z",
		"dbd2a18e0bf6b0f59885541c3ceb1a5a", "4bf92f3577b34da6a3ce929d0e0e4736", "123e4567-e89b-12d3-a456-426614174000",
		"u_93361", "worker-010.eu-west-1", "/api/v1/addresses", "HTTP/2.0", "5123cdc5", "1-2-3", "1:2",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, gotOK := mathNumber(s)
		want, wantOK := refMathNumber(s)
		if gotOK != wantOK || math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("mathNumber(%q) = %v, %v; want %v, %v", s, got, gotOK, want, wantOK)
		}
		got, gotOK = parseNumber(s)
		want, wantOK = refParseNumber(s)
		if gotOK != wantOK || math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("parseNumber(%q) = %v, %v; want %v, %v", s, got, gotOK, want, wantOK)
		}
	})
}

// refMathNumber is mathNumber before its fast paths.
func refMathNumber(s string) (float64, bool) {
	if f, ok := refAnyNumber(s); ok {
		return f, true
	}
	if s == "" || s[0] < '0' || s[0] > '9' {
		return 0, false
	}
	if ns, ok := parseTimestampLit(s); ok {
		return float64(ns), true
	}
	if n, ok := refParseIPv4Lit(s); ok {
		return float64(n), true
	}
	return 0, false
}

// refAnyNumber is anyNumber with refParseNumber.
func refAnyNumber(s string) (float64, bool) {
	if f, ok := refParseNumber(s); ok {
		return f, true
	}
	if s == "" || !numberStart(s[0]) {
		return 0, false
	}
	if ns, ok := parseDurationLit(s); ok && !strings.Contains(s, "us") {
		return float64(ns), true
	}
	if n, ok := parseBytesLit(s); ok {
		return float64(n), true
	}
	return parseStrconvLit(s)
}

// refParseIPv4Lit is parseIPv4Lit with strings.SplitSeq and
// strconv.ParseUint.
func refParseIPv4Lit(s string) (uint32, bool) {
	if len(s) < len("1.1.1.1") || len(s) > len("255.255.255.255") || strings.Count(s, ".") != 3 {
		return 0, false
	}
	var n uint32
	for part := range strings.SplitSeq(s, ".") {
		if part == "" || len(part) > 3 {
			return 0, false
		}
		v, err := strconv.ParseUint(part, 10, 8)
		if err != nil {
			return 0, false
		}
		n = n<<8 | uint32(v)
	}
	return n, true
}

// refParseNumber is parseNumber before its fast path for short decimals.
func refParseNumber(s string) (float64, bool) {
	if len(s) == 0 || len(s) > 64 {
		return 0, false
	}
	if len(s) <= 15 {
		n := 0
		i := 0
		for ; i < len(s); i++ {
			c := s[i]
			if c < '0' || c > '9' {
				break
			}
			n = n*10 + int(c-'0')
		}
		if i == len(s) {
			return float64(n), true
		}
	}
	i := 0
	if s[i] == '-' || s[i] == '+' {
		i++
	}
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return 0, false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		ed := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			ed++
		}
		if ed == 0 {
			return 0, false
		}
	}
	if i != len(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	return f, true
}
