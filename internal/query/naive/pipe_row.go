package naive

import (
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/spate-io/spate/internal/query"
)

// This file holds the pipes that change each row on its own, one function
// per pipe, written from VictoriaLogs' documentation and tests.

// coalesce is the first non-empty value of the listed fields (a pattern's
// matches by name), or the default.
func coalesce(p *query.PipeCoalesce, r row) string {
	for _, f := range p.Fields {
		names := []string{f}
		if strings.HasSuffix(f, "*") {
			names = nil
			for name := range r {
				if matchPattern(f, name) {
					names = append(names, name)
				}
			}
			sort.Strings(names)
		}
		for _, name := range names {
			if r[name] != "" {
				return r[name]
			}
		}
	}
	return p.Default
}

// colorSequence is an ANSI escape sequence: ESC '[', parameter bytes,
// intermediate bytes and a final byte, each part optional.
var colorSequence = regexp.MustCompile("\x1b\\[[\x30-\x3f]*[\x20-\x2f]*[\x30-\x7e]?")

func decolorize(v string) string { return colorSequence.ReplaceAllLiteralString(v, "") }

// hashValue is xxhash64 of v, its low 53 bits, in decimal.
func hashValue(v string) string {
	return strconv.FormatUint(xxhash.Sum64([]byte(v))%(1<<53), 10)
}

func jsonArrayConcat(v, delimiter string) string {
	return strings.Join(jsonArrayElements(v), delimiter)
}

// collapseNums replaces the numbers of s with "<N>": scanning left to
// right, a run of hex digits is a candidate where it starts s or follows a
// byte that is not an ASCII word byte or is one of "_TXxvshm"; a candidate
// is collapsed when the byte after it is not a word byte or is one of
// "_TZsmhun", and, if it has hex letters, its length is even and at least
// 4. A rejected candidate is kept whole and the scan goes on after it.
func collapseNums(s string) string {
	hex := func(c byte) bool { return strings.IndexByte("0123456789abcdefABCDEF", c) >= 0 }
	word := func(c byte) bool {
		return c < 0x80 && (c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z')
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if !hex(s[i]) || i > 0 && word(s[i-1]) && !strings.ContainsRune("_TXxvshm", rune(s[i-1])) {
			b.WriteByte(s[i])
			i++
			continue
		}
		j := i
		for j < len(s) && hex(s[j]) {
			j++
		}
		run := s[i:j]
		ok := j == len(s) || !word(s[j]) || strings.ContainsRune("_TZsmhun", rune(s[j]))
		if strings.ContainsAny(run, "abcdefABCDEF") && (len(run) < 4 || len(run)%2 == 1) {
			ok = false
		}
		if ok {
			b.WriteString("<N>")
		} else {
			b.WriteString(run)
		}
		i = j
	}
	return b.String()
}

// prettify names the shapes of collapsed numbers, one replacement after
// the other over the whole text; some swallow a tail after each match.
func prettify(s string) string {
	repl := func(s, old, nw string, tails ...string) string {
		var b strings.Builder
		for {
			i := strings.Index(s, old)
			if i < 0 {
				break
			}
			b.WriteString(s[:i] + nw)
			s = s[i+len(old):]
			for _, t := range tails {
				if strings.HasPrefix(s, t) {
					s = s[len(t):]
					break
				}
			}
		}
		return b.String() + s
	}
	s = repl(s, "<N>-<N>-<N>-<N>-<N>", "<UUID>")
	s = repl(s, "<N>.<N>.<N>.<N>", "<IP4>")
	s = repl(s, "<N>:<N>:<N>", "<TIME>", ".<N>", ",<N>")
	s = repl(s, "<N>-<N>-<N>", "<DATE>")
	s = repl(s, "<N>/<N>/<N>", "<DATE>")
	s = repl(s, "<DATE>T<TIME>", "<DATETIME>", "Z", "-<N>:<N>", "+<N>:<N>")
	return repl(s, "<DATE> <TIME>", "<DATETIME>", "Z", "-<N>:<N>", "+<N>:<N>")
}

// timeAdd adds d to the RFC 3339 time v (a space may stand for the 'T';
// zones Z, ±hh:mm or ±hhmm, none meaning UTC) and prints it as _time is;
// any other value is returned as it is.
func timeAdd(v string, d int64) string {
	if len(v) > 10 && v[10] == ' ' {
		v2 := v[:10] + "T" + v[11:]
		if r := timeAdd(v2, d); r != v2 {
			return r
		}
		return v
	}
	for _, layout := range []string{"2006-01-02T15:04:05.999999999Z07:00", "2006-01-02T15:04:05.999999999Z0700", "2006-01-02T15:04:05.999999999"} {
		if t, err := time.Parse(layout, v); err == nil {
			return time.Unix(0, t.UnixNano()+d).UTC().Format(time.RFC3339Nano)
		}
	}
	return v
}

// jsonStrings is the JSON array of vs as VictoriaLogs writes the arrays it
// builds (each string as jsonQuote writes it).
func jsonStrings(vs []string) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = jsonQuote(v)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// splitValue is split's pieces of v: at each sep, or its characters (an
// invalid byte as U+FFFD) when sep is empty.
func splitValue(v, sep string) []string {
	if sep != "" {
		return strings.Split(v, sep)
	}
	var out []string
	for _, r := range v {
		out = append(out, string(r))
	}
	return out
}

// words is unpack_words' list: the runs of word runes, the repeats dropped
// when dropDup is set.
func words(v string, dropDup bool) []string {
	ws := strings.FieldsFunc(v, func(r rune) bool { return !isTokenRune(r) })
	if !dropDup {
		return ws
	}
	var out []string
	for _, w := range ws {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}
