package query

import (
	"slices"
	"strconv"
	"strings"
)

// PipeFacets returns, for every field, its most frequent values with hits:
// "facets [N] [max_values_per_field M] [max_value_len K] [keep_const_fields]".
// N defaults to 10.
type PipeFacets struct {
	N                 int64
	MaxValuesPerField int64
	MaxValueLen       int64
	KeepConstFields   bool
}

func (*PipeFacets) isPipe() {}

func (p *PipeFacets) String() string {
	s := "facets " + strconv.FormatInt(p.N, 10)
	if p.MaxValuesPerField > 0 {
		s += " max_values_per_field " + strconv.FormatInt(p.MaxValuesPerField, 10)
	}
	if p.MaxValueLen > 0 {
		s += " max_value_len " + strconv.FormatInt(p.MaxValueLen, 10)
	}
	if p.KeepConstFields {
		s += " keep_const_fields"
	}
	return s
}

// parseFacetsPipe parses "facets [N] [max_values_per_field N]
// [max_value_len N] [keep_const_fields]".
func (p *parser) parseFacetsPipe(_ string) (Pipe, error) {
	p.next()
	pf := &PipeFacets{N: 10}
	if t := p.cur(); t.kind == lexWord && isNumberPrefixLit(t.text) {
		n, err := p.parseCount("facets")
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, p.errorf(t.pos, "N in 'facets %s' must be bigger than 0", t.text)
		}
		pf.N = n
	}
	for {
		var err error
		switch {
		case p.isKw("max_values_per_field"):
			p.next()
			pf.MaxValuesPerField, err = p.parseCount("max_values_per_field")
		case p.isKw("max_value_len"):
			p.next()
			pf.MaxValueLen, err = p.parseCount("max_value_len")
		case p.isKw("keep_const_fields"):
			p.next()
			pf.KeepConstFields = true
		default:
			return pf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func (p *PipeFacets) newProcessor(_ *plan, next processor) (processor, error) {
	return newFacetsProc(p, next), nil
}

// facetsProc implements facets: for every field, its most frequent values.
// A field with more than max_values_per_field distinct values, or whose
// values are longer than max_value_len, is left out, and so is a field with
// one value on every row unless keep_const_fields.
type facetsProc struct {
	p      *PipeFacets
	fields map[string]*facetField
	rows   int64
	next   processor
}

type facetField struct {
	vals     map[string]*int64
	tooMany  bool
	tooLong  bool
	hitsSeen int64
}

const (
	defaultFacetsMaxValues = 1000
	defaultFacetsMaxLen    = 128
)

func newFacetsProc(p *PipeFacets, next processor) *facetsProc {
	return &facetsProc{p: p, fields: map[string]*facetField{}, next: next}
}

func (f *facetsProc) maxValues() int64 {
	if f.p.MaxValuesPerField > 0 {
		return f.p.MaxValuesPerField
	}
	return defaultFacetsMaxValues
}

func (f *facetsProc) maxLen() int64 {
	if f.p.MaxValueLen > 0 {
		return f.p.MaxValueLen
	}
	return defaultFacetsMaxLen
}

func (f *facetsProc) push(r *Row) error {
	f.rows++
	for _, fl := range r.Fields {
		if fl.Value == "" {
			continue
		}
		ff := f.fields[fl.Name]
		if ff == nil {
			ff = &facetField{vals: map[string]*int64{}}
			f.fields[strings.Clone(fl.Name)] = ff
		}
		ff.hitsSeen++
		if ff.tooMany || ff.tooLong {
			continue
		}
		if int64(len(fl.Value)) > f.maxLen() {
			ff.tooLong = true
			ff.vals = nil
			continue
		}
		n := ff.vals[fl.Value]
		if n == nil {
			if int64(len(ff.vals)) >= f.maxValues() {
				ff.tooMany = true
				ff.vals = nil
				continue
			}
			n = new(int64)
			ff.vals[strings.Clone(fl.Value)] = n
		}
		*n++
	}
	return nil
}

func (f *facetsProc) merge(o processor) error {
	of := o.(*facetsProc)
	f.rows += of.rows
	for name, off := range of.fields {
		ff := f.fields[name]
		if ff == nil {
			f.fields[name] = off
			continue
		}
		ff.hitsSeen += off.hitsSeen
		ff.tooMany = ff.tooMany || off.tooMany
		ff.tooLong = ff.tooLong || off.tooLong
		if ff.tooMany || ff.tooLong {
			ff.vals = nil
			continue
		}
		for v, n := range off.vals {
			if m := ff.vals[v]; m != nil {
				*m += *n
			} else {
				ff.vals[v] = n
			}
		}
		if int64(len(ff.vals)) > f.maxValues() {
			ff.tooMany = true
			ff.vals = nil
		}
	}
	return nil
}

func (f *facetsProc) flush() error {
	n := f.p.N
	if n <= 0 {
		n = 10
	}
	names := make([]string, 0, len(f.fields))
	for name := range f.fields {
		names = append(names, name)
	}
	slices.Sort(names)
	var out Row
	for _, name := range names {
		ff := f.fields[name]
		if ff.tooMany || ff.tooLong {
			continue
		}
		if len(ff.vals) == 1 && ff.hitsSeen == f.rows && !f.p.KeepConstFields {
			continue
		}
		vals := make([]string, 0, len(ff.vals))
		for v := range ff.vals {
			vals = append(vals, v)
		}
		slices.SortFunc(vals, func(a, b string) int {
			if *ff.vals[a] != *ff.vals[b] {
				if *ff.vals[a] > *ff.vals[b] {
					return -1
				}
				return 1
			}
			return strings.Compare(a, b)
		})
		for i, v := range vals {
			if int64(i) >= n {
				break
			}
			out.Reset()
			out.Set("field_name", name)
			out.Set("field_value", v)
			out.Set("hits", strconv.FormatInt(*ff.vals[v], 10))
			if err := f.next.push(&out); err != nil {
				if err == errStop {
					return f.next.flush()
				}
				return err
			}
		}
	}
	return f.next.flush()
}
