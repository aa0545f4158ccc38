package kafka

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/spate-io/spate/internal/segment"
)

func cluster(t *testing.T) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, "logs"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// consume reads n records of topic from the start.
func consume(t *testing.T, brokers []string, topic string, n int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("%d of %d records after 20 s", len(out), n)
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r) })
	}
	return out
}

// TestProducer: every line becomes one record, keyed by its _stream, with
// its tenant; a stream's lines stay in one partition, in order; the
// acknowledgement comes once Kafka has every record.
func TestProducer(t *testing.T) {
	c := cluster(t)
	p, err := NewProducer(Config{Brokers: c.ListenAddrs(), Topic: "logs"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var groups []segment.Group
	const n = 3000
	for g := range 3 {
		var b strings.Builder
		for i := range n / 3 {
			k := g*(n/3) + i
			if k%10 == 0 {
				fmt.Fprintf(&b, `{"_msg":"no stream %d","seq":%d}`+"\n", k, k)
				continue
			}
			fmt.Fprintf(&b, `{"_stream":"{app=\"a%d\"}","seq":%d}`+"\n", k%7, k)
		}
		groups = append(groups, segment.Group{Tenant: segment.Tenant{AccountID: 3, ProjectID: uint32(g)}, Day: "2026-11-26", Lines: []byte(b.String())})
	}
	ctx := context.Background()
	a, err := p.Enqueue(ctx, groups)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Wait(ctx); err != nil || !a.Done() {
		t.Fatalf("wait: %v, done %v", err, a.Done())
	}
	if produced, failed, _ := p.Stats(); produced != n || failed != 0 {
		t.Fatalf("produced %d, failed %d", produced, failed)
	}
	recs := consume(t, c.ListenAddrs(), "logs", n)
	partOf := map[string]int32{}
	last := map[string]int{}
	for _, r := range recs {
		key := string(r.Key)
		if r.Key == nil {
			if strings.HasPrefix(string(r.Value), `{"_msg"`) {
				continue // no stream: spread over the partitions
			}
			t.Fatalf("no key for %s", r.Value)
		}
		if p, ok := partOf[key]; ok && p != r.Partition {
			t.Fatalf("stream %s in partitions %d and %d", key, p, r.Partition)
		}
		partOf[key] = r.Partition
		var seq int
		fmt.Sscanf(string(r.Value[strings.LastIndex(string(r.Value), `"seq":`)+6:]), "%d", &seq)
		if prev, ok := last[key]; ok && seq <= prev {
			t.Fatalf("stream %s: seq %d after %d", key, seq, prev)
		}
		last[key] = seq
		if strings.HasPrefix(string(r.Value), `{"_msg"`) != (r.Key == nil) {
			t.Fatalf("key %q for %s", key, r.Value)
		}
		if len(r.Headers) != 1 || r.Headers[0].Key != "tenant" || !strings.HasPrefix(string(r.Headers[0].Value), "3:") {
			t.Fatalf("headers %v", r.Headers)
		}
	}
	if len(partOf) != 7 {
		t.Errorf("%d keys, want 7 streams", len(partOf))
	}
}

// TestProducerUnavailable: with no broker to reach, records fail the
// acknowledgement with ErrUnavailable after the delivery timeout, and a
// full buffer makes Enqueue fail when its context ends. (Once a request
// has reached a broker, the idempotent producer keeps retrying rather
// than fail records it cannot know the fate of.)
func TestProducerUnavailable(t *testing.T) {
	p, err := NewProducer(Config{Brokers: []string{"127.0.0.1:1"}, Topic: "logs", DeliveryTimeout: time.Second, MaxBufferedBytes: 4 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctxPing, cancelPing := context.WithTimeout(context.Background(), time.Second)
	defer cancelPing()
	if p.Ping(ctxPing) == nil {
		t.Error("Ping succeeds with no broker")
	}
	line := []byte(`{"_msg":"x"}` + "\n")
	a, err := p.Enqueue(context.Background(), []segment.Group{{Lines: line}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.Wait(ctx); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("wait: %v, want ErrUnavailable", err)
	}
	// A full buffer: Enqueue waits, then gives up with its context.
	big := []byte(strings.Repeat(`{"_msg":"`+strings.Repeat("y", 1000)+`"}`+"\n", 20))
	ctx2, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	if _, err := p.Enqueue(ctx2, []segment.Group{{Lines: big}}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("enqueue into a full buffer: %v", err)
	}
}

// BenchmarkProducer produces 1 MiB chunks of lines to an in-process
// broker and waits for each acknowledgement: the gateway's cost per byte
// (the real broker's is measured by the integration test).
func BenchmarkProducer(b *testing.B) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, "logs"))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	p, err := NewProducer(Config{Brokers: c.ListenAddrs(), Topic: "logs"})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	var sb strings.Builder
	for i := 0; sb.Len() < 1<<20; i++ {
		fmt.Fprintf(&sb, `{"_time":"2026-11-26T00:00:00Z","_stream":"{app=\"a%d\"}","_msg":"request %d served in 12 ms","level":"info"}`+"\n", i%16, i)
	}
	g := []segment.Group{{Lines: []byte(sb.String())}}
	b.SetBytes(int64(sb.Len()))
	b.ReportAllocs()
	ctx := context.Background()
	for b.Loop() {
		a, err := p.Enqueue(ctx, g)
		if err != nil {
			b.Fatal(err)
		}
		if err := a.Wait(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// TestEnsureTopic: a missing topic is ErrNoTopic, or created with the
// partitions asked for; an existing one is left as it is.
func TestEnsureTopic(t *testing.T) {
	c := cluster(t)
	ctx := context.Background()
	p, err := NewProducer(Config{Brokers: c.ListenAddrs(), Topic: "fresh"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.EnsureTopic(ctx, 0); !errors.Is(err, ErrNoTopic) {
		t.Fatalf("missing topic: %v", err)
	}
	if err := p.EnsureTopic(ctx, 3); err != nil {
		t.Fatal(err)
	}
	// The new topic shows in metadata shortly after.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		err := p.EnsureTopic(ctx, 0)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after creating: %v", err)
		}
	}
	a, err := p.Enqueue(ctx, []segment.Group{{Lines: []byte(`{"_msg":"into the new topic"}` + "\n")}})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if recs := consume(t, c.ListenAddrs(), "fresh", 1); string(recs[0].Value) != `{"_msg":"into the new topic"}` {
		t.Fatalf("%s", recs[0].Value)
	}
	q, err := NewProducer(Config{Brokers: c.ListenAddrs(), Topic: "logs"})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if err := q.EnsureTopic(ctx, 0); err != nil {
		t.Fatalf("seeded topic: %v", err)
	}
}
