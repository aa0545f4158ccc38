package kafka

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/spate-io/spate/internal/ingest"
	"github.com/spate-io/spate/internal/segment"
)

// ConsumerConfig configures a Consumer.
type ConsumerConfig struct {
	// Brokers, Topic and Group are required: the seed brokers
	// (HOST:PORT), the topic the gateway produces to, and the consumer
	// group the storage nodes share.
	Brokers      []string
	Topic, Group string
	// InstanceID makes the node a static member of the group (KIP-345):
	// a node that restarts within SessionTimeout gets its partitions back
	// without a rebalance and resumes from its store's marks, so a crash
	// neither loses nor duplicates a record. Empty: a dynamic member,
	// whose partitions move to the other nodes as soon as it is gone.
	InstanceID string
	// SessionTimeout is how long the group waits for a silent node
	// before it gives its partitions to the others; 0: franz-go's 45 s.
	SessionTimeout time.Duration
	// Store receives the lines; it must keep checkpoints
	// (segment.Options.Checkpoint), which hold each partition's next
	// offset. Its queue must take MaxRequestBytes.
	Store *segment.Store
	// DeadLetterTopic, if set, receives the records that are not valid
	// lines (the record's value, with headers saying why and where from).
	// Either way they are counted and skipped: they never block a
	// partition.
	DeadLetterTopic string
	// MaxRequestBytes bounds the lines of one store request; default
	// 8 MiB.
	MaxRequestBytes int
	// CommitInterval is how often stored offsets are committed to the
	// group (the store's checkpoint, not the commit, is what a restarted
	// node resumes from; a partition that moves to another node after a
	// crash starts from the commit); default 200 ms.
	CommitInterval time.Duration
	// Logger; nil: slog.Default(). Now: the time of lines without one;
	// nil: time.Now.
	Logger *slog.Logger
	Now    func() time.Time
	// Opts are extra franz-go options (TLS, SASL, client ID).
	Opts []kgo.Opt
}

// Consumer is a storage node: a member of a consumer group that writes
// the records of the partitions it is given into a segment store, through
// the same line checks as /insert/jsonline (see ingest.Processor), and
// stores each partition's next offset atomically with the lines
// (segment.Mark), so that after a crash it resumes exactly where its
// store ends. See Run.
type Consumer struct {
	cfg   ConsumerConfig
	cl    *kgo.Client
	store *segment.Store
	log   *slog.Logger

	inflight chan *inflightReq // to the waiter, in order

	mu        sync.Mutex
	idle      *sync.Cond      // signalled as requests complete
	enq, done int64           // store requests enqueued and completed
	fatal     error           // a store request failed: stop
	owned     map[int32]bool  // partitions assigned to this node
	durable   map[int32]int64 // next offset whose records are all stored
	committed map[int32]int64 // last offset committed to the group
	hw        map[int32]int64 // high watermark last fetched
	lastErr   string          // last fetch error logged, to log each once

	records, lines, bytes   atomic.Int64
	invalid                 atomic.Int64
	deadOK, deadFailed      atomic.Int64
	assigned, revoked, lost atomic.Int64
	commits, commitFailed   atomic.Int64
	fetchErrors             atomic.Int64
	inflightRecords         atomic.Int64
}

// inflightReq is one store request the waiter waits for.
type inflightReq struct {
	p       *segment.Pending
	marks   map[int32]int64
	records int64
	lines   int64
	bytes   int64
}

// markKey names a partition's mark in the store: "topic/partition".
func markKey(topic string, p int32) string { return topic + "/" + strconv.Itoa(int(p)) }

// NewConsumer makes a Consumer; Run starts it. The brokers are reached
// lazily: an unreachable cluster shows up in Run's logs and metrics.
func NewConsumer(cfg ConsumerConfig) (*Consumer, error) {
	if len(cfg.Brokers) == 0 || cfg.Topic == "" || cfg.Group == "" {
		return nil, errors.New("kafka consumer: brokers, topic and group are required")
	}
	if cfg.Store == nil || !cfg.Store.Checkpointed() {
		return nil, errors.New("kafka consumer: the store must keep checkpoints")
	}
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = 8 << 20
	}
	if cfg.CommitInterval <= 0 {
		cfg.CommitInterval = 200 * time.Millisecond
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	c := &Consumer{
		cfg: cfg, store: cfg.Store, log: cfg.Logger,
		inflight:  make(chan *inflightReq, 64),
		owned:     map[int32]bool{},
		durable:   map[int32]int64{},
		committed: map[int32]int64{},
		hw:        map[int32]int64{},
	}
	c.idle = sync.NewCond(&c.mu)
	opts := []kgo.Opt{
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.ConsumerGroup(cfg.Group),
		kgo.ConsumeTopics(cfg.Topic),
		kgo.Balancers(kgo.CooperativeStickyBalancer()),
		kgo.DisableAutoCommit(),
		// Rebalances happen between polls, once the records polled are
		// handed to the store: the revoke callback then only has to wait
		// for them to be stored and commit.
		kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsAssigned(c.onAssigned),
		kgo.OnPartitionsRevoked(c.onRevoked),
		kgo.OnPartitionsLost(c.onLost),
		kgo.AdjustFetchOffsetsFn(c.adjustOffsets),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		// Dead letters: acks=all, idempotent (franz-go's defaults).
		kgo.RequiredAcks(kgo.AllISRAcks()),
	}
	if cfg.InstanceID != "" {
		opts = append(opts, kgo.InstanceID(cfg.InstanceID))
	}
	if cfg.SessionTimeout > 0 {
		opts = append(opts, kgo.SessionTimeout(cfg.SessionTimeout))
	}
	cl, err := kgo.NewClient(append(opts, cfg.Opts...)...)
	if err != nil {
		return nil, fmt.Errorf("kafka consumer: %w", err)
	}
	c.cl = cl
	return c, nil
}

// CheckTopic returns ErrNoTopic (wrapped) if the cluster has no such
// topic, or ctx's error if it does not answer in time (the consumer then
// waits for it).
func (c *Consumer) CheckTopic(ctx context.Context) error {
	return ensureTopic(ctx, c.cl, c.cfg.Topic, 0)
}

// Ping reports whether a broker answers, for /readyz.
func (c *Consumer) Ping(ctx context.Context) error { return c.cl.Ping(ctx) }

// Run consumes until ctx is done or a store request fails. It then waits
// for every request it handed to the store, commits the stored offsets to
// the group, and closes the client (a static member stays in the group,
// so a restart within the session timeout takes its partitions back
// without a rebalance). It returns nil after a clean stop, or the store's
// error: the process should exit, and a restart resumes from the store's
// checkpoint.
func (c *Consumer) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	waiterDone := make(chan struct{})
	go func() {
		defer close(waiterDone)
		c.waiter(cancel)
	}()
	var b requestBuilder
	b.init(c)
	var runErr error // a store request that could not be handed over
	for ctx.Err() == nil {
		fetches := c.cl.PollRecords(ctx, 0)
		if fetches.IsClientClosed() || ctx.Err() != nil {
			break
		}
		fetches.EachError(func(topic string, p int32, err error) {
			if errors.Is(err, context.Canceled) {
				return
			}
			c.fetchErrors.Add(1)
			c.mu.Lock()
			first := c.lastErr != err.Error()
			c.lastErr = err.Error()
			c.mu.Unlock()
			if first {
				c.log.Warn("cannot fetch from Kafka; retrying", "topic", topic, "partition", p, "err", err)
			}
		})
		var err error
		fetches.EachPartition(func(fp kgo.FetchTopicPartition) {
			if err != nil || len(fp.Records) == 0 {
				return
			}
			c.mu.Lock()
			c.hw[fp.Partition] = fp.HighWatermark
			c.mu.Unlock()
			for _, r := range fp.Records {
				b.add(r)
				if b.size() >= c.cfg.MaxRequestBytes {
					if err = b.flush(ctx); err != nil {
						return
					}
				}
			}
		})
		if err == nil {
			err = b.flush(ctx)
		}
		c.cl.AllowRebalance()
		if err != nil {
			if ctx.Err() == nil {
				runErr = err
			}
			break
		}
	}
	close(c.inflight)
	<-waiterDone
	fatal := c.fatalErr()
	if fatal == nil {
		// A last commit of what is stored (a request that could not be
		// handed over stored nothing); the revoke at close commits
		// too, but only if the group is still reachable.
		cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
		c.commitSync(cctx, nil)
		ccancel()
	}
	c.cl.CloseAllowingRebalance()
	if fatal == nil {
		return runErr
	}
	return fatal
}

// Close closes the client, for a Consumer whose Run was never called.
func (c *Consumer) Close() { c.cl.Close() }

func (c *Consumer) fatalErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fatal
}

// waiter waits for the store requests in order; as each completes, it
// advances the stored offsets and, every CommitInterval, commits them.
// A failed request is fatal: the records after it must not be committed
// past it, and the store fails every later request until it is reopened.
func (c *Consumer) waiter(stop context.CancelCauseFunc) {
	last := time.Now()
	for req := range c.inflight {
		err := req.p.Wait(context.Background())
		c.inflightRecords.Add(-req.records)
		c.mu.Lock()
		if err != nil && c.fatal == nil {
			c.fatal = fmt.Errorf("cannot store records from Kafka: %w", err)
			c.log.Error("cannot store records; stopping (a restart resumes from the store's checkpoint)", "err", err)
			stop(c.fatal)
		}
		if err == nil {
			for p, off := range req.marks {
				c.durable[p] = off
			}
		}
		c.done++
		c.idle.Broadcast()
		c.mu.Unlock()
		if err != nil {
			continue
		}
		c.records.Add(req.records)
		c.lines.Add(req.lines)
		c.bytes.Add(req.bytes)
		if time.Since(last) >= c.cfg.CommitInterval {
			last = time.Now()
			c.commitAsync()
		}
	}
}

// waitIdle waits until every store request enqueued so far has completed.
func (c *Consumer) waitIdle() {
	c.mu.Lock()
	for c.done < c.enq {
		c.idle.Wait()
	}
	c.mu.Unlock()
}

// toCommit returns the stored offsets of the owned partitions (of ps, if
// not nil) that are ahead of the group's; c.mu must be held.
func (c *Consumer) toCommitLocked(ps []int32) map[string]map[int32]kgo.EpochOffset {
	m := map[int32]kgo.EpochOffset{}
	for p, off := range c.durable {
		if !c.owned[p] || ps != nil && !slices.Contains(ps, p) {
			continue
		}
		if cur, ok := c.committed[p]; ok && off <= cur {
			continue
		}
		m[p] = kgo.EpochOffset{Epoch: -1, Offset: off}
	}
	if len(m) == 0 {
		return nil
	}
	return map[string]map[int32]kgo.EpochOffset{c.cfg.Topic: m}
}

// commitAsync commits the stored offsets of the owned partitions without
// waiting. Commits are ordered (franz-go waits for the previous one), and
// the revoke callback's synchronous commit comes after every earlier one.
func (c *Consumer) commitAsync() {
	c.mu.Lock()
	m := c.toCommitLocked(nil)
	c.mu.Unlock()
	if m != nil {
		c.cl.CommitOffsets(context.Background(), m, c.onCommitted)
	}
}

// commitSync commits the stored offsets of the owned partitions (of ps,
// if not nil) and waits.
func (c *Consumer) commitSync(ctx context.Context, ps []int32) {
	c.mu.Lock()
	m := c.toCommitLocked(ps)
	c.mu.Unlock()
	if m != nil {
		c.cl.CommitOffsetsSync(ctx, m, c.onCommitted)
	}
}

// onCommitted records a commit's result. It must not commit (see
// kgo.Client.CommitOffsets).
func (c *Consumer) onCommitted(_ *kgo.Client, req *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
	if err != nil {
		c.commitFailed.Add(1)
		c.log.Warn("cannot commit offsets to the group; the store's checkpoint still has them", "err", err)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if perr := kerr.ErrorForCode(p.ErrorCode); perr != nil {
				c.commitFailed.Add(1)
				c.log.Warn("cannot commit a partition's offset to the group", "topic", t.Topic, "partition", p.Partition, "err", perr)
				continue
			}
			for _, rt := range req.Topics {
				for _, rp := range rt.Partitions {
					if rt.Topic == t.Topic && rp.Partition == p.Partition {
						c.committed[p.Partition] = max(c.committed[p.Partition], rp.Offset)
					}
				}
			}
			c.commits.Add(1)
		}
	}
}

// adjustOffsets starts each assigned partition at the store's mark when
// it is ahead of the group's committed offset (the commit after the last
// stored batch was lost, say in a kill -9): the records up to the mark are
// already stored here. Otherwise the committed offset stands (another
// node consumed past this store's mark).
func (c *Consumer) adjustOffsets(_ context.Context, offsets map[string]map[int32]kgo.Offset) (map[string]map[int32]kgo.Offset, error) {
	marks := c.store.Marks()
	c.mu.Lock()
	defer c.mu.Unlock()
	for topic, ps := range offsets {
		for p, o := range ps {
			at := o.EpochOffset().Offset
			if at >= 0 {
				c.committed[p] = at
			}
			m, ok := marks[markKey(topic, p)]
			if !ok || m <= at {
				continue
			}
			c.log.Info("resuming a partition from the store's checkpoint, ahead of the group's offset", "topic", topic, "partition", p, "offset", m, "group_offset", at)
			ps[p] = kgo.NewOffset().At(m)
			c.durable[p] = m
		}
	}
	return offsets, nil
}

func (c *Consumer) onAssigned(_ context.Context, _ *kgo.Client, assigned map[string][]int32) {
	ps := assigned[c.cfg.Topic]
	c.assigned.Add(int64(len(ps)))
	c.mu.Lock()
	for _, p := range ps {
		c.owned[p] = true
		delete(c.durable, p) // set again by adjustOffsets or the first store
	}
	c.mu.Unlock()
	if len(ps) > 0 {
		slices.Sort(ps)
		c.log.Info("partitions assigned", "topic", c.cfg.Topic, "partitions", ps)
	}
}

// onRevoked waits until every record polled from the revoked partitions
// is stored, commits their offsets and waits for the commit, so that the
// next owner starts exactly after them.
func (c *Consumer) onRevoked(ctx context.Context, _ *kgo.Client, revoked map[string][]int32) {
	ps := revoked[c.cfg.Topic]
	if len(ps) == 0 {
		return
	}
	c.revoked.Add(int64(len(ps)))
	c.waitIdle()
	c.commitSync(ctx, ps)
	c.disown(ps)
	slices.Sort(ps)
	c.log.Info("partitions revoked", "topic", c.cfg.Topic, "partitions", ps)
}

// disown forgets partitions this node no longer has.
func (c *Consumer) disown(ps []int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range ps {
		delete(c.owned, p)
		delete(c.hw, p)
	}
}

// onLost: the group dropped this node (a session timeout, a fenced
// instance). Records already handed to the store are still stored here,
// and their new owner starts from the group's offset, so some may be
// stored twice.
func (c *Consumer) onLost(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
	ps := lost[c.cfg.Topic]
	if len(ps) == 0 {
		return
	}
	c.lost.Add(int64(len(ps)))
	c.disown(ps)
	slices.Sort(ps)
	c.log.Warn("partitions lost (the group dropped this node); records stored after the last commit may be stored again by their next owner", "topic", c.cfg.Topic, "partitions", ps)
}

// ConsumerStats are a Consumer's counters since it was made.
type ConsumerStats struct {
	Records, Lines, Bytes int64 // stored (acknowledged by the store)
	Invalid               int64 // records or lines that are not valid lines
	DeadLetters           int64 // of them, produced to the dead-letter topic
	DeadLetterFailed      int64 // of them, not taken by the dead-letter topic
	Assigned, Revoked     int64 // partitions, over all rebalances
	Lost                  int64
	Commits, CommitFailed int64 // partition offsets committed, or not
	FetchErrors           int64
	InFlight              int64 // records handed to the store, not yet stored
	Owned                 int   // partitions assigned to this node now
}

// Stats returns the consumer's counters.
func (c *Consumer) Stats() ConsumerStats {
	c.mu.Lock()
	owned := len(c.owned)
	c.mu.Unlock()
	return ConsumerStats{
		Owned:   owned,
		Records: c.records.Load(), Lines: c.lines.Load(), Bytes: c.bytes.Load(),
		Invalid: c.invalid.Load(), DeadLetters: c.deadOK.Load(), DeadLetterFailed: c.deadFailed.Load(),
		Assigned: c.assigned.Load(), Revoked: c.revoked.Load(), Lost: c.lost.Load(),
		Commits: c.commits.Load(), CommitFailed: c.commitFailed.Load(),
		FetchErrors: c.fetchErrors.Load(), InFlight: c.inflightRecords.Load(),
	}
}

// Lag returns, per owned partition, the records fetched from Kafka's
// high watermark not yet stored: the high watermark of the last fetch
// minus the stored offset.
func (c *Consumer) Lag() map[int32]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	lag := map[int32]int64{}
	for p := range c.owned {
		if hw, ok := c.hw[p]; ok {
			lag[p] = max(hw-c.durable[p], 0)
		}
	}
	return lag
}

// requestBuilder gathers polled records into store requests: each
// record's lines checked and grouped by tenant and day, and each
// partition's next offset as a mark.
type requestBuilder struct {
	c       *Consumer
	batches map[segment.Tenant]*ingest.Batch
	procs   map[segment.Tenant]*ingest.Processor
	order   []segment.Tenant
	marks   map[int32]int64
	records int64
	bytes   int // of lines gathered
	groups  []segment.Group
	now     int64
}

func (b *requestBuilder) init(c *Consumer) {
	b.c = c
	b.batches = map[segment.Tenant]*ingest.Batch{}
	b.procs = map[segment.Tenant]*ingest.Processor{}
	b.marks = map[int32]int64{}
}

// size returns the bytes of lines gathered.
func (b *requestBuilder) size() int { return b.bytes }

// add takes one record: each of its lines (a record is normally one) is
// checked as /insert/jsonline checks lines; a bad one goes to the dead
// letters.
func (b *requestBuilder) add(r *kgo.Record) {
	if b.records == 0 {
		b.now = b.c.cfg.Now().UnixNano()
	}
	b.records++
	b.marks[r.Partition] = r.Offset + 1
	tenant, err := recordTenant(r)
	if err != nil {
		b.c.deadLetter(r, r.Value, err.Error())
		return
	}
	bt := b.batches[tenant]
	if bt == nil {
		bt = &ingest.Batch{}
		b.batches[tenant] = bt
		b.procs[tenant] = ingest.NewProcessor(ingest.Params{}, tenant)
		b.order = append(b.order, tenant)
	}
	pr := b.procs[tenant]
	data := r.Value
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		out, ts, err := pr.Process(line, b.now)
		if err != nil {
			b.c.deadLetter(r, line, err.Error())
			continue
		}
		bt.Add(out, ts, pr.Stream())
		b.bytes += len(out) + 1
	}
}

// flush hands the gathered lines and marks to the store as one request
// and passes it to the waiter. It waits for room in the store's queue
// (backpressure: no more polling meanwhile) until ctx is done.
func (b *requestBuilder) flush(ctx context.Context) error {
	if b.records == 0 {
		return nil
	}
	c := b.c
	b.groups = b.groups[:0]
	var lines, size int64
	for _, t := range b.order {
		bt := b.batches[t]
		bt.Tenant = t
		b.groups = append(b.groups, bt.Groups()...)
		lines += int64(bt.Lines)
		size += bt.Bytes
	}
	marks := make([]segment.Mark, 0, len(b.marks))
	for p, off := range b.marks {
		marks = append(marks, segment.Mark{Key: markKey(c.cfg.Topic, p), Value: off})
	}
	pend, err := c.store.EnqueueMarked(ctx, b.groups, marks, true)
	if err != nil {
		return fmt.Errorf("cannot hand records to the store: %w", err)
	}
	req := &inflightReq{p: pend, marks: maps.Clone(b.marks), records: b.records, lines: lines, bytes: size}
	c.inflightRecords.Add(b.records)
	c.mu.Lock()
	c.enq++
	c.mu.Unlock()
	c.inflight <- req
	for _, t := range b.order {
		b.batches[t].Reset()
	}
	clear(b.marks)
	b.records, b.bytes = 0, 0
	return nil
}

// recordTenant reads a record's "tenant" header (the gateway's); none is
// the default tenant.
func recordTenant(r *kgo.Record) (segment.Tenant, error) {
	for _, h := range r.Headers {
		if h.Key == "tenant" {
			return segment.ParseTenant(string(h.Value))
		}
	}
	return segment.Tenant{}, nil
}

// deadLetter counts a bad record (or one bad line of it) and, with a
// dead-letter topic, produces it there without waiting: a dead-letter
// topic that is slow or down never holds up the partition (records it
// cannot take are counted as failed).
func (c *Consumer) deadLetter(r *kgo.Record, value []byte, reason string) {
	c.invalid.Add(1)
	if c.invalid.Load() <= 10 {
		c.log.Warn("record is not a valid line; skipped", "topic", r.Topic, "partition", r.Partition, "offset", r.Offset, "reason", reason)
	}
	if c.cfg.DeadLetterTopic == "" {
		return
	}
	dl := &kgo.Record{
		Topic: c.cfg.DeadLetterTopic,
		Key:   r.Key,
		Value: bytes.Clone(value),
		Headers: append(slices.Clone(r.Headers),
			kgo.RecordHeader{Key: "spate-error", Value: []byte(reason)},
			kgo.RecordHeader{Key: "spate-source", Value: fmt.Appendf(nil, "%s/%d/%d", r.Topic, r.Partition, r.Offset)}),
	}
	c.cl.TryProduce(context.Background(), dl, func(_ *kgo.Record, err error) {
		if err != nil {
			c.deadFailed.Add(1)
			return
		}
		c.deadOK.Add(1)
	})
}

// Collector returns the consumer's Prometheus metrics: records and bytes
// stored, invalid records and dead letters, partitions assigned, revoked
// and lost, offset commits, fetch errors, records in flight and lag per
// partition.
func (c *Consumer) Collector() prometheus.Collector { return consumerCollector{c} }

type consumerCollector struct{ c *Consumer }

var (
	descConsumed    = prometheus.NewDesc("spate_kafka_consumed_records_total", "Records from Kafka stored (fsynced with their offsets).", nil, nil)
	descConsumedB   = prometheus.NewDesc("spate_kafka_consumed_bytes_total", "Bytes of lines from Kafka stored.", nil, nil)
	descInvalid     = prometheus.NewDesc("spate_kafka_invalid_records_total", "Records (or lines of records) from Kafka that are not valid lines: skipped, and sent to the dead-letter topic if there is one.", nil, nil)
	descDead        = prometheus.NewDesc("spate_kafka_dead_letters_total", "Invalid records produced to the dead-letter topic, by result.", []string{"result"}, nil)
	descRebalance   = prometheus.NewDesc("spate_kafka_partitions_total", "Partitions assigned to, revoked from or lost by this node, over all rebalances.", []string{"event"}, nil)
	descCommits     = prometheus.NewDesc("spate_kafka_offset_commits_total", "Partition offsets committed to the consumer group, by result.", []string{"result"}, nil)
	descFetchErrors = prometheus.NewDesc("spate_kafka_fetch_errors_total", "Errors fetching from Kafka (retried).", nil, nil)
	descOwned       = prometheus.NewDesc("spate_kafka_partitions_owned", "Partitions assigned to this node now.", nil, nil)
	descInFlight    = prometheus.NewDesc("spate_kafka_records_in_flight", "Records handed to the store and not yet stored.", nil, nil)
	descLag         = prometheus.NewDesc("spate_kafka_consumer_lag", "Records in an assigned partition not yet stored: its high watermark at the last fetch minus the stored offset.", []string{"partition"}, nil)
)

func (cc consumerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descConsumed, descConsumedB, descInvalid, descDead, descRebalance, descCommits, descFetchErrors, descOwned, descInFlight, descLag} {
		ch <- d
	}
}

func (cc consumerCollector) Collect(ch chan<- prometheus.Metric) {
	st := cc.c.Stats()
	counter := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	counter(descConsumed, st.Records)
	counter(descConsumedB, st.Bytes)
	counter(descInvalid, st.Invalid)
	counter(descDead, st.DeadLetters, "produced")
	counter(descDead, st.DeadLetterFailed, "failed")
	counter(descRebalance, st.Assigned, "assigned")
	counter(descRebalance, st.Revoked, "revoked")
	counter(descRebalance, st.Lost, "lost")
	counter(descCommits, st.Commits, "ok")
	counter(descCommits, st.CommitFailed, "failed")
	counter(descFetchErrors, st.FetchErrors)
	ch <- prometheus.MustNewConstMetric(descOwned, prometheus.GaugeValue, float64(st.Owned))
	ch <- prometheus.MustNewConstMetric(descInFlight, prometheus.GaugeValue, float64(st.InFlight))
	for p, lag := range cc.c.Lag() {
		ch <- prometheus.MustNewConstMetric(descLag, prometheus.GaugeValue, float64(lag), strconv.Itoa(int(p)))
	}
}
