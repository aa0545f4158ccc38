package output

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/spate-io/spate/internal/query"
)

func row(kv ...string) *query.Row {
	r := &query.Row{}
	for i := 0; i+1 < len(kv); i += 2 {
		r.Fields = append(r.Fields, query.Field{Name: kv[i], Value: kv[i+1]})
	}
	return r
}

func print(t *testing.T, format string, rows ...*query.Row) string {
	t.Helper()
	var b bytes.Buffer
	p, err := New(format, &b)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := p.WriteRow(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := p.Flush(); err != nil { // a second Flush writes nothing
		t.Fatal(err)
	}
	return b.String()
}

func TestNDJSONValuesAreValidJSONStrings(t *testing.T) {
	got := print(t, "ndjson", row("msg", "tab\there \"q\" \\ \x01 é \xff", "empty", "", "n", "5"))
	want := "{\"msg\":\"tab\\there \\\"q\\\" \\\\ \\u0001 é \\ufffd\",\"n\":\"5\"}\n"
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(got), &m); err != nil {
		t.Fatalf("not valid JSON: %v", err)
	}
}

func TestTableAndCSV(t *testing.T) {
	rows := []*query.Row{row("service", "api", "n", "12"), row("service", "web-frontend", "n", "7", "extra", "x\ny")}
	if got, want := print(t, "table", rows...), "service        n  extra\n------------  --  -----\napi           12\nweb-frontend   7  x\\ny\n"; got != want {
		t.Fatalf("table: got\n%q\nwant\n%q", got, want)
	}
	if got, want := print(t, "csv", rows...), "service,n,extra\napi,12,\nweb-frontend,7,\"x\ny\"\n"; got != want {
		t.Fatalf("csv: got %q want %q", got, want)
	}
	if got, want := print(t, "json"), "[]\n"; got != want {
		t.Fatalf("empty json: got %q want %q", got, want)
	}
	if _, err := New("yaml", &bytes.Buffer{}); err == nil {
		t.Fatal("unknown format accepted")
	}
}
