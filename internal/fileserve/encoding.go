package fileserve

import (
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Content codings, as Accept-Encoding and Content-Encoding name them, and
// the suffix of a precompressed sibling file ("app.js.zst").
type coding struct {
	name, suffix string
}

var (
	zstdCoding   = coding{"zstd", ".zst"}
	brCoding     = coding{"br", ".br"}
	gzipCoding   = coding{"gzip", ".gz"}
	allCodings   = []coding{zstdCoding, brCoding, gzipCoding}
	liveCodings  = []coding{zstdCoding, gzipCoding, brCoding} // brotli is slow live: last
	identityName = "identity"
)

// acceptEncoding parses an Accept-Encoding header into q-values by coding
// name ("*" included); absent codings are not acceptable, except identity
// (RFC 9110 12.5.3), unless "identity;q=0" or "*;q=0" says so.
func acceptEncoding(h string) map[string]float64 {
	q := map[string]float64{}
	for part := range strings.SplitSeq(h, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		name = strings.ToLower(strings.TrimSpace(name))
		if name == "" {
			continue
		}
		v := 1.0
		for p := range strings.SplitSeq(params, ";") {
			k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				f, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
				if err != nil || f < 0 || f > 1 {
					f = 0
				}
				v = f
			}
		}
		q[name] = v
	}
	return q
}

// pick returns the acceptable coding among cands with the highest q-value
// (the first of cands on a tie, and a coding over identity on a tie), or
// false when identity is better or nothing in cands is acceptable.
func pick(q map[string]float64, cands []coding, have func(coding) bool) (coding, bool) {
	qv := func(name string) float64 {
		if v, ok := q[name]; ok {
			return v
		}
		if v, ok := q["*"]; ok {
			return v
		}
		if name == identityName {
			return 1e-9 // acceptable, after anything the client named
		}
		return 0
	}
	best, bestQ, found := coding{}, qv(identityName), false
	for _, c := range cands {
		// A coding as good as identity wins over it; among codings, the
		// first of cands wins a tie.
		if v := qv(c.name); v > 0 && (v > bestQ || !found && v == bestQ) && have(c) {
			best, bestQ, found = c, v, true
		}
	}
	return best, found
}

// compressible reports whether a response of this Content-Type gains from
// compression (text, JSON, XML, JavaScript, SVG, NDJSON and the like).
func compressible(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	switch {
	case strings.HasPrefix(mt, "text/"):
		return true
	case strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
		return true
	}
	switch mt {
	case "application/json", "application/x-ndjson", "application/ndjson", "application/javascript",
		"application/xml", "application/wasm", "image/svg+xml", "application/x-javascript":
		return true
	}
	return false
}

// Encoders are pooled: a zstd or brotli encoder holds megabytes of tables.
var (
	zstdEncoders = sync.Pool{New: func() any {
		e, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
		return e
	}}
	gzipEncoders = sync.Pool{New: func() any {
		e, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
		return e
	}}
	brEncoders = sync.Pool{New: func() any { return brotli.NewWriterLevel(nil, 4) }}
)

// compressTo copies src to w encoded with c.
func compressTo(w io.Writer, src io.Reader, c coding) error {
	var enc io.WriteCloser
	var done func()
	switch c {
	case zstdCoding:
		e := zstdEncoders.Get().(*zstd.Encoder)
		e.Reset(w)
		enc, done = e, func() { e.Reset(nil); zstdEncoders.Put(e) }
	case gzipCoding:
		e := gzipEncoders.Get().(*gzip.Writer)
		e.Reset(w)
		enc, done = e, func() { gzipEncoders.Put(e) }
	default:
		e := brEncoders.Get().(*brotli.Writer)
		e.Reset(w)
		enc, done = e, func() { brEncoders.Put(e) }
	}
	defer done()
	buf := make([]byte, 64<<10)
	if _, err := io.CopyBuffer(enc, struct{ io.Reader }{src}, buf); err != nil {
		return err
	}
	return enc.Close()
}

// etagFor is the ETag of the representation in coding c of a file whose
// identity ETag is tag: a distinct strong ETag per encoding.
func etagFor(tag string, c coding) string {
	return strings.TrimSuffix(tag, `"`) + "-" + c.name + `"`
}

// ifNoneMatch reports whether an If-None-Match header matches etag
// (weak comparison, as RFC 9110 13.1.2 asks for it).
func ifNoneMatch(h, etag string) bool {
	if h == "" {
		return false
	}
	if strings.TrimSpace(h) == "*" {
		return true
	}
	want := strings.TrimPrefix(etag, "W/")
	for t := range strings.SplitSeq(h, ",") {
		if strings.TrimPrefix(strings.TrimSpace(t), "W/") == want {
			return true
		}
	}
	return false
}

// setVary adds Accept-Encoding to Vary.
func setVary(h http.Header) {
	for _, v := range h.Values("Vary") {
		if strings.Contains(strings.ToLower(v), "accept-encoding") {
			return
		}
	}
	h.Add("Vary", "Accept-Encoding")
}
