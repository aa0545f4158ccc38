package query

import (
	"encoding/binary"
	"slices"
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
