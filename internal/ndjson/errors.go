package ndjson

import (
	"strconv"
	"sync"
)

// SyntaxError describes why a line is not a valid JSON object.
type SyntaxError struct {
	// Offset is the byte offset in the line (or in the raw text passed to
	// AppendUnescape or AppendCompact) of the offending byte; it is the
	// length of the input when the input ends too early.
	Offset int

	// Msg describes the problem in lowercase, without the offset, e.g.
	// "invalid character 'x' after object key".
	Msg string
}

// Error returns Msg followed by the offset, e.g.
// "invalid character 'x' after object key at byte 12".
func (e *SyntaxError) Error() string {
	return e.Msg + " at byte " + strconv.Itoa(e.Offset)
}

// errCode says what went wrong in a low-level scan function; the offset is
// returned beside it. Codes below numCtx are "invalid character" errors whose
// message depends on the byte at the offset and on the context.
type errCode uint8

const (
	errNone errCode = iota

	// Invalid character in a context; the message names the byte.
	ctxNotObject    // first byte of the line
	ctxValue        // looking for the beginning of a value
	ctxKey          // looking for the beginning of an object key
	ctxColon        // after an object key
	ctxObjNext      // after an object key:value pair
	ctxArrNext      // after an array element
	ctxString       // control character inside a string
	ctxEscape       // after a backslash
	ctxHex          // inside \uXXXX
	ctxNumber       // after '-' or in the integer part
	ctxFraction     // after the decimal point
	ctxExponent     // in the exponent
	ctxLiteral      // inside true, false or null
	ctxTrailing     // after the closing '}' of the line
	ctxUnquote      // a raw '"' inside the text given to AppendUnescape
	numCtx          // number of "invalid character" contexts
	errEOF          // the input ends in the middle of a token or container
	errUnterminated // the input ends inside a string, between characters
	errUTF8         // invalid UTF-8 inside a string
	errDepth        // nesting deeper than MaxDepth
	errEmpty        // the line is empty or all whitespace
)

// ctxSuffix completes "invalid character 'x'" for each context; the wording
// follows encoding/json.
var ctxSuffix = [numCtx]string{
	ctxNotObject: " looking for beginning of object",
	ctxValue:     " looking for beginning of value",
	ctxKey:       " looking for beginning of object key string",
	ctxColon:     " after object key",
	ctxObjNext:   " after object key:value pair",
	ctxArrNext:   " after array element",
	ctxString:    " in string literal",
	ctxEscape:    " in string escape code",
	ctxHex:       ` in \u hexadecimal character escape`,
	ctxNumber:    " in numeric literal",
	ctxFraction:  " after decimal point in numeric literal",
	ctxExponent:  " in exponent of numeric literal",
	ctxLiteral:   " in literal true, false or null",
	ctxTrailing:  " after top-level value",
	ctxUnquote:   " in string literal (unescaped quote)",
}

// charMsgs caches the "invalid character" messages per context, built on
// the first error in that context, so that reporting an error (which
// happens on every plain-text line of a mixed file) does not allocate.
var charMsgs [numCtx]struct {
	once sync.Once
	msgs [256]string
}

// message returns the SyntaxError message for code at offset off of s.
func message(code errCode, s []byte, off int) string {
	switch code {
	case errEOF, errUnterminated:
		return "unexpected end of line"
	case errUTF8:
		return "invalid UTF-8 in string"
	case errDepth:
		return depthMsg
	case errEmpty:
		return "empty line"
	}
	if code >= numCtx || off >= len(s) {
		// Slow path: cannot happen for codes produced by this package.
		return "invalid JSON"
	}
	t := &charMsgs[code]
	t.once.Do(func() {
		for c := range t.msgs {
			t.msgs[c] = "invalid character " + quoteChar(byte(c)) + ctxSuffix[code]
		}
	})
	return t.msgs[s[off]]
}

var depthMsg = "exceeded max depth of " + strconv.Itoa(MaxDepth)

// quoteChar formats c the way encoding/json's error messages do.
func quoteChar(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	// A lone byte >= 0x80 is invalid UTF-8, which Quote writes as \xNN.
	s := strconv.Quote(string([]byte{c}))
	return "'" + s[1:len(s)-1] + "'"
}

// newError returns a heap-allocated *SyntaxError, for the cold paths of the
// append functions.
func newError(code errCode, s []byte, off int) error {
	return &SyntaxError{Offset: off, Msg: message(code, s, off)}
}
