package query

import (
	"testing"
	"time"
)

func TestPruner(t *testing.T) {
	f := func(q string, lo, hi time.Time, stream string, wantTime, wantStream bool) {
		t.Helper()
		pq, err := Parse(q, testNow)
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewPruner(pq)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.SkipTimes(lo.UnixNano(), hi.UnixNano()); got != wantTime {
			t.Fatalf("%s: SkipTimes(%v, %v) = %v", q, lo, hi, got)
		}
		if got := p.SkipStream(stream); got != wantStream {
			t.Fatalf("%s: SkipStream(%s) = %v", q, stream, got)
		}
	}
	at := func(h int) time.Time { return testNow.Add(time.Duration(h) * time.Hour) }
	// testNow is 2026-01-02T03:04:05Z.
	f(`*`, at(-100), at(-99), `{}`, false, false)
	f(`_time:1h error`, at(-3), at(-2), `{}`, true, false)
	f(`_time:1h error`, at(-3), at(0), `{}`, false, false)
	f(`_time:1h OR x`, at(-3), at(-2), `{}`, false, false) // not at the top level
	f(`_time:[2026-01-01, 2026-01-02) _time:>2026-01-01T12:00:00Z`, at(-20), at(-16), `{}`, true, false)
	f(`{app="a"} error`, at(-3), at(-2), `{app="b"}`, false, true)
	f(`{app="a"} error`, at(-3), at(-2), `{app="a",x="y"}`, false, false)
	f(`{app="a"} error`, at(-3), at(-2), `{}`, false, true)
	f(`{app="a"} OR error`, at(-3), at(-2), `{}`, false, false)
	f(`NOT {app="a"}`, at(-3), at(-2), `{app="a"}`, false, false)
	f(`{app=~"a|b"} {env!="prod"} _time:1h`, at(-1), at(0), `{app="b",env="prod"}`, false, true)
	f(`{app=""}`, at(-1), at(0), `not a stream`, false, true)
}
