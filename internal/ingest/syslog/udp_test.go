package syslog

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// serveUDP runs ServeUDP on a fresh 127.0.0.1 socket and returns its
// address and a stop func that cancels it and returns its result.
func serveUDP(t *testing.T, cfg Config, sink Sink, st *Stats) (string, func() error) {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- ServeUDP(ctx, pc, cfg, sink, nil, st) }()
	stopped := false
	var serr error
	stop := func() error {
		if !stopped {
			stopped = true
			cancel()
			select {
			case serr = <-errc:
			case <-time.After(10 * time.Second):
				serr = errors.New("ServeUDP did not return")
			}
		}
		return serr
	}
	t.Cleanup(func() { stop() })
	return pc.LocalAddr().String(), stop
}

func TestServeUDP(t *testing.T) {
	col := newCollector(t)
	var st Stats
	addr, stop := serveUDP(t, Config{Location: time.UTC}, col.sink, &st)
	conn, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	four := "<13>Oct 11 22:14:18 host app: four"
	for _, d := range []string{
		"<13>Oct 11 22:14:15 host app: one",
		"<13>Oct 11 22:14:16 host app: two\n<13>Oct 11 22:14:17 host app: three\n", // several per datagram, as in VictoriaLogs
		fmt.Sprintf("%d %s", len(four), four),
		"<13>Oct 11 22:14:19 host app: five\n5x bad\n<13>Oct 11 22:14:20 host app: lost", // a bad frame drops the rest
	} {
		if _, err := conn.Write([]byte(d)); err != nil {
			t.Fatal(err)
		}
	}
	msgs := col.wait(t, 5, 1500*time.Millisecond) // idle flush
	sort.Strings(msgs)
	if got := strings.Join(msgs, " "); got != "five four one three two" {
		t.Errorf("messages %q", got)
	}
	if err := stop(); err != nil {
		t.Error(err)
	}
	if st.Datagrams.Load() != 4 || st.BadFrames.Load() != 1 || st.Messages.Load() != 5 || st.UDPDropped.Load() != 0 {
		t.Errorf("stats: datagrams %d, bad frames %d, messages %d, dropped %d", st.Datagrams.Load(), st.BadFrames.Load(), st.Messages.Load(), st.UDPDropped.Load())
	}
}

// TestServeUDPDrops blocks the sink: once the queue is full, datagrams
// are dropped and counted; memory stays bounded; when the sink unblocks
// the queued ones are stored.
func TestServeUDPDrops(t *testing.T) {
	col := newCollector(t)
	release := make(chan struct{})
	var calls atomic.Int64
	sink := func(ctx context.Context, lines []byte, n int) error {
		calls.Add(1)
		<-release
		return col.sink(ctx, lines, n)
	}
	var st Stats
	// Batches are handed on when full only.
	addr, stop := serveUDP(t, Config{FlushLines: 2, UDPQueue: 2, IdleFlush: time.Hour, FlushInterval: time.Hour}, sink, &st)
	conn, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const sent = 100
	for i := range sent {
		fmt.Fprintf(conn, "<14>1 2023-06-03T17:42:32Z h a p - - m%d", i)
		time.Sleep(time.Millisecond) // not faster than the reader: the kernel must not drop
	}
	deadline := time.Now().Add(5 * time.Second)
	for st.Datagrams.Load() < sent && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	dropped := st.UDPDropped.Load()
	// 3 batches of 2 lines: one in the blocked sink, two queued.
	if st.Datagrams.Load() != sent || dropped != sent-6 {
		t.Errorf("datagrams %d, dropped %d; want %d, %d", st.Datagrams.Load(), dropped, sent, sent-6)
	}
	close(release)
	col.wait(t, 6, 5*time.Second)
	if err := stop(); err != nil {
		t.Error(err)
	}
	if got := int64(col.count()); got != sent-dropped {
		t.Errorf("stored %d, want %d", got, sent-dropped)
	}
}
