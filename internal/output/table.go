package output

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mattn/go-runewidth"

	"github.com/spate-io/spate/internal/query"
)

// defaultMemoryLimit bounds the bytes of rows a holding table or CSV printer
// keeps in memory before the rest go to a temporary file.
const defaultMemoryLimit = 32 << 20

// tablePrinter prints an aligned table or CSV. It streams when the columns
// are known up front (Options.Columns) or, for a table, when Options.Live is
// set; otherwise it holds the rows until Flush, in memory up to
// Options.MemoryLimit and in an unlinked temporary file past it, so that
// memory stays bounded however many rows come.
type tablePrinter struct {
	w      *bufio.Writer
	csv    bool
	o      Options
	stream bool
	done   bool

	cols    []string
	idx     map[string]int
	width   []int
	numeric []bool // every value so far is a number: right-aligned

	rows  [][]string // held rows, in order, before the spool's
	held  int64      // bytes of rows
	spool *os.File   // rows past o.MemoryLimit, in appendSpooled's encoding
	sw    *bufio.Writer

	header   bool  // a streaming printer has written its header
	n        int64 // rows
	cw       *csv.Writer
	lb       []byte
	scratch  []string
	spoolBuf []byte
}

func newTablePrinter(w *bufio.Writer, isCSV bool, o Options) *tablePrinter {
	if o.MemoryLimit <= 0 {
		o.MemoryLimit = defaultMemoryLimit
	}
	p := &tablePrinter{w: w, csv: isCSV, o: o, idx: map[string]int{}}
	for _, c := range o.Columns {
		p.column(c)
	}
	p.stream = len(o.Columns) > 0 || (o.Live && !isCSV)
	if isCSV {
		p.cw = csv.NewWriter(w)
	}
	return p
}

// column returns the index of the column named name, adding it if new.
func (p *tablePrinter) column(name string) int {
	if i, ok := p.idx[name]; ok {
		return i
	}
	name = strings.Clone(name)
	p.idx[name] = len(p.cols)
	p.cols = append(p.cols, name)
	p.width = append(p.width, displayWidth(name))
	p.numeric = append(p.numeric, true)
	return len(p.cols) - 1
}

// values lays r out by column in p.scratch (valid until the next call),
// adding new columns and widening columns as its values need.
func (p *tablePrinter) values(r *query.Row) ([]string, bool) {
	before := len(p.cols)
	vals := p.scratch[:0]
	for _, f := range r.Fields {
		if f.Value == "" {
			continue
		}
		i := p.column(f.Name)
		for len(vals) < len(p.cols) {
			vals = append(vals, "")
		}
		vals[i] = f.Value
		if !p.csv {
			v := oneLine(f.Value)
			p.width[i] = max(p.width[i], displayWidth(v))
			if p.numeric[i] && !p.header && !isNumber(v) {
				p.numeric[i] = false
			}
		}
	}
	p.scratch = vals
	return vals, len(p.cols) > before
}

func (p *tablePrinter) WriteRow(r *query.Row) error {
	vals, grew := p.values(r)
	p.n++
	if !p.stream || (!p.csv && !p.header) {
		return p.hold(vals)
	}
	if p.csv {
		if grew {
			return fmt.Errorf("a row has the field %q, which is not among the columns %s that the query names", p.cols[len(p.cols)-1], strings.Join(p.o.Columns, ", "))
		}
		if !p.header {
			if err := p.writeCSV(p.cols); err != nil {
				return err
			}
			p.header = true
		}
		return p.writeCSV(vals)
	}
	if grew {
		// A new column under -f: a fresh header for the rows from here.
		p.w.WriteByte('\n')
		p.writeHeader()
	}
	p.writeLine(vals)
	return nil
}

// hold keeps vals until Flush (or, for a streaming table, until its sample
// is complete).
func (p *tablePrinter) hold(vals []string) error {
	if p.spool == nil && p.held < p.o.MemoryLimit {
		row := make([]string, len(vals))
		n := int64(24 + 16*len(vals))
		for i, v := range vals {
			if v != "" {
				row[i] = strings.Clone(v)
				n += int64(len(v))
			}
		}
		p.rows = append(p.rows, row)
		p.held += n
	} else if err := p.spoolRow(vals); err != nil {
		return err
	}
	if p.stream && len(p.rows) >= TableSample {
		p.startStream()
	}
	return nil
}

// startStream prints a streaming table's header and its held sample.
func (p *tablePrinter) startStream() {
	p.writeHeader()
	for _, r := range p.rows {
		p.writeLine(r)
	}
	p.rows, p.held = nil, 0
}

func (p *tablePrinter) spoolRow(vals []string) error {
	if p.spool == nil {
		f, err := os.CreateTemp(p.o.TempDir, "spate-table-*")
		if err != nil {
			return fmt.Errorf("more than %s of rows to align: create a temporary file for the rest: %w (set --temp-dir, or use --format ndjson)", formatBytes(p.o.MemoryLimit), err)
		}
		os.Remove(f.Name()) // unlinked: gone when closed, even after a crash
		p.spool, p.sw = f, bufio.NewWriterSize(f, 256<<10)
	}
	b := p.spoolBuf[:0]
	n := 0
	for _, v := range vals {
		if v != "" {
			n++
		}
	}
	b = binary.AppendUvarint(b, uint64(n))
	for i, v := range vals {
		if v != "" {
			b = binary.AppendUvarint(b, uint64(i))
			b = binary.AppendUvarint(b, uint64(len(v)))
			b = append(b, v...)
		}
	}
	p.spoolBuf = b
	if _, err := p.sw.Write(b); err != nil {
		return fmt.Errorf("write rows to the temporary file: %w", err)
	}
	return nil
}

// Sync writes out the rows printed so far. A holding printer keeps its
// rows; a streaming table prints its header and sample now rather than wait
// for TableSample rows (under -f rows show as they come).
func (p *tablePrinter) Sync() error {
	if p.stream && !p.csv && !p.header && len(p.rows) > 0 {
		p.startStream()
	}
	if p.cw != nil {
		p.cw.Flush()
		if err := p.cw.Error(); err != nil {
			return err
		}
	}
	return p.w.Flush()
}

func (p *tablePrinter) Flush() error {
	if p.done {
		return nil
	}
	p.done = true
	if p.spool != nil {
		defer p.spool.Close()
	}
	if err := p.flush(); err != nil {
		return err
	}
	return p.Sync()
}

func (p *tablePrinter) flush() error {
	if p.csv {
		if !p.header {
			if err := p.writeCSV(p.cols); err != nil {
				return err
			}
			p.header = true
		}
		return p.eachHeld(p.writeCSV)
	}
	if p.header {
		return nil // streamed
	}
	if len(p.cols) == 0 {
		if p.n > 0 {
			fmt.Fprintf(p.w, "(%d rows without fields)\n", p.n)
		}
		return nil
	}
	p.writeHeader()
	return p.eachHeld(func(vals []string) error {
		p.writeLine(vals)
		return nil
	})
}

// eachHeld calls fn for every held row, in order: memory first, then the
// spool.
func (p *tablePrinter) eachHeld(fn func([]string) error) error {
	for _, r := range p.rows {
		if err := fn(r); err != nil {
			return err
		}
	}
	p.rows = nil
	if p.spool == nil {
		return nil
	}
	if err := p.sw.Flush(); err != nil {
		return fmt.Errorf("write rows to the temporary file: %w", err)
	}
	if _, err := p.spool.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("read back rows from the temporary file: %w", err)
	}
	br := bufio.NewReaderSize(p.spool, 256<<10)
	vals := make([]string, len(p.cols))
	var text []byte
	for {
		n, err := binary.ReadUvarint(br)
		if err == io.EOF {
			return nil
		}
		clear(vals)
		for j := uint64(0); err == nil && j < n; j++ {
			var i, l uint64
			if i, err = binary.ReadUvarint(br); err != nil {
				break
			}
			if l, err = binary.ReadUvarint(br); err != nil {
				break
			}
			if cap(text) < int(l) {
				text = make([]byte, l)
			}
			if _, err = io.ReadFull(br, text[:l]); err != nil {
				break
			}
			vals[i] = string(text[:l])
		}
		if err != nil {
			return fmt.Errorf("read back rows from the temporary file: %w", err)
		}
		if err := fn(vals); err != nil {
			return err
		}
	}
}

func (p *tablePrinter) writeCSV(vals []string) error {
	for len(vals) < len(p.cols) {
		vals = append(vals, "")
	}
	return p.cw.Write(vals)
}

func (p *tablePrinter) writeHeader() {
	p.header = true
	p.writeLine(p.cols)
	sep := make([]string, len(p.cols))
	for i := range sep {
		sep[i] = strings.Repeat("-", p.width[i])
	}
	p.writeLine(sep)
}

// writeLine writes one table line of vals, padded to the column widths.
func (p *tablePrinter) writeLine(vals []string) {
	lb := p.lb[:0]
	for i := range p.cols {
		v := ""
		if i < len(vals) {
			v = oneLine(vals[i])
		}
		w := displayWidth(v)
		if w > p.width[i] {
			p.width[i] = w // a streaming table widens as later rows need
		}
		pad := p.width[i] - w
		if i > 0 {
			lb = append(lb, "  "...)
		}
		if p.numeric[i] {
			lb = appendSpaces(lb, pad)
			lb = append(lb, v...)
		} else {
			lb = append(lb, v...)
			lb = appendSpaces(lb, pad)
		}
	}
	lb = append(bytes.TrimRight(lb, " "), '\n')
	p.w.Write(lb)
	p.lb = lb
}

func appendSpaces(b []byte, n int) []byte {
	for ; n > 0; n-- {
		b = append(b, ' ')
	}
	return b
}

// oneLine makes s safe to show in one table cell: newlines, tabs and other
// control characters are escaped, so that a log value can neither break
// the layout nor send escape sequences to the terminal.
func oneLine(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// displayWidth is the number of terminal cells s takes: East Asian wide
// characters take two, combining marks none (in a CJK locale, ambiguous
// characters two, as such terminals draw them).
func displayWidth(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return runewidth.StringWidth(s)
		}
	}
	return len(s)
}

// isNumber reports whether s is a number as spate and VictoriaLogs print
// them: an optional sign, digits with an optional fraction and exponent,
// or NaN and ±Inf.
func isNumber(s string) bool {
	switch s {
	case "NaN", "Inf", "+Inf", "-Inf":
		return true
	}
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	digits := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		digits++
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		exp := 0
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(s)
}

func formatBytes(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}
