package query

import (
	"bytes"
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/spate-io/spate/internal/fileread"
)

// TestPlainNumberText: a text plainNumberText calls plain is exactly what
// formatNumber writes for its value (else quantile would answer a number's
// text differently from the logs).
func TestPlainNumberText(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	check := func(v string) {
		n, ok := parseNumber(v)
		if !ok {
			return
		}
		if plainNumberText(v) && formatNumber(n) != v {
			t.Fatalf("plainNumberText(%q) but formatNumber gives %q", v, formatNumber(n))
		}
	}
	for _, v := range []string{"0", "-0", "0.0", "0.5", "-0.5", "00", "01", "1.", ".5", "1.50", "1139.940", "1e3", "+3",
		"123456789012345", "1234567890123456", "0.1234567890123456", "-12.25", "10", "100.001", "-0.0"} {
		check(v)
	}
	digits := "0123456789"
	for range 200000 {
		var b []byte
		if r.IntN(4) == 0 {
			b = append(b, '-')
		}
		for range 1 + r.IntN(8) {
			b = append(b, digits[r.IntN(10)])
		}
		if r.IntN(2) == 0 {
			b = append(b, '.')
			for range r.IntN(9) {
				b = append(b, digits[r.IntN(10)])
			}
		}
		check(string(b))
	}
}

type rowsSink struct{ b strings.Builder }

func (s *rowsSink) WriteRow(r *Row) error {
	for i, f := range r.Fields {
		if i > 0 {
			s.b.WriteByte(' ')
		}
		s.b.WriteString(f.Name + "=" + f.Value)
	}
	s.b.WriteByte('\n')
	return nil
}

// TestQuantileKeepsText: quantile and median answer a value as the logs
// wrote it ("3.0", not "3"), as VictoriaLogs does; on 1 and 3 workers.
func TestQuantileKeepsText(t *testing.T) {
	now := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
	in := `{"x":1.50}` + "\n" + `{"x":"2.500"}` + "\n" + `{"x":3.0}` + "\n" + `{"x":10}` + "\n" + `{"x":"1e1"}` + "\n" + `{"x":"0.50"}` + "\n"
	for _, c := range []struct{ q, want string }{
		{`* | stats quantile(0.5, x) q, median(x) m`, "q=3.0 m=3.0"},
		{`* | stats quantile(0.3, x) q`, "q=1.50"},
		{`* | stats quantile(0.1, x) q`, "q=0.50"},
		// A value written two ways (10 and 1e1): the text that is not
		// formatNumber's (VictoriaLogs answers either).
		{`* | stats quantile(0.99, x) q`, "q=1e1"},
	} {
		for _, workers := range []int{1, 3} {
			q, err := Parse(c.q, now)
			if err != nil {
				t.Fatal(err)
			}
			var sink rowsSink
			cfg := fileread.Config{Stdin: bytes.NewReader([]byte(in)), Workers: workers, ChunkSize: 16}
			if _, err := Run(context.Background(), q, []string{"-"}, cfg, Options{}, &sink); err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(sink.b.String()); got != c.want {
				t.Errorf("%s (workers %d): %s, want %s", c.q, workers, got, c.want)
			}
		}
	}
}
