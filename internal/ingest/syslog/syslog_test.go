package syslog

import (
	"strings"
	"testing"
)

// TestTimeErrorShort: a long bad timestamp is quoted by its first 64 bytes
// only, since the error is logged.
func TestTimeErrorShort(t *testing.T) {
	long := strings.Repeat("9", 300000)
	if got := (&TimeError{Timestamp: long}).Error(); len(got) > 120 || !strings.HasSuffix(got, "... (300000 bytes)") {
		t.Errorf("long: %q", got)
	}
	if got, want := (&TimeError{Timestamp: "x"}).Error(), `cannot parse syslog timestamp "x"`; got != want {
		t.Errorf("short: %q, want %q", got, want)
	}
}
