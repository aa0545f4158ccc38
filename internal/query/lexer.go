package query

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file splits a LogsQL query into tokens the way VictoriaLogs' lexer
// (lib/logstorage/parser.go, v1.26) does:
//
//   - a word is a run of letters, digits, '_' and '.' ("http.ua", "10.0.0.1",
//     "café", "用户");
//   - "...", `...` and '...' are quoted strings with Go escapes;
//   - "=~", "!~" and "!=" are two-rune operators; every other rune is a token
//     of its own;
//   - whitespace separates tokens and '#' starts a comment up to the end of
//     the line.
//
// The parser glues adjacent tokens that are not separated by whitespace into
// compound tokens ("worker-010", "/api/v1", "2026-01-01T00:00:00Z"); see
// parser.compound.

// lexKind is the kind of a lexToken.
type lexKind uint8

const (
	lexEOF      lexKind = iota // end of the query
	lexWord                    // run of word runes
	lexQuoted                  // quoted string; text is unquoted
	lexPunct                   // operator or any other single rune
	lexBadQuote                // a quote that does not start a valid string
)

// lexToken is one token of a query.
type lexToken struct {
	kind lexKind
	// text is the token value: unquoted for lexQuoted, raw otherwise.
	text string
	// raw is the token as written in the query.
	raw string
	// pos is the byte offset of raw in the query.
	pos int
	// space is set when whitespace or a comment precedes the token.
	space bool
	// err describes why a lexBadQuote token is not a valid string.
	err string
}

// isLexWordRune reports whether r belongs to a word token. Letters, digits
// and '_' are the token runes of VictoriaLogs' tokenizer; the lexer adds '.'
// so that "http.ua" and "10.0.0.1" stay one token.
func isLexWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r == '_' || r == '.' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// isWordText reports whether every rune of s is a word rune, so that s can be
// written without quotes and lexes back as a single word token.
func isWordText(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r == utf8.RuneError || !isLexWordRune(r) {
			return false
		}
	}
	return true
}

// lexQuery splits s into tokens. The returned slice always ends with a
// lexEOF token whose pos is len(s). Lexing never fails: a quote that does not
// start a valid string becomes a lexBadQuote token, and the parser reports it
// when it needs a value there.
func lexQuery(s string) []lexToken {
	var toks []lexToken
	i := 0
	for {
		space := false
		// Skip whitespace and comments.
		for i < len(s) {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == '#' {
				n := strings.IndexByte(s[i:], '\n')
				if n < 0 {
					i = len(s)
				} else {
					i += n + 1
				}
				space = true
				continue
			}
			if r == utf8.RuneError || !unicode.IsSpace(r) {
				break
			}
			i += size
			space = true
		}
		if i >= len(s) {
			toks = append(toks, lexToken{kind: lexEOF, pos: len(s), space: space})
			return toks
		}
		t := lexNext(s, i)
		t.space = space
		toks = append(toks, t)
		i += len(t.raw)
	}
}

// lexNext reads the token that starts at s[i], which is not whitespace.
func lexNext(s string, i int) lexToken {
	tail := s[i:]
	r, size := utf8.DecodeRuneInString(tail)
	if r == utf8.RuneError {
		// An invalid byte is a token of its own, as in VictoriaLogs.
		return lexToken{kind: lexPunct, text: tail[:1], raw: tail[:1], pos: i}
	}

	// Fast path: a word.
	n := 0
	for n < len(tail) {
		r, size := utf8.DecodeRuneInString(tail[n:])
		if r == utf8.RuneError || !isLexWordRune(r) {
			break
		}
		n += size
	}
	if n > 0 {
		return lexToken{kind: lexWord, text: tail[:n], raw: tail[:n], pos: i}
	}

	switch r {
	case '"', '`':
		prefix, err := strconv.QuotedPrefix(tail)
		if err != nil {
			return badQuote(tail, i, r)
		}
		text, err := strconv.Unquote(prefix)
		if err != nil {
			return badQuote(tail, i, r)
		}
		return lexToken{kind: lexQuoted, text: text, raw: prefix, pos: i}
	case '\'':
		var b []byte
		rest := tail[1:]
		for {
			if rest == "" {
				return badQuote(tail, i, r)
			}
			if rest[0] == '\'' {
				break
			}
			ch, _, newRest, err := strconv.UnquoteChar(rest, '\'')
			if err != nil {
				return badQuote(tail, i, r)
			}
			b = utf8.AppendRune(b, ch)
			rest = newRest
		}
		raw := tail[:len(tail)-len(rest)+1]
		return lexToken{kind: lexQuoted, text: string(b), raw: raw, pos: i}
	case '=':
		if strings.HasPrefix(tail[1:], "~") {
			return lexToken{kind: lexPunct, text: "=~", raw: "=~", pos: i}
		}
	case '!':
		if strings.HasPrefix(tail[1:], "~") || strings.HasPrefix(tail[1:], "=") {
			return lexToken{kind: lexPunct, text: tail[:2], raw: tail[:2], pos: i}
		}
	}
	return lexToken{kind: lexPunct, text: tail[:size], raw: tail[:size], pos: i}
}

// badQuote returns the lexBadQuote token for the quote rune q at s[0].
func badQuote(s string, pos int, q rune) lexToken {
	msg := "missing closing quote"
	// Look for the closing quote to tell an unterminated string from one
	// with a bad escape sequence.
	if n := strings.IndexRune(s[1:], q); n >= 0 && q != '`' {
		msg = "invalid escape sequence in quoted string " + s[:n+2]
	}
	return lexToken{kind: lexBadQuote, text: s[:1], raw: s[:1], pos: pos, err: msg}
}
