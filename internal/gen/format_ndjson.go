package gen

import "strconv"

// appendNDJSON appends rec as one JSON object and a newline. Keys come in a
// fixed order: ts, level, service, host, method, path, status, latency_ms,
// bytes, trace_id, user_id, msg, http, then the extra field if any. A
// missing field is left out entirely; a null user_id is written as null.
// The fields up to user_id are headFields (layouts.go), which the other
// layouts put in other orders; the rest is appendNDJSONTail. (Looping over
// headFields costs about 3% of BenchmarkAppendBlock/ndjson against writing
// the fields out here: 1.10 against 1.13 GB/s.)
func appendNDJSON(dst []byte, rec *record) []byte {
	dst = append(dst, '{')
	for i, f := range headFields {
		dst = f(dst, rec, i == 0) // ts, always there, is first
	}
	return appendNDJSONTail(dst, rec)
}

// appendNDJSONTail appends the fields from msg on and the line's end.
func appendNDJSONTail(dst []byte, rec *record) []byte {
	dst = append(dst, `,"msg":`...)
	dst = appendJSONString(dst, rec.msg)
	if rec.hasHTTP {
		dst = append(dst, `,"http":{"proto":"`...)
		dst = append(dst, protos[rec.proto]...)
		dst = append(dst, `","ua":"`...)
		dst = append(dst, userAgents[rec.ua]...)
		dst = append(dst, `","remote_ip":"`...)
		dst = appendIPv4(dst, rec.remoteIP)
		dst = append(dst, `"}`...)
	}
	switch rec.extra {
	case extraRetry:
		dst = append(dst, `,"retry":`...)
		dst = strconv.AppendInt(dst, int64(rec.extraVal), 10)
	case extraRegion:
		dst = append(dst, `,"region":"`...)
		dst = append(dst, hosts[rec.host].region...)
		dst = append(dst, '"')
	case extraTags:
		dst = append(dst, `,"tags":[`...)
		for i, tag := range tagSets[rec.extraVal] {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '"')
			dst = append(dst, tag...)
			dst = append(dst, '"')
		}
		dst = append(dst, ']')
	}
	return append(dst, "}\n"...)
}

// jsonEscape[c] is the escape for byte c in a JSON string, or "" when c
// stands for itself; jsonSpecial[c] says which. Bytes >= 0x80 are copied:
// strings are valid UTF-8.
var jsonEscape, jsonSpecial = func() (esc [256]string, special [256]bool) {
	for c := range 0x20 {
		esc[c] = `\u00` + string(hexDigits[c>>4]) + string(hexDigits[c&0xf])
	}
	esc['\n'], esc['\r'], esc['\t'] = `\n`, `\r`, `\t`
	esc['"'], esc['\\'] = `\"`, `\\`
	for c, e := range esc {
		special[c] = e != ""
	}
	return esc, special
}()

// appendJSONString appends s, which must be valid UTF-8, as a quoted JSON
// string.
func appendJSONString(dst, s []byte) []byte {
	dst = append(dst, '"')
	start := 0
	for i, c := range s {
		if jsonSpecial[c] {
			dst = append(dst, s[start:i]...)
			dst = append(dst, jsonEscape[c]...)
			start = i + 1
		}
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
