package output

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/spate-io/spate/internal/query"
)

func printWith(t testing.TB, format string, o Options, rows ...*query.Row) string {
	t.Helper()
	var b bytes.Buffer
	p, err := NewWith(format, &b, o)
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
	return b.String()
}

func TestTableColumnsInQueryOrder(t *testing.T) {
	// The first row lacks b: the header still follows the query's order.
	rows := []*query.Row{row("c", "x", "a", "1"), row("a", "2", "b", "y", "c", "z")}
	o := Options{Columns: []string{"a", "b", "c"}}
	if got, want := printWith(t, "table", o, rows...), "a  b  c\n-  -  -\n1     x\n2  y  z\n"; got != want {
		t.Fatalf("table: got\n%s\nwant\n%s", got, want)
	}
	if got, want := printWith(t, "csv", o, rows...), "a,b,c\n1,,x\n2,y,z\n"; got != want {
		t.Fatalf("csv: got %q want %q", got, want)
	}
	// No rows: a CSV still has its header.
	if got, want := printWith(t, "csv", o), "a,b,c\n"; got != want {
		t.Fatalf("empty csv: got %q want %q", got, want)
	}
	// A field the query did not name is an error, not a shifted column.
	p, _ := NewWith("csv", &bytes.Buffer{}, o)
	if err := p.WriteRow(row("a", "1", "zz", "2")); err == nil || !strings.Contains(err.Error(), `"zz"`) {
		t.Fatalf("unexpected column: err %v", err)
	}
}

func TestTableEastAsianWidth(t *testing.T) {
	rows := []*query.Row{row("name", "日本語", "n", "1"), row("name", "abcdefg", "n", "22"), row("name", "é́", "n", "3")}
	got := printWith(t, "table", Options{}, rows...)
	want := "name      n\n-------  --\n日本語    1\nabcdefg  22\né́         3\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestTableEscapesControlCharacters(t *testing.T) {
	got := printWith(t, "table", Options{}, row("msg", "a\x1b[31mred\x7f\tb"))
	if want := "msg\n-------------------\na\\x1b[31mred\\x7f\\tb\n"; got != want {
		t.Fatalf("got %q want %q", got, want)
	}
}

func TestIsNumber(t *testing.T) {
	for s, want := range map[string]bool{
		"0": true, "-1": true, "+2": true, "1.5": true, ".5": true, "5.": true, "1e9": true,
		"1.5E-07": true, "NaN": true, "-Inf": true, "+Inf": true,
		"": false, "-": false, ".": false, "e5": false, "1e": false, "1e+": false, "1.2.3": false,
		"0x10": false, "12a": false, "1 2": false, "inf": false,
	} {
		if got := isNumber(s); got != want {
			t.Errorf("isNumber(%q) = %v, want %v", s, got, want)
		}
	}
}

// rowsFor makes n rows whose columns appear over time and whose widths vary.
func rowsFor(n int) []*query.Row {
	rows := make([]*query.Row, n)
	for i := range rows {
		r := row("i", fmt.Sprint(i), "s", strings.Repeat("x", i%37))
		if i%5 == 0 {
			r.Fields = append(r.Fields, query.Field{Name: fmt.Sprintf("k%d", i%7), Value: "v\n" + fmt.Sprint(i)})
		}
		rows[i] = r
	}
	return rows
}

// TestTableSpoolMatchesMemory holds more rows than the memory limit: the
// rest go to a temporary file, and the output is the same byte for byte.
func TestTableSpoolMatchesMemory(t *testing.T) {
	rows := rowsFor(20_000)
	for _, format := range []string{"table", "csv"} {
		want := printWith(t, format, Options{MemoryLimit: 1 << 30}, rows...)
		got := printWith(t, format, Options{MemoryLimit: 4 << 10, TempDir: t.TempDir()}, rows...)
		if got != want {
			t.Fatalf("%s: spooled output differs (%d vs %d bytes)", format, len(got), len(want))
		}
		if n := strings.Count(got, "\n"); n < 20_000 {
			t.Fatalf("%s: %d lines", format, n)
		}
	}
}

// TestTableHoldsBoundedMemory checks what a holding printer keeps in memory
// stays near its limit however many rows come.
func TestTableHoldsBoundedMemory(t *testing.T) {
	p, err := NewWith("table", &bytes.Buffer{}, Options{MemoryLimit: 64 << 10, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	tp := p.(*tablePrinter)
	for _, r := range rowsFor(50_000) {
		if err := p.WriteRow(r); err != nil {
			t.Fatal(err)
		}
	}
	if tp.held > 64<<10+1024 || len(tp.rows) > 5000 {
		t.Fatalf("held %d bytes in %d rows in memory, limit 64 KiB", tp.held, len(tp.rows))
	}
	if tp.spool == nil {
		t.Fatal("no temporary file")
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
}

// TestTableStreamsKnownColumns: with the columns known, a table prints its
// header and rows once its sample is full, before Flush, and later wider
// values widen the column from there on.
func TestTableStreamsKnownColumns(t *testing.T) {
	var b bytes.Buffer
	p, _ := NewWith("table", &b, Options{Columns: []string{"k", "n"}})
	for i := range TableSample {
		p.WriteRow(row("k", "a", "n", fmt.Sprint(i%10)))
	}
	p.WriteRow(row("k", "wider", "n", "12345"))
	p.Sync()
	out := b.String()
	if !strings.HasPrefix(out, "k  n\n-  -\na  0\n") {
		t.Fatalf("no header before Flush: %q", out[:min(len(out), 40)])
	}
	if !strings.HasSuffix(out, "wider  12345\n") {
		t.Fatalf("last row %q", out[max(0, len(out)-30):])
	}
	p.Flush()
}

// TestTableLive: under -f a table prints what it has at each Sync, and a
// new column brings a new header.
func TestTableLive(t *testing.T) {
	var b bytes.Buffer
	p, _ := NewWith("table", &b, Options{Live: true})
	p.WriteRow(row("level", "error", "msg", "a"))
	p.Sync()
	if got, want := b.String(), "level  msg\n-----  ---\nerror  a\n"; got != want {
		t.Fatalf("after first sync: %q want %q", got, want)
	}
	p.WriteRow(row("level", "warn", "code", "7"))
	p.Flush()
	if got, want := b.String(), "level  msg\n-----  ---\nerror  a\n\nlevel  msg  code\n-----  ---  ----\nwarn           7\n"; got != want {
		t.Fatalf("after new column: %q want %q", got, want)
	}
}

func BenchmarkTable(b *testing.B) {
	rows := rowsFor(10_000)
	size := 0
	for _, r := range rows {
		for _, f := range r.Fields {
			size += len(f.Name) + len(f.Value)
		}
	}
	for _, bc := range []struct {
		name, format string
		o            Options
	}{
		{"table-hold", "table", Options{}},
		{"table-spool", "table", Options{MemoryLimit: 64 << 10}},
		{"table-stream", "table", Options{Columns: []string{"i", "s"}}},
		{"csv-stream", "csv", Options{Columns: []string{"i", "s"}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			if bc.o.MemoryLimit > 0 {
				bc.o.TempDir = b.TempDir()
			}
			for b.Loop() {
				p, _ := NewWith(bc.format, io_discard{}, bc.o)
				for _, r := range rows {
					if bc.o.Columns != nil && len(r.Fields) > 2 {
						r = &query.Row{Fields: r.Fields[:2]}
					}
					if err := p.WriteRow(r); err != nil {
						b.Fatal(err)
					}
				}
				if err := p.Flush(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

type io_discard struct{}

func (io_discard) Write(p []byte) (int, error) { return len(p), nil }
