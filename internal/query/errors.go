package query

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrParse is matched by errors.Is for every error that Parse returns.
var ErrParse = errors.New("cannot parse query")

// ParseError is a parse error with the position where it was found.
type ParseError struct {
	// Query is the query as passed to Parse.
	Query string
	// Pos is the byte offset in Query where the error was found; len(Query)
	// for errors at the end of the query.
	Pos int
	// Msg says what is wrong, lowercase, VictoriaLogs style.
	Msg string
	// Hint, if not "", suggests a fix ("quote the value: ...").
	Hint string
}

// Error returns the message with the 1-based column (in runes) of Pos:
// `cannot parse query at column 12: unknown stats function "foo"`.
func (e *ParseError) Error() string {
	return fmt.Sprintf("cannot parse query at column %d: %s", e.Column(), e.Msg)
}

// Is makes errors.Is(err, ErrParse) true for every ParseError.
func (e *ParseError) Is(target error) bool {
	return target == ErrParse
}

// Column returns the 1-based column of Pos, counted in runes.
func (e *ParseError) Column() int {
	return utf8.RuneCountInString(e.Query[:e.clampedPos()]) + 1
}

func (e *ParseError) clampedPos() int {
	return min(max(e.Pos, 0), len(e.Query))
}

// Caret returns the query on one line (newlines and tabs shown as spaces), a
// line with '^' under the error column and, if Hint is set, a third line
// "hint: ...". Wide (East Asian) runes take two columns, so the caret lines
// up in a terminal.
func (e *ParseError) Caret() string {
	var b strings.Builder
	pos := e.clampedPos()
	width := 0
	for i, r := range e.Query {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			r = ' '
		}
		b.WriteRune(r)
		if i < pos {
			width += runeWidth(r)
		}
	}
	b.WriteByte('\n')
	b.WriteString(strings.Repeat(" ", width))
	b.WriteByte('^')
	if e.Hint != "" {
		b.WriteString("\nhint: ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

// runeWidth returns the number of terminal columns r takes: 2 for wide East
// Asian runes, 1 otherwise.
func runeWidth(r rune) int {
	switch {
	case r >= 0x1100 && r <= 0x115F, // Hangul Jamo
		r >= 0x2E80 && r <= 0xA4CF && r != 0x303F, // CJK ... Yi
		r >= 0xAC00 && r <= 0xD7A3,                // Hangul syllables
		r >= 0xF900 && r <= 0xFAFF,                // CJK compatibility ideographs
		r >= 0xFE30 && r <= 0xFE4F,                // CJK compatibility forms
		r >= 0xFF00 && r <= 0xFF60,                // fullwidth forms
		r >= 0xFFE0 && r <= 0xFFE6,
		r >= 0x1F300 && r <= 0x1FAFF, // emoji
		r >= 0x20000 && r <= 0x3FFFD:
		return 2
	}
	return 1
}
