package naive

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spate-io/spate/internal/query"
)

// applyStats is the stats pipe: rows are grouped by the by-fields (bucketed
// where asked), and each group becomes one row holding the by-fields'
// values (an empty key is left out) and each function's result. Without
// by-fields there is exactly one group, even for no rows.
func (ev *evaluator) applyStats(p *query.PipeStats, rows []row) ([]row, error) {
	type statsGroup struct {
		key  []string
		rows []row
	}
	var groups []*statsGroup
	byKey := make(map[string]*statsGroup)
	if len(p.By) == 0 {
		g := &statsGroup{rows: rows}
		groups = append(groups, g)
	} else {
		for _, r := range rows {
			key := make([]string, len(p.By))
			for i, bf := range p.By {
				v, err := bucketValue(bf, r[bf.Name])
				if err != nil {
					return nil, err
				}
				key[i] = v
			}
			k := tupleKey(key)
			g, ok := byKey[k]
			if !ok {
				g = &statsGroup{key: key}
				byKey[k] = g
				groups = append(groups, g)
			}
			g.rows = append(g.rows, r)
		}
	}

	out := make([]row, 0, len(groups))
	for _, g := range groups {
		res := row{}
		for i, bf := range p.By {
			res.set(bf.Name, g.key[i])
		}
		for _, sf := range p.Funcs {
			in := g.rows
			if sf.If != nil {
				in = nil
				for _, r := range g.rows {
					if ev.match(sf.If, r) {
						in = append(in, r)
					}
				}
			}
			v, err := ev.statsFunc(p, sf, in)
			if err != nil {
				return nil, fmt.Errorf("cannot compute %s: %w", sf.Result, err)
			}
			res.set(sf.Result, v)
		}
		out = append(out, res)
	}
	return out, nil
}

// bucketValue returns the group key of value v for one by-field. Without a
// bucket it is v. Offset is a time zone (VictoriaLogs v1.52): a time t
// falls in the bucket starting at floor((t+Offset)/step)*step-Offset,
// printed as a time, so days with offset 3h start at 21:00 UTC; a row
// without a (parsable) _time has the empty key. Buckets named "week" start
// on Monday, "month" and "year" are calendar months and years in UTC. A
// numeric bucket ("f:10") rounds a plain number ("-12.5", not "1.5e2" or
// "+3") the same way (by 1 for month and year), and an RFC 3339 time as a
// time; any other value stays as it is.
func bucketValue(bf query.ByField, v string) (string, error) {
	if bf.Bucket == "" || v == "" {
		return v, nil
	}
	if bf.Name == "_time" {
		calendar := bf.Bucket == "month" || bf.Bucket == "year"
		if bf.BucketNs <= 0 && !calendar {
			return "", fmt.Errorf("unsupported _time bucket %q", bf.Bucket)
		}
		t, ok := parseTime(v)
		if !ok {
			return "", nil
		}
		return bucketTimeValue(bf, t, bf.BucketNs), nil
	}
	step := bf.BucketNum
	if step <= 0 {
		step = float64(bf.BucketNs)
	}
	if bf.Bucket == "month" || bf.Bucket == "year" {
		step = 1
	}
	if step <= 0 {
		return "", fmt.Errorf("unsupported bucket %q for field %q", bf.Bucket, bf.Name)
	}
	f, ok := plainNumber(v)
	if !ok {
		// An RFC 3339 time ('T' or a space, without a zone in UTC) is
		// bucketed as a time.
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999"} {
			if t, err := time.Parse(layout, v); err == nil {
				return bucketTimeValue(bf, t.UnixNano(), max(int64(step), 1)), nil
			}
		}
		return v, nil
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		// An integer is bucketed by integers: the step and the offset lose
		// their fractions (VictoriaLogs converts them to int64), and a step
		// below 1 is 1.
		istep := int64(step)
		if step < 1 {
			istep = 1
		} else if step > 1<<62 {
			istep = 1 << 62
		}
		off := int64(bf.OffsetNum)
		return strconv.FormatInt(floorDiv(n+off, istep)*istep-off, 10), nil
	}
	return formatFloat(math.Floor((f+bf.OffsetNum)/step)*step - bf.OffsetNum), nil
}

// floorDiv divides rounding towards minus infinity.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// argValues returns, for one row, the values a stats function reads: for
// each argument, the named field's value ("" if missing), or for a pattern
// ("http*", "*") the non-empty values of the matching fields in name order.
func argValues(r row, args []string) []string {
	var vals []string
	for _, a := range args {
		if !strings.HasSuffix(a, "*") {
			vals = append(vals, r[a])
			continue
		}
		for _, name := range sortedNames(r) {
			if matchPattern(a, name) && r[name] != "" {
				vals = append(vals, r[name])
			}
		}
	}
	return vals
}

// everyField returns args, or the pattern "*" when they mean every field.
func everyField(args []string) []string {
	if isAllFields(args) {
		return []string{"*"}
	}
	return args
}

// isAllFields reports whether a function's arguments mean "every field".
func isAllFields(args []string) bool {
	return len(args) == 0 || (len(args) == 1 && args[0] == "*")
}

// statsFunc computes one function over the rows of one group (already
// filtered by the function's if-filter).
func (ev *evaluator) statsFunc(p *query.PipeStats, sf query.StatsFunc, rows []row) (string, error) {
	args := sf.Fields
	switch sf.Name {
	case "count":
		if isAllFields(args) {
			return strconv.Itoa(len(rows)), nil
		}
		n := 0
		for _, r := range rows {
			for _, v := range argValues(r, args) {
				if v != "" {
					n++
					break
				}
			}
		}
		return strconv.Itoa(n), nil

	case "count_empty":
		n := 0
		for _, r := range rows {
			empty := true
			for _, v := range argValues(r, args) {
				if v != "" {
					empty = false
				}
			}
			if empty {
				n++
			}
		}
		return strconv.Itoa(n), nil

	case "count_uniq", "count_uniq_hash":
		// Distinct non-empty tuples; of one field, an integer is its
		// number ("1_000" is "1000", "01" is text) and _time its instant
		// (intKey).
		seen := make(map[string]bool)
		for _, r := range rows {
			vals := argValues(r, args)
			if allEmpty(vals) {
				continue
			}
			if len(args) == 1 {
				vals = []string{intKey(args[0], vals[0])}
			}
			seen[tupleKey(vals)] = true
		}
		n := int64(len(seen))
		if sf.Limit > 0 && n > sf.Limit {
			n = sf.Limit
		}
		return strconv.FormatInt(n, 10), nil

	case "histogram":
		// Hits per bucket of VictoriaMetrics' metrics.Histogram: the
		// numbers' log10 scaled to 18 buckets per decade from 1e-9; a
		// power of ten ends the bucket below it; below 1e-9 (zero too) and
		// from 1e18 up are one bucket each; negatives and NaN are skipped.
		hits := map[string]uint64{}
		for _, r := range rows {
			f, ok := anyNumber(r[args[0]])
			if !ok || f != f || f < 0 {
				continue
			}
			hits[histogramRange(f)]++
		}
		var ranges []string
		for k := range hits {
			ranges = append(ranges, k)
		}
		sort.Slice(ranges, func(i, j int) bool { return compareNatural(ranges[i], ranges[j]) < 0 })
		parts := []string{}
		for _, k := range ranges {
			parts = append(parts, fmt.Sprintf(`{"vmrange":"%s","hits":%d}`, k, hits[k]))
		}
		return "[" + strings.Join(parts, ",") + "]", nil

	case "json_values":
		// Each row's non-empty matching fields as a JSON object, keys in
		// byte order; rows in input order, or stably by the sort fields
		// (compareValues; a field whose texts differ but compare equal
		// ends the comparison); then the first limit ones.
		type entry struct {
			obj  string
			keys []string
		}
		var entries []entry
		for _, r := range rows {
			var parts []string
			for _, name := range sortedNames(r) {
				if r[name] == "" {
					continue
				}
				match := isAllFields(args)
				for _, a := range args {
					match = match || a == name || (strings.HasSuffix(a, "*") && matchPattern(a, name))
				}
				if match {
					parts = append(parts, jsonQuote(name)+":"+jsonQuote(r[name]))
				}
			}
			e := entry{obj: "{" + strings.Join(parts, ",") + "}"}
			for _, s := range sf.Sort {
				e.keys = append(e.keys, r[s.Name])
			}
			entries = append(entries, e)
		}
		sort.SliceStable(entries, func(i, j int) bool {
			for k, s := range sf.Sort {
				a, b := entries[i].keys[k], entries[j].keys[k]
				c := compareValues(a, b)
				if s.Desc {
					c = -c
				}
				if c != 0 {
					return c < 0
				}
				if a != b {
					return false
				}
			}
			return false
		})
		if sf.Limit > 0 && int64(len(entries)) > sf.Limit {
			entries = entries[:sf.Limit]
		}
		var objs []string
		for _, e := range entries {
			objs = append(objs, e.obj)
		}
		return "[" + strings.Join(objs, ",") + "]", nil

	case "sum", "avg":
		sum, count := 0.0, 0
		for _, r := range rows {
			for _, v := range argValues(r, args) {
				if f, ok := anyNumber(v); ok {
					sum += f
					count++
				}
			}
		}
		if count == 0 {
			return "NaN", nil
		}
		if sf.Name == "avg" {
			return formatFloat(sum / float64(count)), nil
		}
		return formatFloat(sum), nil

	case "min", "max":
		// Empty values take part: min over a field some rows lack is "".
		first := true
		best := ""
		for _, r := range rows {
			for _, v := range argValues(r, args) {
				c := compareValues(v, best)
				if first || (sf.Name == "min" && c < 0) || (sf.Name == "max" && c > 0) {
					best, first = v, false
				}
			}
		}
		return best, nil

	case "median", "quantile":
		phi := sf.Phi
		if sf.Name == "median" {
			phi = 0.5
		}
		var vals []string
		for _, r := range rows {
			vals = append(vals, argValues(r, args)...)
		}
		return quantile(vals, phi), nil

	case "values", "uniq_values":
		var vals []string
		seen := make(map[string]bool)
		for _, r := range rows {
			for _, v := range argValues(r, args) {
				if sf.Name == "uniq_values" {
					if v == "" || seen[v] {
						continue
					}
					seen[v] = true
				}
				vals = append(vals, v) // values keeps empty values
			}
		}
		if sf.Name == "uniq_values" {
			sort.SliceStable(vals, func(i, j int) bool { return compareValues(vals[i], vals[j]) < 0 })
		}
		if sf.Limit > 0 && int64(len(vals)) > sf.Limit {
			vals = vals[:sf.Limit]
		}
		if vals == nil {
			vals = []string{}
		}
		return jsonStrings(vals), nil

	case "row_min", "row_max":
		if len(args) == 0 {
			return "", fmt.Errorf("missing source field")
		}
		src, outFields := args[0], args[1:]
		var best row
		for _, r := range rows {
			v := r[src]
			if v == "" {
				continue
			}
			if best == nil {
				best = r
				continue
			}
			c := compareValues(v, best[src])
			if (sf.Name == "row_min" && c < 0) || (sf.Name == "row_max" && c > 0) {
				best = r
			}
		}
		return rowJSON(best, outFields), nil

	case "field_min", "field_max":
		// The value of the second field in the first row holding the
		// smallest (largest) non-empty value of the first.
		if len(args) != 2 {
			return "", fmt.Errorf("want two fields")
		}
		var best row
		for _, r := range rows {
			v := r[args[0]]
			if v == "" {
				continue
			}
			c := 0
			if best != nil {
				c = compareValues(v, best[args[0]])
			}
			if best == nil || (sf.Name == "field_min" && c < 0) || (sf.Name == "field_max" && c > 0) {
				best = r
			}
		}
		return best[args[1]], nil

	case "any":
		// The first row's non-empty value.
		for _, r := range rows {
			if v := r[args[0]]; v != "" {
				return v, nil
			}
		}
		return "", nil

	case "row_any":
		// The first row with a non-empty value of one of the fields: those
		// fields' non-empty values, by name.
		for _, r := range rows {
			picked := map[string]string{}
			for name, v := range r {
				if v == "" {
					continue
				}
				for _, a := range args {
					if isAllFields(args) || a == name || (strings.HasSuffix(a, "*") && matchPattern(a, name)) {
						picked[name] = v
					}
				}
				if isAllFields(args) {
					picked[name] = v
				}
			}
			if len(picked) > 0 {
				var parts []string
				for _, name := range sortedNames(picked) {
					parts = append(parts, jsonQuote(name)+":"+jsonQuote(picked[name]))
				}
				return "{" + strings.Join(parts, ",") + "}", nil
			}
		}
		return "{}", nil

	case "stddev":
		// Population standard deviation of the plain decimals, two passes.
		var nums []float64
		for _, r := range rows {
			for _, v := range argValues(r, everyField(args)) {
				if f, ok := decimalNumber(v); ok {
					nums = append(nums, f)
				}
			}
		}
		if len(nums) == 0 {
			return "NaN", nil
		}
		mean := 0.0
		for _, f := range nums {
			mean += f
		}
		mean /= float64(len(nums))
		q := 0.0
		for _, f := range nums {
			q += (f - mean) * (f - mean)
		}
		return formatFloat(math.Sqrt(q / float64(len(nums)))), nil

	case "rate_sum":
		seconds, err := ev.rateSeconds(p)
		if err != nil {
			return "", err
		}
		sum, count := 0.0, 0
		for _, r := range rows {
			for _, v := range argValues(r, everyField(args)) {
				if f, ok := anyNumber(v); ok {
					sum += f
					count++
				}
			}
		}
		if count == 0 {
			return "NaN", nil
		}
		return formatFloat(sum / seconds), nil

	case "rate":
		seconds, err := ev.rateSeconds(p)
		if err != nil {
			return "", err
		}
		return formatFloat(float64(len(rows)) / seconds), nil

	case "sum_len":
		n := 0
		for _, r := range rows {
			for _, v := range argValues(r, args) {
				n += len(v)
			}
		}
		return strconv.Itoa(n), nil
	}
	return "", fmt.Errorf("unsupported stats function %q", sf.Name)
}

func allEmpty(vals []string) bool {
	for _, v := range vals {
		if v != "" {
			return false
		}
	}
	return true
}

// quantile is the discrete phi-quantile of vals: sorted[int(phi*n)] with no
// interpolation, empty values included (they sort lowest); phi <= 0 gives the
// minimum and phi >= 1 the maximum. Exact: VictoriaLogs samples at most
// 10,000 values per worker.
func quantile(vals []string, phi float64) string {
	if len(vals) == 0 {
		return ""
	}
	sorted := append([]string(nil), vals...)
	sort.SliceStable(sorted, func(i, j int) bool { return compareValues(sorted[i], sorted[j]) < 0 })
	switch {
	case phi <= 0:
		return sorted[0]
	case phi >= 1:
		return sorted[len(sorted)-1]
	}
	idx := int(phi * float64(len(sorted)))
	if idx >= len(sorted) {
		idx = len(sorted) - 1
	}
	return sorted[idx]
}

// rowJSON prints the chosen row of row_min/row_max as a JSON object: the
// requested fields in the requested order (each once; a named field the row
// lacks is "" ), or every non-empty field in name order if none were
// requested. No row gives "{}".
func rowJSON(r row, fields []string) string {
	var b strings.Builder
	b.WriteByte('{')
	n := 0
	add := func(name, v string) {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		b.WriteString(jsonQuote(name))
		b.WriteByte(':')
		b.WriteString(jsonQuote(v))
	}
	if r != nil {
		seen := make(map[string]bool)
		if isAllFields(fields) {
			// Every field, in VictoriaLogs' order: _time, _stream_id,
			// _stream, _msg, then the others by name.
			for _, name := range []string{"_time", "_stream_id", "_stream", "_msg"} {
				if r[name] != "" {
					seen[name] = true
					add(name, r[name])
				}
			}
			fields = []string{"*"}
		}
		for _, f := range fields {
			if !strings.HasSuffix(f, "*") {
				if !seen[f] {
					seen[f] = true
					add(f, r[f])
				}
				continue
			}
			for _, name := range sortedNames(r) {
				if matchPattern(f, name) && !seen[name] && r[name] != "" {
					seen[name] = true
					add(name, r[name])
				}
			}
		}
	}
	b.WriteByte('}')
	return b.String()
}

// rateSeconds is what rate() divides by: the step of a _time bucket among
// the by-fields, else the length of the query's top-level _time range
// (both bounds included, so [A, B) over one minute is 60 seconds).
func (ev *evaluator) rateSeconds(p *query.PipeStats) (float64, error) {
	for _, bf := range p.By {
		if bf.Name == "_time" && bf.BucketNs > 0 {
			return float64(bf.BucketNs) / 1e9, nil
		}
	}
	if !ev.hasTimeRange || ev.timeMin == math.MinInt64 || ev.timeMax == math.MaxInt64 || ev.timeMax < ev.timeMin {
		return 0, fmt.Errorf("rate() needs a bounded _time filter at the top of the query")
	}
	return float64(ev.timeMax-ev.timeMin+1) / 1e9, nil
}

// intKey is count_uniq_hash's identity of the value v of field: "t" and
// the Unix nanoseconds of a _time, "u" or "n" and the number of a
// non-negative or negative integer (digits with optional '_', no leading
// zero), else "s" and the text.
func intKey(field, v string) string {
	if field == "_time" {
		if t, ok := parseTime(v); ok {
			return "u" + strconv.FormatUint(uint64(t), 10)
		}
	}
	digits := func(p string) (uint64, bool) {
		if p == "" || (len(p) > 1 && p[0] == '0') || strings.Trim(p, "_0123456789") != "" || strings.Trim(p, "_") == "" {
			return 0, false
		}
		n, err := strconv.ParseUint(strings.ReplaceAll(p, "_", ""), 10, 64)
		return n, err == nil
	}
	if n, ok := digits(v); ok {
		return "u" + strconv.FormatUint(n, 10)
	}
	if rest, ok := strings.CutPrefix(v, "-"); ok {
		if n, ok := digits(rest); ok && n <= 1<<63 {
			return "n" + strconv.FormatUint(n, 10)
		}
	}
	return "s" + v
}

// histogramRange is the vmrange of the bucket of the non-negative number
// f: the bounds start at 1e-9 and are multiplied by 10^(1/18) once per
// bucket, printed as %.3e.
func histogramRange(f float64) string {
	x := (math.Log10(f) + 9) * 18
	if x < 0 {
		return "0...1.000e-09"
	}
	if x >= 27*18 {
		return "1.000e+18...+Inf"
	}
	idx := int(x)
	if float64(idx) == x && idx > 0 {
		idx--
	}
	lo := 1e-9
	for range idx {
		lo *= math.Pow(10, 1.0/18)
	}
	return fmt.Sprintf("%.3e...%.3e", lo, lo*math.Pow(10, 1.0/18))
}

// bucketTimeValue is the start of the bucket of bf that holds the time t
// (step ns, or a calendar month or year in UTC; the offset a time zone;
// weeks from Monday), as _time prints.
func bucketTimeValue(bf query.ByField, t, step int64) string {
	off := bf.Offset
	switch bf.Bucket {
	case "month", "year":
		u := time.Unix(0, t+off).UTC()
		start := time.Date(u.Year(), u.Month(), 1, 0, 0, 0, 0, time.UTC)
		if bf.Bucket == "year" {
			start = time.Date(u.Year(), time.January, 1, 0, 0, 0, 0, time.UTC)
		}
		return formatTime(start.UnixNano() - off)
	case "week":
		off += 3 * 24 * 3600 * 1e9
	}
	return formatTime(floorDiv(t+off, step)*step - off)
}
