package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/s2"
	"google.golang.org/protobuf/encoding/protowire"
)

// The randomized differential test of the shippers' protocols: random
// Elasticsearch bulk, OTLP (protobuf) and Loki (JSON and protobuf +
// snappy) requests, valid and not, go to VictoriaLogs v1.52.1 and to spate
// serve, each request in a tenant of its own; both must answer the same
// status class and store the same rows (as sets of field maps, _stream and
// _stream_id included). The differences docs/serve.md lists on purpose are
// expected where the generator makes them (shipCase.vlStatus).
//
// SPATE_SHIPDIFF_N (requests per protocol, default 40) and
// SPATE_SHIPDIFF_SEED (default 1) make larger exploratory runs.

// shipCase is one request and what the servers must do with it.
type shipCase struct {
	proto string // "es", "otlp", "loki-json", "loki-pb"
	path  string // path and query
	hdr   [][2]string
	body  []byte
	// spateStatus and vlStatus are the statuses wanted: 0 means any 2xx.
	spateStatus, vlStatus int
	// esItemErrors is set when spate must answer a bulk with errors: true.
	esItemErrors bool
}

// shipGen makes random payloads from one seed.
type shipGen struct {
	r *rand.Rand
}

func (g *shipGen) pick(n int) int        { return g.r.IntN(n) }
func (g *shipGen) chance(p float64) bool { return g.r.Float64() < p }

var shipStrings = []string{
	"", "plain", "with space", `q"uote`, `back\slash`, "tab\there", "nl\nline", "é 用户", "\u2028sep",
	"ctl\x01\x7f", "🙂 emoji", "1", "-0", "1.50", "1e3", "true", "null", "{}", "[1,2]", `{"a":1}`,
	"  padded  ", "x=y", "a,b", "a.b", "2024-01-02T03:04:05Z",
}

func (g *shipGen) str() string {
	if g.chance(0.3) {
		return fmt.Sprintf("v%d", g.pick(5))
	}
	return shipStrings[g.pick(len(shipStrings))]
}

// shipNames are the names of attributes and of nested fields. Names that
// are _msg to VictoriaLogs ("", "_msg") stay out, and so do those the
// protocols' own fields take (trace_id): a row with one field name twice
// reads back in VictoriaLogs as the value of whichever column its block
// lists first, which is not worth modelling (docs/serve.md).
var shipNames = []string{"level", "msg", "user", "n", "a.b", "kubernetes", "x", "y", "é", "Upper"}

func (g *shipGen) name() string { return shipNames[g.pick(len(shipNames))] }

// resourceNames are OTLP resource attributes, none in shipNames.
var resourceNames = []string{"host", "app", "region", "message", "k8s"}

// jsonValue returns a random JSON value, nested up to depth.
func (g *shipGen) jsonValue(depth int) any {
	switch k := g.pick(10); {
	case k < 4:
		return g.str()
	case k == 4:
		return []any{0, 1, -7, 42, 1 << 53, 1.5, 0.1, 1e21, 1e-7, -0.0, 123456789.125}[g.pick(11)]
	case k == 5:
		return g.chance(0.5)
	case k == 6:
		return nil
	case k == 7 && depth > 0:
		n := g.pick(4)
		a := make([]any, n)
		for i := range a {
			a[i] = g.jsonValue(depth - 1)
		}
		return a
	case k >= 8 && depth > 0:
		return g.jsonObject(depth - 1)
	}
	return g.str()
}

// jsonObject returns an object with distinct names (in order), as text:
// Go maps would sort the names.
func (g *shipGen) jsonObject(depth int) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	seen := map[string]bool{}
	for range g.pick(5) {
		n := g.name()
		if seen[n] {
			continue
		}
		seen[n] = true
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(n)
		v, _ := json.Marshal(g.jsonValue(depth))
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// shipTime returns a random time in Unix ns: 0 (none), or one well away
// from now, in the past or the near future, to the nanosecond or not.
func (g *shipGen) shipTime() int64 {
	switch g.pick(6) {
	case 0:
		return 0
	case 1:
		return time.Date(1990+g.pick(30), 1, 1, 0, 0, 0, 0, time.UTC).UnixNano() + g.r.Int64N(365*24*3600)*1e9
	case 2:
		return time.Date(2023, 6, 3, 17, 42, 32, 0, time.UTC).UnixNano() + g.r.Int64N(1e18/1e9)
	default:
		return time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano() + g.r.Int64N(1e9)*1e6
	}
}

// ingestArgs returns random ingestion query args among names (each may
// be picked), as query args or VL-* headers.
func (g *shipGen) ingestArgs(msgFields, streamFields []string) (url.Values, [][2]string) {
	q := url.Values{}
	var hdr [][2]string
	set := func(arg, header, v string) {
		if g.chance(0.7) {
			q.Set(arg, v)
		} else {
			hdr = append(hdr, [2]string{header, v})
		}
	}
	if len(msgFields) > 0 && g.chance(0.4) {
		set("_msg_field", "VL-Msg-Field", strings.Join(g.subset(msgFields), ","))
	}
	if len(streamFields) > 0 && g.chance(0.3) {
		set("_stream_fields", "VL-Stream-Fields", strings.Join(g.subset(streamFields), ","))
	}
	if g.chance(0.15) {
		set("ignore_fields", "VL-Ignore-Fields", strings.Join(g.subset([]string{"user", "x*", "level", "a.b"}), ","))
	}
	if g.chance(0.15) {
		set("extra_fields", "VL-Extra-Fields", []string{"env=prod", "host=forced", "env=prod,dc=eu"}[g.pick(3)])
	}
	return q, hdr
}

// subset returns one to all of names, in random order.
func (g *shipGen) subset(names []string) []string {
	s := slices.Clone(names)
	g.r.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
	return s[:1+g.pick(len(s))]
}

// esCase makes an Elasticsearch bulk request.
func (g *shipGen) esCase() shipCase {
	q, hdr := g.ingestArgs([]string{"message", "msg", "log.text"}, []string{"host", "app", "kubernetes.pod"})
	timeField := ""
	if g.chance(0.6) {
		timeField = []string{"@timestamp", "ts", "log.time"}[g.pick(3)]
		if g.chance(0.7) {
			q.Set("_time_field", timeField)
		} else {
			hdr = append(hdr, [2]string{"VL-Time-Field", timeField})
		}
	}
	c := shipCase{proto: "es", hdr: hdr}
	var b bytes.Buffer
	docs := 1 + g.pick(5)
	for i := range docs {
		b.WriteString([]string{`{"index":{}}`, `{"create":{"_index":"logs"}}`, `{"index":{"_index":"x","_id":"1"}}`}[g.pick(3)])
		b.WriteByte('\n')
		obj := map[string]any{}
		var order []string
		add := func(k string, v any) {
			if _, ok := obj[k]; !ok {
				order = append(order, k)
			}
			obj[k] = v
		}
		if g.chance(0.8) {
			add([]string{"message", "msg"}[g.pick(2)], g.str())
		}
		if g.chance(0.5) {
			add("host", g.str())
		}
		if g.chance(0.4) {
			add("kubernetes", map[string]any{"pod": g.str(), "labels": map[string]any{"app": g.jsonValue(1)}})
		}
		if g.chance(0.3) {
			add("log", map[string]any{"text": g.str(), "offset": g.pick(1000)})
		}
		for range g.pick(4) {
			// Not msg: spate reads a msg of null or [] as the line's
			// message when no _msg_field names another (docs/serve.md).
			if n := g.name(); n != "msg" {
				add(n, g.jsonValue(2))
			}
		}
		if timeField != "" && g.chance(0.9) {
			ts := g.shipTime()
			var tv any
			switch g.pick(4) {
			case 0:
				tv = time.Unix(0, ts).UTC().Format(time.RFC3339Nano)
			case 1:
				tv = ts / 1e6 // milliseconds, as a number
			case 2:
				tv = strconv.FormatInt(ts/1e9, 10)
			default:
				tv = time.Unix(0, ts).In(time.FixedZone("", 2*3600)).Format("2006-01-02T15:04:05.999999999-07:00")
			}
			if ts == 0 {
				tv = []any{"", "0", 0}[g.pick(3)]
			}
			if p, ok := strings.CutPrefix(timeField, "log."); ok {
				add("log", map[string]any{p: tv})
			} else {
				add(timeField, tv)
			}
		}
		if timeField == "" {
			// Without _time_field spate reads ts, time, timestamp and
			// @timestamp too (docs/serve.md): keep them out.
			for _, k := range []string{"ts", "time", "timestamp", "@timestamp", "_time"} {
				delete(obj, k)
				order = slices.DeleteFunc(order, func(s string) bool { return s == k })
			}
		}
		b.WriteString(orderedJSON(obj, order))
		b.WriteByte('\n')
		if i == docs-1 && g.chance(0.15) {
			// A bad last item: VictoriaLogs answers 400 with the items
			// before it stored, spate fails the item alone
			// (docs/serve.md).
			b.WriteString([]string{"{\"index\":{}}\n{\"a\":\n", "{\"index\":{}}\n[1,2]\n", "{\"delete\":{\"_id\":\"1\"}}\n"}[g.pick(3)])
			c.vlStatus, c.esItemErrors = 400, true
		}
	}
	c.body = b.Bytes()
	// Not /insert/elasticsearch/{index}/_bulk: VictoriaLogs answers 400
	// (docs/serve.md).
	c.path = "/insert/elasticsearch/_bulk"
	if len(q) > 0 {
		c.path += "?" + q.Encode()
	}
	return c
}

// orderedJSON writes obj's keys in order.
func orderedJSON(obj map[string]any, order []string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range order {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, _ := json.Marshal(obj[k])
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.String()
}

// pbMsg appends a length-delimited field.
func pbMsg(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// otlpAny returns a random AnyValue, nested up to depth.
func (g *shipGen) otlpAny(depth int) []byte {
	var b []byte
	switch k := g.pick(11); {
	case k < 3:
		b = pbMsg(b, 1, []byte(g.str()))
	case k == 3:
		b = protowire.AppendTag(b, 2, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(g.pick(2)))
	case k == 4:
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64([]int64{0, 1, -1, 42, math.MaxInt64, math.MinInt64}[g.pick(6)]))
	case k == 5:
		b = protowire.AppendTag(b, 4, protowire.Fixed64Type)
		b = protowire.AppendFixed64(b, math.Float64bits([]float64{0, 0.5, -2.25, 1e21, 1e-7, 3, math.NaN(), math.Inf(1), math.Inf(-1), 123456.789}[g.pick(10)]))
	case k == 6 && depth > 0:
		var arr []byte
		for range g.pick(4) {
			arr = pbMsg(arr, 1, g.otlpAny(depth-1))
		}
		b = pbMsg(b, 5, arr)
	case k == 7 && depth > 0:
		b = pbMsg(b, 6, g.otlpKVs(1, depth-1))
	case k == 8:
		b = pbMsg(b, 7, []byte([]string{"", "hi", "\x00\x01\xfe\xff"}[g.pick(3)]))
	case k == 9:
		// An empty AnyValue (no value set).
	default:
		b = pbMsg(b, 1, []byte(g.str()))
	}
	return b
}

// otlpKVs returns random KeyValues named from shipNames as field num of
// a message.
func (g *shipGen) otlpKVs(num protowire.Number, depth int) []byte {
	return g.otlpKVsOf(shipNames, num, depth)
}

// otlpKVsOf is otlpKVs with names from names.
func (g *shipGen) otlpKVsOf(names []string, num protowire.Number, depth int) []byte {
	var b []byte
	seen := map[string]bool{}
	for range g.pick(5) {
		k := names[g.pick(len(names))]
		if seen[k] {
			continue
		}
		seen[k] = true
		var kv []byte
		kv = pbMsg(kv, 1, []byte(k))
		if !g.chance(0.05) {
			kv = pbMsg(kv, 2, g.otlpAny(depth))
		}
		b = pbMsg(b, num, kv)
	}
	return b
}

// otlpCase makes an OTLP logs request in protobuf.
func (g *shipGen) otlpCase() shipCase {
	q, hdr := g.ingestArgs([]string{"msg", "message", "x"}, []string{"host", "app", "service.name"})
	if g.chance(0.2) {
		q.Set("ignore_fields", strings.Join(g.subset([]string{"host", "region", "k8s*", "level"}), ","))
	}
	if g.chance(0.2) {
		q.Set("extra_fields", "app=forced")
	}
	hasMsgField := q.Has("_msg_field") || slices.ContainsFunc(hdr, func(h [2]string) bool { return h[0] == "VL-Msg-Field" })
	var req []byte
	for range 1 + g.pick(2) {
		var rl []byte
		if g.chance(0.8) {
			var res []byte
			if g.chance(0.7) {
				var kv []byte
				kv = pbMsg(kv, 1, []byte("service.name"))
				kv = pbMsg(kv, 2, pbMsg(nil, 1, []byte([]string{"api", "db", ""}[g.pick(3)])))
				res = pbMsg(res, 1, kv)
			}
			res = append(res, g.otlpKVsOf(resourceNames, 1, 1)...)
			rl = pbMsg(rl, 1, res)
		}
		for range 1 + g.pick(2) {
			var sl []byte
			if g.chance(0.7) {
				var sc []byte
				if g.chance(0.7) {
					sc = pbMsg(sc, 1, []byte([]string{"lib", "", "io.x"}[g.pick(3)]))
				}
				if g.chance(0.5) {
					sc = pbMsg(sc, 2, []byte("1.2.3"))
				}
				if g.chance(0.4) {
					sc = append(sc, g.otlpKVs(3, 1)...)
				}
				sl = pbMsg(sl, 1, sc)
			}
			for range 1 + g.pick(3) {
				var lr []byte
				if ts := g.shipTime(); ts != 0 && g.chance(0.8) {
					lr = protowire.AppendTag(lr, 1, protowire.Fixed64Type)
					lr = protowire.AppendFixed64(lr, uint64(ts))
				}
				if g.chance(0.3) {
					lr = protowire.AppendTag(lr, 11, protowire.Fixed64Type)
					lr = protowire.AppendFixed64(lr, uint64(g.shipTime()))
				}
				if g.chance(0.7) {
					lr = protowire.AppendTag(lr, 2, protowire.VarintType)
					lr = protowire.AppendVarint(lr, uint64([]int{0, 1, 5, 9, 13, 17, 21, 24, 25, 100}[g.pick(10)]))
				}
				if g.chance(0.4) {
					lr = pbMsg(lr, 3, []byte([]string{"", "INFO", "warn", "Error"}[g.pick(4)]))
				}
				if !hasMsgField && g.chance(0.85) {
					// Not with _msg_field, nor a kvlist (whose keys
					// are fields): no name twice (see shipNames).
					body := g.otlpAny(2)
					if len(body) > 0 && body[0] == 6<<3|2 {
						body = pbMsg(nil, 1, []byte("kv"))
					}
					lr = pbMsg(lr, 5, body)
				}
				lr = append(lr, g.otlpKVs(6, 2)...)
				if g.chance(0.4) {
					lr = pbMsg(lr, 9, []byte("\x4b\xf9\x2f\x35\x77\xb3\x4d\xa6\xa3\xce\x92\x9d\x0e\x0e\x47\x36")[:[]int{16, 0, 3}[g.pick(3)]])
					lr = pbMsg(lr, 10, []byte("\x00\xf0\x67\xaa\x0b\xa9\x02\xb7")[:[]int{8, 0}[g.pick(2)]])
				}
				if g.chance(0.2) {
					lr = protowire.AppendTag(lr, 8, protowire.Fixed32Type)
					lr = protowire.AppendFixed32(lr, 1)
				}
				if g.chance(0.15) {
					lr = pbMsg(lr, 12, []byte([]string{"login", ""}[g.pick(2)]))
				}
				sl = pbMsg(sl, 2, lr)
			}
			rl = pbMsg(rl, 2, sl)
		}
		req = pbMsg(req, 1, rl)
	}
	c := shipCase{proto: "otlp", hdr: append(hdr, [2]string{"Content-Type", "application/x-protobuf"}), body: req}
	if g.chance(0.1) {
		// Cut short: both 400; VictoriaLogs may keep the records
		// before the cut, spate keeps none (docs/serve.md).
		c.body = c.body[:len(c.body)-1-g.pick(len(c.body)/2+1)]
		c.spateStatus, c.vlStatus = 400, 400
	}
	c.path = "/insert/opentelemetry/v1/logs"
	if len(q) > 0 {
		c.path += "?" + q.Encode()
	}
	return c
}

var lokiLines = []string{
	"plain line", "", "  ", `{"msg":"hello","a":{"b":1,"c":null},"arr":[1,"x"]}`, ` {"lvl":"warn","n":1.50} `,
	`{"message":"m","msg":"second"}`, `[1,2]`, `{bad json`, `{}`, `{"":"empty key"}`, `{"a":{"b":{"c":"deep"}},"a.c":"flat"}`,
	"tab\tline", "é 用户", `{"own":"x","y":true}`, `"just a string"`, `{"log.text":"dotted","msg":""}`,
}

// lokiCase makes a Loki push, in JSON or protobuf + snappy.
func (g *shipGen) lokiCase() shipCase {
	q, hdr := g.ingestArgs([]string{"msg", "message", "log.text", "a.c", "mmsg"}, []string{"job", "host", "level"})
	if g.chance(0.15) {
		q.Set("disable_message_parsing", []string{"1", "true"}[g.pick(2)])
	}
	if g.chance(0.15) {
		q.Set("message_fields_prefix", "m.")
	}
	type entry struct {
		ts   int64
		line string
		meta [][2]string
	}
	type stream struct {
		labels  [][2]string
		entries []entry
	}
	var streams []stream
	for range g.pick(3) + 1 {
		var s stream
		seen := map[string]bool{}
		for range g.pick(4) {
			k := []string{"job", "host", "level", "app", "empty", "Q"}[g.pick(6)]
			if seen[k] {
				continue
			}
			seen[k] = true
			v := g.str()
			if k == "empty" {
				v = ""
			}
			s.labels = append(s.labels, [2]string{k, v})
		}
		for range g.pick(3) + 1 {
			e := entry{ts: g.shipTime(), line: lokiLines[g.pick(len(lokiLines))]}
			if g.chance(0.3) {
				e.line = g.str()
			}
			meta := []string{"trace_id", "mmsg", "user", "x"}
			if e.line == `{"":"empty key"}` {
				meta = meta[2:] // its _msg and a renamed mmsg: see shipNames
			}
			for _, k := range g.subset(meta)[:g.pick(3)] {
				e.meta = append(e.meta, [2]string{k, g.str()})
			}
			s.entries = append(s.entries, e)
		}
		streams = append(streams, s)
	}
	c := shipCase{hdr: hdr, path: "/insert/loki/api/v1/push"}
	if g.chance(0.5) {
		c.proto = "loki-json"
		c.hdr = append(c.hdr, [2]string{"Content-Type", "application/json"})
		var b bytes.Buffer
		b.WriteString(`{"streams":[`)
		for i, s := range streams {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"stream":{`)
			for j, l := range s.labels {
				if j > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, "%s:%s", jsonStr(l[0]), jsonStr(l[1]))
			}
			b.WriteString(`},"values":[`)
			for j, e := range s.entries {
				if j > 0 {
					b.WriteByte(',')
				}
				ts := strconv.FormatInt(e.ts, 10)
				if e.ts == 0 {
					ts = []string{"0", ""}[g.pick(2)]
				}
				fmt.Fprintf(&b, "[%s,%s", jsonStr(ts), jsonStr(e.line))
				if len(e.meta) > 0 {
					b.WriteString(",{")
					for k, m := range e.meta {
						if k > 0 {
							b.WriteByte(',')
						}
						fmt.Fprintf(&b, "%s:%s", jsonStr(m[0]), jsonStr(m[1]))
					}
					b.WriteByte('}')
				}
				b.WriteByte(']')
			}
			b.WriteString("]}")
		}
		b.WriteString("]}")
		c.body = b.Bytes()
		if g.chance(0.08) {
			c.body = c.body[:len(c.body)-2]
			c.spateStatus, c.vlStatus = 400, 400
		}
	} else {
		c.proto = "loki-pb"
		c.hdr = append(c.hdr, [2]string{"Content-Type", "application/x-protobuf"})
		var req []byte
		for _, s := range streams {
			var labels strings.Builder
			labels.WriteByte('{')
			for j, l := range s.labels {
				if j > 0 {
					labels.WriteString(", ")
				}
				fmt.Fprintf(&labels, "%s=%s", l[0], strconv.Quote(l[1]))
			}
			labels.WriteByte('}')
			var sa []byte
			sa = pbMsg(sa, 1, []byte(labels.String()))
			for _, e := range s.entries {
				var ea, ts []byte
				if e.ts != 0 {
					ts = protowire.AppendTag(ts, 1, protowire.VarintType)
					ts = protowire.AppendVarint(ts, uint64(e.ts/1e9))
					ts = protowire.AppendTag(ts, 2, protowire.VarintType)
					ts = protowire.AppendVarint(ts, uint64(e.ts%1e9))
				}
				ea = pbMsg(ea, 1, ts)
				ea = pbMsg(ea, 2, []byte(e.line))
				for _, m := range e.meta {
					var lp []byte
					lp = pbMsg(lp, 1, []byte(m[0]))
					lp = pbMsg(lp, 2, []byte(m[1]))
					ea = pbMsg(ea, 3, lp)
				}
				sa = pbMsg(sa, 2, ea)
			}
			req = pbMsg(req, 1, sa)
		}
		if g.chance(0.08) {
			req = req[:len(req)-1]
			c.spateStatus, c.vlStatus = 400, 400
		}
		c.body = s2.EncodeSnappy(nil, req)
	}
	if len(q) > 0 {
		c.path += "?" + q.Encode()
	}
	return c
}

func jsonStr(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// shipPost sends c to base in tenant account and returns the status and
// answer.
func shipPost(t *testing.T, base string, c *shipCase, account int) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+c.path, bytes.NewReader(c.body))
	for _, h := range c.hdr {
		req.Header.Set(h[0], h[1])
	}
	req.Header.Set("AccountID", strconv.Itoa(account))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// shipRows returns the rows of tenant account, each as canonical JSON
// with a _time within [from, to] (the ingestion time of rows without
// one) replaced by "now", sorted. With msgFallback (for VictoriaLogs'
// rows), a row without _msg gets the first of msg, message and log as
// _msg instead, as spate reads a line without _msg (docs/serve.md).
func shipRows(t *testing.T, base string, account int, from, to time.Time, msgFallback bool) []string {
	t.Helper()
	var rows []string
	for _, r := range selectAll(t, base, strconv.Itoa(account)) {
		if ts, err := time.Parse(time.RFC3339Nano, r["_time"]); err == nil && !ts.Before(from) && !ts.After(to) {
			r["_time"] = "now"
		}
		if msgFallback && r["_msg"] == shipMissingMsg {
			for _, k := range []string{"msg", "message", "log"} {
				if v := r[k]; v != "" {
					r["_msg"] = v
					delete(r, k)
					break
				}
			}
		}
		b, _ := json.Marshal(r) // sorted keys
		rows = append(rows, string(b))
	}
	sort.Strings(rows)
	return rows
}

// shipMissingMsg is VictoriaLogs' _msg of a row without one.
const shipMissingMsg = "missing _msg field; see https://docs.victoriametrics.com/victorialogs/keyconcepts/#message-field"

// envInt reads an int from the environment, or def.
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return n
	}
	return def
}

// TestShipperRandomHTTP is the randomized differential test of the HTTP
// shippers' protocols (see shipCase). It runs when SPATE_VICTORIALOGS
// names a VictoriaLogs v1.52.1 binary.
func TestShipperRandomHTTP(t *testing.T) {
	vlBin := victoriaLogsBin(t)
	n := envInt("SPATE_SHIPDIFF_N", 40)
	seed := envInt("SPATE_SHIPDIFF_SEED", 1)
	g := &shipGen{r: rand.New(rand.NewPCG(uint64(seed), 7))}
	var cases []shipCase
	for range n {
		cases = append(cases, g.esCase(), g.otlpCase(), g.lokiCase())
	}
	t.Setenv(mainEnv, "1")
	vl := startVictoriaLogs(t, vlBin)
	srv := startServe(t, t.TempDir())
	from := time.Now().Add(-time.Minute)
	type answer struct {
		vlCode, spCode int
		vlBody, spBody []byte
	}
	answers := make([]answer, len(cases))
	for i := range cases {
		c := &cases[i]
		a := &answers[i]
		a.vlCode, a.vlBody = shipPost(t, vl, c, i+1)
		a.spCode, a.spBody = shipPost(t, srv.url, c, i+1)
	}
	forceFlush(t, vl)
	to := time.Now().Add(time.Minute)
	equal := 0
	for i := range cases {
		c := &cases[i]
		a := &answers[i]
		bad := func(format string, args ...any) {
			t.Errorf("case %d (%s %s, headers %v): %s\nbody: %q\nVictoriaLogs %d %s\nspate        %d %s", i, c.proto, c.path, c.hdr,
				fmt.Sprintf(format, args...), c.body, a.vlCode, a.vlBody, a.spCode, a.spBody)
		}
		okCode := func(got, want int) bool {
			if want == 0 {
				return got/100 == 2
			}
			return got == want
		}
		if !okCode(a.vlCode, c.vlStatus) || !okCode(a.spCode, c.spateStatus) {
			bad("status: want VictoriaLogs %d, spate %d (0: 2xx)", c.vlStatus, c.spateStatus)
			continue
		}
		if c.esItemErrors != bytes.Contains(a.spBody, []byte(`"errors":true`)) {
			bad("spate's bulk answer: want errors %v", c.esItemErrors)
			continue
		}
		vr := shipRows(t, vl, i+1, from, to, true)
		sr := shipRows(t, srv.url, i+1, from, to, false)
		if c.spateStatus == 400 && (c.proto == "otlp" || strings.HasPrefix(c.proto, "loki")) {
			// A bad body: spate stores nothing (docs/serve.md).
			if len(sr) != 0 {
				bad("spate stored rows of a bad body: %v", sr)
			} else {
				equal++
			}
			continue
		}
		if !slices.Equal(vr, sr) {
			bad("rows differ:\nVictoriaLogs %s\nspate        %s", strings.Join(vr, "\n             "), strings.Join(sr, "\n             "))
			continue
		}
		equal++
	}
	t.Logf("%d requests (seed %d), %d the same in both", len(cases), seed, equal)
}
