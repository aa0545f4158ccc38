package query

import (
	"strings"
	"testing"
)

func TestSplitCSV(t *testing.T) {
	var a arena
	for _, c := range []struct {
		in   string
		want []string
		ok   bool
	}{
		{`a,b,c`, []string{"a", "b", "c"}, true},
		{`a,,c,`, []string{"a", "", "c", ""}, true},
		{`"x, y",2`, []string{"x, y", "2"}, true},
		{`"say ""hi""",""`, []string{`say "hi"`, ""}, true},
		{`"open,1`, nil, false},
		{`"a"b,1`, nil, false},
	} {
		got, ok := splitCSV(nil, c.in, ',', &a)
		if ok != c.ok || ok && strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("splitCSV(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
	if got, _ := splitCSV(nil, "a\tb c\t3", '\t', &a); strings.Join(got, "|") != "a|b c|3" {
		t.Errorf("tabs: %q", got)
	}
}

func TestParseLogfmt(t *testing.T) {
	var a arena
	got := parseLogfmt(nil, `level=info msg="a \"quoted\" word" empty= flag dur=1.5s`, &a)
	want := []Field{{"level", "info"}, {"msg", `a "quoted" word`}, {"empty", ""}, {"flag", ""}, {"dur", "1.5s"}}
	if len(got) != len(want) {
		t.Fatalf("%q", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("pair %d: %q, want %q", i, got[i], want[i])
		}
	}
}

func TestSniff(t *testing.T) {
	for _, c := range []struct {
		name, head, want string
		binary           bool
	}{
		{"ndjson", "{\"a\":1}\n{\"a\":2}\n", "json", false},
		{"plain", "Nov 24 started\nsomething happened\n", "json", false},
		{"logfmt", "ts=2026-01-01T00:00:00Z level=info msg=\"a b\"\nts=2026-01-01T00:00:01Z level=warn msg=c\n", "logfmt", false},
		{"csv", "ts,level,msg\n2026-01-01,info,\"a, b\"\n2026-01-02,warn,c\n", "csv", false},
		{"tsv", "ts\tlevel\tmsg\n2026-01-01\tinfo\ta, b\n", "tsv", false},
		{"csv-like prose", "Hello, world\nWell, then, yes\n", "json", false},
		{"one header line", "a,b,c\n", "json", false},
		{"binary", "ELF\x00\x01\x02\n", "json", true},
		{"prose with =", "x=1 happened today after lunch\nand then more\n", "json", false},
		{"syslog 3164", "Nov  5 09:01:02 web01 nginx[1234]: upstream timed out\nNov  5 09:01:03 web01 cron[1]: x=1 y=2 z=3\n", "syslog", false},
		{"syslog 5424", "<165>1 2026-06-03T17:42:32Z h app 1 ID - a\n<14>1 2026-06-03T17:42:33Z h app 1 ID - b\n", "syslog", false},
	} {
		f, binary := Sniff([]byte(c.head))
		if f.String() != c.want || binary != c.binary {
			t.Errorf("%s: %s (binary %v), want %s (binary %v)", c.name, f, binary, c.want, c.binary)
		}
		if c.want == "csv" && strings.Join(f.Header, "|") != "ts|level|msg" {
			t.Errorf("%s: header %q", c.name, f.Header)
		}
	}
}

// BenchmarkBuildAs measures turning one line into fields, per format.
func BenchmarkBuildAs(b *testing.B) {
	for _, c := range []struct {
		name, line string
		f          *InputFormat
	}{
		{"json", `{"ts":"2026-01-01T00:00:00Z","level":"info","service":"api","msg":"request done","latency_ms":12.5}`, nil},
		{"logfmt", `ts=2026-01-01T00:00:00Z level=info service=api msg="request done" latency_ms=12.5`, &InputFormat{Kind: FormatLogfmt}},
		{"csv", `2026-01-01T00:00:00Z,info,api,request done,12.5`, &InputFormat{Kind: FormatCSV, Comma: ',', Header: []string{"ts", "level", "service", "msg", "latency_ms"}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			q, err := Parse("* | stats by (service) count()", testNow)
			if err != nil {
				b.Fatal(err)
			}
			p, err := newPlan(q, Options{})
			if err != nil {
				b.Fatal(err)
			}
			var a arena
			rb := newRecordBuilder(p, &a)
			var r Row
			line := []byte(c.line)
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			for b.Loop() {
				a.reset()
				if !rb.buildAs(c.f, line, 100, &r) || r.Get("service") != "api" {
					b.Fatal("no service")
				}
			}
		})
	}
}
