package syslogline

import (
	"strings"
	"testing"
)

func fields(line string) string {
	var b []string
	Parse(line, func(name, value string) {
		if strings.ContainsAny(value, " \"") || value == "" {
			value = `"` + strings.ReplaceAll(value, `"`, `\"`) + `"`
		}
		b = append(b, name+"="+value)
	})
	return strings.Join(b, " ")
}

func TestParse(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`<165>1 2023-06-03T17:42:32.123456789Z mymachine.example.com appname 12345 ID47 - This is a test message.`,
			`priority=165 facility_keyword=local4 level=notice facility=20 severity=5 format=rfc5424 timestamp=2023-06-03T17:42:32.123456789Z hostname=mymachine.example.com app_name=appname proc_id=12345 msg_id=ID47 message="This is a test message."`},
		{`1 2023-06-03T17:42:32Z host app 1 ID - msg`,
			`format=rfc5424 timestamp=2023-06-03T17:42:32Z hostname=host app_name=app proc_id=1 msg_id=ID message=msg`},
		{`<165>1 2023-06-03T17:42:00Z h a 1 ID47 [exampleSDID@32473 iut="3" eventSource="Application 123 = ] 56" eventID="11211"] With data.`,
			`priority=165 facility_keyword=local4 level=notice facility=20 severity=5 format=rfc5424 timestamp=2023-06-03T17:42:00Z hostname=h app_name=a proc_id=1 msg_id=ID47 exampleSDID@32473.iut=3 exampleSDID@32473.eventSource="Application 123 = ] 56" exampleSDID@32473.eventID=11211 message="With data."`},
		{`<14>1 2025-02-18T11:37:42+02:00 localhost Test - - [test event="quote \"test\""][meta seq="7"][abc=def] Test message`,
			`priority=14 facility_keyword=user level=info facility=1 severity=6 format=rfc5424 timestamp=2025-02-18T11:37:42+02:00 hostname=localhost app_name=Test proc_id=- msg_id=- test.event="quote \"test\"" meta.seq=7 abc=def message="Test message"`},
		{`<165>1 2023-06-03T17:42:32Z h app 12345 ID47 [foo@123]`,
			`priority=165 facility_keyword=local4 level=notice facility=20 severity=5 format=rfc5424 timestamp=2023-06-03T17:42:32Z hostname=h app_name=app proc_id=12345 msg_id=ID47 foo@123=""`},
		{`<165>1 2023-06-03T17:42:32Z h app`,
			`priority=165 facility_keyword=local4 level=notice facility=20 severity=5 format=rfc5424 timestamp=2023-06-03T17:42:32Z hostname=h app_name=app`},
		{`<34>Oct 11 22:14:15 mymachine su: 'su root' failed for lonvick on /dev/pts/8`,
			`priority=34 facility_keyword=auth level=critical facility=4 severity=2 format=rfc3164 timestamp="Oct 11 22:14:15" hostname=mymachine app_name=su message="'su root' failed for lonvick on /dev/pts/8"`},
		{`Nov  5 09:01:02 web01 nginx[1234]: upstream timed out`,
			`format=rfc3164 timestamp="Nov  5 09:01:02" hostname=web01 app_name=nginx proc_id=1234 message="upstream timed out"`},
		{`<46>2025-01-23T12:15:23.965512+01:00 example rsyslogd: start`,
			`priority=46 facility_keyword=syslog level=info facility=5 severity=6 format=rfc3164 timestamp=2025-01-23T12:15:23.965512+01:00 hostname=example app_name=rsyslogd message=start`},
		{`Nov  5 09:01:02 kernel: booted`, `format=rfc3164 timestamp="Nov  5 09:01:02" app_name=kernel message=booted`},
		{`foo bar baz`, `format=rfc3164 message="foo bar baz"`},
		{`<999>x`, `priority=999 format=rfc3164 message=x`},
	} {
		if got := fields(c.in); got != c.want {
			t.Errorf("Parse(%q)\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(`<14>1 2025-02-18T11:37:42+02:00 localhost Test - - [test event="quote \"test\""] Test message`)
	f.Add(`<34>Oct 11 22:14:15 mymachine su[1]: x`)
	f.Fuzz(func(t *testing.T, s string) {
		Parse(s, func(name, value string) {
			if name == "" && value != "" && !strings.Contains(s, value) {
				t.Fatalf("empty name for %q", value)
			}
		})
	})
}

func BenchmarkParse(b *testing.B) {
	line := `<34>Oct 11 22:14:15 mymachine nginx[1234]: 10.0.0.1 - - "GET / HTTP/1.1" 200 512`
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		Parse(line, func(name, value string) { n++ })
	}
}
