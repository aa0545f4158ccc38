package syslogline

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

func parsed(p *Parser, line string) string {
	p.Parse(line)
	var b []string
	for _, f := range p.Fields {
		v := f.Value
		if strings.ContainsAny(v, " \"") || v == "" {
			v = `"` + strings.ReplaceAll(v, `"`, `\"`) + `"`
		}
		b = append(b, f.Name+"="+v)
	}
	return strings.Join(b, " ")
}

// TestParser checks the VictoriaLogs v1.52.1 behaviours where Parser and
// Parse part ways (internal/ingest/syslog checks many more against rows
// VictoriaLogs stored).
func TestParser(t *testing.T) {
	p := &Parser{Location: time.UTC, Now: time.Date(2026, 11, 26, 4, 0, 0, 0, time.UTC)}
	for _, c := range []struct{ in, want string }{
		{`<999>x`, `priority=999 facility_keyword=unknown level=debug facility=124 severity=7 format=rfc3164 message=x`},
		{`<abc>1 2023-06-03T17:42:32Z h a p m - x`, `priority=abc`},
		{`<01>x`, `priority=01`},
		{`<1_3>x`, `priority=1_3 facility_keyword=user level=notice facility=1 severity=5 format=rfc3164 message=x`},
		{`<14 no close`, ``},
		{``, ``},
		{`<34>Oct 11 22:14:15 mymachine su: failed`,
			`priority=34 facility_keyword=auth level=critical facility=4 severity=2 format=rfc3164 timestamp=2026-10-11T22:14:15Z hostname=mymachine app_name=su message=failed`},
		{`Dec 31 23:59:59 h app: x`, `format=rfc3164 timestamp=2025-12-31T23:59:59Z hostname=h app_name=app message=x`},
		{`Foo 11 22:14:15 h app: x`, `format=rfc3164 message="Foo 11 22:14:15 h app: x"`},
		{`<46>2025-01-23T12:15:23.965512+01:00 example rsyslogd: start`,
			`priority=46 facility_keyword=syslog level=info facility=5 severity=6 format=rfc3164 timestamp=2025-01-23T11:15:23.965512Z hostname=example app_name=rsyslogd message=start`},
		// RFC 5424: no SD and no '-': the message is left out.
		{`1 2023-06-03T17:42:32Z h a p m words`, `format=rfc5424 timestamp=2023-06-03T17:42:32Z hostname=h app_name=a proc_id=p msg_id=m`},
		// An element ending in '=' (VictoriaLogs v1.52.1 panics on it).
		{`1 2023-06-03T17:42:32Z h a p m [id a=`, `format=rfc5424 timestamp=2023-06-03T17:42:32Z hostname=h app_name=a proc_id=p msg_id=m`},
		{`1 - h a p m [a@1 x="q\"\]" y=1 z='s' w=` + "`r`" + ` bad="\q"] m`,
			`format=rfc5424 timestamp=- hostname=h app_name=a proc_id=p msg_id=m a@1.x="q\"]" a@1.y=1 a@1.z=s a@1.w=r a@1.bad="\"\q\"" message=m`},
		{`1 - h a p m - CEF:0|V\|x|P|1|id|n|5|k=a\=b c k2=v\=`,
			`format=rfc5424 timestamp=- hostname=h app_name=a proc_id=p msg_id=m cef.version=0 cef.device_vendor=V|x cef.device_product=P cef.device_version=1 cef.device_event_class_id=id cef.name=n cef.severity=5 cef.extension.k="a=b c" cef.extension.k2=v\=`},
		{`1 - h a p m - CEF:0|V`, `format=rfc5424 timestamp=- hostname=h app_name=a proc_id=p msg_id=m message=CEF:0|V`},
		{`1 - h a p m @cee:{"a":{"b":1},"n":null,"l":[1, "x"]}`, `format=rfc5424 timestamp=- hostname=h app_name=a proc_id=p msg_id=m a.b=1 l="[1,\"x\"]"`},
		{`1 - h a p m - @cee: nope`, `format=rfc5424 timestamp=- hostname=h app_name=a proc_id=p msg_id=m message="@cee: nope"`},
		{`<13>Nov  5 09:01:08 host CEF:0|V|P|1|id|n|5|a=b`,
			`priority=13 facility_keyword=user level=notice facility=1 severity=5 format=rfc3164 timestamp=2026-11-05T09:01:08Z hostname=host app_name=CEF cef.version=0 cef.device_vendor=V cef.device_product=P cef.device_version=1 cef.device_event_class_id=id cef.name=n cef.severity=5 cef.extension.a=b`},
	} {
		if got := parsed(p, c.in); got != c.want {
			t.Errorf("Parse(%q)\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}

// TestParserYearZone checks Year and ZonelessLocation, which unpack_syslog
// sets: the UTC year of its clock, and RFC 3339 times without a zone at a
// zone other than that of RFC 3164 stamps.
func TestParserYearZone(t *testing.T) {
	east := time.FixedZone("", 3*3600)
	// 2026-12-31T22:00:00Z is already 2027 at UTC+3.
	p := &Parser{Location: east, Now: time.Date(2026, 12, 31, 22, 0, 0, 0, time.UTC), ZonelessLocation: time.FixedZone("", -3600)}
	f := func(in, want string) {
		t.Helper()
		if got := parsed(p, in); got != want {
			t.Errorf("Parse(%q)\n got %s\nwant %s", in, got, want)
		}
	}
	f(`Jan  1 00:30:00 h a: x`, `format=rfc3164 timestamp=2026-12-31T21:30:00Z hostname=h app_name=a message=x`) // 2027 by Location's year
	f(`2026-01-02T03:04:05 h a: x`, `format=rfc3164 timestamp=2026-01-02T04:04:05Z hostname=h app_name=a message=x`)
	p.Year = 2026
	f(`Jan  1 00:30:00 h a: x`, `format=rfc3164 timestamp=2025-12-31T21:30:00Z hostname=h app_name=a message=x`)
	f(`Dec 31 23:30:00 h a: x`, `format=rfc3164 timestamp=2026-12-31T20:30:00Z hostname=h app_name=a message=x`)
}

func TestParseTime(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // "" for no
	}{
		{"2023-06-03T17:42:32Z", "2023-06-03T17:42:32Z"},
		{"2023-06-03 17:42:32.5+02:00", "2023-06-03T15:42:32.5Z"},
		{"2023-06-03T17:42:32.123456789-0130", "2023-06-03T19:12:32.123456789Z"},
		{"2023-06-03T17:42:32", "2023-06-03T17:42:32Z"},  // no zone: loc (UTC here)
		{"2023-13-99T18:00:13Z", "2024-04-08T18:00:13Z"}, // rolls over, as in VictoriaLogs
		{"2023-06-03T17:42:32.1234567891Z", ""},
		{"2023-06-03T17:42:32+2", ""},
		{"2023-06-03T17:42:3", ""},
		{"1600-06-03T17:42:32Z", ""},
		{"2023-06-03X17:42:32Z", ""},
	} {
		ns, ok := ParseTime(c.in, time.UTC)
		got := ""
		if ok {
			got = time.Unix(0, ns).UTC().Format(time.RFC3339Nano)
		}
		if got != c.want {
			t.Errorf("ParseTime(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func FuzzParser(f *testing.F) {
	f.Add(`<14>1 2025-02-18T11:37:42+02:00 localhost Test - - [test event="quote \"test\""][a=b] Test message`)
	f.Add(`<34>Oct 11 22:14:15 mymachine su[1]: CEF:0|a|b|c|d|e|f|k=v`)
	f.Add(`1 - h a p m @cee:{"a":[1]}`)
	f.Add(`1 - h a p m [id a=`)
	p := &Parser{Location: time.UTC}
	f.Fuzz(func(t *testing.T, s string) {
		p.Parse(s) // must not panic
		for _, fl := range p.Fields {
			// RFC 3164 times are rewritten; they must read back.
			if fl.Name == "timestamp" && strings.HasSuffix(fl.Value, "Z") && !strings.HasPrefix(s, "1 ") && !strings.Contains(s, ">1 ") {
				if _, ok := ParseTime(fl.Value, nil); !ok {
					t.Fatalf("%q: timestamp %q does not parse", s, fl.Value)
				}
			}
		}
	})
}

func BenchmarkParser(b *testing.B) {
	line := `<165>1 2023-06-03T17:42:32.123456Z web-17.example.com nginx 4711 access [meta@32473 sequenceId="1234" sysUpTime="37"] 10.1.2.3 - - "GET / HTTP/1.1" 200 512`
	p := &Parser{Location: time.UTC}
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		p.Parse(line)
	}
}

// unquoteRef is unquote without its fast path: strconv decides double
// and back quotes. Single quotes have no fast path; unquote decides them.
func unquoteRef(s string) (string, int, bool) {
	switch s[0] {
	case '"', '`':
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return "", 0, false
		}
		v, err := strconv.Unquote(q)
		if err != nil {
			return "", 0, false
		}
		return v, len(q), true
	}
	return unquote(s)
}

// TestUnquote checks unquote, fast path included, against strconv on
// random quoted prefixes, and indexByte2 against strings.IndexAny.
func TestUnquote(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	parts := []string{`"`, `"`, "a", "bc", " ", `\`, `\"`, `\n`, "\n", "\t", "é", "\xff", "]", "=", "`", "'"}
	for range 100000 {
		var b strings.Builder
		b.WriteString([]string{`"`, `"`, "`", "'"}[rng.IntN(4)])
		for range rng.IntN(12) {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		s := b.String()
		v, n, ok := unquote(s)
		wv, wn, wok := unquoteRef(s)
		if v != wv || n != wn || ok != wok {
			t.Fatalf("unquote(%q) = %q, %d, %v; strconv: %q, %d, %v", s, v, n, ok, wv, wn, wok)
		}
		for _, set := range []string{" ]", "= "} {
			if got, want := indexByte2(s, set[0], set[1]), strings.IndexAny(s, set); got != want {
				t.Fatalf("indexByte2(%q, %q) = %d, want %d", s, set, got, want)
			}
		}
	}
}
