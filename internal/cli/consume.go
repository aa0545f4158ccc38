package cli

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/spate-io/spate/internal/kafka"
	"github.com/spate-io/spate/internal/segment"
	"github.com/spate-io/spate/internal/server"
)

type consumeOpts struct {
	brokers, topic, group string
	instanceID            string
	dynamic               bool
	sessionTimeout        time.Duration
	commitInterval        time.Duration
	deadLetter            string
	kafkaSec              kafkaSecFlags

	data, listen, adminListen string
	segmentSize               sizeFlag
	segmentAge                time.Duration
	maxQueue                  sizeFlag
	noCompress, noIndex       bool
	compressDelay             time.Duration
	tokenFile                 string
	maxQueries                int
	maxQueryDuration          time.Duration
	queryMemory               sizeFlag
	logFormat, logLevel       string
}

func newConsumeCmd() *cobra.Command {
	o := &consumeOpts{
		// Store requests of a quarter of it, 32 MiB: bigger batches share
		// each fsync (8 MiB ones made the node 0.7x as fast here).
		maxQueue:    2 * segment.DefaultMaxQueueBytes,
		segmentSize: segment.DefaultMaxSegmentBytes,
		queryMemory: server.DefaultQueryMemory,
	}
	cmd := &cobra.Command{
		Use:   "consume --kafka-brokers HOSTS --kafka-topic TOPIC --data DIR [flags]",
		Short: "Run a storage node: consume a Kafka topic as a consumer group member into segments, and answer queries on them",
		Long: `Join a Kafka consumer group (--group) and write the records of the partitions
the group gives this node into segment files under --data, the same files
spate serve writes: a gateway (spate serve --kafka-brokers --kafka-topic)
produces the lines, storage nodes store them, and each answers the query API
(/select/logsql/*) on what it holds, on --listen.

Exactly once. Each record's line is checked as /insert/jsonline checks it
(a record that is not a valid line is counted, logged, sent to
--dead-letter-topic if given, and skipped: it never blocks its partition);
its tenant comes from the record's "tenant" header, which the gateway sets.
The lines and each partition's next offset are stored as one unit: after
each batch is fsynced, a checkpoint with the offsets is written and fsynced
(DIR/.checkpoint), and after a crash the store is cut back to the last
checkpoint and consumption resumes from its offsets, even when the offset
commit to Kafka was lost. Offsets are committed to the group too (every
200 ms, and before partitions move away), so that another node that takes a
partition starts right after what this one stored.

Membership is static (--instance-id, by default derived from the host name
and --data): a node that is killed and restarts within --session-timeout
gets its partitions back without a rebalance, so a kill -9 at any moment
neither loses nor duplicates a record. A node gone for longer has its
partitions moved to the others (cooperative rebalancing); they start from
the group's committed offsets, so records this node stored after its last
commit (at most about 200 ms of them) may be stored twice. A clean stop
(SIGTERM) finishes and commits what it holds; as a static member it stays
in the group until --session-timeout passes, expecting a restart. With
--dynamic the node leaves the group on a clean stop and its partitions move
at once, and a killed node's partitions move after --session-timeout.

Metrics (/metrics): spate_kafka_consumed_records_total, _bytes_total,
spate_kafka_consumer_lag{partition}, spate_kafka_partitions_owned,
spate_kafka_partitions_total{event},
spate_kafka_offset_commits_total, spate_kafka_invalid_records_total,
spate_kafka_dead_letters_total, spate_kafka_records_in_flight, and the
store's (spate_write_*, spate_fsync_seconds, spate_segments*).

Examples:
  spate serve --kafka-brokers k1:9092 --kafka-topic logs --kafka-create-topic 8
  spate consume --kafka-brokers k1:9092 --kafka-topic logs --data /var/lib/spate --listen 0.0.0.0:9428
  spate consume --kafka-brokers k1:9092 --kafka-topic logs --group spate --data ./node2 \
       --listen 127.0.0.1:9438 --dead-letter-topic logs-dead
  curl http://127.0.0.1:9428/select/logsql/query -d 'query=* | stats count()'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runConsume(cmd.Context(), o, cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.brokers, "kafka-brokers", "", "seed brokers, HOST:PORT,... (required)")
	fl.StringVar(&o.topic, "kafka-topic", "", "the topic to consume, which the gateway produces to (required)")
	fl.StringVar(&o.group, "group", "spate", "consumer group the storage nodes share")
	fl.StringVar(&o.instanceID, "instance-id", "", "static group membership id, unique per node and stable across restarts (default: spate-HOST-HASH, from the host name and the absolute --data path)")
	fl.BoolVar(&o.dynamic, "dynamic", false, "join the group as a dynamic member: no --instance-id; a clean stop leaves the group at once")
	fl.DurationVar(&o.sessionTimeout, "session-timeout", 45*time.Second, "how long the group waits for a silent node before it moves its partitions to the others")
	fl.DurationVar(&o.commitInterval, "commit-interval", 200*time.Millisecond, "how often stored offsets are committed to the group (they are also committed before partitions move away); a restart resumes from the store's own checkpoint either way")
	fl.StringVar(&o.deadLetter, "dead-letter-topic", "", "produce records that are not valid lines here, with spate-error and spate-source headers (default: only count and log them)")
	o.kafkaSec.add(fl)
	fl.StringVar(&o.data, "data", "", "directory for segment files (required; one storage node per directory)")
	fl.StringVar(&o.listen, "listen", "127.0.0.1:9428", "address of the query API, /metrics and /readyz (host:port; port 0 picks a free one)")
	fl.StringVar(&o.adminListen, "admin-listen", "", "address for pprof and metrics (default: off)")
	fl.Var(&o.segmentSize, "segment-size", "seal a segment and start a new one at this size")
	fl.DurationVar(&o.segmentAge, "segment-age", segment.DefaultMaxSegmentAge, "seal a segment this long after it was started")
	fl.Var(&o.maxQueue, "max-queue", "bytes handed to the store and not yet fsynced; past it, polling waits (backpressure)")
	fl.BoolVar(&o.noCompress, "no-compress", false, "leave sealed segments as plain .ndjson (default: compress them with zstd)")
	fl.BoolVar(&o.noIndex, "no-index", false, "write no sidecar index beside compressed segments")
	fl.DurationVar(&o.compressDelay, "compress-delay", segment.DefaultCompressDelay, "how long a sealed segment stays plain before it is compressed (0: at once)")
	fl.StringVar(&o.tokenFile, "auth-token-file", "", "file of bearer tokens /select requests must carry (see spate serve --help)")
	fl.IntVar(&o.maxQueries, "max-concurrent-queries", 0, "/select queries run at once (default: as spate serve)")
	fl.DurationVar(&o.maxQueryDuration, "max-query-duration", server.DefaultMaxQueryDuration, "longest a /select query may run")
	fl.Var(&o.queryMemory, "query-memory", "memory each query may use for exact stats state and sorted rows")
	fl.StringVar(&o.logFormat, "log-format", "text", "log format on stderr: text or json")
	fl.StringVar(&o.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	return cmd
}

// defaultInstanceID names a node by its host and data directory, so that
// it stays the same across restarts and differs between nodes.
func defaultInstanceID(data string) (string, error) {
	abs, err := filepath.Abs(data)
	if err != nil {
		return "", err
	}
	host, err := os.Hostname()
	if err != nil {
		host = "host"
	}
	sum := sha256.Sum256([]byte(abs))
	return "spate-" + host + "-" + hex.EncodeToString(sum[:4]), nil
}

func runConsume(ctx context.Context, o *consumeOpts, stderr io.Writer) error {
	if o.brokers == "" || o.topic == "" || o.data == "" {
		return usagef("consume needs --kafka-brokers, --kafka-topic and --data")
	}
	if o.group == "" {
		return usagef("--group must not be empty")
	}
	if o.dynamic && o.instanceID != "" {
		return usagef("--dynamic and --instance-id exclude each other")
	}
	if o.sessionTimeout < 0 || o.commitInterval <= 0 {
		return usagef("--session-timeout must not be negative, --commit-interval must be positive")
	}
	log, err := newLogger(o.logFormat, o.logLevel, stderr)
	if err != nil {
		return err
	}
	kopts, err := o.kafkaSec.opts()
	if err != nil {
		return err
	}
	instance := o.instanceID
	if !o.dynamic && instance == "" {
		if instance, err = defaultInstanceID(o.data); err != nil {
			return err
		}
	}
	var tokens []server.AuthToken
	if o.tokenFile != "" {
		if tokens, err = readTokens(o.tokenFile); err != nil {
			return err
		}
	}
	var con *kafka.Consumer // set below; /readyz pings it
	cfg := server.Config{
		DataDir:  o.data,
		NoInsert: true,
		NoIndex:  o.noIndex,
		Segment: segment.Options{
			Sync:            segment.SyncBatch,
			Checkpoint:      true,
			MaxSegmentBytes: int64(o.segmentSize),
			MaxSegmentAge:   o.segmentAge,
			MaxQueueBytes:   int64(o.maxQueue),
			NoCompress:      o.noCompress,
			CompressDelay:   cmp.Or(o.compressDelay, -1),
		},
		MaxConcurrentQueries: o.maxQueries,
		MaxQueryDuration:     o.maxQueryDuration,
		QueryMemory:          int64(o.queryMemory),
		QueryShare:           1, // nothing is ingested over HTTP to protect
		AuthTokens:           tokens,
		Ready:                func(ctx context.Context) error { return con.Ping(ctx) },
		Logger:               log,
	}
	srv, err := server.New(cfg)
	if err != nil {
		return err
	}
	con, err = kafka.NewConsumer(kafka.ConsumerConfig{
		Brokers: splitBrokers(o.brokers), Topic: o.topic, Group: o.group,
		InstanceID: instance, SessionTimeout: o.sessionTimeout, CommitInterval: o.commitInterval,
		Store: srv.Store(), DeadLetterTopic: o.deadLetter,
		MaxRequestBytes: int(min(32<<20, max(int64(o.maxQueue)/4, 1<<20))),
		Logger:          log, Opts: kopts,
	})
	if err != nil {
		srv.Close()
		return err
	}
	kctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	err = con.CheckTopic(kctx)
	cancel()
	switch {
	case errors.Is(err, kafka.ErrNoTopic):
		con.Close()
		srv.Close()
		return fmt.Errorf("%w on %s; create it (spate serve --kafka-create-topic N makes it at the gateway)", err, o.brokers)
	case kafka.Misconfigured(err):
		con.Close()
		srv.Close()
		return fmt.Errorf("%w on %s; check --kafka-tls-ca and the --kafka-sasl flags", err, o.brokers)
	case err != nil:
		log.Warn("Kafka does not answer yet; the node waits for it, and /readyz is 503 until it does", "brokers", o.brokers, "err", err)
	}
	srv.MustRegister(con.Collector())
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		con.Close()
		srv.Close()
		return fmt.Errorf("cannot listen on %s: %w", o.listen, err)
	}
	var admin net.Listener
	if o.adminListen != "" {
		if admin, err = net.Listen("tcp", o.adminListen); err != nil {
			ln.Close()
			con.Close()
			srv.Close()
			return fmt.Errorf("cannot listen on %s: %w", o.adminListen, err)
		}
	}
	// Tools and tests wait for this exact line.
	fmt.Fprintf(stderr, "spate consume: listening on http://%s\n", ln.Addr())
	log.Info("consuming", "brokers", o.brokers, "topic", o.topic, "group", o.group, "instance", instance, "data", o.data, "marks", len(srv.Store().Marks()))

	// The consumer stops first (ctx), storing and committing what it
	// polled; then the server, which closes the store.
	serveCtx, stopServe := context.WithCancel(context.Background())
	defer stopServe()
	conCtx, stopCon := context.WithCancel(ctx)
	defer stopCon()
	conErr := make(chan error, 1)
	go func() {
		err := con.Run(conCtx)
		stopServe()
		conErr <- err
	}()
	serr := srv.Serve(serveCtx, ln, admin)
	stopCon()
	cerr := <-conErr
	if cerr != nil {
		return fmt.Errorf("storage node stopped: %w", cerr)
	}
	return serr
}
