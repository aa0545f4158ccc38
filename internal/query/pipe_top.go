package query

import (
	"encoding/binary"
	"slices"
	"strconv"
	"strings"
)

// hitCounter counts rows per tuple of field values; top, uniq and
// field_values share it. Each worker has its own; they are merged at the end.
type hitCounter struct {
	fields []string
	groups map[string]*hitGroup
	key    []byte
}

type hitGroup struct {
	vals []string
	hits int64
	pos  rowPos
}

func newHitCounter(fields []string) hitCounter {
	return hitCounter{fields: fields, groups: map[string]*hitGroup{}}
}

func (h *hitCounter) add(r *Row) {
	k := h.key[:0]
	for _, f := range h.fields {
		v := r.Get(f)
		k = binary.AppendUvarint(k, uint64(len(v)))
		k = append(k, v...)
	}
	h.key = k
	if g, ok := h.groups[string(k)]; ok {
		g.hits++
		return
	}
	g := &hitGroup{hits: 1, pos: r.pos}
	for _, f := range h.fields {
		g.vals = append(g.vals, strings.Clone(r.Get(f)))
	}
	h.groups[string(k)] = g
}

func (h *hitCounter) merge(o *hitCounter) {
	for k, og := range o.groups {
		if g, ok := h.groups[k]; ok {
			g.hits += og.hits
			if og.pos.less(g.pos) {
				g.pos = og.pos
			}
			continue
		}
		h.groups[k] = og
	}
}

// sorted returns the groups by hits (highest first when byHits) or by value,
// ties broken by value.
func (h *hitCounter) sorted(byHits bool) []*hitGroup {
	gs := make([]*hitGroup, 0, len(h.groups))
	for _, g := range h.groups {
		gs = append(gs, g)
	}
	slices.SortFunc(gs, func(a, b *hitGroup) int {
		if byHits && a.hits != b.hits {
			if a.hits > b.hits {
				return -1
			}
			return 1
		}
		for i := range a.vals {
			if c := strings.Compare(a.vals[i], b.vals[i]); c != 0 {
				return c
			}
		}
		return 0
	})
	return gs
}

// topProc implements top.
type topProc struct {
	p    *PipeTop
	h    hitCounter
	next processor
}

func (p *PipeTop) newProcessor(_ *plan, next processor) (processor, error) {
	return newTopProc(p, next), nil
}

func newTopProc(p *PipeTop, next processor) *topProc {
	return &topProc{p: p, h: newHitCounter(p.By), next: next}
}

func (t *topProc) push(r *Row) error       { t.h.add(r); return nil }
func (t *topProc) merge(o processor) error { t.h.merge(&o.(*topProc).h); return nil }
func (t *topProc) flush() error {
	n := t.p.N
	if n <= 0 {
		n = 10
	}
	hitsName := t.p.HitsName
	if hitsName == "" {
		hitsName = "hits"
	}
	var out Row
	for i, g := range t.h.sorted(true) {
		if int64(i) >= n {
			break
		}
		out.Reset()
		for j, f := range t.p.By {
			out.Set(f, g.vals[j])
		}
		out.Set(hitsName, strconv.FormatInt(g.hits, 10))
		if t.p.Rank != "" {
			out.Set(t.p.Rank, strconv.Itoa(i+1))
		}
		if err := t.next.push(&out); err != nil {
			if err == errStop {
				break
			}
			return err
		}
	}
	return t.next.flush()
}

// uniqProc implements uniq.
type uniqProc struct {
	p    *PipeUniq
	h    hitCounter
	next processor
}

func (p *PipeUniq) newProcessor(_ *plan, next processor) (processor, error) {
	return newUniqProc(p, next), nil
}

func newUniqProc(p *PipeUniq, next processor) *uniqProc {
	return &uniqProc{p: p, h: newHitCounter(p.By), next: next}
}

// push counts r unless every by-field is empty: VictoriaLogs' uniq leaves
// out the all-empty tuple (top keeps it).
func (u *uniqProc) push(r *Row) error {
	for _, f := range u.p.By {
		if r.Get(f) != "" {
			u.h.add(r)
			return nil
		}
	}
	return nil
}
func (u *uniqProc) merge(o processor) error { u.h.merge(&o.(*uniqProc).h); return nil }
func (u *uniqProc) flush() error {
	var out Row
	for i, g := range u.h.sorted(false) {
		if u.p.Limit > 0 && int64(i) >= u.p.Limit {
			break
		}
		out.Reset()
		for j, f := range u.p.By {
			out.Set(f, g.vals[j])
		}
		if u.p.WithHits {
			out.Set("hits", strconv.FormatInt(g.hits, 10))
		}
		if err := u.next.push(&out); err != nil {
			if err == errStop {
				break
			}
			return err
		}
	}
	return u.next.flush()
}

// fieldValuesProc implements field_values.
type fieldValuesProc struct {
	p    *PipeFieldValues
	h    hitCounter
	next processor
}

func (p *PipeFieldValues) newProcessor(_ *plan, next processor) (processor, error) {
	return newFieldValuesProc(p, next), nil
}

func newFieldValuesProc(p *PipeFieldValues, next processor) *fieldValuesProc {
	return &fieldValuesProc{p: p, h: newHitCounter([]string{p.Field}), next: next}
}

func (f *fieldValuesProc) push(r *Row) error       { f.h.add(r); return nil }
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

// fieldNamesProc implements field_names: every field name with the number of
// rows where it has a value.
//
// Maps here are keyed by strings that own their memory and updated through
// pointers: assigning to an existing key with a string that aliases the
// worker's arena would make the map keep the alias (Go updates string keys
// on assignment).
type fieldNamesProc struct {
	p     *PipeFieldNames
	names map[string]*int64
	rows  int64
	next  processor
}

func (p *PipeFieldNames) newProcessor(_ *plan, next processor) (processor, error) {
	return newFieldNamesProc(p, next), nil
}

func newFieldNamesProc(p *PipeFieldNames, next processor) *fieldNamesProc {
	return &fieldNamesProc{p: p, names: map[string]*int64{}, next: next}
}

func (f *fieldNamesProc) push(r *Row) error {
	f.rows++
	for _, fl := range r.Fields {
		if fl.Value == "" {
			continue
		}
		n := f.names[fl.Name]
		if n == nil {
			n = new(int64)
			f.names[strings.Clone(fl.Name)] = n
		}
		*n++
	}
	return nil
}

func (f *fieldNamesProc) merge(o processor) error {
	of := o.(*fieldNamesProc)
	f.rows += of.rows
	for k, v := range of.names {
		if n := f.names[k]; n != nil {
			*n += *v
		} else {
			f.names[k] = v
		}
	}
	return nil
}

func (f *fieldNamesProc) flush() error {
	name := f.p.ResultName
	if name == "" {
		name = "name"
	}
	keys := make([]string, 0, len(f.names)+2)
	for k := range f.names {
		keys = append(keys, k)
	}
	if f.rows > 0 {
		// Every log belongs to a stream in VictoriaLogs' model; spate reads
		// files without stream fields, so every log is in the stream {}, as
		// when VictoriaLogs ingests them without _stream_fields. (Not
		// stored in names: flush may run again, for snapshots.)
		for _, k := range []string{"_stream", "_stream_id"} {
			if f.names[k] == nil {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	var out Row
	for _, k := range keys {
		hits := f.rows
		if n := f.names[k]; n != nil {
			hits = *n
		}
		out.Reset()
		out.Set(name, k)
		out.Set("hits", strconv.FormatInt(hits, 10))
		if err := f.next.push(&out); err != nil {
			if err == errStop {
				break
			}
			return err
		}
	}
	return f.next.flush()
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

func (p *PipeFacets) newProcessor(_ *plan, next processor) (processor, error) {
	return newFacetsProc(p, next), nil
}

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
