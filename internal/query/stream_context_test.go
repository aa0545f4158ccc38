package query_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spate-io/spate/internal/fileread"
	"github.com/spate-io/spate/internal/query"
)

// TestStreamContextInputs: stream_context over a file reads it again;
// over standard input, which cannot be read twice, it is an error before
// anything is read.
func TestStreamContextInputs(t *testing.T) {
	lines := `{"_time":"2026-01-02T00:00:01Z","_msg":"a"}
{"_time":"2026-01-02T00:00:02Z","_msg":"b"}
{"_time":"2026-01-02T00:00:03Z","_msg":"error c"}
{"_time":"2026-01-02T00:00:04Z","_msg":"d"}
`
	path := filepath.Join(t.TempDir(), "l.ndjson")
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	q, err := query.Parse(`error | stream_context before 1 after 1`, diffNow)
	if err != nil {
		t.Fatal(err)
	}
	var out rowsSink
	if _, err := query.Run(context.Background(), q, []string{path}, fileread.Config{}, query.Options{}, &out); err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, r := range out.rows {
		msgs = append(msgs, r["_msg"])
	}
	if strings.Join(msgs, ",") != "b,error c,d" {
		t.Errorf("over a file: %q", msgs)
	}
	out = rowsSink{}
	_, err = query.Run(context.Background(), q, []string{"-"}, fileread.Config{Stdin: strings.NewReader(lines)}, query.Options{}, &out)
	if err == nil || !strings.Contains(err.Error(), "cannot be read twice") || len(out.rows) != 0 {
		t.Errorf("over stdin: %v, %d rows", err, len(out.rows))
	}
}
