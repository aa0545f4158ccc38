package query

import (
	"testing"
	"time"

	"github.com/spate-io/spate/internal/fileread"
)

// TestGroupBudget checks each worker's stats group budget: by default
// every worker gets DefaultGroupMemory, so that its table stays in cache
// however many workers run; a GroupMemory given is shared by the workers;
// a negative one never spills.
func TestGroupBudget(t *testing.T) {
	q, err := Parse(`* | stats by (path) count() n, sum(bytes) b`, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		mem     int64
		workers int
		want    int64
	}{
		{mem: 0, workers: 1, want: DefaultGroupMemory},
		{mem: 0, workers: 4, want: DefaultGroupMemory},
		{mem: 8 << 20, workers: 1, want: 8 << 20},
		{mem: 8 << 20, workers: 4, want: 2 << 20},
		{mem: -1, workers: 2, want: -1},
	} {
		p, err := newPlan(q, Options{GroupMemory: c.mem})
		if err != nil {
			t.Fatal(err)
		}
		e, err := newExecutor(p, fileread.Config{Workers: c.workers}, discardSink{})
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range e.workers {
			if got := w.barrier.(*statsProc).budget; got != c.want {
				t.Errorf("GroupMemory %d, %d workers: worker %d has budget %d, want %d", c.mem, c.workers, i, got, c.want)
			}
		}
	}
}
