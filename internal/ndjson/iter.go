// Package ndjson parses NDJSON log lines in place: Iter walks the fields of
// one JSON object line without copying or allocating, flattening nested
// objects to dotted names, and validates the whole line on the way.
//
// A line is accepted exactly when encoding/json.Valid accepts it and it is
// an object, with two deliberate differences:
//
//   - Strings must be valid UTF-8. encoding/json replaces invalid bytes with
//     U+FFFD; an Iter rejects a line holding raw invalid UTF-8 in a key or
//     string value, so that such lines are counted as bad lines. Escapes are
//     still decoded exactly as encoding/json does, including lone
//     surrogates (\ud800 decodes to U+FFFD).
//   - Nesting is limited to MaxDepth (1000) levels, not 10000.
//
// FuzzIter checks this against encoding/json.
package ndjson

// Kind is the JSON type of a leaf value.
type Kind uint8

// The kinds of leaf values. Objects are not leaves: Iter descends into them.
const (
	KindString Kind = iota + 1
	KindNumber
	KindTrue
	KindFalse
	KindNull
	KindArray // arrays are leaves: Iter does not descend into them
)

var kindNames = [...]string{
	KindString: "string",
	KindNumber: "number",
	KindTrue:   "true",
	KindFalse:  "false",
	KindNull:   "null",
	KindArray:  "array",
}

// String returns the kind's lowercase name, or "invalid" for the zero Kind.
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "invalid"
}

// Iter states: what Next expects at it.pos.
const (
	stateStart      = iota // before the line's opening '{'
	stateObjOpen           // just after a '{': a key or '}'
	stateAfterValue        // just after a leaf value: ',' or '}'
	stateDone              // Next has returned false
)

// Iter walks the leaf fields of one JSON object, depth-first in source
// order. Nested objects are flattened: {"http":{"ua":"x","tls":{"v":"1.3"}}}
// yields "http.ua" then "http.tls.v". An empty nested object yields
// nothing. Duplicate keys are all yielded in source order (callers let the
// last win), and a top-level key "http.ua" yields the same name as ua
// nested in http.
//
// Next validates the whole line against the JSON grammar (RFC 8259) plus
// two rules of its own: strings must be valid UTF-8 and nesting may not
// exceed MaxDepth. It does not decode values: Key and Value do, lazily.
//
// The zero Iter is ready for Reset. An Iter is not safe for concurrent
// use; give each worker its own and reuse it for every line, so that its
// internal buffers grow once: Reset, Next, Key, Kind, Raw, Value and Err
// then do not allocate. The buffers keep the size of the longest decoded
// key, decoded value and nesting seen.
type Iter struct {
	line  []byte
	pos   int // next byte to scan
	state uint8

	// Current leaf.
	kind     Kind
	esc      bool // string value has escapes (stale for other kinds)
	spaced   bool // array value has whitespace outside strings (ditto)
	keyEsc   bool // key has escapes
	keyPlain bool // Key is line[keyStart:keyEnd]: top level, no escapes
	valPlain bool // Value is line[valStart:valEnd]
	keyOK    bool // key holds Key's result
	valOK    bool // val holds Value's result
	keyStart int  // key contents, without quotes
	keyEnd   int
	valStart int // Raw value
	valEnd   int

	// frames[d] is prefixLen of the object enclosing the object at depth
	// d+1; len(frames) is the depth of the current object.
	frames    []int
	prefixLen int    // keyBuf[:prefixLen] is the current object's "a.b." prefix
	keyBuf    []byte // prefix, then the current nested key (see Key)
	key       []byte
	valBuf    []byte
	val       []byte
	stack     []byte // scratch for skipContainer

	hasErr bool
	err    SyntaxError
}

// Reset starts iterating over line, which is one line without its '\n'.
// Leading and trailing JSON whitespace (including a final '\r') is allowed.
// The Iter keeps line until the next Reset and never modifies it. Reset
// does no scanning.
func (it *Iter) Reset(line []byte) {
	it.line = line
	it.pos = 0
	it.state = stateStart
	it.kind = 0
	it.keyPlain, it.valPlain = false, false
	it.keyOK, it.valOK = false, false
	it.frames = it.frames[:0]
	it.prefixLen = 0
	it.hasErr = false
}

// Next advances to the next leaf field and reports whether there is one.
// It returns false at the end of the object or on the first syntax error,
// and keeps returning false until Reset. After the last leaf, the call that
// returns false still scans the rest of the line (closing brackets and
// trailing whitespace), so Err then tells whether the whole line was a
// valid JSON object. Callers must drive Next until it returns false before
// trusting Err. Cost: linear in the bytes scanned, about one word operation
// per 8 bytes of string contents; no allocation once buffers have grown.
func (it *Iter) Next() bool {
	s, i := it.line, it.pos
	it.keyOK, it.valOK = false, false
	for {
		if it.state == stateAfterValue && i+1 < len(s) && s[i] == ',' && s[i+1] == '"' {
			// Fast path: compact NDJSON has `,"` between fields.
			i++
		} else if i = it.seekKey(i); i < 0 {
			return false
		}

		// s[i] is the opening quote of a key.
		ks := i + 1
		ke, ok := quickString(s, ks)
		kesc := false
		if !ok {
			if ke = findSpecial(s, ke); ke >= len(s) || s[ke] != '"' {
				// Slow path: escapes, non-ASCII, or an error.
				var code errCode
				if ke, kesc, code = scanString(s, ke); code != errNone {
					return it.fail(code, ke)
				}
			}
		}
		it.keyStart, it.keyEnd, it.keyEsc = ks, ke, kesc
		it.keyPlain = !kesc && it.prefixLen == 0

		i = ke + 1
		if i >= len(s) || s[i] != ':' {
			// Slow path: whitespace before the colon, or an error.
			if i = skipSpace(s, i); i >= len(s) {
				return it.fail(errEOF, i)
			}
			if s[i] != ':' {
				return it.fail(ctxColon, i)
			}
		}
		i++
		if i < len(s) && s[i] <= ' ' {
			i = skipSpace(s, i)
		}
		if i >= len(s) {
			return it.fail(errEOF, i)
		}

		// s[i] is the first byte of the value.
		switch c := s[i]; c {
		case '"':
			vs := i + 1
			ve, ok := quickString(s, vs)
			esc := false
			if !ok {
				if ve = findSpecial(s, ve); ve >= len(s) || s[ve] != '"' {
					// Slow path: escapes, non-ASCII, or an error.
					var code errCode
					if ve, esc, code = scanString(s, ve); code != errNone {
						if code == errUnterminated {
							code = errEOF
						}
						return it.fail(code, ve)
					}
				}
			}
			it.kind, it.valStart, it.valEnd = KindString, vs, ve
			it.esc, it.valPlain = esc, !esc
			i = ve + 1
		case '{':
			it.descend(s[ks:ke], kesc)
			if len(it.frames) >= MaxDepth {
				return it.fail(errDepth, i)
			}
			it.state = stateObjOpen
			i++
			continue
		case '[':
			ve, spaced, stack, code := skipContainer(s, i, it.stack, MaxDepth-len(it.frames)-1)
			it.stack = stack
			if code != errNone {
				return it.fail(code, ve)
			}
			it.kind, it.valStart, it.valEnd, it.spaced, it.valPlain = KindArray, i, ve, spaced, !spaced
			i = ve
		default:
			var (
				ve   int
				code errCode
				kind Kind
			)
			switch {
			case c == '-' || isDigit(c):
				ve, code = scanNumber(s, i)
				kind = KindNumber
			case c == 't':
				ve, code = scanLiteral(s, i, "true")
				kind = KindTrue
			case c == 'f':
				ve, code = scanLiteral(s, i, "false")
				kind = KindFalse
			case c == 'n':
				ve, code = scanLiteral(s, i, "null")
				kind = KindNull
			default:
				ve, code = i, ctxValue
			}
			if code != errNone {
				return it.fail(code, ve)
			}
			it.kind, it.valStart, it.valEnd, it.valPlain = kind, i, ve, kind != KindNull
			i = ve
		}
		it.pos, it.state = i, stateAfterValue
		return true
	}
}

// seekKey moves from s[i], in it.state, to the opening quote of the next
// key, closing objects on the way, and returns its index; or it returns -1
// when the walk ends, at the end of the line or on an error. It handles
// everything but Next's fast path: the first key of an object, whitespace,
// and closing brackets.
func (it *Iter) seekKey(i int) int {
	s, st := it.line, it.state
	for {
		if i >= len(s) {
			switch st {
			case stateStart:
				it.fail(errEmpty, i)
			case stateDone:
			default:
				it.fail(errEOF, i)
			}
			return -1
		}
		c := s[i]
		switch st {
		case stateAfterValue:
			if c == ',' {
				if i = skipSpace(s, i+1); i < len(s) && s[i] == '"' {
					return i
				}
				if i >= len(s) {
					it.fail(errEOF, i)
				} else {
					it.fail(ctxKey, i)
				}
				return -1
			}
		case stateObjOpen:
			if c == '"' {
				return i
			}
		case stateStart:
			if c == '{' {
				i++
				st = stateObjOpen
				continue
			}
		default:
			return -1
		}
		switch {
		case isSpace(c):
			i = skipSpace(s, i)
		case c == '}' && st != stateStart:
			i++
			if len(it.frames) == 0 {
				it.end(i)
				return -1
			}
			it.prefixLen = it.frames[len(it.frames)-1]
			it.frames = it.frames[:len(it.frames)-1]
			st = stateAfterValue
		case st == stateStart:
			it.fail(ctxNotObject, i)
			return -1
		case st == stateObjOpen:
			it.fail(ctxKey, i)
			return -1
		default:
			it.fail(ctxObjNext, i)
			return -1
		}
	}
}

// descend enters the object that is the value of key (raw contents, with
// escapes if esc): it pushes the current prefix and appends "key." to it.
func (it *Iter) descend(key []byte, esc bool) {
	it.frames = append(it.frames, it.prefixLen)
	b := it.keyBuf[:it.prefixLen]
	if esc {
		b = appendUnescapeValid(b, key)
	} else {
		b = append(b, key...)
	}
	b = append(b, '.')
	it.keyBuf, it.prefixLen = b, len(b)
}

// end finishes a walk whose top-level object closed just before s[i]:
// only whitespace may follow.
func (it *Iter) end(i int) bool {
	s := it.line
	if i < len(s) && s[i] <= ' ' {
		i = skipSpace(s, i)
	}
	if i < len(s) {
		return it.fail(ctxTrailing, i)
	}
	it.pos, it.state = i, stateDone
	it.kind, it.keyPlain, it.valPlain = 0, false, false
	return false
}

// fail records a syntax error at offset off and ends the walk.
//
// Slow path: the message comes from a table, so that failing (on every
// plain-text line of a mixed file) does not allocate.
func (it *Iter) fail(code errCode, off int) bool {
	it.err = SyntaxError{Offset: off, Msg: message(code, it.line, off)}
	it.hasErr = true
	it.pos, it.state = off, stateDone
	it.kind, it.keyPlain, it.valPlain = 0, false, false
	return false
}

// Err returns nil if the walk ended at the end of a valid JSON object
// line, or a *SyntaxError once Next has returned false on an invalid line.
// It is meaningful only after Next has returned false.
//
// The *SyntaxError is owned by the Iter and overwritten by the next Reset,
// which keeps bad lines allocation-free: format it or copy it
// (e := *err.(*SyntaxError)) to keep it longer.
func (it *Iter) Err() error {
	if it.hasErr {
		return &it.err
	}
	return nil
}

// Key returns the flattened, unescaped name of the current leaf: the keys
// of the enclosing objects and the leaf's own key, each unescaped, joined
// with '.'. A top-level key without escapes aliases the line; other keys
// are built in an internal buffer on the first call after Next. Either way
// the slice is valid until the next Next or Reset, and must not be
// modified. Key returns nil unless Next has just returned true.
func (it *Iter) Key() []byte {
	if it.keyPlain {
		// Fast path (inlined): a top-level plain key.
		return it.line[it.keyStart:it.keyEnd]
	}
	return it.buildKey()
}

// buildKey is Key's slow path: a nested or escaped key, built once per
// leaf in keyBuf.
func (it *Iter) buildKey() []byte {
	if it.kind == 0 {
		return nil
	}
	if !it.keyOK {
		k := it.line[it.keyStart:it.keyEnd]
		if it.keyEsc {
			it.keyBuf = appendUnescapeValid(it.keyBuf[:it.prefixLen], k)
		} else {
			it.keyBuf = append(it.keyBuf[:it.prefixLen], k...)
		}
		it.key, it.keyOK = it.keyBuf, true
	}
	return it.key
}

// Kind returns the kind of the current leaf, or 0 when Next has not
// returned true.
func (it *Iter) Kind() Kind { return it.kind }

// Depth returns the nesting depth of the current leaf's object: 0 for
// top-level keys, 1 for "a.b" in {"a":{"b":1}}.
func (it *Iter) Depth() int { return len(it.frames) }

// Raw returns the current value's bytes as they are in the line: string
// contents between the quotes (still escaped), number text, true, false or
// null, or array text including the brackets. It aliases the line, so it
// stays valid as long as the line does. Cost: O(1). Raw returns nil unless
// Next has just returned true.
func (it *Iter) Raw() []byte {
	if it.kind == 0 {
		return nil
	}
	return it.line[it.valStart:it.valEnd]
}

// Escaped reports whether the current value is a string holding backslash
// escapes, that is whether Value differs from Raw for a string.
func (it *Iter) Escaped() bool { return it.kind == KindString && it.esc }

// Value returns the current value as text: unescaped string contents;
// number text exactly as written; "true" or "false"; "" for null; for
// arrays, their compact JSON text (whitespace outside strings removed,
// strings kept byte for byte, like encoding/json.Compact). It aliases the
// line when no change is needed (strings without escapes, arrays without
// whitespace, other kinds), else it is decoded into an internal buffer on
// the first call after Next. Either way the slice is valid until the next
// Next or Reset, and must not be modified. Value returns nil unless Next
// has just returned true.
func (it *Iter) Value() []byte {
	if it.valPlain {
		// Fast path (inlined): the raw text is the value.
		return it.line[it.valStart:it.valEnd]
	}
	return it.decodeValue()
}

// decodeValue is Value's slow path: null, escaped strings and arrays with
// whitespace, decoded once per leaf into valBuf.
func (it *Iter) decodeValue() []byte {
	switch {
	case it.kind == 0:
		return nil
	case it.valOK:
	case it.kind == KindNull:
		it.val, it.valOK = it.line[it.valStart:it.valStart], true
	case it.kind == KindString: // with escapes
		it.valBuf = appendUnescapeValid(it.valBuf[:0], it.line[it.valStart:it.valEnd])
		it.val, it.valOK = it.valBuf, true
	default: // an array with whitespace
		it.valBuf = appendCompactValid(it.valBuf[:0], it.line[it.valStart:it.valEnd])
		it.val, it.valOK = it.valBuf, true
	}
	return it.val
}
