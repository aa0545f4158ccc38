package benchingest

import (
	"strings"
	"testing"
	"time"
)

func TestRetryDelay(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f := func(h string, maxWait, want time.Duration) {
		t.Helper()
		if got := retryDelay(h, now, maxWait); got != want {
			t.Fatalf("retryDelay(%q, %v) = %v, want %v", h, maxWait, got, want)
		}
	}
	ms := time.Millisecond
	f("1", 100*ms, 100*ms) // capped
	f("0", 100*ms, 0)      // the server says now
	f(" 2 ", 5*time.Second, 2*time.Second)
	f("3", 0, 0)
	f("-5", 100*ms, 0)
	f("99999999999999", time.Second, time.Second) // no overflow
	f("", 100*ms, 100*ms)                         // missing: the cap
	f("soon", 100*ms, 100*ms)                     // unparsable: the cap
	f("1.5", 100*ms, 100*ms)                      // not delay-seconds
	f("Fri, 02 Jan 2026 03:04:05 GMT", time.Second, 0)
	f("Fri, 02 Jan 2026 03:04:06 GMT", 5*time.Second, time.Second)
	f("Fri, 02 Jan 2026 03:04:06 GMT", 100*ms, 100*ms)
	f("Thu, 01 Jan 2026 00:00:00 GMT", 100*ms, 0) // in the past
}

func TestParseResponseSuccess(t *testing.T) {
	f := func(reply string, lines, wantAcc, wantRej int64) {
		t.Helper()
		acc, rej, err := parseResponse([]byte(reply), lines)
		if err != nil || acc != wantAcc || rej != wantRej {
			t.Fatalf("parseResponse(%q, %d) = %d, %d, %v; want %d, %d", reply, lines, acc, rej, err, wantAcc, wantRej)
		}
	}
	f(`{"accepted":5,"rejected":0,"errors":[]}`, 5, 5, 0)
	f(`{"accepted":3,"rejected":2,"errors":[{"line":1,"error":"bad json"},{"line":4,"error":"too long"}]}`, 5, 3, 2)
	f(`{"accepted":0}`, 5, 0, 0)
	f("", 7, 7, 0) // VictoriaLogs: an empty 200 accepts everything
	f(" \n", 7, 7, 0)
}

func TestParseResponseFailure(t *testing.T) {
	f := func(reply, want string) {
		t.Helper()
		_, _, err := parseResponse([]byte(reply), 1)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("parseResponse(%q): error %v, want it to contain %q", reply, err, want)
		}
	}
	f(`ok`, `cannot parse the server's reply "ok"`)
	f(`{"rejected":1}`, `no "accepted" count`)
	f(`{"accepted":"5"}`, `cannot parse the server's reply`)
	f(strings.Repeat("x", 1000), "…")
}

func TestPlan(t *testing.T) {
	bodies := []body{{raw: make([]byte, 100), lines: 2}, {raw: make([]byte, 50), lines: 1}, {raw: make([]byte, 30), lines: 1}}
	f := func(volume, wantN, wantSize, wantLines int64) {
		t.Helper()
		n, size, lines := plan(bodies, volume)
		if n != wantN || size != wantSize || lines != wantLines {
			t.Fatalf("plan(%d) = %d bodies, %d bytes, %d lines; want %d, %d, %d", volume, n, size, lines, wantN, wantSize, wantLines)
		}
	}
	f(180, 3, 180, 4) // the whole pool
	f(179, 2, 150, 3) // stops before the body that does not fit
	f(1, 1, 100, 2)   // at least one body
	f(100, 1, 100, 2)
	f(360, 6, 360, 8)  // two passes
	f(500, 7, 460, 10) // two passes, then the first body; the second does not fit
	f(1800, 30, 1800, 40)
}

func TestEndpoints(t *testing.T) {
	f := func(raw, wantTarget, wantMetrics string) {
		t.Helper()
		target, metrics, err := endpoints(raw, JSONLine)
		if err != nil || target != wantTarget || metrics != wantMetrics {
			t.Fatalf("endpoints(%q) = %q, %q, %v", raw, target, metrics, err)
		}
	}
	f("http://127.0.0.1:9428", "http://127.0.0.1:9428/insert/jsonline", "http://127.0.0.1:9428/metrics")
	f("http://127.0.0.1:9428/", "http://127.0.0.1:9428/insert/jsonline", "http://127.0.0.1:9428/metrics")
	f("http://localhost:1/api/v1/ingest", "http://localhost:1/api/v1/ingest", "http://localhost:1/metrics")
	f("https://h/insert/jsonline?_stream_fields=service", "https://h/insert/jsonline?_stream_fields=service", "https://h/metrics")
	for _, bad := range []string{"127.0.0.1:9428", "ftp://h/", "http://", "http://h:bad port/"} {
		if _, _, err := endpoints(bad, JSONLine); err == nil {
			t.Errorf("endpoints(%q): no error", bad)
		}
	}
}
