package query

import (
	"slices"
	"strings"
)

// sortProc implements sort. Rows are cloned and kept; with a limit only the
// best offset+limit rows are kept (the list is cut back whenever it doubles),
// so "sort ... limit N" holds O(N) rows, not all of them. Ties keep file
// order.
type sortProc struct {
	by     []SortField
	desc   bool
	offset int64
	limit  int64
	rows   []*Row
	worst  *Row // with a limit: the last of the best rows after a cut
	next   processor
}

func newSortProc(p *PipeSort, next processor) *sortProc {
	return &sortProc{by: p.By, desc: p.Desc, offset: p.Offset, limit: p.Limit, next: next}
}

func (p *sortProc) keep() int {
	if p.limit <= 0 {
		return -1
	}
	return int(p.offset + p.limit)
}

func (p *sortProc) push(r *Row) error {
	k := p.keep()
	if k >= 0 && p.worst != nil && p.compare(r, p.worst) >= 0 {
		// Fast path for top-N: r cannot enter the best k.
		return nil
	}
	p.rows = append(p.rows, r.Clone())
	if k >= 0 && len(p.rows) >= 2*k+1024 {
		p.sortRows()
		clear(p.rows[k:])
		p.rows = p.rows[:k]
		p.worst = p.rows[k-1]
	}
	return nil
}

func (p *sortProc) compare(a, b *Row) int {
	for _, f := range p.by {
		c := compareNatural(a.Get(f.Name), b.Get(f.Name))
		if f.Desc != p.desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	if a.pos.less(b.pos) {
		return -1
	}
	if b.pos.less(a.pos) {
		return 1
	}
	// Rows made by stats have no file position: compare their fields so
	// that ties come out in the same order on every run.
	for i := 0; i < len(a.Fields) && i < len(b.Fields); i++ {
		if c := strings.Compare(a.Fields[i].Name, b.Fields[i].Name); c != 0 {
			return c
		}
		if c := strings.Compare(a.Fields[i].Value, b.Fields[i].Value); c != 0 {
			return c
		}
	}
	return len(a.Fields) - len(b.Fields)
}

func (p *sortProc) sortRows() {
	slices.SortStableFunc(p.rows, p.compare)
}

func (p *sortProc) merge(o processor) error {
	p.rows = append(p.rows, o.(*sortProc).rows...)
	p.worst = nil
	return nil
}

func (p *sortProc) flush() error {
	p.sortRows()
	rows := p.rows
	if int64(len(rows)) <= p.offset {
		rows = nil
	} else {
		rows = rows[p.offset:]
	}
	if p.limit > 0 && int64(len(rows)) > p.limit {
		rows = rows[:p.limit]
	}
	for _, r := range rows {
		if err := p.next.push(r); err != nil {
			if err == errStop {
				break
			}
			return err
		}
	}
	return p.next.flush()
}
