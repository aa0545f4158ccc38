package kafka

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/spate-io/spate/internal/segment"
)

// openCheckpointStore opens a store keeping checkpoints in a new
// directory (or dir, if given).
func openCheckpointStore(t *testing.T, dir string) *segment.Store {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	s, err := segment.Open(dir, segment.Options{Checkpoint: true, NoCompress: true, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func quietLogger() *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// storedSeqs returns how many times each "seq" is stored under dir, by
// tenant directory.
func storedSeqs(t *testing.T, dir string) map[string]map[int]int {
	t.Helper()
	files, err := segment.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`"seq":(\d+)`)
	out := map[string]map[int]int{}
	for _, f := range files {
		if f.Compressed {
			t.Fatalf("%s is compressed; the test store does not compress", f.Path)
		}
		data, err := os.ReadFile(filepath.Join(dir, f.Path))
		if err != nil {
			t.Fatal(err)
		}
		tenant := filepath.Dir(filepath.Dir(f.Path))
		if out[tenant] == nil {
			out[tenant] = map[int]int{}
		}
		for _, m := range re.FindAllSubmatch(data, -1) {
			n, _ := strconv.Atoi(string(m[1]))
			out[tenant][n]++
		}
	}
	return out
}

// produceSeqs produces records seq from..to-1 of topic: valid lines keyed
// by stream, tenant 0:0, and every one whose seq%bad == bad-1 (bad > 0)
// not JSON.
func produceSeqs(t *testing.T, brokers []string, topic string, from, to, bad int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var rs []*kgo.Record
	for i := from; i < to; i++ {
		v := fmt.Sprintf(`{"_time":"2026-11-26T10:00:%02dZ","_stream":"{app=\"a%d\"}","seq":%d}`, i%60, i%5, i)
		if bad > 0 && i%bad == bad-1 {
			v = fmt.Sprintf(`not json, "seq":%d`, i)
		}
		rs = append(rs, &kgo.Record{Key: fmt.Appendf(nil, "a%d", i%5), Value: []byte(v)})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// runConsumer starts c.Run; the returned stop ends it and returns its
// error.
func runConsumer(t *testing.T, c *Consumer) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- c.Run(ctx) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-errc:
			case <-time.After(30 * time.Second):
				t.Fatal("Run did not return 30 s after its context ended")
			}
		})
		return err
	}
	t.Cleanup(func() { stop() })
	return stop
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func groupOffsets(t *testing.T, brokers []string, group, topic string) map[int32]int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	resps, err := kadm.NewClient(cl).FetchOffsets(context.Background(), group)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	resps.Each(func(o kadm.OffsetResponse) {
		if o.Topic == topic && o.Err == nil {
			out[o.Partition] = o.At
		}
	})
	return out
}

// TestConsumer: records are stored once each, by tenant; invalid ones go
// to the dead-letter topic and do not stop the partition; the store's
// marks and the group's committed offsets both end at each partition's
// end.
func TestConsumer(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, "logs", "dead"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	brokers := c.ListenAddrs()
	const n = 2000
	produceSeqs(t, brokers, "logs", 0, n, 100)
	// A record of tenant 7:8 and one with a bad tenant header.
	pc, _ := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic("logs"))
	err = pc.ProduceSync(context.Background(),
		&kgo.Record{Value: []byte(`{"_time":"2026-11-26T10:00:00Z","seq":5000}`), Headers: []kgo.RecordHeader{{Key: "tenant", Value: []byte("7:8")}}},
		&kgo.Record{Value: []byte(`{"_time":"2026-11-26T10:00:00Z","seq":5001}`), Headers: []kgo.RecordHeader{{Key: "tenant", Value: []byte("x:y")}}},
	).FirstErr()
	pc.Close()
	if err != nil {
		t.Fatal(err)
	}

	store := openCheckpointStore(t, "")
	con, err := NewConsumer(ConsumerConfig{Brokers: brokers, Topic: "logs", Group: "nodes", Store: store,
		DeadLetterTopic: "dead", CommitInterval: 10 * time.Millisecond, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	stop := runConsumer(t, con)
	const bad = n/100 + 1
	waitUntil(t, "every record stored", func() bool {
		st := con.Stats()
		return st.Records+st.Invalid >= n+2 && st.Invalid >= bad
	})
	waitUntil(t, "the dead letters", func() bool { return con.Stats().DeadLetters == bad })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	st := con.Stats()
	if st.Invalid != bad || st.Lines != n-n/100+1 || st.Assigned != 4 {
		t.Fatalf("stats %+v: want %d invalid, %d lines, 4 partitions assigned", st, bad, n-n/100+1)
	}
	seqs := storedSeqs(t, store.Dir())
	for i := range n {
		want := 1
		if i%100 == 99 {
			want = 0
		}
		if got := seqs["0-0"][i]; got != want {
			t.Fatalf("seq %d stored %d times, want %d", i, got, want)
		}
	}
	if seqs["7-8"][5000] != 1 || len(seqs["7-8"]) != 1 {
		t.Fatalf("tenant 7:8: got %v", seqs["7-8"])
	}
	dead := consume(t, brokers, "dead", bad)
	for _, r := range dead {
		var reason, source string
		for _, h := range r.Headers {
			switch h.Key {
			case "spate-error":
				reason = string(h.Value)
			case "spate-source":
				source = string(h.Value)
			}
		}
		if reason == "" || !regexp.MustCompile(`^logs/\d/\d+$`).MatchString(source) {
			t.Fatalf("dead letter %q: reason %q, source %q", r.Value, reason, source)
		}
	}
	// Marks and commits agree and cover every record.
	marks := store.Marks()
	offs := groupOffsets(t, brokers, "nodes", "logs")
	var total int64
	for p, off := range offs {
		if marks[markKey("logs", p)] != off {
			t.Fatalf("partition %d: committed %d, store mark %d (marks %v)", p, off, marks[markKey("logs", p)], marks)
		}
		total += off
	}
	if total != n+2 || len(marks) != len(offs) {
		t.Fatalf("committed offsets %v sum to %d, want %d", offs, total, n+2)
	}
}

// TestConsumerResumesFromMarks: a node whose group offsets are behind
// its store (the commit was lost) resumes from the store's marks and
// stores nothing twice.
func TestConsumerResumesFromMarks(t *testing.T) {
	c := cluster(t)
	brokers := c.ListenAddrs()
	produceSeqs(t, brokers, "logs", 0, 500, 0)
	dir := t.TempDir()
	store := openCheckpointStore(t, dir)
	con, err := NewConsumer(ConsumerConfig{Brokers: brokers, Topic: "logs", Group: "g1", Store: store, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	stop := runConsumer(t, con)
	waitUntil(t, "500 records", func() bool { return con.Stats().Records == 500 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	store.Close()
	before := store.Marks()

	// Same store, a group with no offsets at all: every commit lost.
	store2 := openCheckpointStore(t, dir)
	if got := store2.Marks(); !maps.Equal(got, before) {
		t.Fatalf("reopened marks %v, want %v", got, before)
	}
	produceSeqs(t, brokers, "logs", 500, 700, 0)
	con2, err := NewConsumer(ConsumerConfig{Brokers: brokers, Topic: "logs", Group: "g2", Store: store2, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	stop2 := runConsumer(t, con2)
	waitUntil(t, "200 new records", func() bool { return con2.Stats().Records >= 200 })
	time.Sleep(100 * time.Millisecond) // anything re-read would show up by now
	if err := stop2(); err != nil {
		t.Fatal(err)
	}
	if got := con2.Stats().Records; got != 200 {
		t.Fatalf("second node stored %d records, want 200", got)
	}
	seqs := storedSeqs(t, dir)["0-0"]
	for i := range 700 {
		if seqs[i] != 1 {
			t.Fatalf("seq %d stored %d times", i, seqs[i])
		}
	}
}

// TestConsumerRebalance: a second node joins mid-stream, then the first
// leaves; cooperative rebalancing hands partitions over after the
// records polled from them are stored and committed, so every record is
// stored exactly once across the two stores.
func TestConsumerRebalance(t *testing.T) {
	c := cluster(t)
	brokers := c.ListenAddrs()
	newNode := func() (*Consumer, *segment.Store) {
		store := openCheckpointStore(t, "")
		con, err := NewConsumer(ConsumerConfig{Brokers: brokers, Topic: "logs", Group: "nodes", Store: store,
			CommitInterval: time.Hour, Logger: quietLogger(), // only rebalances commit
			Opts: []kgo.Opt{kgo.HeartbeatInterval(100 * time.Millisecond)}})
		if err != nil {
			t.Fatal(err)
		}
		return con, store
	}
	// A producer keeps writing while the group changes.
	done := make(chan struct{})
	produced := make(chan int, 1)
	go func() {
		n := 0
		defer func() { produced <- n }()
		for {
			select {
			case <-done:
				return
			default:
			}
			produceSeqs(t, brokers, "logs", n, n+100, 0)
			n += 100
			time.Sleep(5 * time.Millisecond)
		}
	}()
	a, sa := newNode()
	stopA := runConsumer(t, a)
	waitUntil(t, "node a storing", func() bool { return a.Stats().Records > 500 })
	b, sb := newNode()
	stopB := runConsumer(t, b)
	waitUntil(t, "node b assigned partitions", func() bool { return b.Stats().Assigned > 0 && b.Stats().Records > 0 })
	if err := stopA(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "node b taking a's partitions", func() bool { return b.Stats().Assigned == 4 })
	time.Sleep(200 * time.Millisecond)
	close(done)
	n := <-produced
	waitUntil(t, "every record stored", func() bool { return a.Stats().Records+b.Stats().Records >= int64(n) })
	if err := stopB(); err != nil {
		t.Fatal(err)
	}
	if a.Stats().Revoked == 0 {
		t.Fatalf("node a had nothing revoked: %+v", a.Stats())
	}
	sa1, sb1 := storedSeqs(t, sa.Dir())["0-0"], storedSeqs(t, sb.Dir())["0-0"]
	for i := range n {
		if got := sa1[i] + sb1[i]; got != 1 {
			t.Fatalf("seq %d stored %d times (a %d, b %d) of %d records", i, got, sa1[i], sb1[i], n)
		}
	}
	t.Logf("%d records: node a stored %d, node b %d", n, a.Stats().Records, b.Stats().Records)
}

// TestConsumerBrokerLate: a node started before any broker answers waits
// (fetch errors are counted and logged once), then stores everything once
// the cluster is up.
func TestConsumerBrokerLate(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	store := openCheckpointStore(t, "")
	con, err := NewConsumer(ConsumerConfig{Brokers: []string{addr}, Topic: "logs", Group: "late", Store: store, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	if err := con.Ping(ctx); err == nil {
		t.Fatal("Ping answered with no broker")
	}
	cancel()
	stop := runConsumer(t, con)
	time.Sleep(500 * time.Millisecond)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(port), kfake.SeedTopics(2, "logs"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	produceSeqs(t, []string{addr}, "logs", 0, 300, 0)
	waitUntil(t, "300 records once the broker is up", func() bool { return con.Stats().Records == 300 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	seqs := storedSeqs(t, store.Dir())["0-0"]
	for i := range 300 {
		if seqs[i] != 1 {
			t.Fatalf("seq %d stored %d times", i, seqs[i])
		}
	}
}
