package query

import (
	"errors"
	"reflect"
	"testing"
)

// fuzzMaxInput bounds fuzz inputs: the parser is linear in the query size,
// and longer inputs only slow the fuzzer down without reaching new code.
const fuzzMaxInput = 4 << 10

// fuzzSeeds complement the conformance queries with syntax they do not use.
var fuzzSeeds = []string{
	`f:in(a, "b c", *) OR -g:=x* | stats by (_time:1d offset 3h, n:10) count() if (a) as x`,
	`_time:[now-1h, now) _time:>2026 _time:5m offset 1h | sort desc | limit 1K`,
	`i("Cache Mi"*) exact(x*) re("a.c") *sub* f:range[1, inf) g:>=1_000 h:<"x y"`,
	`* | math -(a + b) * 2 ^ x default -1 as y, round(a, 0.5) | format if (x:*) "<q:x>" as z`,
	`* | extract from f "a=<a> " keep_original_fields | unpack_json fields (a, b) result_prefix "p_"`,
	`* | top 3 by a, b hits as n rank as r | uniq (a) with hits limit 5 | facets 2 keep_const_fields`,
	`* | rename a* as b*, c d | copy x as y | delete z, w* | fields "q r", s* | unroll by (a)`,
	`"a\tb" 'c\'d' ` + "`e\\f`" + ` café 用户 /api/v1 worker-010 10.0.0.1 # comment`,
	`* | field_values (level) limit 3 | len(x) y | field_names n | where a:~"(?i)x"`,
	`{app="a b", env=~"p.*" or "odd name"!~'x', z in(a, *) , y not_in(*)} _stream:{} -_stream_id:in(0a, b) _stream_id:x`,
}

func FuzzParse(f *testing.F) {
	for _, c := range loadConformanceCases(f) {
		f.Add(c.Query)
	}
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > fuzzMaxInput {
			return
		}
		q, err := Parse(s, testNow)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || !errors.Is(err, ErrParse) {
				t.Fatalf("Parse(%q): error %v is not a *ParseError", s, err)
			}
			if pe.Pos < 0 || pe.Pos > len(s) {
				t.Fatalf("Parse(%q): error position %d is outside the query", s, pe.Pos)
			}
			_ = pe.Error()
			_ = pe.Caret()
			return
		}
		s1 := q.String()
		q2, err := Parse(s1, testNow)
		if err != nil {
			t.Fatalf("cannot parse String() of %q\nString(): %s\nerror: %s", s, s1, err)
		}
		if !reflect.DeepEqual(q, q2) {
			t.Fatalf("Parse(String()) differs for %q\nString(): %s\nfirst:  %#v\nsecond: %#v", s, s1, q, q2)
		}
		if s2 := q2.String(); s2 != s1 {
			t.Fatalf("String() is not stable for %q\nfirst:  %s\nsecond: %s", s, s1, s2)
		}
	})
}
