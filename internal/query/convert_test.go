package query

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/spate-io/spate/internal/fileread"
)

// TestLineConverterMatchesFormat reads lines of each format in that format
// and again as the JSON LineConverter makes of them: the rows must be the
// same.
func TestLineConverterMatchesFormat(t *testing.T) {
	now := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		f     InputFormat
		lines string
	}{
		{InputFormat{Kind: FormatLogfmt}, `ts=2026-01-01T00:00:00Z level=info msg="a \"quoted\" msg" flag n=5
level=error msg=plain-word time="2026-01-01 10:00:00"
no pairs here at all
a=1 a=2 b= "c"=d
x="broken quote
`},
		{InputFormat{Kind: FormatCSV, Comma: ',', Header: []string{"ts", "level", "msg"}}, `ts,level,msg
2026-01-01T00:00:00Z,info,"hello, world"
2026-01-01T00:00:01Z,warn,"say ""hi""",extra,more
,,
short
bad,"quote
`},
		{InputFormat{Kind: FormatCSV, Comma: '\t', Header: []string{"a", "b"}}, "a\tb\n1\t2\n\"x\ty\"\tz\n"},
		{InputFormat{Kind: FormatSyslog}, `<34>1 2026-10-11T22:14:15.003Z mymachine.example.com su - ID47 - 'su root' failed for lonvick on /dev/pts/8
<165>1 2026-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - [exampleSDID@32473 iut="3" eventSource="Application"] An application event
<13>Oct 11 22:14:15 host app[123]: a classic line
not syslog at all
`},
	} {
		t.Run(c.f.String(), func(t *testing.T) {
			for _, q := range []string{`*`, `* | fields _time, _msg, level, a, b, n, flag, field_4, hostname, app_name, proc_id, priority, facility, severity, iut`} {
				query, err := Parse(q, now)
				if err != nil {
					t.Fatal(err)
				}
				run := func(in []byte, f InputFormat) string {
					var sink rowsSink
					cfg := fileread.Config{Stdin: bytes.NewReader(in), Workers: 1}
					opts := Options{InputFormats: []InputFormat{f}, TimeZone: time.UTC}
					if _, err := Run(context.Background(), query, []string{"-"}, cfg, opts, &sink); err != nil {
						t.Fatal(err)
					}
					return sink.b.String()
				}
				want := run([]byte(c.lines), c.f)
				conv := NewLineConverter(c.f)
				var js []byte
				off := int64(0)
				for _, l := range strings.SplitAfter(c.lines, "\n") {
					if l == "" {
						continue
					}
					js, _ = conv.Append(js, []byte(strings.TrimSuffix(l, "\n")), off)
					off += int64(len(l))
				}
				got := run(js, InputFormat{})
				if got != want {
					t.Fatalf("%s\nconverted:\n%s\nrows:\n%s\nwant rows:\n%s", q, js, got, want)
				}
			}
		})
	}
	if NewLineConverter(InputFormat{}) != nil || NewLineConverter(InputFormat{Kind: FormatPlain}) != nil {
		t.Fatal("JSON and plain text need no converter")
	}
}
