package cli

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/spate-io/spate/internal/segment"
)

// TestQueryStreamContextStore: over a spate serve data directory,
// stream_context finds the logs around a match in segments that the
// query's own time range leaves out (here, the day before).
func TestQueryStreamContextStore(t *testing.T) {
	dir := t.TempDir()
	st, err := segment.Open(dir, segment.Options{NoCompress: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	line := func(ts, msg string) string {
		return `{"_time":"` + ts + `","_stream":"{app=\"a\"}","app":"a","_msg":"` + msg + `"}` + "\n"
	}
	day1 := line("2024-01-01T23:59:50Z", "one") + line("2024-01-01T23:59:55Z", "two")
	day2 := line("2024-01-02T00:00:05Z", "three error") + line("2024-01-02T00:00:08Z", "four")
	if err := st.Append(context.Background(), []segment.Group{{Day: "2024-01-01", Lines: []byte(day1)}, {Day: "2024-01-02", Lines: []byte(day2)}}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	q := `_time:[2024-01-02T00:00:00Z, 2024-01-02T01:00:00Z] error | stream_context before 5 after 5 | fields _msg`
	code, out, stderr := runCLI(t, "query", q, dir)
	if code != ExitOK || strings.Count(string(out), "\n") != 4 || !strings.Contains(string(out), `"one"`) {
		t.Fatalf("exit %d, out %q, stderr %q", code, out, stderr)
	}
}
