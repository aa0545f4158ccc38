package syslog

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/spate-io/spate/internal/segment"
)

var now = time.Date(2026, 11, 26, 4, 0, 0, 0, time.UTC)

func line(t *testing.T, cfg Config, msg string) string {
	t.Helper()
	out, err := AppendMessage([]byte("prefix:"), []byte(msg), &cfg, now)
	if err != nil {
		t.Fatalf("%q: %v", msg, err)
	}
	s, ok := strings.CutPrefix(string(out), "prefix:")
	if !ok || !strings.HasSuffix(s, "\n") || strings.Count(s, "\n") != 1 {
		t.Fatalf("%q: not one line appended: %q", msg, out)
	}
	if !json.Valid([]byte(s)) {
		t.Fatalf("%q: invalid JSON %q", msg, s)
	}
	return strings.TrimSuffix(s, "\n")
}

func TestAppendMessageRFC5424(t *testing.T) {
	utc := Config{Location: time.UTC}
	for _, c := range []struct{ in, want string }{
		{`<165>1 2023-06-03T17:42:32.123456789Z mymachine.example.com appname 12345 ID47 [exampleSDID@32473 iut="3" eventSource="Application"][b@1 x="a \"q\" \] z"] An application event`,
			`{"_time":"2023-06-03T17:42:32.123456789Z","_stream":"{app_name=\"appname\",hostname=\"mymachine.example.com\",proc_id=\"12345\"}","_stream_id":"",` +
				`"hostname":"mymachine.example.com","app_name":"appname","proc_id":"12345","priority":"165","facility_keyword":"local4","level":"notice","facility":"20","severity":"5","format":"rfc5424","msg_id":"ID47",` +
				`"exampleSDID@32473.iut":"3","exampleSDID@32473.eventSource":"Application","b@1.x":"a \"q\" ] z","_msg":"An application event"}`},
		// NILVALUE: the time is now, '-' is kept elsewhere, as VictoriaLogs keeps it.
		{`<14>1 - - - - - - nil header`,
			`{"_time":"2026-11-26T04:00:00Z","_stream":"{app_name=\"-\",hostname=\"-\",proc_id=\"-\"}","_stream_id":"",` +
				`"hostname":"-","app_name":"-","proc_id":"-","priority":"14","facility_keyword":"user","level":"info","facility":"1","severity":"6","format":"rfc5424","msg_id":"-","_msg":"nil header"}`},
		// Zone offsets, unix times; no SD and no '-': the message is lost, as in VictoriaLogs.
		{`1 2023-06-03T19:42:32.5+02:00 h a p m text`,
			`{"_time":"2023-06-03T17:42:32.5Z","_stream":"{app_name=\"a\",hostname=\"h\",proc_id=\"p\"}","_stream_id":"",` +
				`"hostname":"h","app_name":"a","proc_id":"p","format":"rfc5424","msg_id":"m"}`},
		{`<14>1 1685814152 h a - m - unix`,
			`{"_time":"2023-06-03T17:42:32Z","_stream":"{app_name=\"a\",hostname=\"h\",proc_id=\"-\"}","_stream_id":"",` +
				`"hostname":"h","app_name":"a","proc_id":"-","priority":"14","facility_keyword":"user","level":"info","facility":"1","severity":"6","format":"rfc5424","msg_id":"m","_msg":"unix"}`},
		// Nothing at all: the time only.
		{``, `{"_time":"2026-11-26T04:00:00Z","_stream":"{}","_stream_id":"0000000000000000e934a84adb05276890d7f7bfcadabe92"}`},
	} {
		got := line(t, utc, c.in)
		if !sameJSON(got, c.want, strings.Contains(c.want, `"_stream_id":""`)) {
			t.Errorf("%q:\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}

// sameJSON compares two lines, field order included; with anyID the
// _stream_id values are not compared (TestVLGolden checks them).
func sameJSON(a, b string, anyID bool) bool {
	if anyID {
		a, b = dropID(a), dropID(b)
	}
	return a == b
}

func dropID(s string) string {
	i := strings.Index(s, `"_stream_id":"`)
	if i < 0 {
		return s
	}
	j := strings.IndexByte(s[i+14:], '"')
	return s[:i+14] + s[i+14+j:]
}

func TestAppendMessageRFC3164(t *testing.T) {
	est := time.FixedZone("EST", -5*3600)
	for _, c := range []struct {
		loc       *time.Location
		in, want  string
		wantFirst string // the _time, when want is empty
	}{
		{time.UTC, `<34>Oct 11 22:14:15 mymachine su: 'su root' failed`,
			`{"_time":"2026-10-11T22:14:15Z","_stream":"{app_name=\"su\",hostname=\"mymachine\"}","_stream_id":"",` +
				`"hostname":"mymachine","app_name":"su","priority":"34","facility_keyword":"auth","level":"critical","facility":"4","severity":"2","format":"rfc3164","_msg":"'su root' failed"}`, ""},
		// Without PRI; in Config.Location.
		{est, `Nov  5 09:01:02 web01 nginx[1234]: upstream timed out`,
			`{"_time":"2026-11-05T14:01:02Z","_stream":"{app_name=\"nginx\",hostname=\"web01\",proc_id=\"1234\"}","_stream_id":"",` +
				`"hostname":"web01","app_name":"nginx","proc_id":"1234","format":"rfc3164","_msg":"upstream timed out"}`, ""},
		// More than a day ahead of now: last year.
		{time.UTC, `<13>Nov 27 04:00:01 h app: x`, "", "2025-11-27T04:00:01Z"},
		{time.UTC, `<13>Nov 27 03:59:59 h app: x`, "", "2026-11-27T03:59:59Z"},
		// Evaluated in Location: the year of now there.
		{time.FixedZone("X", -6*3600), `<13>Dec 31 23:00:00 h app: x`, "", "2026-01-01T05:00:00Z"},
		// RFC 3339 in place of the classic time.
		{time.UTC, `<46>2025-01-23T12:15:23.965512+01:00 example rsyslogd: start`, "", "2025-01-23T11:15:23.965512Z"},
		// Not a header: the message; the time is now.
		{time.UTC, `<13>Foo 11 22:14:15 host app: bad month`,
			`{"_time":"2026-11-26T04:00:00Z","_stream":"{}","_stream_id":"","priority":"13","facility_keyword":"user","level":"notice","facility":"1","severity":"5","format":"rfc3164","_msg":"Foo 11 22:14:15 host app: bad month"}`, ""},
	} {
		got := line(t, Config{Location: c.loc}, c.in)
		if c.want != "" && !sameJSON(got, c.want, true) {
			t.Errorf("%q:\n got %s\nwant %s", c.in, got, c.want)
		}
		if c.wantFirst != "" && !strings.HasPrefix(got, `{"_time":"`+c.wantFirst+`"`) {
			t.Errorf("%q: got %s, want _time %s", c.in, got, c.wantFirst)
		}
	}
}

func TestAppendMessageBadTime(t *testing.T) {
	for _, in := range []string{
		`<14>1 2023-13-45Tbad h a p m - x`,
		`<14>1 2023-06-03T17:42:41.1234567891Z h a p m - ten fraction digits`,
		`<14>1 yesterday h a p m - x`,
	} {
		out, err := AppendMessage([]byte("x"), []byte(in), &Config{}, now)
		var te *TimeError
		if !errors.As(err, &te) || string(out) != "x" {
			t.Errorf("%q: %q, %v; want a TimeError and dst unchanged", in, out, err)
		}
	}
}

func TestAppendMessageInvalidUTF8(t *testing.T) {
	got := line(t, Config{}, "<14>1 2023-06-03T17:42:33Z h\xff a p m [x@1 k=\"\xfe\"] bad \xff\xfe utf8 \xc3\xa9")
	if !utf8.ValidString(got) {
		t.Fatalf("invalid UTF-8 in %q", got)
	}
	var m map[string]string
	json.Unmarshal([]byte(got), &m)
	if m["_msg"] != "bad \uFFFD\uFFFD utf8 é" || m["hostname"] != "h\uFFFD" || m["x@1.k"] != "\uFFFD" {
		t.Errorf("got %s", got)
	}
}

func TestAppendMessageStreamAndTenant(t *testing.T) {
	in := `<14>1 2023-06-03T17:42:33Z h a p m - x`
	cfg := Config{StreamFields: []string{"level", "hostname", "missing", "timestamp", "message"}}
	got := line(t, cfg, in)
	want := `{"_time":"2023-06-03T17:42:33Z","_stream":"{hostname=\"h\",level=\"info\"}","_stream_id":"","level":"info","hostname":"h","priority":"14","facility_keyword":"user","facility":"1","severity":"6","format":"rfc5424","app_name":"a","proc_id":"p","msg_id":"m","_msg":"x"}`
	if !sameJSON(got, want, true) {
		t.Errorf("got %s\nwant %s", got, want)
	}
	cfg.Tenant = segment.Tenant{AccountID: 1, ProjectID: 2}
	other := line(t, cfg, in)
	if other == got || dropID(other) != dropID(got) || !strings.Contains(other, `"_stream_id":"0000000100000002`) {
		t.Errorf("tenant 1:2: %s", other)
	}
	// No stream fields: _stream {}.
	if got := line(t, Config{StreamFields: []string{}}, in); !strings.Contains(got, `"_stream":"{}"`) {
		t.Errorf("no stream fields: %s", got)
	}
}

// TestEncoderNoAllocs checks the Encoder does not allocate once warm.
func TestEncoderNoAllocs(t *testing.T) {
	e := NewEncoder(Config{Location: time.UTC})
	msgs := [][]byte{[]byte(typical5424), []byte(`<34>Oct 11 22:14:15 mymachine su[12]: 'su root' failed for lonvick on /dev/pts/8`)}
	var dst []byte
	allocs := testing.AllocsPerRun(100, func() {
		for _, m := range msgs {
			var err error
			if dst, err = e.Append(dst[:0], m, now); err != nil {
				t.Fatal(err)
			}
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per run", allocs)
	}
}

const typical5424 = `<165>1 2023-06-03T17:42:32.123456Z web-17.example.com nginx 4711 access [meta@32473 sequenceId="1234" sysUpTime="37"] 10.1.2.3 - - "GET /api/v1/items?id=42 HTTP/1.1" 200 512 "-" "curl/8.5.0"`

func FuzzAppendMessage(f *testing.F) {
	f.Add([]byte(typical5424))
	f.Add([]byte("<13>Oct 11 22:14:15 h app[1]: CEF:0|a|b|c|d|e|f|k=v"))
	f.Add([]byte(`<14>1 - h a p m @cee:{"":"x","_time":"y","_stream":"z","a":{"b":[1]}}`))
	e := NewEncoder(Config{Location: time.UTC})
	f.Fuzz(func(t *testing.T, msg []byte) {
		out, err := e.Append(nil, msg, now)
		if err != nil {
			if len(out) != 0 {
				t.Fatalf("%q: output %q with error %v", msg, out, err)
			}
			return
		}
		if !strings.HasSuffix(string(out), "\n") || strings.Count(string(out), "\n") != 1 || !json.Valid(out) || !utf8.Valid(out) {
			t.Fatalf("%q: bad line %q", msg, out)
		}
	})
}
