package query

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/spate-io/spate/internal/fileread"
)

// TestSnapshots feeds lines in three batches through a pipe, waiting after
// each for a snapshot that covers it: snapshots are cumulative, the pipes
// after the barrier start afresh in each, the final result equals a plain
// run's, and (with one worker) every snapshot is the result of a prefix of
// the input.
func TestSnapshots(t *testing.T) {
	now := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
	line := func(i int) string {
		return fmt.Sprintf(`{"i":%d,"svc":"s%d","lat":%d}`+"\n", i, i%3, i%17)
	}
	const batch = 300
	for _, c := range []struct {
		q string
		// want is the snapshot after k batches.
		want func(k int) string
	}{
		{`* | stats count() n`, func(k int) string { return fmt.Sprintf("n=%d", k*batch) }},
		{`* | stats by (svc) count() n | sort by (svc) | limit 2`, func(k int) string {
			return fmt.Sprintf("svc=s0 n=%d\nsvc=s1 n=%d", k*batch/3, k*batch/3)
		}},
		{`* | sort by (i) desc | limit 2 | fields i`, func(k int) string {
			return fmt.Sprintf("i=%d\ni=%d", k*batch-1, k*batch-2)
		}},
		{`* | top 1 (svc)`, func(k int) string { return fmt.Sprintf("svc=s0 hits=%d", k*batch/3) }},
		{`* | field_names | filter name:svc`, func(k int) string { return fmt.Sprintf("name=svc hits=%d", k*batch) }},
	} {
		for _, workers := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/w%d", c.q, workers), func(t *testing.T) {
				q, err := Parse(c.q, now)
				if err != nil {
					t.Fatal(err)
				}
				pr, pw := io.Pipe()
				var sink rowsSink
				snaps := make(chan string, 10000)
				opts := Options{Every: 20 * time.Millisecond, SnapshotDone: func() error {
					snaps <- strings.TrimSpace(sink.b.String())
					sink.b.Reset()
					return nil
				}}
				cfg := fileread.Config{Stdin: pr, Workers: workers, ChunkSize: 4 << 10}
				done := make(chan error, 1)
				go func() {
					_, err := Run(context.Background(), q, []string{"-"}, cfg, opts, &sink)
					done <- err
				}()
				seen := map[string]bool{}
				for k := 1; k <= 3; k++ {
					for i := (k - 1) * batch; i < k*batch; i++ {
						pw.Write([]byte(line(i)))
					}
					want := c.want(k)
					deadline := time.After(10 * time.Second)
				wait:
					for {
						select {
						case s := <-snaps:
							seen[s] = true
							if s == want {
								break wait
							}
						case <-deadline:
							t.Fatalf("after batch %d: no snapshot %q; saw %v", k, want, seen)
						}
					}
				}
				pw.Close()
				if err := <-done; err != nil {
					t.Fatal(err)
				}
				if got, want := strings.TrimSpace(sink.b.String()), c.want(3); got != want {
					t.Fatalf("final %q, want %q", got, want)
				}
				close(snaps)
				for s := range snaps {
					seen[s] = true
				}
				if workers > 1 {
					return // two workers may finish a later chunk first
				}
				// Every snapshot is the result over some prefix of the input.
				var all bytes.Buffer
				for i := range 3 * batch {
					all.WriteString(line(i))
				}
				prefixes := map[string]bool{"": true}
				for n := 1; n <= 3*batch; n++ {
					var s rowsSink
					data := all.Bytes()[:bytes.Index(all.Bytes(), []byte(line(n-1)))+len(line(n-1))]
					if _, err := Run(context.Background(), q, []string{"-"}, fileread.Config{Stdin: bytes.NewReader(data), Workers: 1}, Options{}, &s); err != nil {
						t.Fatal(err)
					}
					prefixes[strings.TrimSpace(s.b.String())] = true
				}
				for s := range seen {
					if !prefixes[s] {
						t.Fatalf("snapshot %q is not the result of any prefix of the input", s)
					}
				}
			})
		}
	}
}
