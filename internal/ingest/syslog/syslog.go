// Package syslog receives syslog (RFC 5424 and RFC 3164) over TCP, TLS
// and UDP, as VictoriaLogs' -syslog.listenAddr.tcp and
// -syslog.listenAddr.udp do, and turns each message into the NDJSON line
// VictoriaLogs v1.52.1 would store for it: the same fields (see
// syslogline.Parser), _time from the message's timestamp (the timestamp
// field itself is consumed), message renamed _msg, and _stream and
// _stream_id from Config.StreamFields. The lines go to the caller's Sink
// in batches. testdata/vl_golden.json holds what VictoriaLogs stored for
// a corpus of messages; TestVLGolden checks the lines against it.
//
// Framing is VictoriaLogs': each frame is read on its own, and one that
// starts with a digit is octet counted ("LEN SP MSG", RFC 6587 3.4.1),
// anything else ends at '\n' or at the end of the stream. A UDP datagram
// is framed the same way, so it may hold several messages.
//
// Bad input: a frame whose octet count is not digits followed by a space,
// or is over MaxLineBytes, or is cut short by the end of the stream,
// closes the connection (logged with log.Warn, counted in BadFrames; in a
// datagram the rest of it is dropped), as in VictoriaLogs. Where it
// differs from VictoriaLogs:
//
//   - a '\n'-ended line over MaxLineBytes is skipped and counted in
//     Dropped (VictoriaLogs reads it whole, however long);
//   - a message whose timestamp does not parse is skipped and counted in
//     BadTime (VictoriaLogs closes the connection, or drops the rest of
//     the datagram);
//   - a '\r' before the '\n' is dropped and empty lines ("\r\n" too) are
//     skipped (VictoriaLogs keeps the '\r' in _msg and skips "\n" only);
//   - lines without a space are messages of their own (VictoriaLogs looks
//     for the first space first, so "a\nb\nc d\n" is one message);
//   - invalid UTF-8 is stored as U+FFFD (VictoriaLogs keeps the bytes);
//   - an RFC 3339 timestamp without a zone is read in Config.Location
//     (VictoriaLogs: the process's zone; RFC 5424 requires a zone).
package syslog

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spate-io/spate/internal/bytesutil"
	"github.com/spate-io/spate/internal/ingest"
	"github.com/spate-io/spate/internal/segment"
	"github.com/spate-io/spate/internal/syslogline"
	"github.com/spate-io/spate/internal/timeparse"
)

// DefaultStreamFields are VictoriaLogs' default -syslog.streamFields.
var DefaultStreamFields = []string{"hostname", "app_name", "proc_id",
	"cef.device_vendor", "cef.device_product", "cef.device_event_class_id"}

// Config says how messages become lines. The zero Config takes every
// default.
type Config struct {
	// MaxLineBytes is the longest message: 256 KiB by default, as
	// VictoriaLogs' -insert.maxLineSizeBytes.
	MaxLineBytes int
	// Location is the time zone of RFC 3164 timestamps (VictoriaLogs'
	// -syslog.timezone) and of RFC 3339 ones without a zone; nil means
	// time.Local.
	Location *time.Location
	// StreamFields make _stream; nil means DefaultStreamFields. Fields
	// missing or empty in a message are left out of its _stream.
	StreamFields []string
	// Tenant is the tenant whose _stream_id the lines get.
	Tenant segment.Tenant
	// A batch goes to the Sink when it holds FlushLines lines (default
	// 1000) or FlushBytes bytes (default 1 MiB), FlushInterval (default
	// 1 s, as VictoriaLogs flushes) after its first line, or when nothing
	// more has come for IdleFlush (default 10 ms).
	FlushLines    int
	FlushBytes    int
	FlushInterval time.Duration
	IdleFlush     time.Duration
	// DrainTimeout bounds the Sink calls still running or left to make
	// (the last batches) once the serving context is done: their context
	// is cancelled that long after. Default 10 s.
	DrainTimeout time.Duration
	// UDPQueue is how many full batches ServeUDP holds for the Sink
	// before it drops datagrams (default 4).
	UDPQueue int
	// Now gives the ingestion time (for messages without a timestamp)
	// and the year of RFC 3164 timestamps; nil means time.Now.
	Now func() time.Time
}

// withDefaults returns c with its defaults filled in.
func (c Config) withDefaults() Config {
	if c.MaxLineBytes <= 0 {
		c.MaxLineBytes = 256 << 10
	}
	if c.Location == nil {
		c.Location = time.Local
	}
	if c.StreamFields == nil {
		c.StreamFields = DefaultStreamFields
	}
	if c.FlushLines <= 0 {
		c.FlushLines = 1000
	}
	if c.FlushBytes <= 0 {
		c.FlushBytes = 1 << 20
	}
	if c.FlushInterval <= 0 {
		c.FlushInterval = time.Second
	}
	if c.IdleFlush <= 0 {
		c.IdleFlush = 10 * time.Millisecond
	}
	if c.DrainTimeout <= 0 {
		c.DrainTimeout = 10 * time.Second
	}
	if c.UDPQueue <= 0 {
		c.UDPQueue = 4
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Stats are counters the server exports as metrics. All are totals since
// the Stats was made, except OpenConnections. Safe for concurrent use;
// one Stats may serve several listeners.
type Stats struct {
	Connections     atomic.Int64 // TCP connections accepted
	OpenConnections atomic.Int64 // TCP connections being served now
	Datagrams       atomic.Int64 // UDP datagrams received (dropped ones too)
	Bytes           atomic.Int64 // bytes received: TCP payload (after TLS), datagrams
	Messages        atomic.Int64 // messages stored: in batches the Sink accepted
	Batches         atomic.Int64 // Sink calls that succeeded
	Dropped         atomic.Int64 // '\n'-ended messages over MaxLineBytes, skipped
	BadTime         atomic.Int64 // messages skipped because their timestamp does not parse
	BadFrames       atomic.Int64 // bad frames: TCP connections closed, rest of datagrams dropped
	UDPDropped      atomic.Int64 // datagrams dropped because the Sink fell behind
	SinkErrors      atomic.Int64 // Sink calls that failed (their lines are lost)
}

// Encoder turns syslog messages into NDJSON lines. It is not safe for
// concurrent use; reuse one per goroutine: it does not allocate once warm.
type Encoder struct {
	cfg    Config
	p      syslogline.Parser
	w      ingest.RowWriter
	row    ingest.Row
	stream []bool
}

// NewEncoder returns an Encoder for cfg (defaults filled in).
func NewEncoder(cfg Config) *Encoder {
	e := &Encoder{}
	e.setConfig(cfg.withDefaults())
	return e
}

func (e *Encoder) setConfig(cfg Config) {
	e.cfg = cfg
	e.p.Location = cfg.Location
	e.w.Tenant = cfg.Tenant
}

// TimeError is returned for a message whose timestamp does not parse.
type TimeError struct{ Timestamp string }

// Error quotes at most the first 64 bytes of the timestamp (a message can
// carry up to the line limit there, and the error is logged).
func (e *TimeError) Error() string {
	if ts := e.Timestamp; len(ts) > 64 {
		return fmt.Sprintf("cannot parse syslog timestamp %q... (%d bytes)", ts[:64], len(ts))
	}
	return fmt.Sprintf("cannot parse syslog timestamp %q", e.Timestamp)
}

// Append appends msg (one syslog message, without framing) to dst as one
// NDJSON line ending in '\n'; now is the ingestion time, for a message
// without a timestamp (or with "-" or "0"), and gives the year of RFC 3164
// ones. The fields are VictoriaLogs': see the package comment. A message
// whose timestamp does not parse returns a *TimeError and dst unchanged.
// Cost: one pass over msg and its fields.
func (e *Encoder) Append(dst, msg []byte, now time.Time) ([]byte, error) {
	e.p.Now = now
	e.p.Parse(bytesutil.ToUnsafeString(msg))
	fields := e.p.Fields
	// _time: the first "timestamp" field, which is consumed.
	var ts int64
	tsAt := -1
	for i, f := range fields {
		if f.Name == "timestamp" {
			tsAt = i
			var ok bool
			if ts, ok = parseTime(f.Value, now, e.cfg.Location); !ok {
				return dst, &TimeError{Timestamp: f.Value}
			}
			break
		}
	}
	if tsAt < 0 {
		ts = now.UnixNano()
	}
	// The first non-empty message becomes _msg.
	msgAt := -1
	for i, f := range fields {
		if f.Name == "message" && f.Value != "" {
			msgAt = i
			break
		}
	}
	// Stream fields first (RowWriter takes them from the front), then the
	// others in order.
	e.stream = slices.Grow(e.stream[:0], len(fields))[:len(fields)]
	rf := e.row.Fields[:0]
	for i, f := range fields {
		in := i != tsAt && i != msgAt && f.Value != "" && slices.Contains(e.cfg.StreamFields, f.Name)
		e.stream[i] = in
		if in {
			rf = append(rf, ingest.Field{Name: f.Name, Value: f.Value})
		}
	}
	e.row.Stream = len(rf)
	for i, f := range fields {
		switch {
		case i == tsAt || e.stream[i] || f.Value == "":
		case i == msgAt || f.Name == "":
			// VictoriaLogs stores a field without a name (from structured
			// data or CEE) as _msg too.
			rf = append(rf, ingest.Field{Name: "_msg", Value: f.Value})
		default:
			rf = append(rf, ingest.Field{Name: f.Name, Value: f.Value})
		}
	}
	e.row.Fields = rf
	e.row.Time = ts
	dst = e.w.Append(dst, &e.row)
	clear(rf)
	return dst, nil
}

// parseTime reads a syslog timestamp as VictoriaLogs reads its time
// fields: "", "0" and "-" (RFC 5424's NILVALUE) mean now, a value without
// '-' at index 4 is a Unix timestamp (s, ms, µs or ns by magnitude), else
// RFC 3339 (syslogline.ParseTime). A time of exactly 0 means now too.
func parseTime(s string, now time.Time, loc *time.Location) (int64, bool) {
	if s == "" || s == "0" || s == "-" {
		return now.UnixNano(), true
	}
	var ns int64
	var ok bool
	if len(s) <= 4 || s[4] != '-' {
		if !numeric(s) {
			return 0, false
		}
		ns, ok = timeparse.ParseIn(s, loc)
	} else {
		ns, ok = syslogline.ParseTime(s, loc)
	}
	if ok && ns == 0 {
		ns = now.UnixNano()
	}
	return ns, ok
}

// numeric reports whether s looks like a number: digits, a sign, a point
// or an exponent.
func numeric(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
		default:
			return false
		}
	}
	return s != ""
}

var encoders sync.Pool

// AppendMessage appends msg as one NDJSON line to dst, as Encoder.Append
// does for cfg (defaults filled in), with an Encoder from a pool. It is
// safe for concurrent use.
func AppendMessage(dst, msg []byte, cfg *Config, now time.Time) ([]byte, error) {
	e, _ := encoders.Get().(*Encoder)
	if e == nil {
		e = &Encoder{}
	}
	e.setConfig(cfg.withDefaults())
	dst, err := e.Append(dst, msg, now)
	e.cfg = Config{}
	encoders.Put(e)
	return dst, err
}
