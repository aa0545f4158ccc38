package gen

import "strconv"

// appendLogfmt appends rec as one logfmt line: key=value pairs in the
// NDJSON key order, the http object flattened to http.proto, http.ua and
// http.remote_ip, ended by "\n". Null and missing values are left out.
// Values are quoted, with '"' and '\' escaped, when they are empty or
// contain a space, '=', '"', '\' or a control character.
func appendLogfmt(dst []byte, rec *record) []byte {
	dst = append(dst, "ts="...)
	dst = appendTS(dst, rec.tsMillis)
	dst = append(dst, " level="...)
	dst = append(dst, levelNames[rec.level]...)
	dst = append(dst, " service="...)
	dst = append(dst, services[rec.service()]...)
	if rec.missing != fieldHost {
		dst = append(dst, " host="...)
		dst = append(dst, hosts[rec.host].name...)
	}
	dst = append(dst, " method="...)
	dst = append(dst, methods[rec.method]...)
	dst = append(dst, " path="...)
	dst = appendLogfmtValue(dst, rec.path)
	dst = append(dst, " status="...)
	dst = strconv.AppendInt(dst, int64(rec.status), 10)
	if rec.missing != fieldLatency {
		dst = append(dst, " latency_ms="...)
		dst = appendMillis3(dst, rec.latencyUs)
	}
	if rec.missing != fieldBytes {
		dst = append(dst, " bytes="...)
		dst = strconv.AppendInt(dst, rec.bytes, 10)
	}
	if rec.missing != fieldTraceID {
		dst = append(dst, " trace_id="...)
		dst = appendHex(dst, rec.traceHi, 16)
		dst = appendHex(dst, rec.traceLo, 16)
	}
	if rec.userID >= 0 {
		dst = append(dst, " user_id="...)
		dst = appendUserID(dst, rec.userID)
	}
	dst = append(dst, " msg="...)
	dst = appendLogfmtValue(dst, rec.msg)
	if rec.hasHTTP {
		dst = append(dst, " http.proto="...)
		dst = append(dst, protos[rec.proto]...)
		dst = append(dst, " http.ua="...)
		dst = append(dst, userAgentsLogfmt[rec.ua]...)
		dst = append(dst, " http.remote_ip="...)
		dst = appendIPv4(dst, rec.remoteIP)
	}
	switch rec.extra {
	case extraRetry:
		dst = append(dst, " retry="...)
		dst = strconv.AppendInt(dst, int64(rec.extraVal), 10)
	case extraRegion:
		dst = append(dst, " region="...)
		dst = append(dst, hosts[rec.host].region...)
	case extraTags:
		dst = append(dst, " tags="...)
		dst = append(dst, tagSetLogfmt[rec.extraVal]...)
	}
	return append(dst, '\n')
}

// userAgentsLogfmt holds userAgents encoded as logfmt values.
var userAgentsLogfmt = func() (enc [len(userAgents)]string) {
	for i, ua := range userAgents {
		enc[i] = string(appendLogfmtValue(nil, []byte(ua)))
	}
	return enc
}()

// appendLogfmtValue appends s as a logfmt value, quoted when needed.
func appendLogfmtValue(dst, s []byte) []byte {
	quote := len(s) == 0
	for _, c := range s {
		if c <= ' ' || c == '=' || c == '"' || c == '\\' || c == 0x7f {
			quote = true
			break
		}
	}
	// Fast path: bare value.
	if !quote {
		return append(dst, s...)
	}
	// Slow path: quote, escaping '"' and '\' as Go and JSON strings do.
	return appendJSONString(dst, s)
}
