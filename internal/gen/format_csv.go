package gen

import "strconv"

// csvHeader is the first line of CSV output; it counts toward Config.Size.
const csvHeader = "ts,level,service,host,method,path,status,latency_ms,bytes,trace_id,user_id,msg,http_proto,http_ua,http_remote_ip\n"

// appendCSV appends rec as one RFC 4180 record with the columns of
// csvHeader, ended by "\n". Null and missing values are empty cells; extra
// fields have no column and are dropped.
func appendCSV(dst []byte, rec *record) []byte {
	dst = appendTS(dst, rec.tsMillis)
	dst = append(dst, ',')
	dst = append(dst, levelNames[rec.level]...)
	dst = append(dst, ',')
	dst = append(dst, services[rec.service()]...)
	dst = append(dst, ',')
	if rec.missing != fieldHost {
		dst = append(dst, hosts[rec.host].name...)
	}
	dst = append(dst, ',')
	dst = append(dst, methods[rec.method]...)
	dst = append(dst, ',')
	dst = appendCSVField(dst, rec.path)
	dst = append(dst, ',')
	dst = strconv.AppendInt(dst, int64(rec.status), 10)
	dst = append(dst, ',')
	if rec.missing != fieldLatency {
		dst = appendMillis3(dst, rec.latencyUs)
	}
	dst = append(dst, ',')
	if rec.missing != fieldBytes {
		dst = strconv.AppendInt(dst, rec.bytes, 10)
	}
	dst = append(dst, ',')
	if rec.missing != fieldTraceID {
		dst = appendHex(dst, rec.traceHi, 16)
		dst = appendHex(dst, rec.traceLo, 16)
	}
	dst = append(dst, ',')
	if rec.userID >= 0 {
		dst = appendUserID(dst, rec.userID)
	}
	dst = append(dst, ',')
	dst = appendCSVField(dst, rec.msg)
	dst = append(dst, ',')
	if rec.hasHTTP {
		dst = append(dst, protos[rec.proto]...)
		dst = append(dst, ',')
		dst = append(dst, userAgentsCSV[rec.ua]...)
		dst = append(dst, ',')
		dst = appendIPv4(dst, rec.remoteIP)
	} else {
		dst = append(dst, ',', ',')
	}
	return append(dst, '\n')
}

// userAgentsCSV holds userAgents encoded as CSV fields.
var userAgentsCSV = func() (enc [len(userAgents)]string) {
	for i, ua := range userAgents {
		enc[i] = string(appendCSVField(nil, []byte(ua)))
	}
	return enc
}()

// appendCSVField appends s as a CSV field, quoted (with quotes doubled)
// when it contains a comma, a quote or a line break.
func appendCSVField(dst, s []byte) []byte {
	quote := false
	for _, c := range s {
		if c == ',' || c == '"' || c == '\n' || c == '\r' {
			quote = true
			break
		}
	}
	// Fast path: most fields need no quotes.
	if !quote {
		return append(dst, s...)
	}
	dst = append(dst, '"')
	start := 0
	for i, c := range s {
		if c == '"' {
			dst = append(dst, s[start:i+1]...)
			dst = append(dst, '"')
			start = i + 1
		}
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
