package query_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spate-io/spate/internal/fileread"
	"github.com/spate-io/spate/internal/query"
)

// TestGenerateSequenceCancel checks that generate_sequence stops when the
// run is cancelled: "generate_sequence inf" has no other end.
func TestGenerateSequenceCancel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "one.log")
	if err := os.WriteFile(path, []byte(`{"msg":"a"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	q, err := query.Parse(`* | generate_sequence inf | stats count() n`, diffNow)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		var s rowsSink
		_, err := query.Run(ctx, q, []string{path}, fileread.Config{Workers: 2}, query.Options{}, &s)
		done <- err
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("generate_sequence inf went on after its run was cancelled")
	}
}
