package query

import "strconv"

// PipeFieldValues returns the distinct values of Field with hits, highest
// first: "field_values f [limit N]".
type PipeFieldValues struct {
	Field string
	Limit int64
}

func (*PipeFieldValues) isPipe() {}

func (p *PipeFieldValues) String() string {
	s := "field_values " + quoteToken(p.Field)
	if p.Limit > 0 {
		s += " limit " + strconv.FormatInt(p.Limit, 10)
	}
	return s
}

// parseFieldValuesPipe parses "field_values f [limit N]".
func (p *parser) parseFieldValuesPipe(_ string) (Pipe, error) {
	p.next()
	field, err := p.parseOptionalParenField("field name")
	if err != nil {
		return nil, err
	}
	pf := &PipeFieldValues{Field: field}
	if p.isKw("limit") {
		p.next()
		if pf.Limit, err = p.parseCount("limit"); err != nil {
			return nil, err
		}
	}
	return pf, nil
}

func (p *PipeFieldValues) newProcessor(_ *plan, next processor) (processor, error) {
	return newFieldValuesProc(p, next), nil
}

// fieldValuesProc implements field_values.
type fieldValuesProc struct {
	p    *PipeFieldValues
	h    hitCounter
	next processor
}

func newFieldValuesProc(p *PipeFieldValues, next processor) *fieldValuesProc {
	return &fieldValuesProc{p: p, h: newHitCounter([]string{p.Field}), next: next}
}

func (f *fieldValuesProc) push(r *Row) error { f.h.add(r); return nil }

func (f *fieldValuesProc) merge(o processor) error { f.h.merge(&o.(*fieldValuesProc).h); return nil }

func (f *fieldValuesProc) flush() error {
	var out Row
	for i, g := range f.h.sorted(true) {
		if f.p.Limit > 0 && int64(i) >= f.p.Limit {
			break
		}
		out.Reset()
		out.Set(f.p.Field, g.vals[0])
		out.Set("hits", strconv.FormatInt(g.hits, 10))
		if err := f.next.push(&out); err != nil {
			if err == errStop {
				break
			}
			return err
		}
	}
	return f.next.flush()
}
