package query

import (
	"slices"
	"testing"
	"time"
)

// TestEarlyFilter checks which filters let the record builder reject a
// line as soon as it has their fields: only filters on ordinary fields
// that reject a row without them (the row of a plain-text line).
func TestEarlyFilter(t *testing.T) {
	for _, tc := range []struct {
		q    string
		want []string // nil: not early
	}{
		{`status:>=500`, []string{"status"}},
		{`level:error service:api`, []string{"level", "service"}},
		{`level:error OR level:warn`, []string{"level"}},
		{`http.status:>=500`, []string{"http.status"}},
		{`level:*`, []string{"level"}},
		{`status:in(500, 503) -service:api`, []string{"status", "service"}},
		{`-level:info`, nil}, // a row without level matches
		{`level:""`, nil},    // likewise
		{`status:>=500 OR -level:info`, nil},
		{`error`, nil},                 // _msg is set at the end of the line
		{`_time:1h status:>=500`, nil}, // so is the parsed time
		{`_msg:error level:error`, nil},
		{`*`, nil},
	} {
		q, err := Parse(tc.q, time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC))
		if err != nil {
			t.Fatalf("%s: %v", tc.q, err)
		}
		got, ok := earlyFilter(q.Filter)
		if ok != (tc.want != nil) || !slices.Equal(got, tc.want) {
			t.Errorf("earlyFilter(%s) = %q, %v; want %q", tc.q, got, ok, tc.want)
		}
	}
}
