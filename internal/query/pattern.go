package query

import "strings"

// This file holds the patterns of the extract and format pipes: literal
// text with <field> placeholders.

// patternPart is one piece of an extract or format pattern: literal text
// followed by an optional placeholder.
type patternPart struct {
	lit      string
	field    string // "" for a trailing literal or an anonymous "<_>"
	modifier string // format only: uc, lc, q, ...
	hasField bool
}

// parseFormatPattern splits "a<x>b<uc:y>" into parts. "<<" is not special;
// a '<' without a matching '>' is literal.
func parseFormatPattern(s string) []patternPart {
	var parts []patternPart
	var lit strings.Builder
	for len(s) > 0 {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			lit.WriteString(s)
			break
		}
		j := strings.IndexByte(s[i:], '>')
		if j < 0 {
			lit.WriteString(s)
			break
		}
		lit.WriteString(s[:i])
		name := s[i+1 : i+j]
		s = s[i+j+1:]
		pp := patternPart{lit: lit.String(), hasField: true}
		lit.Reset()
		if k := strings.IndexByte(name, ':'); k >= 0 {
			pp.modifier, name = name[:k], name[k+1:]
		}
		if name != "_" && name != "" {
			pp.field = name
		}
		parts = append(parts, pp)
	}
	if lit.Len() > 0 || len(parts) == 0 {
		parts = append(parts, patternPart{lit: lit.String()})
	}
	return parts
}

// patternFields returns the names inside the <...> placeholders of an
// extract or format pattern, without modifiers ("<uc:level>" gives "level").
func patternFields(pattern string) []string {
	var names []string
	for {
		start := strings.IndexByte(pattern, '<')
		if start < 0 {
			return names
		}
		pattern = pattern[start+1:]
		end := strings.IndexByte(pattern, '>')
		if end < 0 {
			return names
		}
		name := pattern[:end]
		pattern = pattern[end+1:]
		if i := strings.IndexByte(name, ':'); i >= 0 {
			name = name[i+1:]
		}
		names = append(names, strings.TrimSpace(name))
	}
}
