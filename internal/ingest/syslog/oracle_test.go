package syslog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/spate-io/spate/internal/timeparse"
)

// corpus are the messages whose VictoriaLogs v1.52.1 rows are in
// testdata/vl_golden.json.
var corpus = []string{
	`<165>1 2023-06-03T17:42:32.123456789Z mymachine.example.com appname 12345 ID47 - This is a test message.`,
	`<165>1 2023-06-03T17:42:33.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"] An application event`,
	`<165>1 2023-06-03T17:42:34Z h1 app 1 - [a@1 x="1"][b@2 y="2" z="3"] two elements`,
	`<165>1 2023-06-03T17:42:35Z h1 app 1 - [a@1 q="say \"hi\"" b="x\]y" c="back\\slash" n="tab\there"] escapes`,
	`<165>1 2023-06-03T17:42:36Z h1 app 1 - [foo@123] no params`,
	`<165>1 2023-06-03T17:42:37Z h1 app 1 - [foo@123]`,
	`<14>1 - - - - - -`,
	`<14>1 - - - - - - nil header`,
	`<14>1 2023-06-03T17:42:38Z h2 a p m hello world without sd`,
	"<14>1 2023-06-03T17:42:39Z h2 a p m - \uFEFFmsg with bom",
	`<14>1 2023-06-03T17:42:32.5+02:00 h2 a p m - offset`,
	`<14>1 2023-06-03T17:42:40 h2 a p m - no zone`,
	`<14>1 1685814152 h2 a p m - unix seconds`,
	`<14>1 1685814152123 h2 a p m - unix millis`,
	`<14>1 2023-13-45Tbad h2 a p m - bad time`,
	`<14>1 2023-06-03T17:42:41.1234567891Z h2 a p m - ten fraction digits`,
	`<14>1 0 h2 a p m - zero time`,
	`<165>1 2023-06-03T17:42:42Z h3 app`,
	`<165>1 2023-06-03T17:42:43Z`,
	`<14>1 2023-06-03T17:42:44Z h4 a p m @cee:{"msg":"x","n":{"a":1,"b":{"c":"d"}},"arr":[1, 2,"s"],"nul":null,"t":true,"f":false}`,
	`<14>1 2023-06-03T17:42:45Z h4 a p m - @cee: {"message":"cee message","level":"warn"}`,
	`<14>1 2023-06-03T17:42:46Z h4 a p m - @cee: not json`,
	`<14>1 2023-06-03T17:42:47Z h5 a p m - CEF:0|Security|threatmanager|1.0|100|worm successfully stopped|10|src=10.0.0.1 dst=2.1.2.2 spt=1232`,
	`<14>1 2023-06-03T17:42:48Z h5 a p m - CEF:0|Ven\|dor|Prod|1|id|name with \\ slash|5|msg=hello\=world foo bar=baz\=q`,
	`<14>1 2023-06-03T17:42:49Z h5 a p m - CEF:0|broken`,
	`<14>1 2023-06-03T17:42:50Z h5 a p m - CEF:0|V|P|1|id|n|5|`,
	`<14>1 2023-06-03T17:42:51Z h6 a p m [key=value][k2=v2 x="y"] special sd`,
	`<14>1 2023-06-03T17:42:52Z h6 a p m [a@1 x=1 y=2] unquoted`,
	`<14>1 2023-06-03T17:42:53Z h6 a p m [a@1 x='q w' y=` + "`raw`" + `] other quotes`,
	`<14>1 2023-06-03T17:42:54Z h6 a p m [a@1  x="1"  y="2" ] spaces`,
	`<14>1 2023-06-03T17:42:55Z h6 a p m [a@1 x="1"]no space after sd`,
	`<14>1 2023-06-03T17:42:56Z h6 a p m [a@1 x="bad \q escape"] bad escape`,
	`<14>1 2023-06-03T17:42:57Z h6 a p m [a@1 x="unterminated] rest`,
	`<14>1 2023-06-03T17:42:58Z h6 a p m [a@1 hostname="sdhost"] sd field named like the header`,
	`<abc>1 2023-06-03T17:42:59Z h7 a p m - bad priority`,
	`<01>1 2023-06-03T17:43:00Z h7 a p m - leading zero priority`,
	`<1_3>1 2023-06-03T17:43:01Z h7 a p m - underscore priority`,
	`<999>1 2023-06-03T17:43:02Z h7 a p m - big priority`,
	`<>1 2023-06-03T17:43:03Z h7 a p m - empty priority`,
	`<14 no closing bracket`,
	`1 2023-06-03T17:43:04Z h8 a p m - no priority rfc5424`,
	`<34>Oct 11 22:14:15 mymachine su: 'su root' failed for lonvick on /dev/pts/8`,
	`<13>Nov  5 09:01:02 web01 nginx[1234]: upstream timed out`,
	`Nov  5 09:01:03 web01 nginx[1234]: no priority`,
	`<13>Nov  5 09:01:04 kernel: no hostname`,
	`<13>Nov  5 09:01:05 host app message without colon`,
	`<46>2025-01-23T12:15:23.965512+01:00 example rsyslogd: rfc3339 in 3164`,
	`<46>2025-01-23T12:15:24 example rsyslogd: rfc3339 without zone in 3164`,
	`<46>2025-01-23T12:15:99Z example rsyslogd: bad rfc3339 in 3164`,
	`<13>hello world this is not a header`,
	`<13>Foo 11 22:14:15 host app: bad month`,
	`<13>Nov 5 09:01:06 host app: one space one digit day`,
	`<13>Nov 05 09:01:07 host app: zero padded day`,
	`<13>Nov  5 09:01:08 host CEF:0|V|P|1|id|n|5|a=b c=d`,
	`<13>Nov  5 09:01:09 host CEF: not really cef`,
	`<13>Dec 31 23:59:59 host app: far in the future: last year`,
	`<13>Nov  5 09:01:10`,
	`<13>Nov  5 09:01:11x`,
	`<13>`,
	`<13>Nov  5 09:01:12 host`,
	`<13>Nov  5 09:01:13 host app[12: unterminated pid`,
	`<13>Nov  5 09:01:14 host app[12]`,
	`<13>Nov  5 09:01:15 host app: @cee:{"a":"b"}`,
	`<13>Nov  5 09:01:16 hôst ünïcode: 日本語 message`,
	`<13>short`,
	`plain text line with no header at all`,
	// As util-linux logger sends them.
	`<13>1 2026-11-26T04:10:36.863824+00:00 vm spatetest 42 - [timeQuality tzKnown="1" isSynced="0"] hello octet`,
	`<13>1 2026-11-26T04:10:36.865996+00:00 vm spatetest - - [timeQuality tzKnown="1" isSynced="1" syncAccuracy="414500"] hello newline`,
	`<13>Nov 26 04:10:37 vm spatetest[42]: logger udp`,
	// Fields without a name are _msg.
	`<14>1 2023-06-03T17:43:05Z h9 a p m [k=v =w]`,
	`<14>1 2023-06-03T17:43:06Z h9 a p m @cee:{"":"cee empty name","b":"c"}`,
	``,
}

// golden is one entry of testdata/vl_golden.json.
type golden struct {
	In  string            `json:"in"`
	VL  map[string]string `json:"vl"` // nil: VictoriaLogs stored no row
	Now string            `json:"now"`
}

const missingMsg = "missing _msg field; see https://docs.victoriametrics.com/victorialogs/keyconcepts/#message-field"

// TestVLGolden renders the corpus and compares it with the rows
// VictoriaLogs v1.52.1 stored for it (-syslog.timezone=UTC), _stream_id
// included, except the _time of messages without a time of their own
// (VictoriaLogs' ingestion time, ours is now).
func TestVLGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/vl_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var gs []golden
	if err := json.Unmarshal(data, &gs); err != nil {
		t.Fatal(err)
	}
	if len(gs) != len(corpus) {
		t.Errorf("golden has %d entries, corpus %d: regenerate it", len(gs), len(corpus))
	}
	for _, g := range gs {
		now, err := time.Parse(time.RFC3339Nano, g.Now)
		if err != nil {
			t.Fatal(err)
		}
		cfg := Config{Location: time.UTC}
		line, err := AppendMessage(nil, []byte(g.In), &cfg, now)
		if g.VL == nil {
			if err == nil {
				t.Errorf("%q: VictoriaLogs stores nothing, we store %s", g.In, line)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v; VictoriaLogs stores %v", g.In, err, g.VL)
			continue
		}
		var got map[string]string
		if err := json.Unmarshal(line, &got); err != nil {
			t.Fatalf("%q: bad line %s: %v", g.In, line, err)
		}
		want := map[string]string{}
		for k, v := range g.VL {
			want[k] = v
		}
		if want["_msg"] == missingMsg {
			delete(want, "_msg")
		}
		// VictoriaLogs gives its ingestion time to messages without one;
		// we give now.
		wt, _ := timeparse.ParseRFC3339(want["_time"])
		gt, _ := timeparse.ParseRFC3339(got["_time"])
		if d := time.Duration(wt - now.UnixNano()); d > -time.Minute && d < time.Minute {
			wt = now.UnixNano()
		}
		if wt != gt {
			t.Errorf("%q: _time %s, VictoriaLogs %s", g.In, got["_time"], want["_time"])
		}
		for _, m := range []map[string]string{got, want} {
			delete(m, "_time")
		}
		if a, b := dump(got), dump(want); a != b {
			t.Errorf("%q:\n got %s\nwant %s", g.In, a, b)
		}
	}
}

func dump(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%q ", k, m[k])
	}
	return b.String()
}

// TestVLGoldenGenerate rewrites testdata/vl_golden.json from a running
// VictoriaLogs v1.52.1 started with -syslog.timezone=UTC, a retention
// that keeps 2023 and -syslog.listenAddr.tcp; set
// SPATE_SYSLOG_VL="TCPADDR HTTPADDR" (a fresh storage: every row is read).
func TestVLGoldenGenerate(t *testing.T) {
	env := os.Getenv("SPATE_SYSLOG_VL")
	if env == "" {
		t.Skip("SPATE_SYSLOG_VL not set: no VictoriaLogs to ask")
	}
	tcpAddr, httpAddr, _ := strings.Cut(env, " ")
	seen := map[string]bool{}
	query := func() []string {
		resp, err := http.Get("http://" + httpAddr + "/internal/force_flush")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		resp, err = http.PostForm("http://"+httpAddr+"/select/logsql/query", url.Values{"query": {"*"}})
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var fresh []string
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			// A row is known by its time, stream and message: its text
			// changes when VictoriaLogs merges the part holding it
			// (duplicate fields collapse).
			var row map[string]string
			if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
				t.Fatal(err)
			}
			if k := row["_time"] + row["_stream_id"] + row["_msg"]; !seen[k] {
				seen[k] = true
				fresh = append(fresh, sc.Text())
			}
		}
		return fresh
	}
	if n := len(query()); n != 0 {
		t.Fatalf("VictoriaLogs already holds %d rows", n)
	}
	var gs []golden
	for _, m := range corpus {
		now := time.Now().UTC()
		c, err := net.Dial("tcp", tcpAddr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "%d %s", len(m), m)
		c.(*net.TCPConn).CloseWrite()
		io.Copy(io.Discard, c) // VictoriaLogs closes after the stream ends
		c.Close()
		var fresh []string
		for range 50 {
			time.Sleep(100 * time.Millisecond)
			if fresh = query(); len(fresh) > 0 {
				time.Sleep(300 * time.Millisecond)
				fresh = append(fresh, query()...)
				break
			}
		}
		g := golden{In: m, Now: now.Format(time.RFC3339Nano)}
		switch len(fresh) {
		case 0:
		case 1:
			if err := json.Unmarshal([]byte(fresh[0]), &g.VL); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("%q: %d rows: %q", m, len(fresh), fresh)
		}
		gs = append(gs, g)
	}
	var b bytes.Buffer
	b.WriteString("[\n")
	for i, g := range gs {
		j, _ := json.Marshal(g)
		b.Write(j)
		if i < len(gs)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]\n")
	if err := os.WriteFile("testdata/vl_golden.json", b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
