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

// TestQueryOptions: ignore_global_time_filter keeps AddTimeFilter off the
// query and its subqueries (one with options of its own takes the others
// from the query around it, as in VictoriaLogs), and concurrency and
// parallel_readers cap what Run uses.
func TestQueryOptions(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`options(ignore_global_time_filter=true) x | join by (a) (y | fields a)`,
			`options(ignore_global_time_filter=true) x | join by (a) (y | fields a)`},
		{`x | join by (a) (options(ignore_global_time_filter=true) y | fields a)`,
			`_time:[1970-01-01T00:00:00.000000001Z,1970-01-01T00:00:00.000000002Z] x | join by (a) (options(ignore_global_time_filter=true) y | fields a)`},
		{`options(ignore_global_time_filter=true) x | join by (a) (options(concurrency=1) y | fields a)`,
			`options(ignore_global_time_filter=true) x | join by (a) (options(concurrency=1, ignore_global_time_filter=true) y | fields a)`},
		{`options(ignore_global_time_filter=true) x | join by (a) (options(ignore_global_time_filter=false) y | fields a)`,
			`options(ignore_global_time_filter=true) x | join by (a) (options(ignore_global_time_filter=false) _time:[1970-01-01T00:00:00.000000001Z,1970-01-01T00:00:00.000000002Z] y | fields a)`},
		{`options(ignore_global_time_filter=false) x`,
			`options(ignore_global_time_filter=false) _time:[1970-01-01T00:00:00.000000001Z,1970-01-01T00:00:00.000000002Z] x`},
	} {
		q, err := query.Parse(c.in, diffNow)
		if err != nil {
			t.Fatal(err)
		}
		q.AddTimeFilter(1, 2)
		if got := q.String(); got != c.want {
			t.Errorf("%s with a time range:\ngot  %s\nwant %s", c.in, got, c.want)
		}
	}

	dir := t.TempDir()
	var inputs []string
	for _, name := range []string{"a.log", "b.log", "c.log"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Repeat(`{"_msg":"x"}`+"\n", 100)), 0o644); err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, p)
	}
	for _, c := range []struct {
		q                     string
		workers, parallel     int
		wantWorkers, wantPara int
	}{
		{`* | stats count() n`, 3, 3, 3, 3},
		{`options(concurrency=1) * | stats count() n`, 3, 3, 1, 3},
		{`options(concurrency=5) * | stats count() n`, 3, 3, 3, 3},
		{`options(parallel_readers=2) * | stats count() n`, 3, 3, 3, 2},
	} {
		q, err := query.Parse(c.q, diffNow)
		if err != nil {
			t.Fatal(err)
		}
		var n string
		st, err := query.Run(context.Background(), q, inputs, fileread.Config{Workers: c.workers, ParallelInputs: c.parallel}, query.Options{},
			sinkRows(func(r *query.Row) { n = r.Get("n") }))
		if err != nil {
			t.Fatal(err)
		}
		if n != "300" || st.Workers != c.wantWorkers || st.ParallelInputs != c.wantPara {
			t.Errorf("%s: n=%s, %d workers, %d inputs at once; want 300, %d, %d", c.q, n, st.Workers, st.ParallelInputs, c.wantWorkers, c.wantPara)
		}
	}
}
