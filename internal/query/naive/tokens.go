package naive

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// isTokenRune reports whether r is part of a word: a Unicode letter, a
// Unicode digit or '_'. Words are the maximal runs of such runes.
func isTokenRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// phrasePos returns the byte position of the first occurrence of phrase in s
// that sits on word boundaries, or -1. A boundary is needed before the
// occurrence only if the phrase starts with a word rune, and after it only if
// the phrase ends with one, so "error" does not match "errors" and
// "suberror_x", while ":db" matches "error:db". An invalid UTF-8 byte next
// to the occurrence counts as a word rune (no boundary). An empty phrase is
// at position 0.
func phrasePos(s, phrase string) int {
	if phrase == "" {
		return 0
	}
	first, _ := utf8.DecodeRuneInString(phrase)
	last, _ := utf8.DecodeLastRuneInString(phrase)
	needStart := isTokenRune(first)
	needEnd := isTokenRune(last)
	for pos := 0; pos <= len(s); {
		n := strings.Index(s[pos:], phrase)
		if n < 0 {
			return -1
		}
		at := pos + n
		end := at + len(phrase)
		ok := true
		if needStart && at > 0 {
			r, _ := utf8.DecodeLastRuneInString(s[:at])
			if r == utf8.RuneError || isTokenRune(r) {
				ok = false
			}
		}
		if ok && needEnd && end < len(s) {
			r, _ := utf8.DecodeRuneInString(s[end:])
			if r == utf8.RuneError || isTokenRune(r) {
				ok = false
			}
		}
		if ok {
			return at
		}
		pos = at + 1
	}
	return -1
}

// matchPhrase is the word/phrase filter: phrase occurs in s on word
// boundaries. The empty phrase matches only the empty value (f:"" matches a
// missing field).
func matchPhrase(s, phrase string) bool {
	if phrase == "" {
		return s == ""
	}
	return phrasePos(s, phrase) >= 0
}

// matchPrefix is the prefix filter (err*): some occurrence of prefix starts
// on a word boundary (if prefix starts with a word rune); nothing is required
// after it. The empty prefix (f:*) matches any non-empty value.
func matchPrefix(s, prefix string) bool {
	if prefix == "" {
		return s != ""
	}
	first, _ := utf8.DecodeRuneInString(prefix)
	needStart := isTokenRune(first)
	for pos := 0; pos <= len(s); {
		n := strings.Index(s[pos:], prefix)
		if n < 0 {
			return false
		}
		at := pos + n
		if !needStart || at == 0 {
			return true
		}
		r, _ := utf8.DecodeLastRuneInString(s[:at])
		if r != utf8.RuneError && !isTokenRune(r) {
			return true
		}
		pos = at + 1
	}
	return false
}

// matchSequence reports whether the phrases occur in s in this order, each
// on word boundaries and after the end of the previous one.
func matchSequence(s string, phrases []string) bool {
	for _, p := range phrases {
		n := phrasePos(s, p)
		if n < 0 {
			return false
		}
		s = s[n+len(p):]
	}
	return true
}
