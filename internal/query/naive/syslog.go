package naive

import (
	"strconv"
	"strings"
	"time"

	"github.com/spate-io/spate/internal/query"
)

// applyUnpackSyslog is unpack_syslog: the fields of each row's syslog
// message, set with the prefix (with keep_original_fields a field the row
// already has with a value stays).
func (ev *evaluator) applyUnpackSyslog(p *query.PipeUnpackSyslog, rows []row) []row {
	now := time.Unix(0, p.Now)
	// No time zone option here: the local zone, which the engine uses too
	// when the run does not name one.
	loc := time.Local
	_, off := now.In(loc).Zone()
	zoneless := time.FixedZone("", off)
	if p.Offset != "" {
		loc = time.FixedZone("", int(p.OffsetNs/int64(time.Second)))
	}
	sc := syslogClock{year: now.UTC().Year(), now: now, loc: loc, zoneless: zoneless}
	for _, r := range rows {
		if p.If != nil && !ev.match(p.If, r) {
			continue
		}
		fields := sc.parse(strings.TrimLeft(r[orMsg(p.From)], " \t\n\r"))
		orig := r.clone()
		for _, f := range fields {
			name := p.ResultPrefix + f.name
			if p.KeepOriginalFields && orig[name] != "" {
				continue
			}
			r.set(name, f.value)
		}
	}
	return rows
}

// syslogClock holds what RFC 3164 timestamps are read with.
type syslogClock struct {
	year     int
	now      time.Time
	loc      *time.Location // of "Mmm dd hh:mm:ss"
	zoneless *time.Location // of RFC 3339 times without a zone
}

var syslogFacilities = []string{"kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news", "uucp", "cron",
	"authpriv", "ftp", "ntp", "security", "console", "solaris-cron",
	"local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7"}

var syslogLevels = []string{"emerg", "alert", "critical", "error", "warning", "notice", "info", "debug"}

// parse splits one syslog message into fields: "<PRI>" (optional), then
// "1 " and an RFC 5424 header, or an RFC 3164 one. Written plainly for
// well-formed messages; CEF and CEE messages stay messages here.
func (c syslogClock) parse(s string) []field {
	var out []field
	add := func(name, value string) { out = append(out, field{name, value}) }
	if s == "" {
		return nil
	}
	if s[0] == '<' {
		end := strings.IndexByte(s, '>')
		if end < 0 {
			return nil
		}
		pri := s[1:end]
		s = s[end+1:]
		add("priority", pri)
		n, err := strconv.ParseUint(pri, 10, 64)
		if err != nil || (len(pri) > 1 && pri[0] == '0') {
			return out
		}
		fac, sev := n/8, n%8
		if fac < uint64(len(syslogFacilities)) {
			add("facility_keyword", syslogFacilities[fac])
		} else {
			add("facility_keyword", "unknown")
		}
		add("level", syslogLevels[sev])
		add("facility", strconv.FormatUint(fac, 10))
		add("severity", strconv.FormatUint(sev, 10))
	}
	if s == "" {
		return out
	}
	if rest, ok := strings.CutPrefix(s, "1 "); ok {
		return c.rfc5424(out, rest)
	}
	return c.rfc3164(out, s)
}

func (c syslogClock) rfc5424(out []field, s string) []field {
	out = append(out, field{"format", "rfc5424"})
	if s == "" {
		return out
	}
	parts := strings.SplitN(s, " ", 6)
	for i, name := range []string{"timestamp", "hostname", "app_name", "proc_id", "msg_id"} {
		out = append(out, field{name, parts[i]})
		if i == len(parts)-1 {
			return out
		}
	}
	rest := parts[5]
	switch {
	case strings.HasPrefix(rest, "- "):
		rest = rest[2:]
	case strings.HasPrefix(rest, "@cee:"):
	default:
		for {
			var ok bool
			out, rest, ok = sdElement(out, rest)
			if !ok {
				return out
			}
			if strings.HasPrefix(rest, " ") {
				rest = rest[1:]
				break
			}
		}
	}
	return append(out, field{"message", rest})
}

// sdElement reads `[id name="value" ...]` from the start of s.
func sdElement(out []field, s string) ([]field, string, bool) {
	if !strings.HasPrefix(s, "[") {
		return out, s, false
	}
	s = s[1:]
	idEnd := strings.IndexAny(s, " ]")
	if idEnd < 0 {
		return out, s, false
	}
	id := s[:idEnd]
	s = s[idEnd:]
	if k, v, ok := strings.Cut(id, "="); ok {
		out = append(out, field{k, v})
		id = ""
	}
	var pairs []field
	for {
		s = strings.TrimLeft(s, " ")
		if s == "" {
			return out, s, false
		}
		if s[0] == ']' {
			s = s[1:]
			break
		}
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			return out, s, false
		}
		name := s[:eq]
		s = s[eq+1:]
		var value string
		if strings.HasPrefix(s, `"`) {
			// Up to the first quote without a backslash before it.
			end := 1
			for end < len(s) && (s[end] != '"' || s[end-1] == '\\') {
				end++
			}
			if end == len(s) {
				return out, s, false
			}
			raw := strings.ReplaceAll(s[:end+1], `\]`, `]`)
			v, err := strconv.Unquote(raw)
			if err != nil {
				v = raw
			}
			value = v
			s = s[end+1:]
		} else {
			end := strings.IndexAny(s, " ]")
			if end < 0 {
				return out, s, false
			}
			value = s[:end]
			s = s[end:]
		}
		if id != "" {
			name = id + "." + name
		}
		pairs = append(pairs, field{name, value})
	}
	if len(pairs) == 0 && id != "" {
		pairs = append(pairs, field{id, ""})
	}
	return append(out, pairs...), s, true
}

func (c syslogClock) rfc3164(out []field, s string) []field {
	out = append(out, field{"format", "rfc3164"})
	message := func(m string) []field { return append(out, field{"message", m}) }
	if len(s) < len(time.Stamp) {
		return message(s)
	}
	var ts time.Time
	if s[10] != 'T' {
		t, err := time.Parse(time.Stamp, s[:len(time.Stamp)])
		if err != nil {
			return message(s)
		}
		ts = time.Date(c.year, t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), c.loc)
		if ts.Sub(c.now) > 24*time.Hour {
			ts = ts.AddDate(-1, 0, 0)
		}
		s = s[len(time.Stamp):]
	} else {
		w, _, _ := strings.Cut(s, " ")
		if w == s {
			return message(s)
		}
		t, err := time.Parse(time.RFC3339Nano, w)
		if err != nil {
			t, err = time.ParseInLocation("2006-01-02T15:04:05.999999999", w, c.zoneless)
			if err != nil {
				return message(s)
			}
		}
		ts = t
		s = s[len(w):]
	}
	out = append(out, field{"timestamp", ts.UTC().Format(time.RFC3339Nano)})
	if s == "" {
		return out
	}
	if s[0] != ' ' {
		return message(s)
	}
	s = s[1:]
	w, rest, space := strings.Cut(s, " ")
	if !strings.ContainsAny(w, ":[") {
		out = append(out, field{"hostname", w})
		if !space {
			return out
		}
		s = rest
	}
	end := strings.IndexAny(s, "[: ")
	if end < 0 {
		return append(out, field{"app_name", s})
	}
	out = append(out, field{"app_name", s[:end]})
	s = s[end:]
	if s[0] == '[' {
		close := strings.IndexByte(s, ']')
		if close < 0 {
			return out
		}
		out = append(out, field{"proc_id", s[1:close]})
		s = s[close+1:]
	}
	s = strings.TrimPrefix(strings.TrimPrefix(s, ":"), " ")
	if s == "" {
		return out
	}
	return message(s)
}
