package fileserve

import (
	"strconv"
	"strings"
)

// What to do with a Range header (RFC 9110 14.1-14.2).
const (
	rangeServe         = iota // pass the (normalized) header to http.ServeContent
	rangeIgnore               // not understood or not valid: send the whole file (200)
	rangeUnsatisfiable        // no range overlaps the file: 416, Content-Range: bytes */size
)

// normalizeRange checks a Range header against a file of size bytes. A
// unit other than bytes, a syntax error or a last-pos before its first-pos
// makes the header ignored, as RFC 9110 allows and nginx does; more than
// maxRanges ranges too (nginx's max_ranges). Ranges that cannot overlap the
// file (a first-pos at or past its end, even past int64, or a suffix of 0)
// are dropped; if none is left the answer is 416. A last-pos past the end
// (past int64 too) is cut to the end. The header returned holds only ranges
// http.ServeContent parses as meant.
func normalizeRange(h string, size int64, maxRanges int) (string, int) {
	unit, set, ok := strings.Cut(h, "=")
	if !ok || !strings.EqualFold(strings.TrimSpace(unit), "bytes") {
		return "", rangeIgnore
	}
	specs := strings.Split(set, ",")
	if len(specs) > maxRanges {
		return "", rangeIgnore
	}
	var out []string
	for _, spec := range specs {
		spec = strings.TrimSpace(spec)
		first, last, ok := strings.Cut(spec, "-")
		if !ok || !digits(last) && last != "" || !digits(first) && first != "" || first == "" && last == "" {
			return "", rangeIgnore
		}
		if first == "" { // a suffix: the last n bytes
			n, err := strconv.ParseInt(last, 10, 64)
			if err != nil { // past int64: the whole file
				n = size
			}
			if n == 0 || size == 0 {
				continue
			}
			out = append(out, "-"+strconv.FormatInt(min(n, size), 10))
			continue
		}
		start, err := strconv.ParseInt(first, 10, 64)
		if last != "" {
			end, err2 := strconv.ParseInt(last, 10, 64)
			if err == nil && err2 == nil && end < start || err != nil && err2 == nil {
				return "", rangeIgnore // last-pos before first-pos
			}
			if err2 != nil {
				end = size - 1
			}
			last = strconv.FormatInt(min(end, size-1), 10)
		}
		if err != nil || start >= size {
			continue // cannot overlap
		}
		out = append(out, strconv.FormatInt(start, 10)+"-"+last)
	}
	if len(out) == 0 {
		return "", rangeUnsatisfiable
	}
	return "bytes=" + strings.Join(out, ","), rangeServe
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
