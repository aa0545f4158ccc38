package benchingest

import (
	"maps"
	"testing"
)

func TestParseMetrics(t *testing.T) {
	in := `# HELP spate_ingest_lines_total Lines stored.
# TYPE spate_ingest_lines_total counter
spate_ingest_lines_total 1234
spate_ingest_requests_total{status="200"} 10
spate_ingest_requests_total{status="429",note="a b"} 2 1700000000000
spate_queue_bytes 1.5e+06
spate_latency_seconds_bucket{le="0.1"} 3
garbage
bad_value{x="1"} NaNx

`
	got := parseMetrics([]byte(in))
	want := map[string]float64{
		"spate_ingest_lines_total":                             1234,
		`spate_ingest_requests_total{status="200"}`:            10,
		`spate_ingest_requests_total{status="429",note="a b"}`: 2,
		"spate_queue_bytes":                                    1.5e6,
		`spate_latency_seconds_bucket{le="0.1"}`:               3,
	}
	if !maps.Equal(got, want) {
		t.Fatalf("parseMetrics:\ngot  %v\nwant %v", got, want)
	}
	d := metricsDelta(map[string]float64{"a": 1, "b": 2, `h_bucket{le="1"}`: 0}, map[string]float64{"a": 1, "b": 5, "c": 7, `h_bucket{le="1"}`: 9})
	if !maps.Equal(d, map[string]float64{"b": 3, "c": 7}) {
		t.Fatalf("metricsDelta: %v", d)
	}
}
