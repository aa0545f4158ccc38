// Package output prints query result rows: NDJSON (the shape VictoriaLogs
// returns), a JSON array, CSV and an aligned table. Printers implement
// query.Sink; they know nothing about files or plans.
package output

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/spate-io/spate/internal/ndjson"
	"github.com/spate-io/spate/internal/query"
)

// Formats lists the accepted --format values.
var Formats = []string{"ndjson", "json", "csv", "table"}

// Printer is a query.Sink that writes rows to an io.Writer. Call Flush after
// the last row (calling it again does nothing); the table and CSV printers
// write nothing before it.
type Printer interface {
	query.Sink
	Flush() error
}

// New returns a printer for format writing to w.
func New(format string, w io.Writer) (Printer, error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	switch format {
	case "ndjson", "":
		return &ndjsonPrinter{w: bw}, nil
	case "json":
		return &jsonPrinter{w: bw}, nil
	case "csv":
		return &tablePrinter{w: bw, csv: true}, nil
	case "table":
		return &tablePrinter{w: bw}, nil
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

// tablePrinter buffers every row to learn the columns (in first-seen order)
// and their widths, then prints an aligned table or CSV.
type tablePrinter struct {
	w    *bufio.Writer
	csv  bool
	done bool
	cols []string
	idx  map[string]int
	rows [][]string
}

// maxTableRows bounds the rows a table or CSV printer buffers.
const maxTableRows = 1_000_000

func (p *tablePrinter) WriteRow(r *query.Row) error {
	if p.idx == nil {
		p.idx = map[string]int{}
	}
	if len(p.rows) >= maxTableRows {
		return fmt.Errorf("more than %d rows for --format table/csv, which holds all rows in memory to align columns; use --format ndjson or add | limit N", maxTableRows)
	}
	row := make([]string, len(p.cols))
	for _, f := range r.Fields {
		if f.Value == "" {
			continue
		}
		i, ok := p.idx[f.Name]
		if !ok {
			i = len(p.cols)
			p.idx[strings.Clone(f.Name)] = i
			p.cols = append(p.cols, strings.Clone(f.Name))
			row = append(row, "")
		}
		row[i] = strings.Clone(f.Value)
	}
	p.rows = append(p.rows, row)
	return nil
}

func (p *tablePrinter) Flush() error {
	if p.done {
		return nil
	}
	p.done = true
	if p.csv {
		cw := csv.NewWriter(p.w)
		if err := cw.Write(p.cols); err != nil {
			return err
		}
		for _, r := range p.rows {
			r = append(r, make([]string, len(p.cols)-len(r))...)
			if err := cw.Write(r); err != nil {
				return err
			}
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
		return p.w.Flush()
	}
	if len(p.cols) == 0 {
		if len(p.rows) > 0 {
			fmt.Fprintf(p.w, "(%d rows without fields)\n", len(p.rows))
		}
		return p.w.Flush()
	}
	width := make([]int, len(p.cols))
	numeric := make([]bool, len(p.cols))
	for i, c := range p.cols {
		width[i] = displayWidth(c)
		numeric[i] = true
	}
	for _, r := range p.rows {
		for i, v := range r {
			v = oneLine(v)
			width[i] = max(width[i], displayWidth(v))
			if v != "" && !isNumber(v) {
				numeric[i] = false
			}
		}
	}
	var lb []byte
	line := func(vals []string) {
		lb = lb[:0]
		for i := range p.cols {
			v := ""
			if i < len(vals) {
				v = oneLine(vals[i])
			}
			pad := strings.Repeat(" ", width[i]-displayWidth(v))
			if i > 0 {
				lb = append(lb, "  "...)
			}
			if numeric[i] {
				lb = append(lb, pad...)
				lb = append(lb, v...)
			} else {
				lb = append(lb, v...)
				lb = append(lb, pad...)
			}
		}
		lb = append(bytes.TrimRight(lb, " "), '\n')
		p.w.Write(lb)
	}
	line(p.cols)
	sep := make([]string, len(p.cols))
	for i := range sep {
		sep[i] = strings.Repeat("-", width[i])
	}
	line(sep)
	for _, r := range p.rows {
		line(r)
	}
	return p.w.Flush()
}

func oneLine(s string) string {
	if strings.ContainsAny(s, "\n\r\t") {
		return strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(s)
	}
	return s
}

func displayWidth(s string) int { return utf8.RuneCountInString(s) }

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	dot, digits := false, 0
	for i, c := range s {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '-' && i == 0:
		case c == '.' && !dot:
			dot = true
		default:
			return false
		}
	}
	return digits > 0
}
