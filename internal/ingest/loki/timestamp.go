package loki

import (
	"math"
	"strconv"
	"strings"
)

// parseTimestamp parses the timestamp string of a JSON push entry and
// returns Unix nanoseconds, 0 for "" (the ingestion time), as
// VictoriaLogs does with VictoriaMetrics' timeutil.TryParseUnixTimestamp:
//
//   - the text is an integer (strconv.ParseInt syntax: an optional sign,
//     decimal digits), a fraction "I.F" (I and F each in ParseInt syntax,
//     F's digits counting as decimals) or a scientific "M[eE]X" (M an
//     integer or fraction with no more decimals than X, an integer);
//   - the resulting integer, counted in thousandths when a fraction's
//     decimals are not a multiple of three, takes its unit from its
//     magnitude: seconds when it fits int64 in nanoseconds, else
//     milliseconds, microseconds, nanoseconds.
//
// So "1700000000", "1700000000000" and "1700000000000000000" are the same
// time, and "1700000000.5" is 1700000000500 ms. The text is not trimmed.
func parseTimestamp(s string) (int64, bool) {
	if s == "" {
		return 0, true
	}
	e := strings.IndexByte(s, 'e') // the first 'e', else the first 'E'
	if e < 0 {
		e = strings.IndexByte(s, 'E')
	}
	if e >= 0 {
		exp, ok := parseInt(s[e+1:])
		if !ok {
			return 0, false
		}
		m := s[:e]
		var n int64
		if dot := strings.IndexByte(m, '.'); dot < 0 {
			if n, ok = parseInt(m); !ok {
				return 0, false
			}
		} else {
			frac := int64(len(m) - dot - 1)
			if exp < frac {
				return 0, false
			}
			if n, ok = joinFraction(m[:dot], m[dot+1:]); !ok {
				return 0, false
			}
			exp -= frac
		}
		if n, ok = scale(n, exp); !ok {
			return 0, false
		}
		return toNanos(n), true
	}
	dot := strings.IndexByte(s, '.')
	if dot < 0 {
		n, ok := parseInt(s)
		if !ok {
			return 0, false
		}
		return toNanos(n), true
	}
	n, ok := joinFraction(s[:dot], s[dot+1:])
	if !ok {
		return 0, false
	}
	for d := len(s) - dot - 1; d%3 != 0; d++ {
		if n > math.MaxInt64/10 || n < math.MinInt64/10 {
			return 0, false
		}
		n *= 10
	}
	return toNanos(n), true
}

func parseInt(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// joinFraction returns the integer ip*10^len(fp) ± fp, the digits of
// "ip.fp" without the dot (fp is added away from zero; VictoriaMetrics
// parses it as a signed integer too).
func joinFraction(ip, fp string) (int64, bool) {
	n, ok := parseInt(ip)
	if !ok {
		return 0, false
	}
	if n, ok = scale(n, int64(len(fp))); !ok {
		return 0, false
	}
	f, ok := parseInt(fp)
	if !ok {
		return 0, false
	}
	if n >= 0 {
		if n > math.MaxInt64-f {
			return 0, false
		}
		return n + f, true
	}
	if n < math.MinInt64+f {
		return 0, false
	}
	return n - f, true
}

// scale returns n*10^exp for 0 <= exp <= 18, failing on overflow.
func scale(n, exp int64) (int64, bool) {
	if exp < 0 || exp > 18 {
		return 0, false
	}
	m := int64(1)
	for range exp {
		m *= 10
	}
	if n > math.MaxInt64/m || n < math.MinInt64/m {
		return 0, false
	}
	return n * m, true
}

// toNanos converts a Unix timestamp of a unit guessed from its magnitude
// to nanoseconds.
func toNanos(n int64) int64 {
	const s, ms, us = 1_000_000_000, 1_000_000, 1_000
	switch {
	case n >= math.MinInt64/s && n <= math.MaxInt64/s:
		return n * s
	case n >= math.MinInt64/ms && n <= math.MaxInt64/ms:
		return n * ms
	case n >= math.MinInt64/us && n <= math.MaxInt64/us:
		return n * us
	}
	return n
}
