package gen

import (
	"math"
	"strconv"
	"time"
)

// record is one log event before formatting. Numbers are kept as integers
// so that the formatters only append digits.
type record struct {
	tsMillis  int64 // Unix milliseconds
	level     uint8
	host      uint16 // index into hosts; the service is host/hostsPerService
	method    uint8
	status    int
	latencyUs int64 // printed as milliseconds with 3 decimals
	bytes     int64
	traceHi   uint64
	traceLo   uint64
	userID    int32 // < 0 means null

	// path and msg alias the recordGen's scratch buffers and are valid
	// until its next draw. msg is raw text: formatters escape it.
	path []byte
	msg  []byte

	hasHTTP  bool
	proto    uint8
	ua       uint8
	remoteIP uint32

	missing  field // a field left out of this line, or fieldNone
	extra    extra // an extra field added to this line, or extraNone
	extraVal int   // retry count or tagSets index
}

func (r *record) service() int { return int(r.host) / hostsPerService }

// field names a field that a line may miss (~1% of lines miss one).
type field uint8

const (
	fieldNone field = iota
	fieldHost
	fieldLatency
	fieldBytes
	fieldTraceID
	fieldCount
)

// extra names an additional field (~1% of lines carry one).
type extra uint8

const (
	extraNone   extra = iota
	extraRetry        // "retry":3
	extraRegion       // "region":"eu-west-1", the host's region
	extraTags         // "tags":["beta","canary"]
	extraCount
)

// Timestamps: line i gets baseMillis + i*stepMillis + jitter, jitter in
// [0, stepMillis), so they never decrease and depend only on the line index
// and the block's random stream.
var baseMillis = time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC).UnixMilli()

const stepMillis = 10

var (
	statusOK     = []int{200, 204, 301, 302, 304, 400, 404}
	statusOKPick = newPickTable([]float64{85, 3, 1, 3, 5, 1, 2})

	status5xx     = []int{500, 502, 503, 504}
	status5xxPick = newPickTable([]float64{45, 15, 25, 15})

	status4xx     = []int{400, 401, 403, 404, 409, 422, 429}
	status4xxPick = newPickTable([]float64{25, 10, 8, 30, 8, 9, 10})

	// logServiceLatency is log(serviceLatency), the mu of each service's
	// log-normal latency.
	logServiceLatency = func() (l [len(services)]float64) {
		for i, ms := range serviceLatency {
			l[i] = math.Log(ms)
		}
		return l
	}()
)

// recordGen draws records. Each worker owns one; it is not safe for
// concurrent use. After warm-up it does not allocate.
type recordGen struct {
	r       rng
	rec     record
	pathBuf []byte
	msgBuf  []byte
}

// draw fills g.rec with the record for global line index idx, consuming
// g.r. The caller seeds g.r once per block and then draws the block's lines
// in order, so the record is a pure function of (seed, idx).
func (g *recordGen) draw(idx int64) {
	r, rec := &g.r, &g.rec

	rec.tsMillis = baseMillis + idx*stepMillis + int64(r.intn(stepMillis))
	lvl := r.pick(levelPick)
	rec.level = uint8(lvl)
	svc := r.pick(servicePick)
	rec.host = uint16(svc*hostsPerService + r.intn(hostsPerService))
	rec.method = uint8(r.pick(methodPick))
	g.pathBuf = appendTemplate(g.pathBuf[:0], pathTemplates[r.pick(pathPick)], r)
	rec.path = g.pathBuf

	// Status: 5xx goes with level=error and the reverse (see
	// TestNDJSON for the bounds).
	u := r.intn(100)
	switch lvl {
	case levelError:
		if u < 82 {
			rec.status = status5xx[r.pick(status5xxPick)]
		} else {
			rec.status = status4xx[r.pick(status4xxPick)]
		}
	case levelWarn:
		switch {
		case u < 8:
			rec.status = 503
		case u < 30:
			rec.status = 200
		default:
			rec.status = status4xx[r.pick(status4xxPick)]
		}
	default:
		rec.status = statusOK[r.pick(statusOKPick)]
		if rec.status == 200 && rec.method == methodPOST && u < 50 {
			rec.status = 201
		}
	}

	// Latency: log-normal around the service's median, slower for warnings
	// and errors, plus 0.5% outliers 5-50x slower for a long tail.
	mu := logServiceLatency[svc]
	switch lvl {
	case levelError:
		mu += 1.5
	case levelWarn:
		mu += 0.8
	}
	ms := math.Exp(mu + 0.9*r.norm())
	if r.intn(200) == 0 {
		ms *= 5 + 45*r.float()
	}
	rec.latencyUs = int64(min(ms, 600_000) * 1000)

	switch {
	case rec.status == 204 || rec.status == 304:
		rec.bytes = 0
	case rec.status >= 400:
		rec.bytes = int64(60 + r.intn(400))
	default:
		rec.bytes = int64(math.Exp(7.5 + 1.3*r.norm()))
	}

	rec.traceHi, rec.traceLo = r.next(), r.next()
	if r.intn(10) == 0 {
		rec.userID = -1
	} else {
		rec.userID = int32(1 + r.intn(99_999))
	}

	// Message: ~2% with quotes, ~2% with non-ASCII text, else by level.
	var t template
	switch u := r.intn(1000); {
	case u < 20:
		t = msgQuoted[r.intn(len(msgQuoted))]
	case u < 40:
		t = msgUnicode[r.intn(len(msgUnicode))]
	default:
		ts := msgByLevel[lvl]
		t = ts[r.intn(len(ts))]
	}
	g.msgBuf = appendTemplate(g.msgBuf[:0], t, r)
	g.msgBuf = appendTemplate(g.msgBuf, msgSuffixes[r.intn(len(msgSuffixes))], r)
	rec.msg = g.msgBuf

	rec.hasHTTP = r.intn(10) != 0
	if rec.hasHTTP {
		rec.proto = uint8(r.pick(protoPick))
		rec.ua = uint8(r.pick(uaPick))
		rec.remoteIP = 10<<24 | uint32(r.next()>>40)
	}

	rec.missing, rec.extra = fieldNone, extraNone
	switch r.intn(100) {
	case 0:
		rec.missing = field(1 + r.intn(int(fieldCount)-1))
	case 1:
		rec.extra = extra(1 + r.intn(int(extraCount)-1))
		switch rec.extra {
		case extraRetry:
			rec.extraVal = 1 + r.intn(5)
		case extraTags:
			rec.extraVal = r.intn(len(tagSets))
		}
	}
}

// appendTemplate appends t with its slots filled from r.
func appendTemplate(dst []byte, t template, r *rng) []byte {
	for _, p := range t {
		switch p.slot {
		case slotNone:
			dst = append(dst, p.lit...)
		case slotID:
			dst = strconv.AppendInt(dst, int64(1+r.intn(999_999)), 10)
		case slotHex:
			dst = appendHex(dst, r.next(), 8)
		case slotN:
			dst = strconv.AppendInt(dst, int64(1+r.intn(99)), 10)
		case slotMs:
			// Log-uniform in [1, 10000).
			dst = strconv.AppendInt(dst, int64(math.Exp(r.float()*9.21)), 10)
		case slotCents:
			dst = append2(dst, r.intn(100))
		case slotUser:
			dst = append(dst, "u_"...)
			dst = strconv.AppendInt(dst, int64(1+r.intn(99_999)), 10)
		default:
			ws := slotWords[p.slot]
			dst = append(dst, ws[r.intn(len(ws))]...)
		}
	}
	return dst
}

const hexDigits = "0123456789abcdef"

// appendHex appends the low n (<= 16) hex digits of v.
func appendHex(dst []byte, v uint64, n int) []byte {
	for i := n - 1; i >= 0; i-- {
		dst = append(dst, hexDigits[v>>(uint(i)*4)&0xf])
	}
	return dst
}

// append2 appends v (0..99) as two digits.
func append2(dst []byte, v int) []byte {
	return append(dst, byte('0'+v/10), byte('0'+v%10))
}

// appendTS appends ms (Unix milliseconds, years 1000..9999) as RFC 3339 UTC
// with milliseconds: 2026-01-02T03:04:05.678Z. It does the civil-date
// arithmetic itself because time.Time.AppendFormat costs several times
// more (BenchmarkAppendTS).
func appendTS(dst []byte, ms int64) []byte {
	days, msOfDay := ms/86_400_000, ms%86_400_000
	if msOfDay < 0 {
		days--
		msOfDay += 86_400_000
	}
	y, m, d := civilFromDays(days)
	dst = append2(dst, int(y/100))
	dst = append2(dst, int(y%100))
	dst = append(dst, '-')
	dst = append2(dst, int(m))
	dst = append(dst, '-')
	dst = append2(dst, int(d))
	dst = append(dst, 'T')
	secs := msOfDay / 1000
	dst = append2(dst, int(secs/3600))
	dst = append(dst, ':')
	dst = append2(dst, int(secs/60%60))
	dst = append(dst, ':')
	dst = append2(dst, int(secs%60))
	dst = append(dst, '.')
	frac := int(msOfDay % 1000)
	dst = append(dst, byte('0'+frac/100))
	dst = append2(dst, frac%100)
	return append(dst, 'Z')
}

// civilFromDays converts days since 1970-01-01 to a proleptic Gregorian
// date (Howard Hinnant's days_from_civil inverse).
func civilFromDays(z int64) (y, m, d int64) {
	z += 719_468
	era := z / 146_097
	if z < 0 && z%146_097 != 0 {
		era--
	}
	doe := z - era*146_097
	yoe := (doe - doe/1460 + doe/36_524 - doe/146_096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	if mp < 10 {
		m = mp + 3
	} else {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// appendMillis3 appends us (microseconds, >= 0) as milliseconds with
// exactly three decimals: 12345 -> "12.345".
func appendMillis3(dst []byte, us int64) []byte {
	dst = strconv.AppendInt(dst, us/1000, 10)
	frac := int(us % 1000)
	return append(dst, '.', byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10))
}

// appendIPv4 appends ip in dotted-quad form.
func appendIPv4(dst []byte, ip uint32) []byte {
	dst = strconv.AppendInt(dst, int64(ip>>24), 10)
	dst = append(dst, '.')
	dst = strconv.AppendInt(dst, int64(ip>>16&0xff), 10)
	dst = append(dst, '.')
	dst = strconv.AppendInt(dst, int64(ip>>8&0xff), 10)
	dst = append(dst, '.')
	return strconv.AppendInt(dst, int64(ip&0xff), 10)
}

// appendUserID appends "u_<id>".
func appendUserID(dst []byte, id int32) []byte {
	dst = append(dst, "u_"...)
	return strconv.AppendInt(dst, int64(id), 10)
}
