// Package output prints query result rows: NDJSON (the shape VictoriaLogs
// returns), a JSON array, CSV and an aligned table. Printers implement
// query.Sink; they know nothing about files or plans.
package output

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/spate-io/spate/internal/ndjson"
	"github.com/spate-io/spate/internal/query"
)

// Formats lists the accepted --format values.
var Formats = []string{"ndjson", "json", "csv", "table"}

// Printer is a query.Sink that writes rows to an io.Writer. Call Flush after
// the last row (calling it again does nothing). Sync writes out what has
// been printed so far without ending the output; a table or CSV printer
// that still holds its rows to learn the columns writes nothing then.
// Printers are not safe for concurrent use.
type Printer interface {
	query.Sink
	Sync() error
	Flush() error
}

// Options tune the table and CSV printers.
type Options struct {
	// Columns, when set, are the fields every row has, in order (the query's
	// last fields or stats pipe). The printers then stream: CSV writes each
	// row as it comes, and the table aligns its columns to the first
	// TableSample rows and widens them as later rows need. Without Columns
	// they hold the rows until Flush, so that the columns (in first-seen
	// order) and their widths cover every row; past MemoryLimit bytes the
	// rows go to an unlinked temporary file in TempDir.
	Columns []string

	// Live makes a table without Columns stream too: it prints rows as they
	// come and a new header when a row brings a new column (for -f).
	Live bool

	// MemoryLimit bounds the bytes of rows held in memory (default 32 MiB).
	MemoryLimit int64

	// TempDir is where held rows past MemoryLimit go (default os.TempDir).
	TempDir string
}

// TableSample is how many rows a streaming table reads before it prints its
// header, to size its columns.
const TableSample = 1000

// New returns a printer for format writing to w.
func New(format string, w io.Writer) (Printer, error) {
	return NewWith(format, w, Options{})
}

// NewWith returns a printer for format writing to w, tuned by o.
func NewWith(format string, w io.Writer, o Options) (Printer, error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	switch format {
	case "ndjson", "":
		return &ndjsonPrinter{w: bw}, nil
	case "json":
		return &jsonPrinter{w: bw}, nil
	case "csv", "table":
		return newTablePrinter(bw, format == "csv", o), nil
	}
	return nil, fmt.Errorf("unknown output format %q (want one of %s)", format, strings.Join(Formats, ", "))
}

// appendRowJSON appends r as a JSON object whose values are all strings,
// leaving out empty values as VictoriaLogs does.
func appendRowJSON(b []byte, r *query.Row) []byte {
	b = append(b, '{')
	n := 0
	for _, f := range r.Fields {
		if f.Value == "" {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = ndjson.AppendQuoted(b, f.Name)
		b = append(b, ':')
		b = ndjson.AppendQuoted(b, f.Value)
	}
	return append(b, '}')
}

type ndjsonPrinter struct {
	w   *bufio.Writer
	buf []byte
}

// Flush of ndjson can repeat: it only flushes the buffer.

func (p *ndjsonPrinter) WriteRow(r *query.Row) error {
	p.buf = appendRowJSON(p.buf[:0], r)
	p.buf = append(p.buf, '\n')
	_, err := p.w.Write(p.buf)
	return err
}

func (p *ndjsonPrinter) Flush() error { return p.w.Flush() }

func (p *ndjsonPrinter) Sync() error { return p.w.Flush() }

type jsonPrinter struct {
	w    *bufio.Writer
	buf  []byte
	n    int
	done bool
}

func (p *jsonPrinter) WriteRow(r *query.Row) error {
	p.buf = p.buf[:0]
	if p.n == 0 {
		p.buf = append(p.buf, "[\n"...)
	} else {
		p.buf = append(p.buf, ",\n"...)
	}
	p.n++
	p.buf = appendRowJSON(p.buf, r)
	_, err := p.w.Write(p.buf)
	return err
}

func (p *jsonPrinter) Sync() error { return p.w.Flush() }

func (p *jsonPrinter) Flush() error {
	if p.done {
		return nil
	}
	p.done = true
	if p.n == 0 {
		p.w.WriteString("[]\n")
	} else {
		p.w.WriteString("\n]\n")
	}
	return p.w.Flush()
}
