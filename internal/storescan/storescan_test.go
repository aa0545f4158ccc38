package storescan

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/spate-io/spate/internal/query"
	"github.com/spate-io/spate/internal/segment"
)

// TestInputs: a query's inputs are the segments of its tenant whose
// metadata does not rule them out by time or stream, each opened up to its
// acknowledged size.
func TestInputs(t *testing.T) {
	dir := t.TempDir()
	st, err := segment.Open(dir, segment.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	day := func(d, value string, n int64) segment.Group {
		ts, _ := time.Parse(segment.DayLayout, d)
		return segment.Group{Day: d, Lines: []byte(`{"_stream":"{a=\"` + value + `\"}"}` + "\n"),
			MinTime: ts.UnixNano() + n, MaxTime: ts.UnixNano() + n, HasTime: true, Streams: []string{`{a="` + value + `"}`}}
	}
	groups := []segment.Group{day("2026-01-01", "x", 0), day("2026-01-02", "y", 0)}
	other := day("2026-01-01", "x", 0)
	other.Tenant = segment.Tenant{AccountID: 3}
	groups = append(groups, other)
	if err := st.Append(context.Background(), groups); err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	now := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		q       string
		tenant  segment.Tenant
		want    []string // days of the segments read
		skipped int
	}{
		{`*`, segment.Tenant{}, []string{"2026-01-01", "2026-01-02"}, 0},
		{`_time:2026-01-02`, segment.Tenant{}, []string{"2026-01-02"}, 1},
		{`{a="x"}`, segment.Tenant{}, []string{"2026-01-01"}, 1},
		{`{a="z"}`, segment.Tenant{}, nil, 2},
		{`*`, segment.Tenant{AccountID: 3}, []string{"2026-01-01"}, 0},
		{`*`, segment.Tenant{AccountID: 4}, nil, 0},
	} {
		q, err := query.Parse(c.q, now)
		if err != nil {
			t.Fatal(err)
		}
		in, err := New(c.tenant, q, true)
		if err != nil {
			t.Fatal(err)
		}
		var days, names []string
		if err := in.Add(dir, func(name string, size int64) {
			names = append(names, name)
			days = append(days, filepath.Base(filepath.Dir(name)))
		}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(days, c.want) || in.Skipped != c.skipped || in.Listed != len(c.want)+c.skipped || in.Snapshots() != 1 {
			t.Errorf("%s in %s: read %v (listed %d, skipped %d), want %v (skipped %d)", c.q, c.tenant, days, in.Listed, in.Skipped, c.want, c.skipped)
		}
		if !in.Holds(names) || in.Holds(append(names, "elsewhere.log")) {
			t.Errorf("%s: Holds", c.q)
		}
		for _, name := range names {
			f, limit, err := in.Open(name)
			if err != nil {
				t.Fatal(err)
			}
			fi, _ := f.Stat()
			f.Close()
			if limit <= 0 || limit > fi.Size() {
				t.Errorf("%s: %s opened with limit %d of %d bytes", c.q, name, limit, fi.Size())
			}
		}
		in.Close()
	}
}
