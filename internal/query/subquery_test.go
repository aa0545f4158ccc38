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

// TestSubqueryInputs: a subquery reads the query's inputs again (all of
// them, each once per subquery), and standard input, which cannot be read
// twice, is refused with a clear error.
func TestSubqueryInputs(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.log")
	b := filepath.Join(dir, "b.log")
	if err := os.WriteFile(a, []byte(`{"u":"1","kind":"buy"}`+"\n"+`{"u":"2","kind":"buy"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte(`{"u":"1","kind":"user","name":"ann"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	q, err := query.Parse(`kind:buy | join by (u) (kind:user | fields u, name) inner | union rows({u:9}) | fields u, name`, diffNow)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	sink := sinkRows(func(r *query.Row) { got = append(got, r.Get("u")+"="+r.Get("name")) })
	if _, err := query.Run(context.Background(), q, []string{a, b}, fileread.Config{Workers: 2}, query.Options{}, sink); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "1=ann,9=" {
		t.Fatalf("rows %q, want 1=ann from a.log joined with b.log, then the union's 9", got)
	}
	// The query now holds the subquery's rows, and prints them.
	if s := q.String(); !strings.Contains(s, `join by (u) rows({"u":"1","name":"ann"}) inner`) {
		t.Fatalf("resolved query prints as %s", s)
	}

	q, _ = query.Parse(`u:in(kind:user | fields u)`, diffNow)
	_, err = query.Run(context.Background(), q, []string{"-"}, fileread.Config{Stdin: strings.NewReader("{}\n")}, query.Options{}, sink)
	if err == nil || !strings.Contains(err.Error(), "standard input cannot be") {
		t.Fatalf("subquery over stdin: %v", err)
	}
}

type sinkRows func(r *query.Row)

func (f sinkRows) WriteRow(r *query.Row) error { f(r); return nil }
