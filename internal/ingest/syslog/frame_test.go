package syslog

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// frames runs nextFrame over in (all of it, eof) and describes what it
// found: messages quoted, "skip" for skipped lines, "bad" for a bad
// frame (which ends it).
func frames(in string, max int) string {
	var out []string
	b := []byte(in)
	for {
		kind, msg, adv, err := nextFrame(b, true, max)
		b = b[adv:]
		switch kind {
		case needMore:
			if len(b) != 0 {
				out = append(out, fmt.Sprintf("left %q", b))
			}
			return strings.Join(out, " ")
		case gotMsg:
			out = append(out, fmt.Sprintf("%q", msg))
		case skipLine, skipRest:
			out = append(out, "skip")
		case badFrame:
			if err == nil {
				panic("badFrame without an error")
			}
			return strings.Join(append(out, "bad"), " ")
		}
	}
}

func TestNextFrame(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"<1>a\n<2>b\n", `"<1>a" "<2>b"`},
		{"<1>a\r\n<2>b\r\n", `"<1>a" "<2>b"`},        // CRLF
		{"\n\r\n<1>a\n\n\n<2>b", `"<1>a" "<2>b"`},    // empty lines, last line without '\n'
		{"5 <1>ab3 <2>", `"<1>ab" "<2>"`},            // octet counting
		{"5 <1>a\n\n5 <1>b\n", `"<1>a\n" "<1>b\n"`},  // counted bytes may hold '\n'; LF after a frame is skipped
		{"4 <1>a<2>b\n3 <3>", `"<1>a" "<2>b" "<3>"`}, // mixed framing
		{"0 ", `""`},                                                 // empty counted message
		{"12x <1>a\n<2>b\n", `bad`},                                  // not a count
		{"5\n<1>a\n", `bad`},                                         // count without its space
		{"<1>a\n7 <1>", `"<1>a" bad`},                                // cut short
		{"<1>a\n12", `"<1>a" bad`},                                   // stream ends in the count
		{"99999999999 x", `bad`},                                     // count too long
		{"11 <1>abcdefgh", `bad`},                                    // count over the limit (10)
		{"<1>abcdefghijk\n<2>b\n", `skip "<2>b"`},                    // line over the limit
		{"<1>abcdefghijklmnop", `skip`},                              // ... at the end
		{"<1>abcdef\r\n", `"<1>abcdef"`}, {"<1>abcdefg\r\n", `skip`}, // 10 and 11 bytes before '\n', '\r' included
		{" <1>lead\n", `" <1>lead"`},                                      // not a digit: '\n' framing
		{"2023-06-03T17:42:32Z host x\n", `bad`},                          // a line starting with a digit is a count, as in VictoriaLogs
		{"aaa\nbbb\nccc ddd\n", `"aaa" "bbb" "ccc ddd"`},                  // each line on its own
		{"\r\n\r\n", ``},                                                  // nothing
		{"10 <1>abcdefg", `"<1>abcdefg"`},                                 // exactly the limit
		{"<1>abcdefg\n", `"<1>abcdefg"`},                                  // exactly the limit
		{"\n\n5 <1>ab", `"<1>ab"`},                                        // empty lines before a count
		{"3 <1>\n3 <2>\r\n3 <3>", `"<1>" "<2>" "<3>"`},                    // a '\r\n' after a frame
		{"<1>" + strings.Repeat("x", 20) + "\n5 <1>ab\n", `skip "<1>ab"`}, // skip then a count
	} {
		if got := frames(c.in, 10); got != c.want {
			t.Errorf("frames(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

// TestNextFrameNeedMore checks that a prefix of a frame asks for more
// (and consumes only empty lines), whatever the cut.
func TestNextFrameNeedMore(t *testing.T) {
	for _, in := range []string{"\n\n12 <1>abcdefgh", "\r\n<1>abcdef\n"} {
		for cut := 0; cut < len(in)-1; cut++ {
			kind, _, adv, _ := nextFrame([]byte(in[:cut]), false, 100)
			if kind != needMore {
				t.Errorf("%q cut at %d: kind %d, want needMore", in, cut, kind)
			}
			if strings.Trim(in[:adv], "\r\n") != "" {
				t.Errorf("%q cut at %d: consumed %q", in, cut, in[:adv])
			}
		}
	}
}

// collector is a Sink that keeps the lines it gets.
type collector struct {
	mu     sync.Mutex
	lines  []string
	calls  int
	notify chan struct{}
	err    error // returned by every call, when set
	t      testing.TB
}

func newCollector(t testing.TB) *collector {
	return &collector{notify: make(chan struct{}, 1), t: t}
}

func (c *collector) sink(ctx context.Context, lines []byte, n int) error {
	split := strings.SplitAfter(string(lines), "\n")
	if split[len(split)-1] != "" || len(split)-1 != n {
		c.t.Errorf("sink got %d lines, told %d: %q", len(split)-1, n, lines)
	}
	for _, l := range split[:len(split)-1] {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			c.t.Errorf("bad JSON line %q: %v", l, err)
		}
	}
	c.mu.Lock()
	c.calls++
	if c.err == nil {
		c.lines = append(c.lines, split[:len(split)-1]...)
	}
	err := c.err
	c.mu.Unlock()
	select {
	case c.notify <- struct{}{}:
	default:
	}
	return err
}

// msgs returns the _msg of the lines so far.
func (c *collector) msgs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, l := range c.lines {
		var m map[string]string
		json.Unmarshal([]byte(l), &m)
		out = append(out, m["_msg"])
	}
	return out
}

func (c *collector) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.lines)
}

// wait waits until the sink holds n lines and returns their messages.
func (c *collector) wait(t testing.TB, n int, timeout time.Duration) []string {
	t.Helper()
	deadline := time.After(timeout)
	for {
		if c.count() >= n {
			return c.msgs()
		}
		select {
		case <-c.notify:
		case <-deadline:
			t.Fatalf("timeout: %d lines of %d: %q", len(c.msgs()), n, c.msgs())
		}
	}
}

// pipeConn serves one net.Pipe connection and returns the client end and
// a channel closed when serving ends.
func pipeConn(t *testing.T, cfg Config, sink Sink, st *Stats, log *slog.Logger) (net.Conn, chan struct{}) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := newServer(ctx, cfg, sink, log, st)
	client, server := net.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.serveConn(ctx, server)
	}()
	t.Cleanup(func() {
		client.Close()
		cancel()
		<-done
		s.cancelSinks()
	})
	return client, done
}

// TestConnFraming writes a stream in pieces of every size and checks the
// messages and the counters.
func TestConnFraming(t *testing.T) {
	stream := "<14>1 2023-06-03T17:42:32Z h a p m - one\r\n" +
		"\n" +
		"40 <14>1 2023-06-03T17:42:33Z h a p m - two\n" +
		"<14>1 2023-06-03T17:42:34Z h a p m - " + strings.Repeat("x", 200) + "\n" + // over the limit: skipped
		"<14>1 2023-06-03T17:42:35Z h a p m - three\n" +
		"<14>1 2023-13-45Tbad h a p m - bad time\n" + // skipped
		"<14>1 2023-06-03T17:42:36Z h a p m - four" // no '\n' before EOF
	want := "one two three four"
	for _, size := range []int{1, 2, 3, 7, 50, 1000} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			col := newCollector(t)
			var st Stats
			client, done := pipeConn(t, Config{MaxLineBytes: 100, Location: time.UTC}, col.sink, &st, nil)
			for i := 0; i < len(stream); i += size {
				if _, err := client.Write([]byte(stream[i:min(i+size, len(stream))])); err != nil {
					t.Fatal(err)
				}
			}
			client.Close()
			<-done
			if got := strings.Join(col.msgs(), " "); got != want {
				t.Errorf("messages %q, want %q", got, want)
			}
			if st.Dropped.Load() != 1 || st.BadTime.Load() != 1 || st.Messages.Load() != 4 || st.BadFrames.Load() != 0 {
				t.Errorf("stats: dropped %d, bad time %d, messages %d, bad frames %d", st.Dropped.Load(), st.BadTime.Load(), st.Messages.Load(), st.BadFrames.Load())
			}
			if st.Bytes.Load() != int64(len(stream)) {
				t.Errorf("bytes %d, want %d", st.Bytes.Load(), len(stream))
			}
		})
	}
}

// TestConnBadFrame checks that garbage closes the connection, with a
// warning, after storing what came before it.
func TestConnBadFrame(t *testing.T) {
	for _, garbage := range []string{"12x <14>junk\n", "300 <14>over the limit", "99999999999 x"} {
		col := newCollector(t)
		var st Stats
		var logBuf strings.Builder
		var mu sync.Mutex
		log := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logBuf}, nil))
		client, done := pipeConn(t, Config{MaxLineBytes: 100}, col.sink, &st, log)
		go func() {
			io.WriteString(client, "<14>1 2023-06-03T17:42:32Z h a p m - before\n"+garbage+"<14>1 2023-06-03T17:42:33Z h a p m - after\n")
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("%q: connection not closed", garbage)
		}
		if got := strings.Join(col.msgs(), " "); got != "before" {
			t.Errorf("%q: messages %q, want before", garbage, got)
		}
		mu.Lock()
		l := logBuf.String()
		mu.Unlock()
		if st.BadFrames.Load() != 1 || !strings.Contains(l, "level=WARN") || !strings.Contains(l, "bad frame") || !strings.Contains(l, "remote=pipe") {
			t.Errorf("%q: bad frames %d, log %q", garbage, st.BadFrames.Load(), l)
		}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// TestConnLongLineAcrossReads checks a line over the limit that spans
// several reads and buffer sizes is skipped up to its '\n' only.
func TestConnLongLineAcrossReads(t *testing.T) {
	col := newCollector(t)
	var st Stats
	max := 100 << 10
	client, done := pipeConn(t, Config{MaxLineBytes: max}, col.sink, &st, nil)
	long := "<14>1 2023-06-03T17:42:32Z h a p m - " + strings.Repeat("y", 3*max) + "\n"
	ok := "<14>1 2023-06-03T17:42:33Z h a p m - " + strings.Repeat("z", max-100) + "\n"
	counted := fmt.Sprintf("%d %s", len(ok)-1, ok[:len(ok)-1])
	go func() {
		for _, s := range []string{ok, long, counted, "<14>1 2023-06-03T17:42:34Z h a p m - end\n"} {
			for i := 0; i < len(s); i += 5000 {
				client.Write([]byte(s[i:min(i+5000, len(s))]))
			}
		}
		client.Close()
	}()
	<-done
	m := col.msgs()
	if len(m) != 3 || len(m[0]) != max-100 || m[0] != m[1] || m[2] != "end" {
		t.Errorf("got %d messages, lengths %v", len(m), lens(m))
	}
	if st.Dropped.Load() != 1 {
		t.Errorf("dropped %d, want 1", st.Dropped.Load())
	}
}

func lens(ss []string) []int {
	var n []int
	for _, s := range ss {
		n = append(n, len(s))
	}
	return n
}

func FuzzNextFrame(f *testing.F) {
	f.Add([]byte("5 <1>ab\n<2>c\r\n\n"), true)
	f.Add([]byte("12x y"), false)
	f.Fuzz(func(t *testing.T, b []byte, eof bool) {
		for len(b) > 0 {
			kind, msg, adv, err := nextFrame(b, eof, 16)
			if adv < 0 || adv > len(b) || (kind == badFrame) != (err != nil) || len(msg) > 16 {
				t.Fatalf("%q: kind %d adv %d msg %q err %v", b, kind, adv, msg, err)
			}
			if kind == needMore || kind == badFrame {
				return
			}
			if adv == 0 {
				t.Fatalf("%q: no progress", b)
			}
			b = b[adv:]
		}
	})
}
