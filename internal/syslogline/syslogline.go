// Package syslogline splits a syslog line (RFC 5424 or RFC 3164, with or
// without the <PRI> header) into fields named as VictoriaLogs names them:
// priority, facility_keyword, level, facility, severity, format,
// timestamp, hostname, app_name, proc_id, msg_id, structured data params
// as SDID.name, and message. Names and values are substrings of the line
// or constants (numbers come from a table); only structured-data names
// (SDID.name) and escaped values are built.
//
// Parse is lenient, for reading files with `spate query`; Parser splits
// exactly as VictoriaLogs v1.52.1 ingests syslog (internal/ingest/syslog
// uses it).
package syslogline

import (
	"strconv"
	"strings"
)

// facilities are the facility keywords by number (RFC 5424, 6.2.1).
var facilities = [24]string{"kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news", "uucp", "cron", "authpriv",
	"ftp", "ntp", "security", "console", "solaris-cron", "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7"}

// levels are the severities' level names by number.
var levels = [8]string{"emerg", "alert", "critical", "error", "warning", "notice", "info", "debug"}

// small holds the decimal strings of 0..191, the priorities' range.
var small = func() (s [192]string) {
	for i := range s {
		s[i] = strconv.Itoa(i)
	}
	return
}()

// Parse calls add for each field of line, in order. A line without a
// syslog shape still gets format and message.
func Parse(line string, add func(name, value string)) {
	s := line
	if strings.HasPrefix(s, "<") {
		end := strings.IndexByte(s, '>')
		if end < 2 || end > 4 {
			add("format", "rfc3164")
			add("message", s)
			return
		}
		pri := s[1:end]
		add("priority", pri)
		n, err := strconv.Atoi(pri)
		if err != nil || n < 0 || n > 191 {
			add("format", "rfc3164")
			add("message", s[end+1:])
			return
		}
		fac, sev := n/8, n%8
		add("facility_keyword", facilities[fac])
		add("level", levels[sev])
		add("facility", small[fac])
		add("severity", small[sev])
		s = s[end+1:]
	}
	if strings.HasPrefix(s, "1 ") {
		rfc5424(s[2:], add)
		return
	}
	rfc3164(s, add)
}

// Looks reports whether line has a syslog header: <PRI>, or a timestamp
// (RFC 3164's "Mmm dd hh:mm:ss" or RFC 3339) and a space at its start.
func Looks(line string) bool {
	s := line
	if strings.HasPrefix(s, "<") {
		end := strings.IndexByte(s, '>')
		if end < 2 || end > 4 {
			return false
		}
		if _, err := strconv.Atoi(s[1:end]); err != nil {
			return false
		}
		return true
	}
	if len(s) >= 16 && s[3] == ' ' && s[6] == ' ' && s[9] == ':' && s[12] == ':' && s[15] == ' ' {
		for _, m := range [...]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"} {
			if s[:3] == m {
				return true
			}
		}
	}
	return false
}

// word cuts s at the first space: the word and what follows the space;
// ok is false when there is no space.
func word(s string) (w, rest string, ok bool) {
	i := strings.IndexByte(s, ' ')
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+1:], true
}

// rfc5424 parses "TIMESTAMP HOSTNAME APP-NAME PROCID MSGID SD MSG".
func rfc5424(s string, add func(name, value string)) {
	add("format", "rfc5424")
	for _, name := range [...]string{"timestamp", "hostname", "app_name", "proc_id", "msg_id"} {
		if s == "" {
			return
		}
		w, rest, ok := word(s)
		add(name, w)
		if !ok {
			return
		}
		s = rest
	}
	if s == "" {
		return
	}
	switch {
	case s == "-":
		return
	case strings.HasPrefix(s, "- "):
		s = s[2:]
	case s[0] == '[':
		var ok bool
		if s, ok = structuredData(s, add); !ok {
			return
		}
	}
	if s != "" {
		add("message", s)
	}
}

// structuredData parses "[id k="v" ...][...]" then a space or the end,
// and returns the rest; false when an element is broken (what came before
// is kept).
func structuredData(s string, add func(name, value string)) (string, bool) {
	for strings.HasPrefix(s, "[") {
		s = s[1:]
		end := strings.IndexAny(s, " ]")
		if end < 0 {
			return s, false
		}
		id := s[:end]
		s = s[end:]
		params := 0
		if k, v, ok := strings.Cut(id, "="); ok {
			add(k, v) // [key=value], as some senders write
			id, params = "", 1
		}
		for {
			s = strings.TrimLeft(s, " ")
			if s == "" {
				return s, false
			}
			if s[0] == ']' {
				s = s[1:]
				break
			}
			eq := strings.IndexByte(s, '=')
			if eq <= 0 {
				return s, false
			}
			name := s[:eq]
			s = s[eq+1:]
			var val string
			if strings.HasPrefix(s, `"`) {
				// Up to the quote that is not escaped; \" \\ \] stand
				// for the character.
				i, esc := 1, false
				for ; i < len(s); i++ {
					if s[i] == '\\' && i+1 < len(s) {
						i++
						esc = true
						continue
					}
					if s[i] == '"' {
						break
					}
				}
				if i >= len(s) {
					return s, false
				}
				val = s[1:i]
				if esc {
					val = unescapeSD(val)
				}
				s = s[i+1:]
			} else {
				end := strings.IndexAny(s, " ]")
				if end < 0 {
					return s, false
				}
				val, s = s[:end], s[end:]
			}
			if id != "" {
				name = id + "." + name
			}
			add(name, val)
			params++
		}
		if params == 0 && id != "" {
			add(id, "")
		}
	}
	if s == "" {
		return s, true
	}
	if s[0] != ' ' {
		return s, false
	}
	return s[1:], true
}

// unescapeSD removes the backslashes of \" \\ and \] in a param value.
func unescapeSD(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) && (v[i+1] == '"' || v[i+1] == '\\' || v[i+1] == ']') {
			i++
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// rfc3164 parses "Mmm dd hh:mm:ss HOST TAG[PID]: MSG" (an RFC 3339 time
// may stand for the classic one, as rsyslog writes).
func rfc3164(s string, add func(name, value string)) {
	add("format", "rfc3164")
	var ts string
	switch {
	case len(s) >= 15 && s[3] == ' ' && s[6] == ' ' && s[9] == ':' && s[12] == ':':
		ts, s = s[:15], s[15:]
	case len(s) > 19 && s[4] == '-' && s[10] == 'T':
		end := strings.IndexByte(s, ' ')
		if end < 0 {
			add("message", s)
			return
		}
		ts, s = s[:end], s[end:]
	default:
		if s != "" {
			add("message", s)
		}
		return
	}
	add("timestamp", ts)
	if !strings.HasPrefix(s, " ") {
		if s != "" {
			add("message", s)
		}
		return
	}
	s = s[1:]
	// HOST, unless the word looks like the tag (app[pid]: or app:).
	if w, rest, ok := word(s); !strings.ContainsAny(w, ":[") {
		add("hostname", w)
		if !ok {
			return
		}
		s = rest
	}
	end := strings.IndexAny(s, "[: ")
	if end < 0 {
		add("app_name", s)
		return
	}
	add("app_name", s[:end])
	s = s[end:]
	if strings.HasPrefix(s, "[") {
		close := strings.IndexByte(s, ']')
		if close < 0 {
			return
		}
		add("proc_id", s[1:close])
		s = s[close+1:]
	}
	s = strings.TrimPrefix(s, ":")
	s = strings.TrimPrefix(s, " ")
	if s != "" {
		add("message", s)
	}
}
