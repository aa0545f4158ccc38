package cli

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/spate-io/spate/internal/fileserve"
	"github.com/spate-io/spate/internal/ingest"
	"github.com/spate-io/spate/internal/ingest/syslog"
	"github.com/spate-io/spate/internal/kafka"
	"github.com/spate-io/spate/internal/segment"
	"github.com/spate-io/spate/internal/server"
)

type serveOpts struct {
	data          string
	listen        string
	adminListen   string
	syslogTCP     string
	syslogUDP     string
	syslogCert    string
	syslogKey     string
	syslogTZ      string
	syslogTenant  string
	syslogStreams string
	kafkaBrokers  string
	kafkaTopic    string
	kafkaCreate   int
	kafkaSec      kafkaSecFlags
	selectPeers   string
	allowPartial  bool
	peerTokenFile string
	fsync         string
	fsyncInterval time.Duration
	maxRequest    sizeFlag
	maxLine       sizeFlag
	maxQueue      sizeFlag
	maxInflight   sizeFlag
	segmentSize   sizeFlag
	segmentAge    time.Duration
	noCompress    bool
	noIndex       bool
	compressDelay time.Duration
	tokenFile     string
	readTimeout   time.Duration
	logFormat     string
	logLevel      string
	slowWrite     time.Duration

	maxQueries       int
	maxQueryDuration time.Duration
	maxQueueDuration time.Duration
	queryMemory      sizeFlag
	queryShare       float64

	files         string
	filesDotfiles bool
	filesBrowse   bool
	filesData     bool
	uploads       bool
	uploadsMax    sizeFlag
	uploadsOver   bool
	uploadsExpire time.Duration
	cacheControl  string
	immutable     []string
}

func newServeCmd() *cobra.Command {
	o := &serveOpts{
		maxLine:     ingest.DefaultMaxLineBytes,
		maxQueue:    segment.DefaultMaxQueueBytes,
		maxInflight: ingest.DefaultMemoryBytes,
		segmentSize: segment.DefaultMaxSegmentBytes,
		queryMemory: server.DefaultQueryMemory,
	}
	cmd := &cobra.Command{
		Use:   "serve --data DIR [flags]",
		Short: "Ingest NDJSON logs over HTTP into durable segment files and query them as VictoriaLogs does",
		Long: `Serve an HTTP API that takes NDJSON log lines and stores them in append-only
segment files under --data, acknowledging a request only once its lines are
written (and, with --fsync batch, fsynced), and answers VictoriaLogs'
querying API over them, so that vlogscli, Grafana's VictoriaLogs datasource
and curl work against spate as against VictoriaLogs v1.52.1.

Endpoints (main listener):
  POST /insert/jsonline   VictoriaLogs-compatible: the query args _time_field,
                          _msg_field, _stream_fields, ignore_fields,
                          decolorize_fields, extra_fields, debug and their
                          VL-* headers; Content-Encoding gzip or zstd
  POST /api/v1/ingest     the same (PUT too, for curl -T)
  POST|PUT /insert/elasticsearch/_bulk   the Elasticsearch bulk API
                          (Filebeat, Fluent Bit, Vector, Logstash, the ES
                          clients), answered item by item; also
                          /{index}/_bulk and the probes shippers send first
  POST /insert/opentelemetry/v1/logs    OTLP/HTTP logs, protobuf or JSON
  POST /insert/loki/api/v1/push         Loki push, JSON or protobuf+snappy
                          (Promtail, Grafana Alloy); X-Scope-OrgID = tenant
  --syslog-tcp, --syslog-udp            syslog (RFC 5424, RFC 3164; octet
                          counting or newline framing; TLS with
                          --syslog-tls-cert/--syslog-tls-key)
  GET|POST /select/logsql/query        LogsQL query; NDJSON rows as found
                          (limit=N: the N newest; offset, format=csv)
  GET|POST /select/logsql/hits         counts per step (offset, field,
                          fields_limit), zero-filled buckets
  GET|POST /select/logsql/stats_query, /stats_query_range
                          a query ending in stats, Prometheus-shaped
  GET|POST /select/logsql/facets, /field_names, /field_values, /streams,
           /stream_ids, /stream_field_names, /stream_field_values,
           /query_time_range
  GET|POST /select/logsql/tail         live: matching lines as they are
                          acknowledged (refresh_interval, start_offset)
  GET  /select/tenant_ids, /select/buildinfo
  GET|HEAD /files/{path}   with --files DIR: the files under DIR (see Files)
  GET|HEAD /data/{path}    with --files-data: the data directory, read-only
  POST|PATCH|HEAD|DELETE /uploads/   with --uploads: tus resumable uploads
  With --kafka-brokers and --kafka-topic the server is a gateway: every
  /insert/ protocol and syslog checks lines as above and produces them to
  Kafka, answering once Kafka has acknowledged all of them (503 when it
  does not); /readyz is 503 while no broker answers. A gateway has no
  --data and no query API; storage nodes (spate consume) store the topic.
  With --select-peers the server answers /select/logsql/* and the web page
  by sending each query to those storage nodes (spate consume, or spate
  serve --data) and merging their answers: a stats pipe's state is merged
  exactly as one process merges its workers' (counts, sums, sets,
  quantile samples or sketches), a sort with a limit or a limit runs on
  each node and again over the merged rows, other pipes run over the
  merged rows. A node that fails or does not answer within the query's
  time fails the query, naming it (502, 504), unless --allow-partial: the
  answer then leaves that node's data out and names it in the
  Spate-Partial-Response header (a trailer for /select/logsql/query).
  Live tailing is not fanned out.
  GET  /, /ui/            the web page: LogsQL editor, hits histogram, fields
                          and their top values, rows, live tail (assets
                          embedded; a token entered there stays in the tab)
  GET  /metrics           Prometheus text format
  GET  /healthz, /readyz  liveness; readiness (503 when the queue is >90%
                          full or the server is stopping)
Admin listener (--admin-listen): /debug/pprof/ and /metrics.

Bodies of any size stream through: they are read in 1 MiB chunks cut at
line ends, checked on all cores, and stored in order; memory stays within
--max-inflight plus --max-queue. Every line is checked as JSON (valid
UTF-8, a JSON object, a parseable time field). Bad lines, and lines over
--max-line-size, are rejected and named in the JSON answer
({"accepted":N,"rejected":M,"lines":L,"errors":[{"line":L,"error":"..."}]});
the good lines around them are kept.

Answers: 200 the whole body was read, its good lines stored; 400 empty or
all lines bad, a body that does not decompress or a bad parameter; 401 no
or wrong token; 403 a token that may not write, or is bound to another
tenant (see Tokens); 405 not POST or PUT; 408 the client sent nothing for
--read-timeout; 413 body over --max-request-size (off by default); 415
unsupported Content-Type or Content-Encoding; 429 + Retry-After when the
write queue or the in-flight memory is full, decided before the body is
read (nothing stored: retry; the rest of the body is read and discarded so
that the client sees the answer); 503 shutting down.

What a request cut short leaves stored: a body is stored chunk by chunk, so
a client that disconnects or stalls midway, or a body that passes
--max-request-size, keeps every complete line before the cut (as
VictoriaLogs keeps what it parsed); the answer, if the client still reads
it, says how many ("lines": resend from line lines+1).

Lines are stored as received. A line without a time field (_time, ts, time,
timestamp, @timestamp, or _time_field) gets "_time" (the ingestion time) as
its first field; so does one whose time field is "", null, "0", 0 or "-",
as in VictoriaLogs. Ingestion parameters other than _time_field=_time
rebuild the line flat, as VictoriaLogs stores it; _stream_fields adds
_stream and _stream_id, computed as VictoriaLogs does, for stream filters
({app="x"}). The AccountID and ProjectID headers (default 0) select a
tenant. Files: DIR/ACCOUNT-PROJECT/YYYY-MM-DD/seg-N.ndjson, by tenant and
the lines' UTC day, rotated by --segment-size and --segment-age, each with
a small .seg-N.meta (acknowledged size, time range, streams); sealed
segments are compressed to .ndjson.zst in the background after
--compress-delay. spate query reads DIR directly, also while it is written
(tenant 0:0, or --tenant). After a crash the torn tail of a segment is cut
back to its last complete line. SIGINT/SIGTERM: stop taking requests,
finish those in flight, write and fsync the queue, exit.

Queries: every /select endpoint takes query, start, end (exclusive), time
(RFC 3339 with or without a zone, 2026-01-02, 2026-01-02T15, Unix seconds,
ms or ns, now, -5m), timeout, extra_filters and extra_stream_filters, and
the AccountID/ProjectID headers; each reads a fresh snapshot of the
tenant's segments (a line is visible once acknowledged), skips segments
whose metadata rules them out (time range, streams) and decodes sealed .zst
segments while it scans. Up to --max-concurrent-queries run at once; the
others wait up to --max-queue-duration, then get 503. While a request is
being ingested, queries together use at most --query-share of the CPUs.
Errors as
VictoriaLogs sends them: 400 with the parser's message (a bad query, time
or arg), 422 in Prometheus' JSON shape from the stats endpoints, 422 for a
query past --query-memory, 503 past --max-query-duration. A client that
goes away cancels its query. Known differences from VictoriaLogs:
field_names counts the rows that have a value (VictoriaLogs counts the rows
of its storage blocks that have the column, so its numbers are higher), and
/tail sends lines as they are acknowledged, whatever their _time, instead
of re-querying a time window: its offset arg (holding back lines younger
than it) defaults to 0 instead of 5s, so lines arrive within
refresh_interval (default 1s).

Files: with --files DIR, GET and HEAD /files/{path} serve the files under
DIR read-only (--files alone runs a file server: no /insert or /select).
Paths are opened through an os.Root: "..", encoded slashes or backslashes,
NUL, symlinks that leave DIR and (unless --files-dotfiles) names starting
with '.' get 404, a directory 403 (with --files-browse, /files/dir/ lists
it: HTML, or JSON with Accept: application/json). RFC 9110 semantics
through Go's http.ServeContent: single, suffix and multiple ranges
(multipart/byteranges; more than 64 in one request and the whole file is
sent),
416 with Content-Range: bytes */SIZE, strong ETag, Last-Modified,
If-None-Match and If-Modified-Since (304), If-Match and
If-Unmodified-Since (412), If-Range; Content-Type by extension, else by
content; Content-Disposition with an RFC 6266 filename* for non-ASCII
names (attachment with ?download); Cache-Control from --cache-control, and
immutable for --immutable patterns. Accept-Encoding (q-values) picks zstd,
br or gzip: a precompressed sibling (f.zst, f.br, f.gz, not older than f)
as stored, else text, JSON, JavaScript and the like of 1 KiB or more
compressed on the fly; Vary: Accept-Encoding always, an ETag per encoding,
ranges of the uncompressed file only. Uncompressed bodies go out with
sendfile(2). --files-data serves the --data directory the same way at
/data/ (raw segments of every tenant; its lock and metadata files are
hidden; tokens bound to a tenant get 403). Metrics: spate_files_* and
spate_uploads_*. spate bench http measures these paths against nginx.
spate get downloads from here with parallel ranges. With --uploads, POST
/uploads/ takes tus 1.0 resumable uploads (tusd v2: creation,
creation-with-upload, termination, expiration, and checksum: sha1 or
sha256, 460 on a mismatch; PATCH at a wrong offset gets 409; HEAD
tells the offset to resume from, also after a restart): a finished
upload is renamed to DIR/NAME (its Upload-Metadata filename without any
path, or its upload ID) and served at /files/NAME; an existing NAME gets
409 unless --uploads-overwrite; tokens need write. Unfinished uploads wait
in DIR/.uploads (never served) until --uploads-expire passes without data
(tus expiration: answers carry Upload-Expires; later requests get 410).
A full disk answers 507, keeping what was written: the client resumes
when there is space. A Grafana dashboard and Prometheus alert
rules for the whole server are in the repository's deploy/ directory.

Tokens: with --auth-token-file, /insert/, /api/v1/ingest and /select/
requests must send "Authorization: Bearer TOKEN" (/healthz, /readyz and
/metrics need none). The file holds one token a line:
  TOKEN [tenant=ACCOUNT:PROJECT] [read|write|read,write]
Fields are separated by blanks; blank lines and # comments are skipped. A
bare TOKEN may read and write in any tenant (the headers choose). write
allows /insert/ and /api/v1/ingest, read allows /select/ and /files/; a
tenant without a permission word means read,write. tenant= binds the token to that tenant:
a request without AccountID/ProjectID headers acts in it, one whose headers
name another tenant gets 403, and so does /select/tenant_ids (it lists
every tenant). A token may appear once; serve refuses a file with a bad
line, naming it (--auth-token-file F:3: unknown permission "rw").

Examples:
  spate serve --data /var/lib/spate
  spate serve --data ./logs --listen 127.0.0.1:9428 --admin-listen 127.0.0.1:9429
  curl -T big.ndjson http://127.0.0.1:9428/api/v1/ingest      # any size
  curl --data-binary @app.ndjson http://127.0.0.1:9428/api/v1/ingest
  curl -H 'Content-Encoding: gzip' --data-binary @app.ndjson.gz \
       'http://127.0.0.1:9428/insert/jsonline?_msg_field=log&_time_field=date'
  printf 'c0ffee tenant=3:4 write\nbadd06 read\n' >tokens
  spate serve --data ./logs --auth-token-file tokens
  curl -H 'Authorization: Bearer c0ffee' --data-binary @app.ndjson \
       http://127.0.0.1:9428/insert/jsonline                 # into 3:4
  curl http://127.0.0.1:9428/select/logsql/query -d 'query=error _time:5m'
  curl http://127.0.0.1:9428/select/logsql/hits -d 'query=*' -d step=1h -d start=-1d
  curl -N http://127.0.0.1:9428/select/logsql/tail -d 'query=level:error'
  vlogscli -datasource.url=http://127.0.0.1:9428/select/logsql/query
  spate serve --files ./downloads --immutable 'assets/*' --cache-control 'public, max-age=600'
  curl -O http://127.0.0.1:9428/files/big.iso -H 'Range: bytes=0-1048575'
  spate query '* | stats count()' ./logs
  spate serve --select-peers http://node1:9428,http://node2:9428 --listen 127.0.0.1:9500`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd.Context(), o, cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.data, "data", "", "directory for segment files (created if missing; required unless --files is given)")
	fl.StringVar(&o.files, "files", "", "directory whose files GET/HEAD /files/{path} serve, read-only (ranges, ETags, conditional requests, sendfile)")
	fl.BoolVar(&o.filesDotfiles, "files-dotfiles", false, "serve files and directories whose names start with '.' under --files (default: 404)")
	fl.BoolVar(&o.filesData, "files-data", false, "serve the --data directory itself, read-only, at GET/HEAD /data/{tenant}/{day}/{segment} (every tenant's raw segments; tokens bound to a tenant get 403)")
	fl.BoolVar(&o.uploads, "uploads", false, "take tus resumable uploads at /uploads/ into --files DIR (Upload-Metadata filename, without its path, names the file)")
	fl.Var(&o.uploadsMax, "uploads-max-size", "largest upload; a bigger Upload-Length gets 413 (default: no limit)")
	fl.BoolVar(&o.uploadsOver, "uploads-overwrite", false, "let a finished upload replace a file of the same name (default: 409)")
	fl.DurationVar(&o.uploadsExpire, "uploads-expire", 24*time.Hour, "delete an unfinished upload that received nothing for this long (tus expiration: Upload-Expires, then 410); 0 keeps them")
	fl.BoolVar(&o.filesBrowse, "files-browse", false, "list directories under --files: GET /files/dir/ answers HTML, or JSON with Accept: application/json (default: 403)")
	fl.StringVar(&o.cacheControl, "cache-control", "", "Cache-Control of the files under --files, e.g. \"public, max-age=3600\" (default: none)")
	fl.StringArrayVar(&o.immutable, "immutable", nil, "path pattern (path.Match, relative to --files, e.g. 'assets/*.js') whose files get Cache-Control immutable; repeatable")
	fl.StringVar(&o.listen, "listen", "127.0.0.1:9428", "address of the API (host:port; port 0 picks a free one)")
	fl.StringVar(&o.kafkaBrokers, "kafka-brokers", "", "make this server a gateway: produce the lines it takes to Kafka (HOST:PORT,...) instead of storing them, answering once Kafka has them (acks=all, idempotent); needs --kafka-topic, excludes --data")
	fl.StringVar(&o.kafkaTopic, "kafka-topic", "", "the topic --kafka-brokers produces to; records are keyed by _stream. A missing topic stops serve at start, unless --kafka-create-topic")
	o.kafkaSec.add(fl)
	fl.StringVar(&o.selectPeers, "select-peers", "", "answer /select/logsql/* by fanning each query out to these storage nodes (base URLs, comma-separated: spate consume or spate serve --data) and merging their answers; excludes --data and --kafka-brokers")
	fl.BoolVar(&o.allowPartial, "allow-partial", false, "with --select-peers, answer without a node that fails or times out, naming it in the Spate-Partial-Response header (default: the query fails, naming the node)")
	fl.StringVar(&o.peerTokenFile, "select-peers-token-file", "", "file whose first line is the bearer token sent to the --select-peers (when they take --auth-token-file)")
	fl.IntVar(&o.kafkaCreate, "kafka-create-topic", 0, "create a missing --kafka-topic with this many partitions (the brokers' default replication)")
	fl.StringVar(&o.syslogTCP, "syslog-tcp", "", "also take syslog over TCP on this address, e.g. 127.0.0.1:514 (RFC 5424 and RFC 3164, octet counting or newline framing; default: off)")
	fl.StringVar(&o.syslogUDP, "syslog-udp", "", "also take syslog over UDP on this address (one or more messages a datagram; dropped and counted when storage falls behind; default: off)")
	fl.StringVar(&o.syslogCert, "syslog-tls-cert", "", "PEM certificate file: --syslog-tcp takes TLS (RFC 5425) with it and --syslog-tls-key")
	fl.StringVar(&o.syslogKey, "syslog-tls-key", "", "PEM private key file of --syslog-tls-cert")
	fl.StringVar(&o.syslogTZ, "syslog-tz", "Local", "time zone of syslog timestamps without one (RFC 3164), an IANA name such as UTC or Europe/Berlin")
	fl.StringVar(&o.syslogTenant, "syslog-tenant", "0:0", "tenant (ACCOUNT:PROJECT) syslog messages are stored in")
	fl.StringVar(&o.syslogStreams, "syslog-stream-fields", strings.Join(syslog.DefaultStreamFields, ","), "fields of syslog messages that make their _stream")
	fl.StringVar(&o.adminListen, "admin-listen", "", "address for pprof and metrics, e.g. 127.0.0.1:9429 (default: off)")
	fl.StringVar(&o.fsync, "fsync", "batch", "when to fsync: batch (acknowledge after fsync), interval (acknowledge after write, fsync every --fsync-interval), never")
	fl.DurationVar(&o.fsyncInterval, "fsync-interval", segment.DefaultSyncInterval, "fsync period for --fsync interval")
	fl.Var(&o.maxRequest, "max-request-size", "largest request body, after decompression; past it the request ends with 413, keeping the lines before (default: no limit)")
	fl.Var(&o.maxLine, "max-line-size", "longest line; a longer line is rejected and skipped, the rest of its request kept")
	fl.Var(&o.maxQueue, "max-queue", "bytes accepted and not yet written; new requests get 429 while it is full, requests under way wait")
	fl.Var(&o.maxInflight, "max-inflight", "memory for request chunks being read and checked (each chunk reserves twice its size); a request that cannot get its first chunk gets 429")
	fl.Var(&o.segmentSize, "segment-size", "seal a segment and start a new one at this size")
	fl.DurationVar(&o.segmentAge, "segment-age", segment.DefaultMaxSegmentAge, "seal a segment this long after it was started")
	fl.BoolVar(&o.noCompress, "no-compress", false, "leave sealed segments as plain .ndjson (default: compress them with zstd)")
	fl.BoolVar(&o.noIndex, "no-index", false, "write no sidecar index beside compressed segments (default: write one, so that stats read columns instead of lines, and blocks a filter rules out are skipped)")
	fl.DurationVar(&o.compressDelay, "compress-delay", segment.DefaultCompressDelay, "how long a sealed segment stays plain before it is compressed, so that bursts of ingestion have the disk to themselves (0: at once)")
	fl.StringVar(&o.tokenFile, "auth-token-file", "", "file of bearer tokens, one per line as TOKEN [tenant=ACCOUNT:PROJECT] [read|write|read,write] (see Tokens above); /insert and /select requests must send one (Authorization: Bearer TOKEN)")
	fl.DurationVar(&o.readTimeout, "read-timeout", time.Minute, "longest time a client may send nothing while its body is read (408, keeping its complete lines)")
	fl.IntVar(&o.maxQueries, "max-concurrent-queries", 0, "/select queries run at once; others wait up to --max-queue-duration, then get 503 (default: 2 per CPU up to 4 CPUs, at most 16, as VictoriaLogs)")
	fl.DurationVar(&o.maxQueryDuration, "max-query-duration", server.DefaultMaxQueryDuration, "longest a /select query may run (503 past it); a request's timeout arg may lower it")
	fl.DurationVar(&o.maxQueueDuration, "max-queue-duration", server.DefaultMaxQueueDuration, "longest a /select query waits for one of --max-concurrent-queries")
	fl.Float64Var(&o.queryShare, "query-share", server.DefaultQueryShare, "share of the CPUs (0 to 1) queries may use while a request is being ingested, so that queries never starve ingestion; 1: no limit (queries run at full speed whenever nothing is being ingested)")
	fl.Var(&o.queryMemory, "query-memory", "memory each query may use for exact stats state and sorted rows; past it count_uniq and quantiles switch to sketches, stats groups spill to disk, and a sort fails with 422")
	fl.StringVar(&o.logFormat, "log-format", "text", "log format on stderr: text or json")
	fl.StringVar(&o.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fl.DurationVar(&o.slowWrite, "debug-slow-write", 0, "sleep before each write batch, to simulate a slow disk (tests, demos)")
	fl.MarkHidden("debug-slow-write")
	return cmd
}

func runServe(ctx context.Context, o *serveOpts, stderr io.Writer) error {
	if (o.kafkaBrokers == "") != (o.kafkaTopic == "") {
		return usagef("--kafka-brokers and --kafka-topic go together")
	}
	if o.kafkaBrokers != "" && o.data != "" {
		return usagef("--kafka-brokers makes a gateway, which stores nothing itself: drop --data (storage nodes come with spate consume)")
	}
	if o.selectPeers != "" && (o.data != "" || o.kafkaBrokers != "") {
		return usagef("--select-peers answers queries from the storage nodes; it stores nothing itself: drop --data and --kafka-brokers")
	}
	if o.selectPeers == "" && (o.allowPartial || o.peerTokenFile != "") {
		return usagef("--allow-partial and --select-peers-token-file go with --select-peers")
	}
	if o.data == "" && o.files == "" && o.kafkaBrokers == "" && o.selectPeers == "" {
		return usagef("serve needs --data DIR, --files DIR or both (or --kafka-brokers and --kafka-topic for a gateway, or --select-peers to query storage nodes)")
	}
	if o.filesData && o.data == "" {
		return usagef("--files-data serves the --data directory, which is not given")
	}
	if o.uploadsExpire < 0 {
		return usagef("--uploads-expire must not be negative (0 keeps unfinished uploads)")
	}
	if o.files == "" && (o.uploads || o.uploadsOver || o.uploadsMax > 0) {
		return usagef("--uploads, --uploads-max-size and --uploads-overwrite need --files DIR, where uploads go")
	}
	if o.files == "" && (o.filesDotfiles || o.filesBrowse && !o.filesData || o.cacheControl != "" || len(o.immutable) > 0) {
		return usagef("--files-dotfiles, --files-browse, --cache-control and --immutable apply to --files DIR, which is not given")
	}
	sync, err := segment.ParseSyncMode(o.fsync)
	if err != nil {
		return usagef("--fsync: %v", err)
	}
	if !(o.queryShare > 0 && o.queryShare <= 1) {
		return usagef("--query-share: want a share of the CPUs above 0 and at most 1, got %v", o.queryShare)
	}
	if o.maxQueries < 0 {
		return usagef("--max-concurrent-queries: want 0 (the default) or more, got %d", o.maxQueries)
	}
	log, err := newLogger(o.logFormat, o.logLevel, stderr)
	if err != nil {
		return err
	}
	var tokens []server.AuthToken
	if o.tokenFile != "" {
		if tokens, err = readTokens(o.tokenFile); err != nil {
			return err
		}
	}
	cfg := server.Config{
		DataDir: o.data,
		NoIndex: o.noIndex,
		Segment: segment.Options{
			Sync:            sync,
			SyncInterval:    o.fsyncInterval,
			MaxSegmentBytes: int64(o.segmentSize),
			MaxSegmentAge:   o.segmentAge,
			MaxQueueBytes:   int64(o.maxQueue),
			NoCompress:      o.noCompress,
			CompressDelay:   cmp.Or(o.compressDelay, -1),
			SlowWrite:       o.slowWrite,
		},
		Ingest: ingest.Config{
			MaxLineBytes: int(o.maxLine),
			MemoryBytes:  int64(o.maxInflight),
		},
		FilesDir:             o.files,
		FilesData:            o.filesData,
		Uploads:              o.uploads,
		UploadsMaxSize:       int64(o.uploadsMax),
		UploadsOverwrite:     o.uploadsOver,
		UploadsExpire:        o.uploadsExpire,
		Files:                fileserve.Options{Dotfiles: o.filesDotfiles, Browse: o.filesBrowse, CacheControl: o.cacheControl, Immutable: o.immutable},
		MaxRequestBytes:      int64(o.maxRequest),
		ReadTimeout:          o.readTimeout,
		MaxConcurrentQueries: o.maxQueries,
		MaxQueryDuration:     o.maxQueryDuration,
		MaxQueueDuration:     o.maxQueueDuration,
		QueryMemory:          int64(o.queryMemory),
		QueryShare:           o.queryShare,
		AuthTokens:           tokens,
		Logger:               log,
	}
	if o.selectPeers != "" {
		for _, p := range strings.Split(o.selectPeers, ",") {
			if p = strings.TrimSpace(p); p == "" {
				continue
			}
			u, err := url.Parse(p)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return usagef("--select-peers: %q is not a base URL such as http://10.0.0.5:9428", p)
			}
			cfg.SelectPeers = append(cfg.SelectPeers, strings.TrimSuffix(p, "/"))
		}
		cfg.AllowPartial = o.allowPartial
		if o.peerTokenFile != "" {
			if cfg.PeerToken, err = firstLine(o.peerTokenFile, "--select-peers-token-file"); err != nil {
				return err
			}
		}
	}
	if o.kafkaBrokers != "" {
		brokers := splitBrokers(o.kafkaBrokers)
		kopts, err := o.kafkaSec.opts()
		if err != nil {
			return err
		}
		if cfg.Kafka, err = kafka.NewProducer(kafka.Config{Brokers: brokers, Topic: o.kafkaTopic, Opts: kopts}); err != nil {
			return err
		}
		// The topic must be there; a cluster that does not answer yet is
		// not an error: records wait for it, and /readyz says it is down.
		kctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err = cfg.Kafka.EnsureTopic(kctx, int32(o.kafkaCreate))
		cancel()
		switch {
		case errors.Is(err, kafka.ErrNoTopic):
			cfg.Kafka.Close()
			return fmt.Errorf("%w on %s; create it, or pass --kafka-create-topic PARTITIONS", err, o.kafkaBrokers)
		case kafka.Misconfigured(err):
			cfg.Kafka.Close()
			return fmt.Errorf("%w on %s; check --kafka-tls-ca and the --kafka-sasl flags", err, o.kafkaBrokers)
		case err != nil:
			log.Warn("Kafka does not answer yet; lines wait for it, and /readyz is 503 until it does", "brokers", o.kafkaBrokers, "err", err)
		}
	}
	srv, err := server.New(cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		srv.Close()
		return fmt.Errorf("cannot listen on %s: %w", o.listen, err)
	}
	var admin net.Listener
	if o.adminListen != "" {
		if admin, err = net.Listen("tcp", o.adminListen); err != nil {
			ln.Close()
			srv.Close()
			return fmt.Errorf("cannot listen on %s: %w", o.adminListen, err)
		}
		fmt.Fprintf(stderr, "spate serve: admin (pprof, metrics) on http://%s\n", admin.Addr())
	}
	sy, err := o.listenSyslog(stderr)
	if err != nil {
		ln.Close()
		if admin != nil {
			admin.Close()
		}
		srv.Close()
		return err
	}
	if sy.TCP != nil || sy.UDP != nil {
		srv.ServeSyslog(ctx, sy)
	}
	// Tools (bench ingest, tests) wait for this exact line.
	fmt.Fprintf(stderr, "spate serve: listening on http://%s\n", ln.Addr())
	log.Info("serving", "addr", ln.Addr().String(), "data", o.data, "fsync", sync.String(), "auth", len(tokens) > 0)
	return srv.Serve(ctx, ln, admin)
}

// newLogger returns the logger of --log-format and --log-level, writing
// to stderr.
func newLogger(format, level string, stderr io.Writer) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, usagef("--log-level: %v", err)
	}
	hopts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(stderr, hopts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(stderr, hopts)), nil
	}
	return nil, usagef("--log-format: want text or json, got %q", format)
}

// kafkaSecFlags are the flags that reach a secured Kafka cluster.
type kafkaSecFlags struct {
	sec      kafka.Security
	passFile string
}

func (k *kafkaSecFlags) add(fl *pflag.FlagSet) {
	fl.BoolVar(&k.sec.TLS, "kafka-tls", false, "reach the brokers over TLS (verified against the system's roots, or --kafka-tls-ca)")
	fl.StringVar(&k.sec.CAFile, "kafka-tls-ca", "", "PEM file of the CA certificates that sign the brokers' (implies --kafka-tls)")
	fl.StringVar(&k.sec.SASL, "kafka-sasl", "", "SASL mechanism: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512, with --kafka-sasl-user and --kafka-sasl-password-file")
	fl.StringVar(&k.sec.User, "kafka-sasl-user", "", "SASL user name")
	fl.StringVar(&k.passFile, "kafka-sasl-password-file", "", "file whose first line is the SASL password (not a flag value, which ps would show)")
}

// opts reads the password file, if any, and returns franz-go's options.
func (k *kafkaSecFlags) opts() ([]kgo.Opt, error) {
	if k.passFile != "" {
		var err error
		if k.sec.Password, err = firstLine(k.passFile, "--kafka-sasl-password-file"); err != nil {
			return nil, err
		}
	}
	opts, err := k.sec.Opts()
	if err != nil {
		return nil, usagef("%v", err)
	}
	return opts, nil
}

// firstLine returns the first line of the file at path, which flag named:
// a secret kept out of flag values, which ps would show.
func firstLine(path, flag string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %w", flag, err)
	}
	line, _, _ := strings.Cut(strings.TrimRight(string(b), "\r\n"), "\n")
	return line, nil
}

// splitBrokers splits a --kafka-brokers list.
func splitBrokers(list string) []string {
	var brokers []string
	for b := range strings.SplitSeq(list, ",") {
		if b = strings.TrimSpace(b); b != "" {
			brokers = append(brokers, b)
		}
	}
	return brokers
}

// readTokens reads the --auth-token-file at path: one token a line, with
// an optional tenant= and permission (see server.ParseAuthTokens). Errors
// name the file and line, never a token.
func readTokens(path string) ([]server.AuthToken, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read --auth-token-file: %w", err)
	}
	defer f.Close()
	toks, err := server.ParseAuthTokens(path, f)
	if err != nil {
		return nil, fmt.Errorf("--auth-token-file %w", err)
	}
	if len(toks) == 0 {
		return nil, fmt.Errorf("--auth-token-file %s holds no token", path)
	}
	return toks, nil
}

// listenSyslog opens the syslog listeners of --syslog-tcp and --syslog-udp
// (with TLS when --syslog-tls-cert is given) and says where they listen.
func (o *serveOpts) listenSyslog(stderr io.Writer) (server.Syslog, error) {
	var sy server.Syslog
	if o.syslogTCP == "" && o.syslogUDP == "" {
		if o.syslogCert != "" || o.syslogKey != "" {
			return sy, usagef("--syslog-tls-cert and --syslog-tls-key need --syslog-tcp")
		}
		return sy, nil
	}
	if o.data == "" && o.kafkaBrokers == "" {
		return sy, usagef("--syslog-tcp and --syslog-udp store into --data DIR (or produce to --kafka-brokers), which is not given")
	}
	if (o.syslogCert == "") != (o.syslogKey == "") {
		return sy, usagef("--syslog-tls-cert and --syslog-tls-key go together")
	}
	loc, err := time.LoadLocation(o.syslogTZ)
	if err != nil {
		return sy, usagef("--syslog-tz %q: %v", o.syslogTZ, err)
	}
	account, project, _ := strings.Cut(o.syslogTenant, ":")
	tenant, err := segment.ParseTenantHeaders(account, project)
	if err != nil {
		return sy, usagef("--syslog-tenant %q: %v", o.syslogTenant, err)
	}
	sy.Config = syslog.Config{MaxLineBytes: int(o.maxLine), Location: loc, Tenant: tenant, StreamFields: []string{}}
	for f := range strings.SplitSeq(o.syslogStreams, ",") {
		if f = strings.TrimSpace(f); f != "" {
			sy.Config.StreamFields = append(sy.Config.StreamFields, f)
		}
	}
	closeAll := func() {
		if sy.TCP != nil {
			sy.TCP.Close()
		}
		if sy.UDP != nil {
			sy.UDP.Close()
		}
	}
	if o.syslogTCP != "" {
		if sy.TCP, err = net.Listen("tcp", o.syslogTCP); err != nil {
			return sy, fmt.Errorf("cannot listen for syslog on tcp %s: %w", o.syslogTCP, err)
		}
		scheme := "tcp"
		if o.syslogCert != "" {
			cert, err := tls.LoadX509KeyPair(o.syslogCert, o.syslogKey)
			if err != nil {
				closeAll()
				return sy, fmt.Errorf("cannot load --syslog-tls-cert/--syslog-tls-key: %w", err)
			}
			sy.TCP = tls.NewListener(sy.TCP, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
			scheme = "tls"
		}
		fmt.Fprintf(stderr, "spate serve: syslog on %s://%s\n", scheme, sy.TCP.Addr())
	}
	if o.syslogUDP != "" {
		if sy.UDP, err = net.ListenPacket("udp", o.syslogUDP); err != nil {
			closeAll()
			return sy, fmt.Errorf("cannot listen for syslog on udp %s: %w", o.syslogUDP, err)
		}
		fmt.Fprintf(stderr, "spate serve: syslog on udp://%s\n", sy.UDP.LocalAddr())
	}
	return sy, nil
}
