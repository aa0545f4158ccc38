package gen

import "strconv"

// Mixed layouts. Real log files interleave services that log different
// fields in different orders. With Config.Layouts = N > 1, the line of a
// record from service s takes layout s mod N: layout 0 is the usual one
// (appendNDJSON); layout k > 0 puts the first eleven fields (ts through
// user_id) in an order of its own, a fixed shuffle that depends only on k,
// and odd layouts start with a "pod" field, so that layouts differ before
// the service field too. msg, http and the extra field stay at the end.
// The values are those of the same record in layout 0.

// maxLayouts bounds Config.Layouts.
const maxLayouts = 16

// layoutField appends one field of a record, with its leading comma when
// first is false.
type layoutField func(dst []byte, rec *record, first bool) []byte

func sep(dst []byte, first bool) []byte {
	if first {
		return dst
	}
	return append(dst, ',')
}

// headFields are the fields a layout may reorder, in layout 0's order. A
// field that the record misses appends nothing.
var headFields = [...]layoutField{
	func(dst []byte, rec *record, first bool) []byte {
		dst = append(sep(dst, first), `"ts":"`...)
		return append(appendTS(dst, rec.tsMillis), '"')
	},
	func(dst []byte, rec *record, first bool) []byte {
		dst = append(sep(dst, first), `"level":"`...)
		return append(append(dst, levelNames[rec.level]...), '"')
	},
	func(dst []byte, rec *record, first bool) []byte {
		dst = append(sep(dst, first), `"service":"`...)
		return append(append(dst, services[rec.service()]...), '"')
	},
	func(dst []byte, rec *record, first bool) []byte {
		if rec.missing == fieldHost {
			return dst
		}
		dst = append(sep(dst, first), `"host":"`...)
		return append(append(dst, hosts[rec.host].name...), '"')
	},
	func(dst []byte, rec *record, first bool) []byte {
		dst = append(sep(dst, first), `"method":"`...)
		return append(append(dst, methods[rec.method]...), '"')
	},
	func(dst []byte, rec *record, first bool) []byte {
		dst = append(sep(dst, first), `"path":`...)
		return appendJSONString(dst, rec.path)
	},
	func(dst []byte, rec *record, first bool) []byte {
		dst = append(sep(dst, first), `"status":`...)
		return strconv.AppendInt(dst, int64(rec.status), 10)
	},
	func(dst []byte, rec *record, first bool) []byte {
		if rec.missing == fieldLatency {
			return dst
		}
		dst = append(sep(dst, first), `"latency_ms":`...)
		return appendMillis3(dst, rec.latencyUs)
	},
	func(dst []byte, rec *record, first bool) []byte {
		if rec.missing == fieldBytes {
			return dst
		}
		dst = append(sep(dst, first), `"bytes":`...)
		return strconv.AppendInt(dst, rec.bytes, 10)
	},
	func(dst []byte, rec *record, first bool) []byte {
		if rec.missing == fieldTraceID {
			return dst
		}
		dst = append(sep(dst, first), `"trace_id":"`...)
		dst = appendHex(dst, rec.traceHi, 16)
		return append(appendHex(dst, rec.traceLo, 16), '"')
	},
	func(dst []byte, rec *record, first bool) []byte {
		if rec.userID < 0 {
			return append(sep(dst, first), `"user_id":null`...)
		}
		dst = append(sep(dst, first), `"user_id":"`...)
		return append(appendUserID(dst, rec.userID), '"')
	},
}

// layoutOrders[k] is layout k's order of headFields (k >= 1).
var layoutOrders = func() (o [maxLayouts][len(headFields)]uint8) {
	for k := range o {
		for i := range o[k] {
			o[k][i] = uint8(i)
		}
		if k == 0 {
			continue
		}
		r := rng{s: mix64(uint64(k) * 0x9e3779b97f4a7c15)}
		for i := len(o[k]) - 1; i > 0; i-- {
			j := r.intn(i + 1)
			o[k][i], o[k][j] = o[k][j], o[k][i]
		}
	}
	return o
}()

// appendNDJSONLayout appends rec as a JSON line in layout k (see above).
func appendNDJSONLayout(dst []byte, rec *record, k int) []byte {
	if k == 0 {
		return appendNDJSON(dst, rec)
	}
	dst = append(dst, '{')
	first := true
	if k%2 == 1 {
		dst = append(dst, `"pod":"`...)
		dst = append(dst, services[rec.service()]...)
		dst = append(dst, '-')
		dst = strconv.AppendInt(dst, int64(rec.host), 10)
		dst = append(dst, '"')
		first = false
	}
	for _, i := range layoutOrders[k] {
		before := len(dst)
		dst = headFields[i](dst, rec, first)
		first = first && len(dst) == before
	}
	return appendNDJSONTail(dst, rec)
}
