package query_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spate-io/spate/internal/conformance"
	"github.com/spate-io/spate/internal/fileread"
	"github.com/spate-io/spate/internal/logstream"
	"github.com/spate-io/spate/internal/query"
	"github.com/spate-io/spate/internal/query/naive"
)

// withStreams rewrites generated lines the way spate serve stores them
// with _stream_fields=service,host: most get _stream (some also
// _stream_id, some in tenant 7:8), a few get a _stream that does not parse,
// the rest none (the stream {}).
func withStreams(t *testing.T, lines []string, r *rand.Rand) []string {
	t.Helper()
	out := make([]string, len(lines))
	for i, line := range lines {
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatal(err)
		}
		var tags []logstream.Tag
		for _, name := range []string{"service", "host"} {
			if s, ok := v[name].(string); ok && s != "" {
				tags = append(tags, logstream.Tag{Name: name, Value: s})
			}
		}
		if r.IntN(5) == 0 {
			tags = append(tags, logstream.Tag{Name: "zone", Value: `eu "1"`})
		}
		logstream.Sort(tags)
		prefix := ""
		switch k := r.IntN(10); {
		case k < 5:
			prefix = fmt.Sprintf(`"_stream":%q,`, logstream.AppendText(nil, tags))
		case k < 8:
			id := logstream.AppendID(nil, 0, 0, logstream.AppendCanonical(nil, tags))
			prefix = fmt.Sprintf(`"_stream":%q,"_stream_id":"%s",`, logstream.AppendText(nil, tags), id)
		case k == 8 && i%7 == 0:
			prefix = `"_stream":"{service=api",`
		}
		out[i] = "{" + prefix + line[1:]
	}
	return out
}

// streamID returns the _stream_id of tags in tenant 0:0.
func streamID(tags ...logstream.Tag) string {
	logstream.Sort(tags)
	return string(logstream.AppendID(nil, 0, 0, logstream.AppendCanonical(nil, tags)))
}

// TestDifferentialStreams checks stream filters against the naive
// evaluator on generated logs with and without _stream and _stream_id.
func TestDifferentialStreams(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	lines := withStreams(t, readLines(t, writeGen(t, 11, 1<<20)), r)
	path := filepath.Join(t.TempDir(), "streams.ndjson")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := streamID()
	for _, q := range []string{
		`{service="auth"} | stats count() n`,
		`_stream:{service="auth"} | stats count() n`,
		`{service=~"auth|billing", host!~"auth-0[12].*"} | stats by (service) count() n`,
		`{service=~"aut"} | stats count() n`,
		`{service in(auth, cart) or host="x"} | stats by (service) count() n`,
		`{service not_in(auth, cart)} | stats by (service) count() n`,
		`{service in(*)} | stats count() n`,
		`{} | stats count() n`,
		`{zone=""} | stats count() n`,
		`{zone="eu \"1\""} | stats by (service) count() n`,
		`{service!=""} level:error | stats by (level) count() n`,
		`-{service="auth"} | stats count() n`,
		`* | filter {service="cart"} | stats count() n`,
		`* | stats count() if ({service="auth"}) a, count() n`,
		fmt.Sprintf(`_stream_id:%s | stats count() n`, empty),
		fmt.Sprintf(`_stream_id:in(%s, %s) | stats by (service) count() n`, empty, streamID(logstream.Tag{Name: "service", Value: "auth"}, logstream.Tag{Name: "host", Value: "auth-01.us-east-1.internal"})),
		`{service="auth"} | fields _time, _stream, _stream_id, service | limit 5`,
	} {
		pq, err := query.Parse(q, diffNow)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		for _, tenant := range [][2]uint32{{0, 0}, {7, 8}} {
			want, err := naive.Run(pq, lines, naive.Options{Now: diffNow, AccountID: tenant[0], ProjectID: tenant[1]})
			if err != nil {
				t.Fatalf("%s: naive: %v", q, err)
			}
			for _, workers := range []int{1, 3} {
				cfg := fileread.Config{Workers: workers, ChunkSize: 4<<10 + r.IntN(64<<10)}
				got, _, err := runEngine(t, q, path, cfg, query.Options{AccountID: tenant[0], ProjectID: tenant[1]})
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				c := conformance.Case{ID: q, Query: q, Ordered: strings.Contains(q, "limit"), Expected: want}
				if err := conformance.Compare(c, got); err != nil {
					t.Errorf("%s (tenant %v, workers %d): engine and naive differ: %v", q, tenant, workers, err)
				}
				// Regexps match whole values; IDs begin with the tenant.
				none := len(want) == 0 || (len(want) == 1 && want[0]["n"] == "0")
				wantNone := strings.Contains(q, `"aut"`) || (tenant[0] == 7 && strings.Contains(q, "_stream_id:"))
				if none != wantNone {
					t.Errorf("%s (tenant %v): matched nothing: %v, want %v", q, tenant, none, wantNone)
				}
			}
		}
	}
}
