package query

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/spate-io/spate/internal/fileread"
)

// TestHistogramText: histogram's result, byte for byte as VictoriaLogs
// v1.52.1 prints it (its stats_histogram_test.go case, then buckets at the
// edges: zero and 1e-10 below, 1e-9 in the first bucket, 10 and 100 ending
// theirs, 1e18 and inf above; negatives, NaN, IPv4 and times skipped), on
// 1 and 3 workers.
func TestHistogramText(t *testing.T) {
	now := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct{ in, want string }{
		{`{"a":"2"} {"a":"1.9"} {"a":"3.05"} {"b":"1"}`,
			`[{"vmrange":"1.896e+00...2.154e+00","hits":2},{"vmrange":"2.783e+00...3.162e+00","hits":1}]`},
		{`{"a":"0"} {"a":"1e-9"} {"a":"1e-10"} {"a":"10"} {"a":"inf"} {"a":"nan"} {"a":"0x10"} {"a":"-inf"} {"a":"100"} {"a":"-1"} {"a":"1e18"} {"a":"1.2.3.4"} {"a":"2026-01-01T00:00:00Z"}`,
			`[{"vmrange":"0...1.000e-09","hits":2},{"vmrange":"1.000e+18...+Inf","hits":2},{"vmrange":"1.000e-09...1.136e-09","hits":1},{"vmrange":"1.468e+01...1.668e+01","hits":1},{"vmrange":"8.799e+00...1.000e+01","hits":1},{"vmrange":"8.799e+01...1.000e+02","hits":1}]`},
		{`{"b":"1"}`, `[]`},
	} {
		for _, workers := range []int{1, 3} {
			q, err := Parse(`* | stats histogram(a) x`, now)
			if err != nil {
				t.Fatal(err)
			}
			var sink rowsSink
			in := strings.ReplaceAll(c.in, "} {", "}\n{") + "\n"
			cfg := fileread.Config{Stdin: bytes.NewReader([]byte(in)), Workers: workers, ChunkSize: 16}
			if _, err := Run(context.Background(), q, []string{"-"}, cfg, Options{}, &sink); err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(sink.b.String()); got != "x="+c.want {
				t.Errorf("%s (workers %d):\n got %s\nwant x=%s", c.in, workers, got, c.want)
			}
		}
	}
}
