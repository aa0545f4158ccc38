package segment

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is an Options.Now that tests move by hand.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// segmentSizes lists the segment files of dir as "day/seq:size",
// separated by spaces.
func segmentSizes(t *testing.T, dir string) string {
	t.Helper()
	files, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		out = append(out, fmt.Sprintf("%s/%d:%d", f.Day, f.Seq, f.Size))
	}
	return strings.Join(out, " ")
}

// TestRotateBySize checks that a segment is sealed when the next request
// would take it past MaxSegmentBytes, that a request is never split, and
// that one request larger than the limit gets a segment of its own.
func TestRotateBySize(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, Options{MaxSegmentBytes: 1000, NoCompress: true})
	req := strings.Repeat("x", 99) + "\n" // 100 bytes
	for range 7 {
		mustAppend(t, s, "2026-11-22", strings.Repeat(req, 3)) // 300 bytes
	}
	mustAppend(t, s, "2026-11-22", strings.Repeat(req, 15)) // 1500 bytes: too large for any segment
	mustAppend(t, s, "2026-11-22", req)
	mustAppend(t, s, "2026-11-23", req)
	s.Close()
	got := segmentSizes(t, dir)
	want := "2026-11-22/0:900 2026-11-22/1:900 2026-11-22/2:300 2026-11-22/3:1500 2026-11-22/4:100 2026-11-23/5:100"
	if got != want {
		t.Fatalf("got segments\n%s\nwant\n%s", got, want)
	}
}

// TestRotateBySizeInBatch is TestRotateBySize with all requests in one
// batch: the writer must split the day's buffer at request boundaries.
func TestRotateBySizeInBatch(t *testing.T) {
	dir := t.TempDir()
	release := make(chan struct{})
	var once sync.Once
	s := openStore(t, dir, Options{MaxSegmentBytes: 1000, NoCompress: true, testBeforeBatch: func() {
		once.Do(func() { <-release })
	}})
	// The first request's batch stalls the writer; the rest queue up in
	// the next batch.
	first := make(chan error)
	go func() { first <- s.Append(context.Background(), groups("2026-11-22", "first\n")) }()
	waitFor(t, "the writer to stall", func() bool { return s.Stats().QueueRequests == 1 })
	req := strings.Repeat("y", 299) + "\n"
	var wg sync.WaitGroup
	for range 7 {
		wg.Go(func() {
			if err := s.Append(context.Background(), groups("2026-11-22", req)); err != nil {
				t.Error(err)
			}
		})
	}
	waitFor(t, "queued requests", func() bool { return s.Stats().QueueRequests == 8 })
	close(release)
	wg.Wait()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if b := s.Stats().Batches; b != 2 {
		t.Fatalf("got %d batches, want 2", b)
	}
	s.Close()
	got := segmentSizes(t, dir)
	want := "2026-11-22/0:906 2026-11-22/1:900 2026-11-22/2:300"
	if got != want {
		t.Fatalf("got segments\n%s\nwant\n%s", got, want)
	}
}

// TestRotateByAge checks both age checks: before a write, and in the
// background for an idle segment.
func TestRotateByAge(t *testing.T) {
	dir := t.TempDir()
	clock := newFakeClock()
	s := openStore(t, dir, Options{MaxSegmentAge: 40 * time.Millisecond, Now: clock.Now, NoCompress: true})
	mustAppend(t, s, "2026-11-22", "a\n")
	mustAppend(t, s, "2026-11-22", "b\n")
	clock.Advance(39 * time.Millisecond)
	mustAppend(t, s, "2026-11-22", "c\n")
	clock.Advance(time.Millisecond)
	mustAppend(t, s, "2026-11-22", "d\n") // the segment is 40ms old: a new one
	if got, want := segmentSizes(t, dir), "2026-11-22/0:6 2026-11-22/1:2"; got != want {
		t.Fatalf("got segments %s, want %s", got, want)
	}
	if got := s.Stats().ActiveSegments; got != 1 {
		t.Fatalf("got %d active segments, want 1", got)
	}
	// Idle: the background check (every 10ms here) seals it once the
	// clock says it is old enough, and not before.
	time.Sleep(30 * time.Millisecond)
	if got := s.Stats().ActiveSegments; got != 1 {
		t.Fatalf("got %d active segments before the clock moved, want 1", got)
	}
	clock.Advance(time.Hour)
	waitFor(t, "the idle segment to be sealed", func() bool { return s.Stats().ActiveSegments == 0 })
	mustAppend(t, s, "2026-11-22", "e\n")
	s.Close()
	if got, want := segmentSizes(t, dir), "2026-11-22/0:6 2026-11-22/1:2 2026-11-22/2:2"; got != want {
		t.Fatalf("got segments %s, want %s", got, want)
	}
}

// TestMaxOpenDays: late data for many days may not keep a file open per
// day; the least recently written days are sealed after the batch.
func TestMaxOpenDays(t *testing.T) {
	dir := t.TempDir()
	clock := newFakeClock()
	s := openStore(t, dir, Options{Now: clock.Now, NoCompress: true})
	for d := 1; d <= 6; d++ {
		mustAppend(t, s, fmt.Sprintf("2026-11-%02d", d), "x\n")
		clock.Advance(time.Second)
	}
	// Sealing happens after the acknowledgement.
	waitFor(t, "4 active segments", func() bool { return s.Stats().ActiveSegments == maxOpenDays })
	mustAppend(t, s, "2026-11-01", "y\n") // sealed: a new segment
	mustAppend(t, s, "2026-11-06", "y\n") // still active
	s.Close()
	got := segmentSizes(t, dir)
	want := "2026-11-01/0:2 2026-11-01/6:2 2026-11-02/1:2 2026-11-03/2:2 2026-11-04/3:2 2026-11-05/4:2 2026-11-06/5:4"
	if got != want {
		t.Fatalf("got segments\n%s\nwant\n%s", got, want)
	}
}

// TestTenants: each tenant's lines go to its own directory, also when one
// request holds several; List names the tenant; the open-days limit is per
// tenant, so tenants do not seal each other's segments.
func TestTenants(t *testing.T) {
	dir := t.TempDir()
	clock := newFakeClock()
	s := openStore(t, dir, Options{Now: clock.Now, NoCompress: true})
	a, b := Tenant{7, 8}, Tenant{4294967295, 0}
	ctx := context.Background()
	for d := 1; d <= 4; d++ {
		day := fmt.Sprintf("2026-11-%02d", d)
		if err := s.Append(ctx, []Group{{Tenant: a, Day: day, Lines: []byte("a\n")}, {Day: day, Lines: []byte("z\n")}}); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Second)
	}
	if err := s.Append(ctx, []Group{{Tenant: b, Day: "2026-11-01", Lines: []byte("b\n")}}); err != nil {
		t.Fatal(err)
	}
	// 9 active segments over three tenants, at most 4 days each: none sealed.
	if got := s.Stats().ActiveSegments; got != 9 {
		t.Fatalf("%d active segments, want 9", got)
	}
	s.Close()
	files, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, fmt.Sprintf("%v %s", f.Tenant, f.Path))
	}
	want := []string{
		"0:0 0-0/2026-11-01/seg-0000000000000001.ndjson",
		"0:0 0-0/2026-11-02/seg-0000000000000003.ndjson",
		"0:0 0-0/2026-11-03/seg-0000000000000005.ndjson",
		"0:0 0-0/2026-11-04/seg-0000000000000007.ndjson",
		"7:8 7-8/2026-11-01/seg-0000000000000000.ndjson",
		"7:8 7-8/2026-11-02/seg-0000000000000002.ndjson",
		"7:8 7-8/2026-11-03/seg-0000000000000004.ndjson",
		"7:8 7-8/2026-11-04/seg-0000000000000006.ndjson",
		"4294967295:0 4294967295-0/2026-11-01/seg-0000000000000008.ndjson",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := string(readFile(t, dir, files[8])); got != "b\n" {
		t.Fatalf("tenant %v holds %q", b, got)
	}
}

func TestParseTenantDir(t *testing.T) {
	for name, want := range map[string]bool{"0-0": true, "7-8": true, "4294967295-4294967295": true,
		"07-8": false, "7-08": false, "7": false, "7-8-9": false, "-1-0": false, "4294967296-0": false, "a-b": false, "2026-11-22": false} {
		if _, ok := parseTenantDir(name); ok != want {
			t.Errorf("parseTenantDir(%q) ok = %v, want %v", name, ok, want)
		}
	}
}
