package naive

import (
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/spate-io/spate/internal/query"
)

// group is one distinct tuple of values with the number of rows holding it.
type group struct {
	values []string
	hits   int64
}

// countTuples counts the distinct tuples of the named fields' values (empty
// values included) in order of first appearance.
func countTuples(rows []row, fields []string) []*group {
	var groups []*group
	byKey := make(map[string]*group)
	for _, r := range rows {
		vals := make([]string, len(fields))
		for i, f := range fields {
			vals[i] = r[f]
		}
		key := tupleKey(vals)
		g, ok := byKey[key]
		if !ok {
			g = &group{values: vals}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.hits++
	}
	return groups
}

// tupleKey is an unambiguous map key for a tuple of values.
func tupleKey(vals []string) string {
	b, _ := json.Marshal(vals)
	return string(b)
}

// sortByHits orders groups by hits, highest first, then by their values
// (byte order, field by field), as VictoriaLogs' top breaks ties.
func sortByHits(groups []*group) {
	sort.SliceStable(groups, func(i, j int) bool {
		a, b := groups[i], groups[j]
		if a.hits != b.hits {
			return a.hits > b.hits
		}
		for k := range a.values {
			if a.values[k] != b.values[k] {
				return a.values[k] < b.values[k]
			}
		}
		return false
	})
}

// topRows is the top pipe: the N most frequent tuples of the by-fields
// (empty values count as a value) with their hits, and a 1-based rank if
// asked for.
func topRows(p *query.PipeTop, rows []row) []row {
	groups := countTuples(rows, p.By)
	sortByHits(groups)
	n := p.N
	if n <= 0 {
		n = 10
	}
	if int64(len(groups)) > n {
		groups = groups[:n]
	}
	hitsName := p.HitsName
	if hitsName == "" {
		hitsName = "hits"
	}
	out := make([]row, 0, len(groups))
	for i, g := range groups {
		r := row{}
		for k, f := range p.By {
			r.set(f, g.values[k])
		}
		r.set(hitsName, strconv.FormatInt(g.hits, 10))
		if p.Rank != "" {
			r.set(p.Rank, strconv.Itoa(i+1))
		}
		out = append(out, r)
	}
	return out
}

// uniqRows is the uniq pipe: the distinct tuples of the by-fields in order of
// first appearance (VictoriaLogs returns them in no particular order), with
// hits if asked for. With a Limit that the distinct tuples exceed, only
// Limit of them are returned (VictoriaLogs: an arbitrary subset; here the
// first ones) and, as in VictoriaLogs, their hits are 0, since hits of a
// partial answer would mislead.
func uniqRows(p *query.PipeUniq, rows []row) []row {
	if p.Filter != "" {
		var kept []row
		for _, r := range rows {
			if strings.Contains(r[p.By[0]], p.Filter) {
				kept = append(kept, r)
			}
		}
		rows = kept
	}
	groups := countTuples(rows, p.By)
	hitsName := "hits"
	for slices.Contains(p.By, hitsName) {
		hitsName += "s"
	}
	resetHits := false
	if p.Limit > 0 && int64(len(groups)) > p.Limit {
		groups = groups[:p.Limit]
		resetHits = true
	}
	out := make([]row, 0, len(groups))
	for _, g := range groups {
		r := row{}
		for k, f := range p.By {
			r.set(f, g.values[k])
		}
		if p.WithHits {
			hits := g.hits
			if resetHits {
				hits = 0
			}
			r.set(hitsName, strconv.FormatInt(hits, 10))
		}
		out = append(out, r)
	}
	return out
}

// fieldNames is the field_names pipe: every field name with the number of
// rows where it is non-empty (VictoriaLogs' hits are per-block estimates;
// these are exact). Fed logs as stored (first), it reads logs, which in
// VictoriaLogs always carry _stream and _stream_id too: spate treats a file
// as the single stream {}, so those two names are listed with every row as
// a hit.
func fieldNames(p *query.PipeFieldNames, rows []row, first bool) []row {
	counts := make(map[string]int64)
	for _, r := range rows {
		for name, v := range r {
			if v != "" {
				counts[name]++
			}
		}
	}
	if first && len(rows) > 0 {
		counts["_stream"] = int64(len(rows))
		counts["_stream_id"] = int64(len(rows))
	}
	names := make([]string, 0, len(counts))
	for name := range counts {
		names = append(names, name)
	}
	sort.Strings(names)
	resultName := p.ResultName
	if resultName == "" {
		resultName = "name"
	}
	out := make([]row, 0, len(names))
	for _, name := range names {
		out = append(out, row{resultName: name, "hits": strconv.FormatInt(counts[name], 10)})
	}
	return out
}

// fieldValues is the field_values pipe: the distinct values of one field
// (the empty value too) with hits, highest first, equal hits in natural
// order of the values. If there are more than Limit values, VictoriaLogs
// zeroes the hits (a partial count would mislead) and so keeps the first
// Limit values in natural order.
func fieldValues(p *query.PipeFieldValues, rows []row) []row {
	groups := countTuples(rows, []string{p.Field})
	if p.Limit > 0 && int64(len(groups)) > p.Limit {
		for _, g := range groups {
			g.hits = 0
		}
	}
	sort.SliceStable(groups, func(i, j int) bool {
		a, b := groups[i], groups[j]
		if a.hits != b.hits {
			return a.hits > b.hits
		}
		return compareNatural(a.values[0], b.values[0]) < 0
	})
	if p.Limit > 0 && int64(len(groups)) > p.Limit {
		groups = groups[:p.Limit]
	}
	out := make([]row, 0, len(groups))
	for _, g := range groups {
		r := row{}
		r.set(p.Field, g.values[0])
		r.set("hits", strconv.FormatInt(g.hits, 10))
		out = append(out, r)
	}
	return out
}

// facets is the facets pipe. For each field (in name order) it lists its N
// most frequent non-empty values with hits, skipping:
//   - a field with a value longer than MaxValueLen bytes (default 128);
//   - a field with more than MaxValuesPerField distinct values (default 1000);
//   - a field with one value present in every row, unless KeepConstFields.
func facets(p *query.PipeFacets, rows []row) []row {
	n := p.N
	if n <= 0 {
		n = 10
	}
	maxValues := p.MaxValuesPerField
	if maxValues <= 0 {
		maxValues = 1000
	}
	maxLen := p.MaxValueLen
	if maxLen <= 0 {
		maxLen = 128
	}
	valuesByField := make(map[string]map[string]int64)
	for _, r := range rows {
		for name, v := range r {
			if v == "" {
				continue
			}
			if valuesByField[name] == nil {
				valuesByField[name] = make(map[string]int64)
			}
			valuesByField[name][v]++
		}
	}
	names := make([]string, 0, len(valuesByField))
	for name := range valuesByField {
		names = append(names, name)
	}
	sort.Strings(names)

	var out []row
	for _, name := range names {
		counts := valuesByField[name]
		tooLong := false
		for v := range counts {
			if int64(len(v)) > maxLen {
				tooLong = true
			}
		}
		if tooLong || int64(len(counts)) > maxValues {
			continue
		}
		var groups []*group
		for v, hits := range counts {
			groups = append(groups, &group{values: []string{v}, hits: hits})
		}
		if len(groups) == 1 && groups[0].hits == int64(len(rows)) && !p.KeepConstFields {
			continue
		}
		sortByHits(groups)
		if int64(len(groups)) > n {
			groups = groups[:n]
		}
		for _, g := range groups {
			out = append(out, row{
				"field_name":  name,
				"field_value": g.values[0],
				"hits":        strconv.FormatInt(g.hits, 10),
			})
		}
	}
	return out
}

// unrollRows is the unroll pipe: each listed field holding a JSON array is
// split into its elements (a string element unquoted, any other element as
// its compact JSON text, so null is "null"), one row per position, the
// fields unrolled side by side; a shorter array or a non-array value gives
// empty values. A row whose fields hold no elements at all becomes one row
// with those fields empty.
func unrollRows(p *query.PipeUnroll, rows []row) []row {
	var out []row
	for _, r := range rows {
		arrays := make([][]string, len(p.Fields))
		n := 0
		for i, f := range p.Fields {
			arrays[i] = jsonArrayElements(r[f])
			n = max(n, len(arrays[i]))
		}
		n = max(n, 1)
		for k := range n {
			c := r.clone()
			for i, f := range p.Fields {
				v := ""
				if k < len(arrays[i]) {
					v = arrays[i][k]
				}
				c.set(f, v)
			}
			out = append(out, c)
		}
	}
	return out
}
