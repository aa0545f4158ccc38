package naive

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/spate-io/spate/internal/query"
)

// applyPipe runs one pipe over all rows and returns the new rows. first is
// set when the rows are logs as stored (field_names then lists _stream and
// _stream_id).
// Pipes may modify the rows they are given.
func (ev *evaluator) applyPipe(p query.Pipe, rows []row, first bool) ([]row, error) {
	switch p := p.(type) {
	case *query.PipeFields:
		for _, r := range rows {
			for name := range r {
				if !matchAnyPattern(p.Fields, name) {
					delete(r, name)
				}
			}
		}
		return rows, nil
	case *query.PipeDelete:
		for _, r := range rows {
			for name := range r {
				if matchAnyPattern(p.Fields, name) {
					delete(r, name)
				}
			}
		}
		return rows, nil
	case *query.PipeRename:
		for _, r := range rows {
			for _, pair := range p.Pairs {
				renameFields(r, pair, true)
			}
		}
		return rows, nil
	case *query.PipeCopy:
		for _, r := range rows {
			for _, pair := range p.Pairs {
				renameFields(r, pair, false)
			}
		}
		return rows, nil
	case *query.PipeFilter:
		var out []row
		for _, r := range rows {
			if ev.match(p.Filter, r) {
				out = append(out, r)
			}
		}
		return out, nil
	case *query.PipeLimit:
		if int64(len(rows)) > p.N {
			rows = rows[:p.N]
		}
		return rows, nil
	case *query.PipeOffset:
		if int64(len(rows)) <= p.N {
			return nil, nil
		}
		return rows[p.N:], nil
	case *query.PipeJoin:
		return ev.applyJoin(p, rows), nil
	case *query.PipeStreamContext:
		return ev.streamContext(p, rows)
	case *query.PipeUnion:
		right := ev.literalOrSubquery(p.Rows, p.Query)
		return append(rows, right...), nil
	case *query.PipeRunningStats:
		return applyRunningStats(p, rows), nil
	case *query.PipeSort:
		return sortRows(p, rows), nil
	case *query.PipeReplace:
		return ev.applyReplace(p, rows)
	case *query.PipePack:
		for _, r := range rows {
			r.set(p.Result, packRow(r, p))
		}
		return rows, nil
	case *query.PipeCoalesce:
		for _, r := range rows {
			r.set(p.Result, coalesce(p, r))
		}
		return rows, nil
	case *query.PipeDecolorize:
		for _, r := range rows {
			r.set(p.Field, decolorize(r[p.Field]))
		}
		return rows, nil
	case *query.PipeHash:
		for _, r := range rows {
			r.set(p.Result, hashValue(r[p.Field]))
		}
		return rows, nil
	case *query.PipeJSONArrayLen:
		for _, r := range rows {
			r.set(p.Result, strconv.Itoa(len(jsonArrayElements(r[p.Field]))))
		}
		return rows, nil
	case *query.PipeJSONArrayConcat:
		for _, r := range rows {
			r.set(p.Result, jsonArrayConcat(r[p.From], p.Delimiter))
		}
		return rows, nil
	case *query.PipeCollapseNums:
		for _, r := range rows {
			if p.If != nil && !ev.match(p.If, r) {
				continue
			}
			v := collapseNums(r[p.Field])
			if p.Prettify {
				v = prettify(v)
			}
			r.set(p.Field, v)
		}
		return rows, nil
	case *query.PipeTimeAdd:
		for _, r := range rows {
			r.set(p.Field, timeAdd(r[p.Field], p.Offset))
		}
		return rows, nil
	case *query.PipeSplit:
		for _, r := range rows {
			r.set(p.Result, jsonStrings(splitValue(r[p.From], p.Separator)))
		}
		return rows, nil
	case *query.PipeUnpackWords:
		for _, r := range rows {
			r.set(p.Result, jsonStrings(words(r[p.From], p.DropDuplicates)))
		}
		return rows, nil
	case *query.PipeDropEmptyFields:
		var out []row
		for _, r := range rows {
			for name, v := range r {
				if v == "" {
					delete(r, name)
				}
			}
			if len(r) > 0 {
				out = append(out, r)
			}
		}
		return out, nil
	case *query.PipeLen:
		for _, r := range rows {
			r.set(p.Result, strconv.Itoa(len(r[p.Field])))
		}
		return rows, nil
	case *query.PipeMath:
		return ev.applyMath(p, rows)
	case *query.PipeFormat:
		return ev.applyFormat(p, rows)
	case *query.PipeExtract:
		return ev.applyExtract(p, rows)
	case *query.PipeExtractRegexp:
		return ev.applyExtractRegexp(p, rows)
	case *query.PipeUnpack:
		return ev.applyUnpack(p, rows)
	case *query.PipeGenerateSequence:
		// The input is dropped; tests keep N small.
		out := make([]row, 0, p.N)
		for i := range p.N {
			out = append(out, row{"_msg": strconv.FormatUint(i, 10)})
		}
		return out, nil
	case *query.PipeSetStreamFields:
		for _, r := range rows {
			if p.If != nil && !ev.match(p.If, r) {
				continue
			}
			var names []string
			for name, v := range r {
				if v != "" && matchAnyPattern(p.Fields, name) {
					names = append(names, name)
				}
			}
			sort.Strings(names)
			var b strings.Builder
			b.WriteByte('{')
			for i, name := range names {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(name + "=" + strconv.Quote(r[name]))
			}
			b.WriteByte('}')
			r.set("_stream", b.String())
			delete(r, "_stream_id")
		}
		return rows, nil
	case *query.PipeUnpackSyslog:
		return ev.applyUnpackSyslog(p, rows), nil
	case *query.PipeUnroll:
		return unrollRows(p, rows), nil
	case *query.PipeStats:
		return ev.applyStats(p, rows)
	case *query.PipeTop:
		return topRows(p, rows), nil
	case *query.PipeUniq:
		return uniqRows(p, rows), nil
	case *query.PipeFieldNames:
		return fieldNames(p, rows, first), nil
	case *query.PipeFieldValues:
		return fieldValues(p, rows), nil
	case *query.PipeFacets:
		return facets(p, rows), nil
	}
	return nil, fmt.Errorf("unsupported pipe %T", p)
}

// matchPattern reports whether name matches a field pattern: an exact name,
// or a prefix followed by '*' ("http*"; "*" matches every name).
func matchPattern(pattern, name string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(name, prefix)
	}
	return pattern == name
}

func matchAnyPattern(patterns []string, name string) bool {
	for _, p := range patterns {
		if matchPattern(p, name) {
			return true
		}
	}
	return false
}

// renameFields applies one "src as dst" of rename (remove set) or copy. A
// missing source clears the destination (its value is empty). With
// wildcards every field starting with src's prefix moves to dst's prefix
// plus the rest of its name.
func renameFields(r row, pair query.RenamePair, remove bool) {
	srcPrefix, srcWild := strings.CutSuffix(pair.Src, "*")
	if !srcWild {
		v := r[pair.Src]
		if remove {
			delete(r, pair.Src)
		}
		r.set(pair.Dst, v)
		return
	}
	dstPrefix, _ := strings.CutSuffix(pair.Dst, "*")
	// Collect first so renamed fields are not renamed again.
	type kv struct{ name, value string }
	var matched []kv
	for name, v := range r {
		if strings.HasPrefix(name, srcPrefix) {
			matched = append(matched, kv{name, v})
		}
	}
	sort.Slice(matched, func(i, j int) bool { return matched[i].name < matched[j].name })
	if remove {
		for _, m := range matched {
			delete(r, m.name)
		}
	}
	for _, m := range matched {
		r.set(dstPrefix+strings.TrimPrefix(m.name, srcPrefix), m.value)
	}
}

// sortRows is the sort pipe: a stable sort by the keys (see compareSortKey),
// each key ascending unless it says desc, the whole order reversed by a
// trailing desc, then offset and limit. Without keys rows are ordered by all
// their fields naturally (see allFieldsSortKeys).
func sortRows(p *query.PipeSort, rows []row) []row {
	less := func(a, b row) bool {
		if len(p.By) == 0 {
			ka, kb := allFieldsSortKeys(a, b)
			c := compareNatural(ka, kb)
			if p.Desc {
				c = -c
			}
			return c < 0
		}
		for _, k := range p.By {
			c := compareSortKey(k.Name, a[k.Name], b[k.Name])
			if k.Desc != p.Desc {
				c = -c
			}
			if c != 0 {
				return c < 0
			}
		}
		return false
	}
	sort.SliceStable(rows, func(i, j int) bool { return less(rows[i], rows[j]) })
	if len(p.Partition) == 0 {
		return cutRanked(p, rows)
	}
	var out []row
	for _, part := range groupsInKeyOrder(rows, p.Partition) {
		out = append(out, cutRanked(p, part)...)
	}
	return out
}

// groupsInKeyOrder splits rows (keeping their order) into the groups of
// equal values of fields, in the order of VictoriaLogs' keys: per value,
// its length as a uvarint, then the value, compared as bytes.
func groupsInKeyOrder(rows []row, fields []string) [][]row {
	groups := make(map[string][]row)
	var keys []string
	for _, r := range rows {
		var k []byte
		for _, f := range fields {
			k = binary.AppendUvarint(k, uint64(len(r[f])))
			k = append(k, r[f]...)
		}
		if _, ok := groups[string(k)]; !ok {
			keys = append(keys, string(k))
		}
		groups[string(k)] = append(groups[string(k)], r)
	}
	sort.Strings(keys)
	out := make([][]row, len(keys))
	for i, k := range keys {
		out[i] = groups[k]
	}
	return out
}

// cutRanked applies the sort's offset and limit to sorted rows and sets
// their rank field, their place counting from 1 before the offset.
func cutRanked(p *query.PipeSort, rows []row) []row {
	if int64(len(rows)) <= p.Offset {
		return nil
	}
	var out []row
	for i, r := range rows[p.Offset:] {
		if p.Limit > 0 && int64(i) >= p.Limit {
			break
		}
		if p.Rank != "" {
			c := maps.Clone(r)
			c[p.Rank] = strconv.FormatInt(p.Offset+int64(i)+1, 10)
			r = c
		}
		out = append(out, r)
	}
	return out
}

// allFieldsSortKeys returns the texts a sort without fields compares for
// rows a and b, as VictoriaLogs builds them from the columns of a storage
// block: "name":"value", for every field of a or b, _time, _stream_id,
// _stream and _msg first, then by name, a missing field as "", each string
// as VictoriaLogs quotes it (jsonQuote).
func allFieldsSortKeys(a, b row) (string, string) {
	names := sortedNames(a)
	for name := range b {
		if _, ok := a[name]; !ok {
			names = append(names, name)
		}
	}
	rank := map[string]int{"_time": 1, "_stream_id": 2, "_stream": 3, "_msg": 4}
	sort.Slice(names, func(i, j int) bool {
		ri, rj := rank[names[i]], rank[names[j]]
		if ri == 0 {
			ri = 5
		}
		if rj == 0 {
			rj = 5
		}
		if ri != rj {
			return ri < rj
		}
		return names[i] < names[j]
	})
	var ka, kb strings.Builder
	for _, name := range names {
		if a[name] == "" && b[name] == "" {
			continue
		}
		ka.WriteString(jsonQuote(name) + ":" + jsonQuote(a[name]) + ",")
		kb.WriteString(jsonQuote(name) + ":" + jsonQuote(b[name]) + ",")
	}
	return ka.String(), kb.String()
}

// allFieldsKey prints all fields of r as "name":"value", pairs in name order.
func allFieldsKey(r row) string {
	var b strings.Builder
	for _, name := range sortedNames(r) {
		k, _ := json.Marshal(name)
		v, _ := json.Marshal(r[name])
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
		b.WriteByte(',')
	}
	return b.String()
}

func sortedNames(r row) []string {
	names := make([]string, 0, len(r))
	for name := range r {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// applyReplace is replace and replace_regexp: in the field (rows whose
// if-filter matches, with the field non-empty), occurrences of the text, or
// matches of the regexp expanded as regexp.Expand does, the first Limit of
// them when Limit > 0; an empty text replaces nothing.
func (ev *evaluator) applyReplace(p *query.PipeReplace, rows []row) ([]row, error) {
	var re *regexp.Regexp
	if p.Regexp {
		var err error
		if re, err = regexp.Compile(p.Old); err != nil {
			return nil, err
		}
	}
	limit := -1
	if p.Limit > 0 {
		limit = int(p.Limit)
	}
	for _, r := range rows {
		if p.If != nil && !ev.match(p.If, r) {
			continue
		}
		v := r[p.Field]
		if v == "" {
			continue
		}
		if re == nil {
			if p.Old != "" {
				r.set(p.Field, strings.Replace(v, p.Old, p.New, limit))
			}
			continue
		}
		var b []byte
		prev := 0
		for _, m := range re.FindAllStringSubmatchIndex(v, limit) {
			b = append(b, v[prev:m[0]]...)
			b = re.ExpandString(b, p.New, v, m)
			prev = m[1]
		}
		r.set(p.Field, string(append(b, v[prev:]...)))
	}
	return rows, nil
}

// packRow is pack_json and pack_logfmt of one row: the non-empty fields the
// list names or matches, in its order, or all of them, _time, _stream_id,
// _stream and _msg first, then by name; as a JSON object or logfmt (a value
// with a space, a control byte, '"' or '\' quoted as a JSON string).
func packRow(r row, p *query.PipePack) string {
	var names []string
	if len(p.Fields) == 0 {
		names = sortedNames(r)
		first := map[string]int{"_time": 0, "_stream_id": 1, "_stream": 2, "_msg": 3}
		sort.SliceStable(names, func(i, j int) bool {
			ri, iok := first[names[i]]
			rj, jok := first[names[j]]
			switch {
			case iok && jok:
				return ri < rj
			case iok != jok:
				return iok
			}
			return names[i] < names[j]
		})
	} else {
		// In the list's order, a pattern's matches by name, each once.
		for _, f := range p.Fields {
			n := len(names)
			for _, name := range sortedNames(r) {
				if matchPattern(f, name) && !slices.Contains(names, name) {
					names = append(names, name)
				}
			}
			if len(names) == n && p.Logfmt && !strings.HasSuffix(f, "*") && !slices.Contains(names, f) {
				names = append(names, f) // logfmt prints a named field the row lacks: f=
			}
		}
	}
	var b strings.Builder
	if !p.Logfmt {
		b.WriteByte('{')
	}
	for i, name := range names {
		v := r[name]
		if p.Logfmt {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(name + "=")
			if strings.ContainsFunc(v, func(c rune) bool { return c <= ' ' || c == '"' || c == '\\' }) {
				b.WriteString(jsonQuote(v))
			} else {
				b.WriteString(v)
			}
			continue
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(jsonQuote(name) + ":" + jsonQuote(v))
	}
	if !p.Logfmt {
		b.WriteByte('}')
	}
	return b.String()
}

// applyRunningStats is running_stats and total_stats: rows grouped by the
// by-fields' values, the groups in the order of their keys (each value's
// length as a uvarint, then the value, compared as bytes), each group's
// rows in the order of their _time's text (VictoriaLogs'; equal times in
// input order); every row gets each function over its group's rows up to itself
// (running) or over the whole group (total).
func applyRunningStats(p *query.PipeRunningStats, rows []row) []row {
	var out []row
	for _, g := range groupsInKeyOrder(rows, p.By) {
		sort.SliceStable(g, func(i, j int) bool { return g[i]["_time"] < g[j]["_time"] })
		for i := range g {
			upto := g[:i+1]
			if p.Total {
				upto = g
			}
			c := maps.Clone(g[i])
			for _, f := range p.Funcs {
				c.set(f.Result, runningFunc(f, upto))
			}
			out = append(out, c)
		}
	}
	return out
}

// runningFunc computes one running_stats function over rows, the rows of a
// group up to the current one (the last).
func runningFunc(f query.RunningFunc, rows []row) string {
	// The values a function reads from a row: one named field's value, ""
	// when missing; otherwise the non-empty values of every field that a
	// name or pattern matches.
	values := func(r row) []string {
		if len(f.Fields) == 1 && !strings.HasSuffix(f.Fields[0], "*") {
			return []string{r[f.Fields[0]]}
		}
		var vals []string
		for _, name := range sortedNames(r) {
			if (len(f.Fields) == 0 || matchAnyPattern(f.Fields, name)) && r[name] != "" {
				vals = append(vals, r[name])
			}
		}
		return vals
	}
	switch f.Name {
	case "count":
		n := 0
		for _, r := range rows {
			if len(f.Fields) == 0 || slices.ContainsFunc(values(r), func(v string) bool { return v != "" }) {
				n++
			}
		}
		return strconv.Itoa(n)
	case "sum":
		sum, any := 0.0, false
		for _, r := range rows {
			for _, v := range values(r) {
				if x, ok := decimalNumber(v); ok {
					sum += x
					any = true
				}
			}
		}
		if !any {
			return "NaN"
		}
		return strconv.FormatFloat(sum, 'f', -1, 64)
	case "min", "max":
		best, first := "", true
		for _, r := range rows {
			for _, v := range values(r) {
				c := compareValues(v, best)
				if first || (f.Name == "min" && c < 0) || (f.Name == "max" && c > 0) {
					best, first = v, false
				}
			}
		}
		return best
	case "first":
		if int64(len(rows)) > f.Offset {
			return rows[f.Offset][f.Fields[0]]
		}
		return ""
	case "last":
		if i := int64(len(rows)) - 1 - f.Offset; i >= 0 {
			return rows[i][f.Fields[0]]
		}
		return ""
	}
	panic("naive: unknown running function " + f.Name)
}

var decimalShape = regexp.MustCompile(`^-?[0-9_]+(\.[0-9_]+)?$`)

// decimalNumber reads what VictoriaLogs' tryParseFloat64 reads, what the
// running sum adds and stddev reads: an optional
// minus, decimal digits and an optional fraction, '_' allowed between
// digits, no leading zero before other digits, no exponent; the value is
// the integer part plus the fraction's digits times a power of ten.
func decimalNumber(s string) (float64, bool) {
	if !decimalShape.MatchString(s) || len(s) > 27 {
		return 0, false
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	ip, fp, hasFrac := strings.Cut(s, ".")
	if len(ip) > 1 && ip[0] == '0' {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.ReplaceAll(ip, "_", ""), 10, 64)
	if err != nil {
		return 0, false
	}
	x := float64(n)
	if hasFrac {
		digits := strings.TrimLeft(fp, "0")
		if digits == "" {
			digits = "0"
		}
		m, err := strconv.ParseUint(strings.ReplaceAll(digits, "_", ""), 10, 64)
		if err != nil {
			return 0, false
		}
		x = math.FMA(float64(m), math.Pow10(strings.Count(fp, "_")-len(fp)), x)
	}
	if neg {
		x = -x
	}
	return x, true
}

// literalOrSubquery returns the rows of a join or union: the subquery's,
// or those written out.
func (ev *evaluator) literalOrSubquery(lit query.RowsLiteral, q *query.Query) []row {
	if q != nil {
		return ev.subquery(q)
	}
	var rows []row
	for _, fields := range lit {
		r := row{}
		for _, f := range fields {
			r.set(f.Name, f.Value)
		}
		rows = append(rows, r)
	}
	return rows
}

// applyJoin is join: each row once per row of the right side with the same
// by-values (a missing one is ""), given that row's other fields (names
// prefixed) where its own are empty; a row without a match as it is, or
// not at all with inner.
func (ev *evaluator) applyJoin(p *query.PipeJoin, rows []row) []row {
	right := ev.literalOrSubquery(p.Rows, p.Query)
	same := func(a, b row) bool {
		for _, f := range p.By {
			if a[f] != b[f] {
				return false
			}
		}
		return true
	}
	var out []row
	for _, r := range rows {
		matched := false
		for _, rr := range right {
			if !same(r, rr) {
				continue
			}
			matched = true
			c := r.clone()
			for name, v := range rr {
				if slices.Contains(p.By, name) {
					continue
				}
				if c[p.Prefix+name] == "" {
					c.set(p.Prefix+name, v)
				}
			}
			out = append(out, c)
		}
		if !matched && !p.Inner {
			out = append(out, r)
		}
	}
	return out
}
