package query_test

import "testing"

// TestLimitZero checks that "limit 0" returns no rows, also after a sort it
// is fused into (VictoriaLogs v1.52), while "sort ... limit 0" has no limit.
func TestLimitZero(t *testing.T) {
	lines := []string{`{"n":"3"}`, `{"n":"1"}`, `{"n":"2"}`}
	f := func(text string, want ...string) {
		t.Helper()
		expectQueryRows(t, lines, text, want...)
	}
	f(`* | limit 0`)
	f(`* | head 0`)
	f(`* | sort by (n) | limit 0`)
	f(`* | sort by (n) | offset 1 | limit 0`)
	f(`* | sort by (n) limit 1 | limit 0`)
	f(`* | sort by (n) | limit 0 | stats count() c`, `{"c":"0"}`)
	f(`* | sort by (n) limit 0 | fields n`, `{"n":"1"}`, `{"n":"2"}`, `{"n":"3"}`)
	f(`* | sort by (n) offset 1 limit 0 | fields n`, `{"n":"2"}`, `{"n":"3"}`)
}
