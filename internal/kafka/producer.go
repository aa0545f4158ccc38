// Package kafka puts Kafka in front of spate when one machine is not
// enough (issue 20). This file is the gateway's side: Producer is an
// ingest.Sink that produces the lines the ingest pipeline has checked to a
// topic, and acknowledges them only once Kafka has acknowledged every
// record (acks=all, idempotent producer: franz-go's defaults); spate serve
// --kafka-brokers --kafka-topic runs it. consumer.go is the storage
// node's side (spate consume).
package kafka

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/spate-io/spate/internal/ingest"
	"github.com/spate-io/spate/internal/ndjson"
	"github.com/spate-io/spate/internal/segment"
)

// Config configures a Producer.
type Config struct {
	// Brokers are the seed brokers, HOST:PORT; Topic the topic the lines go
	// to. Both required.
	Brokers []string
	Topic   string
	// MaxBufferedBytes bounds the records waiting for Kafka's
	// acknowledgement; an Enqueue that finds it full waits (up to its
	// context: the pipeline's MaxWait, then 429/503). Default 64 MiB.
	MaxBufferedBytes int
	// DeliveryTimeout fails records Kafka has not acknowledged within it
	// (the request then fails with ErrUnavailable). Default 30 s.
	DeliveryTimeout time.Duration
	// Opts are extra franz-go options (TLS, SASL, client ID).
	Opts []kgo.Opt
}

// ErrUnavailable wraps a record Kafka did not acknowledge.
var ErrUnavailable = errors.New("kafka did not acknowledge the records")

// Producer is an ingest.Sink that produces each line as one record, keyed
// by the line's _stream so that a stream stays in one partition and in
// order, with the tenant in a "tenant" header ("ACCOUNT:PROJECT"). Lines
// without a _stream have no key and are spread over the partitions (one
// key for all of them would put them all in one partition). Safe for
// concurrent use.
type Producer struct {
	cl     *kgo.Client
	topic  string
	maxBuf int64
	// ctx is the records' context: the caller's context only bounds the
	// wait for buffer room, since its deadline must not fail records that
	// Kafka is still to acknowledge. Close cancels it.
	ctx    context.Context
	cancel context.CancelFunc

	produced, failed atomic.Int64 // records
	bytes            atomic.Int64 // record values acknowledged
}

// NewProducer connects to the brokers (lazily: an unreachable cluster
// shows up as Ping errors and failed records, not here).
func NewProducer(cfg Config) (*Producer, error) {
	if len(cfg.Brokers) == 0 || cfg.Topic == "" {
		return nil, errors.New("kafka producer: brokers and topic are required")
	}
	if cfg.MaxBufferedBytes <= 0 {
		cfg.MaxBufferedBytes = 64 << 20
	}
	if cfg.DeliveryTimeout <= 0 {
		cfg.DeliveryTimeout = 30 * time.Second
	}
	opts := append([]kgo.Opt{
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.DefaultProduceTopic(cfg.Topic),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.MaxBufferedBytes(cfg.MaxBufferedBytes),
		kgo.RecordDeliveryTimeout(cfg.DeliveryTimeout),
		kgo.ProducerLinger(5 * time.Millisecond),
		// Records with the same key go to the same partition.
		kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)),
	}, cfg.Opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka producer: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Producer{cl: cl, topic: cfg.Topic, maxBuf: int64(cfg.MaxBufferedBytes), ctx: ctx, cancel: cancel}, nil
}

// Close flushes nothing more and closes the client; records not yet
// acknowledged fail.
func (p *Producer) Close() {
	p.cancel()
	p.cl.Close()
}

// Ping reports whether a broker answers, for /readyz.
func (p *Producer) Ping(ctx context.Context) error { return p.cl.Ping(ctx) }

// InFlight returns the records handed to Kafka and not yet acknowledged
// or failed.
func (p *Producer) InFlight() int64 { return p.cl.BufferedProduceRecords() }

// Stats returns the records acknowledged and failed, and the bytes
// acknowledged, since the Producer was made.
func (p *Producer) Stats() (produced, failed, bytes int64) {
	return p.produced.Load(), p.failed.Load(), p.bytes.Load()
}

// Enqueue implements ingest.Sink: it produces every line of groups, in
// order, and returns the acknowledgement of all of them. It copies the
// lines (one allocation per group). It waits while the producer's buffer
// is full, until ctx is done; then it fails, and the records it had
// handed over may still reach Kafka (a client that resends may store
// them twice: the gateway is at-least-once).
func (p *Producer) Enqueue(ctx context.Context, groups []segment.Group) (ingest.Ack, error) {
	a := &ack{done: make(chan struct{})}
	a.left.Store(1) // held until every record is handed over
	var it ndjson.Iter
	for _, g := range groups {
		if len(g.Lines) == 0 {
			continue
		}
		tenant := []kgo.RecordHeader{{Key: "tenant", Value: []byte(g.Tenant.String())}}
		data := bytes.Clone(g.Lines)
		for len(data) > 0 {
			i := bytes.IndexByte(data, '\n')
			line := data[:i] // the store's groups always end lines in '\n'
			data = data[i+1:]
			// Wait for buffer room, up to ctx (franz-go's own wait would
			// tie the record to ctx).
			for wait := 50 * time.Microsecond; p.cl.BufferedProduceBytes()+int64(len(line)) > p.maxBuf; wait = min(2*wait, 20*time.Millisecond) {
				select {
				case <-ctx.Done():
					a.release()
					return nil, context.Cause(ctx)
				case <-time.After(wait):
				}
			}
			r := &kgo.Record{Key: streamOf(&it, line), Value: line, Headers: tenant}
			a.left.Add(1)
			p.cl.Produce(p.ctx, r, a.promise(p))
		}
	}
	a.release()
	return a, nil
}

// streamOf returns line's top-level _stream value, or nil.
func streamOf(it *ndjson.Iter, line []byte) []byte {
	it.Reset(line)
	for it.Next() {
		if it.Depth() == 0 && string(it.Key()) == "_stream" {
			return bytes.Clone(it.Value())
		}
	}
	return nil
}

// ack is the acknowledgement of one Enqueue: done once every record is
// acknowledged or failed; err holds the first failure. left counts the
// records not yet answered, plus one while Enqueue hands them over.
type ack struct {
	left atomic.Int64
	done chan struct{}
	mu   sync.Mutex
	err  error
}

func (a *ack) promise(p *Producer) func(*kgo.Record, error) {
	return func(r *kgo.Record, err error) {
		if err != nil {
			p.failed.Add(1)
			a.mu.Lock()
			if a.err == nil {
				a.err = fmt.Errorf("%w: %v", ErrUnavailable, err)
			}
			a.mu.Unlock()
		} else {
			p.produced.Add(1)
			p.bytes.Add(int64(len(r.Value)))
		}
		a.release()
	}
}

// release marks one record (or the handing over) answered.
func (a *ack) release() {
	if a.left.Add(-1) == 0 {
		close(a.done)
	}
}

// Wait implements ingest.Ack.
func (a *ack) Wait(ctx context.Context) error {
	select {
	case <-a.done:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

// Done implements ingest.Ack.
func (a *ack) Done() bool {
	select {
	case <-a.done:
		return true
	default:
		return false
	}
}

// ErrNoTopic is a topic the cluster does not have.
var ErrNoTopic = errors.New("the topic does not exist")

// EnsureTopic checks that the producer's topic exists. When it does not,
// and partitions > 0, it creates it with that many partitions and the
// brokers' default replication; else it returns ErrNoTopic. A cluster that
// does not answer within ctx returns ctx's error (callers may start
// anyway: records wait for the cluster, and /readyz says it is down).
func (p *Producer) EnsureTopic(ctx context.Context, partitions int32) error {
	return ensureTopic(ctx, p.cl, p.topic, partitions)
}

func ensureTopic(ctx context.Context, cl *kgo.Client, topic string, partitions int32) error {
	adm := kadm.NewClient(cl)
	topics, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return fmt.Errorf("cannot list Kafka topics: %w", err)
	}
	t, ok := topics[topic]
	switch {
	case ok && t.Err == nil:
		return nil
	case ok && Misconfigured(t.Err):
		return fmt.Errorf("cannot see the Kafka topic %q: %w", topic, t.Err)
	}
	if partitions <= 0 {
		return fmt.Errorf("%w: %q", ErrNoTopic, topic)
	}
	if _, err := adm.CreateTopic(ctx, partitions, -1, nil, topic); err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("cannot create the Kafka topic %q: %w", topic, err)
	}
	return nil
}
