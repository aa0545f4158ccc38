package cli

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spate-io/spate/internal/ingest/syslog"
	"github.com/spate-io/spate/internal/syslogline"
)

// The randomized differential test of syslog ingest: random RFC 5424 and
// RFC 3164 messages (PRI edges, NILVALUEs, structured data with escapes,
// BOM, CEF, CEE, invalid UTF-8, long lines), framed with octet counting or
// newlines over TCP, or sent as UDP datagrams of one or more messages, go
// to VictoriaLogs v1.52.1's and to spate serve's syslog listeners; both
// must store the same rows (as sets of field maps, _time, _stream and
// _stream_id included). RFC 3164 times are read in a zone of their own
// (-syslog.timezone, --syslog-tz), which is VictoriaLogs' process zone too,
// as it reads RFC 3339 times without a zone in it.
//
// The generator keeps out what docs/serve.md lists as different on
// purpose: newline-framed lines without a space or ending in '\r', lines
// over the line limit, a bad timestamp anywhere but last in its
// connection or datagram (VictoriaLogs drops the rest), a field name
// twice, a stream field over 64 KiB; and VictoriaLogs' rows without _msg
// read msg, message or log as spate does.
//
// SPATE_SYSLOGDIFF_N (connections and datagrams, default 120) and
// SPATE_SYSLOGDIFF_SEED (default 1) make larger exploratory runs.

// sysCase is what one TCP connection or UDP datagram carries.
type sysCase struct {
	transport string // "tcp-octet", "tcp-newline", "udp-octet", "udp-newline"
	msgs      []string
	// tail is sent after the framed messages, as it is: a frame both
	// servers drop, with what follows it.
	tail string
}

// payload frames c's messages.
func (c *sysCase) payload() []byte {
	var b []byte
	for _, m := range c.msgs {
		if strings.HasSuffix(c.transport, "octet") {
			b = strconv.AppendInt(b, int64(len(m)), 10)
			b = append(b, ' ')
			b = append(b, m...)
		} else {
			b = append(b, m...)
			b = append(b, '\n')
		}
	}
	return append(b, c.tail...)
}

// sysGen makes random syslog messages from one seed.
type sysGen struct {
	r *rand.Rand
	// now is when the run starts: RFC 3164 dates stay days away from it,
	// where VictoriaLogs and spate might pick different years.
	now time.Time
	// lineMax is the line limit both servers run with.
	lineMax int
}

func (g *sysGen) pick(n int) int        { return g.r.IntN(n) }
func (g *sysGen) chance(p float64) bool { return g.r.Float64() < p }
func (g *sysGen) of(s ...string) string { return s[g.pick(len(s))] }

// pri returns a <PRI>: mostly valid, sometimes an edge VictoriaLogs reads
// its own way.
func (g *sysGen) pri() string {
	if g.chance(0.8) {
		return "<" + strconv.Itoa(g.pick(192)) + ">"
	}
	return g.of("<0>", "<7>", "<8>", "<191>", "<192>", "<999>", "<01>", "<abc>", "<>", "<1_3>", "<-1>", "<18446744073709551615>", "<18446744073709551616>", "")
}

// token returns a header word: NILVALUE, ASCII, or not.
func (g *sysGen) token() string {
	if g.chance(0.2) {
		return "-"
	}
	return g.of("host1", "web-01.example.com", "app", "sshd", "cron", "12345", "ID47", "x", "käse", "用户", "a:b", "a[1]", "CEF", "_", "1.2.3.4")
}

// rfc3339 returns an RFC 5424 time, with or without fraction and zone.
func (g *sysGen) rfc3339() string {
	t := time.Date(1990+g.pick(60), time.Month(1+g.pick(12)), 1+g.pick(28), g.pick(24), g.pick(60), g.pick(60), 0, time.UTC)
	s := t.Format("2006-01-02T15:04:05")
	if g.chance(0.5) {
		digits := 1 + g.pick(9)
		s += "." + fmt.Sprintf("%09d", g.r.IntN(1e9))[:digits]
	}
	return s + g.of("Z", "Z", "+02:00", "-07:30", "+0530", "", "+00:00")
}

// stamp returns an RFC 3164 "Mmm dd hh:mm:ss", days away from now, its
// day padded with a space (or, rarely, a zero).
func (g *sysGen) stamp() string {
	for {
		t := time.Date(g.now.Year(), time.Month(1+g.pick(12)), 1+g.pick(28), g.pick(24), g.pick(60), g.pick(60), 0, time.UTC)
		if d := t.Sub(g.now); d > -72*time.Hour && d < 72*time.Hour {
			continue
		}
		if g.chance(0.1) {
			return t.Format("Jan 02 15:04:05")
		}
		return t.Format(time.Stamp)
	}
}

// sdValue returns a structured-data param value, escaped as RFC 5424
// wants ('"', '\\' and ']').
func (g *sysGen) sdValue() string {
	v := g.of("1", "", "Application", "say \"hi\"", `back\slash`, "x]y", "é 用户", "a b c", "\\", "]", "\"", "tab\there", "1011", "=", "[nested]")
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, `]`, `\]`)
	return r.Replace(v)
}

// sd returns the STRUCTURED-DATA of an RFC 5424 message. No field name
// comes twice, nor takes a header field's name (a row with a field name
// twice reads back as either value in VictoriaLogs, docs/serve.md): the
// elements' IDs differ, and "[key=value ...]", whose params' names are
// taken as they are, has no hostname param (VictoriaLogs would have it
// twice in _stream, and crash).
func (g *sysGen) sd() string {
	if g.chance(0.35) {
		return "-"
	}
	used := map[string]bool{"hostname": true, "app_name": true, "proc_id": true, "msg_id": true, "level": true, "priority": true, "format": true}
	var b strings.Builder
	for range 1 + g.pick(3) {
		prefix := ""
		id := g.of("key=value", "k2=v2", "origin=1", "exampleSDID@32473", "origin", "meta", "timeQuality", "a@1", "x.y@9", "exampleSDID@32473")
		if k, _, ok := strings.Cut(id, "="); ok {
			if used[k] {
				continue
			}
			used[k] = true
		} else {
			if used[id+"."] || used[id] {
				continue
			}
			used[id+"."], prefix = true, id+"."
		}
		b.WriteByte('[')
		b.WriteString(id)
		for range g.pick(4) {
			name := g.of("iut", "eventSource", "eventID", "ip", "x", "hostname", "sequenceId", "é")
			if used[prefix+name] {
				continue
			}
			used[prefix+name] = true
			b.WriteString(" " + name + `="` + g.sdValue() + `"`)
		}
		b.WriteByte(']')
	}
	if b.Len() == 0 {
		return "-"
	}
	return b.String()
}

// text returns a message body.
func (g *sysGen) text() string {
	switch g.pick(14) {
	case 0:
		return ""
	case 1:
		return "\uFEFF" + g.of("with bom", "BOM é", "")
	case 2:
		return g.cef()
	case 3:
		return g.of(`@cee:{"msg":"x","n":{"a":1,"b":{"c":"d"}},"arr":[1,"s"],"nul":null}`, `@cee: {"message":"cee","lvl":"warn"}`, "@cee: not json", `@cee:{"":"empty key"}`)
	case 4:
		return g.of("bad \xff\xfe utf8", "cut \xe2\x82", "\xc3\x28 pair")
	case 5:
		return g.of("用户 登录 成功", "emoji 🙂 here", "ctl \x01\x7f chars", "tab\tin msg", "trailing space ")
	case 6:
		return g.of("  leading spaces", "a=b c=d", `quote " and \ back`, "[not sd] text", "- dash")
	default:
		return fmt.Sprintf("%s %d %s", g.of("user logged in", "disk almost full", "payment failed", "GET /index.html 200", "connection reset"), g.pick(1000), g.of("ok", "ERR", "warn", "done"))
	}
}

// cef returns a CEF payload, well-formed or not.
func (g *sysGen) cef() string {
	hdr := []string{"0", g.of("Security", `Ven\|dor`, "ACME"), g.of("threatmanager", "Prod"), "1.0", g.of("100", "id|x", "signature"), g.of("worm stopped", `name with \\ slash`, "n"), g.of("10", "5", "Low")}
	if g.chance(0.15) {
		hdr = hdr[:g.pick(len(hdr))]
	}
	s := "CEF:" + strings.Join(hdr, "|")
	if len(hdr) == 7 {
		s += "|" + g.of("", "src=10.0.0.1 dst=2.1.2.2 spt=1232", `msg=hello\=world foo bar=baz\=q`, "act=blocked a b c", "=noname", "k=v\\", "cs1=with\\nnewline cs1Label=x")
	}
	return s
}

// rfc5424 returns an RFC 5424 message; bad says its timestamp does not
// parse.
func (g *sysGen) rfc5424() (msg string, bad bool) {
	var b strings.Builder
	b.WriteString(g.pri())
	b.WriteString(g.of("1", "1", "1", "1", "1", "2"))
	b.WriteByte(' ')
	switch k := g.pick(20); {
	case k < 3:
		b.WriteString("-")
	case k == 3:
		b.WriteString(g.of("1685814152", "1685814152123", "1685814152.5", "0"))
	case k == 4:
		b.WriteString(g.of("2023-13-45Tbad", "2023-06-03T17:42:41.1234567891Z", "yesterday", "2023-06-03T25:00:00+99:00"))
		bad = true
	default:
		b.WriteString(g.rfc3339())
	}
	fields := []string{g.token(), g.token(), g.token(), g.token(), g.sd()}
	cut := len(fields)
	if g.chance(0.1) {
		cut = g.pick(len(fields))
	}
	for _, f := range fields[:cut] {
		b.WriteByte(' ')
		b.WriteString(f)
	}
	if cut == len(fields) && !g.chance(0.1) {
		b.WriteByte(' ')
		b.WriteString(g.text())
	}
	return b.String(), bad
}

// rfc3164 returns an RFC 3164 message, with or without PRI, hostname,
// [pid].
func (g *sysGen) rfc3164() string {
	var b strings.Builder
	if g.chance(0.85) {
		b.WriteString(g.pri())
	}
	if g.chance(0.85) {
		b.WriteString(g.stamp())
	} else {
		b.WriteString(g.of("2023-06-03T17:42:32Z", "2023-06-03T17:42:32.5+02:00", "2023-06-03T17:42:32", "Junk 3 00:00:00"))
	}
	b.WriteString(g.of(" ", " ", " ", "  "))
	if g.chance(0.7) {
		b.WriteString(g.of("host1", "web-01", "10.0.0.5", "用户"))
		b.WriteString(g.of(" ", " ", "  "))
	}
	tag := g.of("sshd", "cron", "app-x", "CEF", "su")
	switch g.pick(4) {
	case 0:
		b.WriteString(tag + "[" + strconv.Itoa(g.pick(65536)) + "]: ")
	case 1:
		b.WriteString(tag + ": ")
	case 2:
		b.WriteString(tag + "[" + g.of("", "12") + "]:")
	default:
		b.WriteString(tag + " ")
	}
	if tag == "CEF" && g.chance(0.6) {
		b.WriteString(strings.TrimPrefix(g.cef(), "CEF:"))
	} else {
		b.WriteString(g.text())
	}
	return b.String()
}

// message returns a random message; bad says it must end its case.
func (g *sysGen) message() (string, bool) {
	if g.chance(0.55) {
		return g.rfc5424()
	}
	return g.rfc3164(), false
}

// newlineSafe reports whether m can be newline framed: one frame in both
// servers (docs/serve.md).
func newlineSafe(m string) bool {
	i := strings.IndexByte(m, ' ')
	return i > 0 && !strings.ContainsAny(m, "\r\n") && (m[0] < '0' || m[0] > '9') && m[0] != '\n'
}

// sysCase returns a connection's or a datagram's messages.
func (g *sysGen) sysCase() sysCase {
	c := sysCase{transport: g.of("tcp-octet", "tcp-newline", "udp-octet", "udp-newline", "udp-newline")}
	n := 1 + g.pick(5)
	if strings.HasPrefix(c.transport, "udp") {
		n = 1 + g.pick(3)
		if c.transport == "udp-newline" && g.chance(0.6) {
			n = 1 // a plain datagram, what most senders send
		}
	}
	size := 0
	for len(c.msgs) < n {
		m, bad := g.message()
		newline := strings.HasSuffix(c.transport, "newline")
		if newline && !newlineSafe(m) {
			continue
		}
		if g.chance(0.03) {
			m = g.long(m, c.transport)
		}
		size += len(m) + 12
		if strings.HasPrefix(c.transport, "udp") && size > 60000 {
			break
		}
		c.msgs = append(c.msgs, m)
		if bad {
			return c
		}
	}
	if strings.HasSuffix(c.transport, "octet") && g.chance(0.08) {
		// An empty frame, or a bad one: an octet count over the limit,
		// not followed by a space, or cut short.
		c.tail = g.of("0 ", "0 0 ", "999999999 <14>1 - h a p m - over", "12x <14>1 - h a p m - bad count", "40 <14>1 - h a p m - cut short",
			"0 12 <14>1 - a b")
	}
	return c
}

// long pads m near the line limit (under it, and for octet counting at
// it): over it the servers differ on purpose.
func (g *sysGen) long(m, transport string) string {
	max := g.lineMax
	if strings.HasPrefix(transport, "udp") {
		max = 50000 + g.pick(10000)
	}
	want := max - g.pick(3)
	if strings.HasSuffix(transport, "octet") && g.chance(0.3) {
		want = max
	}
	pad := want - len(m)
	if pad <= 0 {
		return m
	}
	long := m + strings.Repeat(g.of("x", "é", " y"), pad)[:pad]
	// Not in a stream field (a message cut after its hostname): its
	// _stream would pass VictoriaLogs' 64 KiB index item limit
	// (docs/serve.md). Nor in the timestamp, which would not parse:
	// VictoriaLogs drops the rest of the connection.
	var p syslogline.Parser
	p.Parse(long)
	for _, f := range p.Fields {
		if len(f.Value) > 1000 && (f.Name == "timestamp" || slices.Contains(syslog.DefaultStreamFields, f.Name)) {
			return m
		}
	}
	return long
}

// sysSend sends every case to a server's syslog listeners at addr: each
// TCP case on a connection of its own, each UDP case as one datagram,
// paced: a full socket buffer drops datagrams, so once 8 or 100 KB are on
// their way it waits until received() (the server's count of datagrams
// received, from 0) has counted them. It returns how many datagrams it
// sent.
func sysSend(t *testing.T, addr string, cases []sysCase, received func() int) int {
	t.Helper()
	// The listeners may start after the HTTP one answers.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
	udp, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	sent, counted, inflight := 0, 0, 0
	for i := range cases {
		c := &cases[i]
		if strings.HasPrefix(c.transport, "udp") {
			p := c.payload()
			if sent-counted >= 8 || inflight+len(p) > 100<<10 {
				for deadline := time.Now().Add(10 * time.Second); counted < sent; time.Sleep(20 * time.Millisecond) {
					if counted = received(); counted < sent && time.Now().After(deadline) {
						t.Fatalf("%s received %d of %d datagrams: lost on the loopback, which says nothing of the rows", addr, counted, sent)
					}
				}
				inflight = 0
			}
			if _, err := udp.Write(p); err != nil {
				t.Fatalf("case %d: %v", i, err)
			}
			sent++
			inflight += len(p)
			time.Sleep(time.Millisecond)
			continue
		}
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Write(c.payload()); err != nil {
			t.Logf("case %d: %v", i, err) // the server may close first
		}
		conn.Close()
	}
	return sent
}

// udpReceived waits until the metric name at base counts want datagrams,
// and fails, naming the loss, if it does not within 10 s.
func udpReceived(t *testing.T, base, name string, want int) {
	t.Helper()
	got := 0
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if got = metricValue(t, base, name); got >= want {
			return
		}
	}
	t.Fatalf("%s received %d of %d datagrams: lost on the loopback, which says nothing of the rows", base, got, want)
}

// sysRows returns a server's rows as canonical JSON, sorted, with a
// _time within [from, to] (the ingestion time of messages without one)
// replaced by "now", once their count has stopped changing. With
// msgFallback (for VictoriaLogs' rows), a row without _msg gets the first
// of msg, message and log as _msg, as spate reads a line without _msg
// (docs/serve.md; an @cee: message's JSON may have them).
func sysRows(t *testing.T, base string, from, to time.Time, flush func(), msgFallback bool) []string {
	t.Helper()
	var rows []string
	last := -1
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if flush != nil {
			flush()
		}
		rows = sysQuery(t, base, from, to, msgFallback)
		if len(rows) == last && last > 0 {
			return rows
		}
		last = len(rows)
	}
	return rows
}

// sysQuery returns the rows of base's default tenant (syslog's, 0:0) as
// shipRows gives them.
func sysQuery(t *testing.T, base string, from, to time.Time, msgFallback bool) []string {
	t.Helper()
	return shipRows(t, base, 0, from, to, msgFallback) // syslog's tenant is 0:0
}

// shortRows returns rows with the middle of long ones cut out.
func shortRows(rows []string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		if len(r) > 700 {
			r = fmt.Sprintf("%s ...%d bytes... %s", r[:400], len(r)-600, r[len(r)-200:])
		}
		out[i] = r
	}
	return out
}

// TestShipperSyslogRandom is the randomized differential test of syslog
// ingest (see sysCase). It runs when SPATE_VICTORIALOGS names a
// VictoriaLogs v1.52.1 binary.
func TestShipperSyslogRandom(t *testing.T) {
	vlBin := victoriaLogsBin(t)
	n := envInt("SPATE_SYSLOGDIFF_N", 120)
	seed := envInt("SPATE_SYSLOGDIFF_SEED", 1)
	const tz, lineMax = "Etc/GMT-3", 256 << 10
	g := &sysGen{r: rand.New(rand.NewPCG(uint64(seed), 11)), now: time.Now(), lineMax: lineMax}
	cases := make([]sysCase, n)
	msgs := 0
	for i := range cases {
		cases[i] = g.sysCase()
		msgs += len(cases[i].msgs)
	}
	if dump := os.Getenv("SPATE_SYSLOGDIFF_DUMP"); dump != "" {
		var b strings.Builder
		for i, c := range cases {
			for _, m := range c.msgs {
				fmt.Fprintf(&b, "%d %s %q\n", i, c.transport, m)
			}
			if c.tail != "" {
				fmt.Fprintf(&b, "%d %s-tail %q\n", i, c.transport, c.tail)
			}
		}
		os.WriteFile(dump, []byte(b.String()), 0o644)
	}
	t.Setenv(mainEnv, "1")
	t.Setenv("TZ", tz) // VictoriaLogs reads RFC 3339 times without a zone in its process zone
	vlAddr := freeAddr(t)
	vl := startVictoriaLogsArgs(t, vlBin, "-syslog.listenAddr.tcp="+vlAddr, "-syslog.listenAddr.udp="+vlAddr,
		"-syslog.timezone="+tz, "-futureRetention=100y", "-insert.maxLineSizeBytes="+strconv.Itoa(lineMax))
	spAddr := freeAddr(t)
	// --fsync never: spate stores datagrams as fast as they come, none
	// dropped while storage is behind (docs/serve.md).
	srv := startServe(t, t.TempDir(), "--syslog-tcp", spAddr, "--syslog-udp", spAddr, "--syslog-tz", tz,
		"--max-line-size", strconv.Itoa(lineMax), "--fsync", "never")
	from := time.Now().Add(-time.Minute)
	dgrams := sysSend(t, vlAddr, cases, func() int { return metricValue(t, vl, `vl_udp_reqests_total{type="syslog"}`) })
	sysSend(t, spAddr, cases, func() int {
		// Received, and stored: spate drops datagrams past a short queue
		// while storage is behind (docs/serve.md).
		n, m := metricValue(t, srv.url, "spate_syslog_datagrams_total"), -1
		for m2 := 0; m != m2; time.Sleep(20 * time.Millisecond) {
			m, m2 = m2, metricValue(t, srv.url, "spate_syslog_messages_total")
		}
		return n
	})
	udpReceived(t, vl, `vl_udp_reqests_total{type="syslog"}`, dgrams)
	udpReceived(t, srv.url, "spate_syslog_datagrams_total", dgrams)
	to := time.Now().Add(2 * time.Minute)
	vr := sysRows(t, vl, from, to, func() { forceFlush(t, vl) }, true)
	sr := sysRows(t, srv.url, from, to, nil, false)
	if d := metricValue(t, srv.url, `spate_syslog_dropped_total{reason="udp_queue_full"}`); d > 0 {
		t.Errorf("spate dropped %d datagrams while storage was behind: the rows cannot be compared", d)
	}
	var onlyVL, onlySp []string
	i, j, equal := 0, 0, 0
	for i < len(vr) || j < len(sr) {
		switch {
		case j == len(sr) || i < len(vr) && vr[i] < sr[j]:
			onlyVL = append(onlyVL, vr[i])
			i++
		case i == len(vr) || sr[j] < vr[i]:
			onlySp = append(onlySp, sr[j])
			j++
		default:
			equal++
			i++
			j++
		}
	}
	if len(onlyVL)+len(onlySp) > 0 {
		t.Errorf("rows differ: %d only in VictoriaLogs, %d only in spate\nVictoriaLogs %s\nspate        %s", len(onlyVL), len(onlySp),
			strings.Join(shortRows(onlyVL), "\n             "), strings.Join(shortRows(onlySp), "\n             "))
	}
	t.Logf("%d messages in %d connections and datagrams (seed %d): VictoriaLogs stored %d rows, spate %d, %d the same in both",
		msgs, len(cases), seed, len(vr), len(sr), equal)
}
