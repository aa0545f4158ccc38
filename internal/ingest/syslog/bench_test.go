package syslog

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkAppendMessage renders one typical message per op: the same
// one every time, or (hosts) one of 200 that differ in hostname and
// program, in turn, as a relay's connection carries them.
func BenchmarkAppendMessage(b *testing.B) {
	var hosts []string
	for i := range 200 {
		hosts = append(hosts, strings.Replace(strings.Replace(typical5424, "web-17", fmt.Sprintf("web-%d", i), 1), "nginx", fmt.Sprintf("app%d", i%9), 1))
	}
	for _, c := range []struct {
		name string
		msgs []string
	}{
		{"rfc5424", []string{typical5424}},
		{"rfc5424_hosts", hosts},
		{"rfc3164", []string{`<34>Oct 11 22:14:15 web-17.example.com nginx[4711]: 10.1.2.3 - - "GET /api/v1/items?id=42 HTTP/1.1" 200 512 "-" "curl/8.5.0"`}},
	} {
		b.Run(c.name, func(b *testing.B) {
			e := NewEncoder(Config{Location: time.UTC})
			msgs := make([][]byte, len(c.msgs))
			size := 0
			for i, m := range c.msgs {
				msgs[i] = []byte(m)
				size += len(m)
			}
			var dst []byte
			b.SetBytes(int64(size / len(msgs)))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				var err error
				if dst, err = e.Append(dst[:0], msgs[i], now); err != nil {
					b.Fatal(err)
				}
				if i++; i == len(msgs) {
					i = 0
				}
			}
		})
	}
}

// BenchmarkTCP sends b.N '\n'-ended typical RFC 5424 messages over one
// loopback connection through ServeTCP into a sink that discards them,
// and reports lines/s.
func BenchmarkTCP(b *testing.B) {
	var st Stats
	stored := make(chan struct{})
	var n atomic.Int64
	want := int64(b.N)
	sink := func(ctx context.Context, lines []byte, k int) error {
		if n.Add(int64(k)) == want {
			close(stored)
		}
		return nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		ServeTCP(ctx, ln, Config{}, sink, nil, &st)
	}()
	defer func() { cancel(); <-done }()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	line := typical5424 + "\n"
	chunk := []byte(strings.Repeat(line, 1000))
	b.SetBytes(int64(len(line)))
	b.ResetTimer()
	start := time.Now()
	for left := b.N; left > 0; left -= 1000 {
		if _, err := conn.Write(chunk[:min(left, 1000)*len(line)]); err != nil {
			b.Fatal(err)
		}
	}
	select {
	case <-stored:
	case <-time.After(time.Minute):
		b.Fatalf("stored %d of %d", n.Load(), b.N)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "lines/s")
}
