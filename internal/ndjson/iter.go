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
// FuzzIter checks this against encoding/json, and FuzzFastPath checks
// Next's fast path against its scanning path.
package ndjson

import (
	"encoding/binary"
	"math/bits"
)

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

// frame is an object being walked: where its key is in the line.
type frame struct {
	keyStart, keyEnd int  // the key's contents, without quotes
	keyEsc           bool // the key has escapes
	prefixEnd        int  // len(keyBuf) after "key.", once built (see appendPrefix)
}

// Leaf flags: Iter.flags describes the current leaf.
const (
	flagKeyPlain = 1 << iota // Key is line[keyStart:keyEnd]: top level, no escapes
	flagValPlain             // Value is line[valStart:valEnd]
	flagKeyEsc               // the key has escapes
	flagEsc                  // a string value has escapes
	flagSpaced               // an array value has whitespace outside strings
	flagKeyOK                // keyBuf holds Key's result (unless Iter.clean)
	flagValOK                // val holds Value's result
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
// key, decoded value and nesting seen. Reuse also lets Next predict each
// key from the previous lines, which makes it faster on logs whose lines
// share a layout, or one of a few (see predict.go); an Iter takes about
// 50 KiB.
type Iter struct {
	line  []byte
	pos   int // next byte to scan
	state uint8

	// Key prediction, see predict.go: set is the layout predicting this
	// line, one of sets.
	ord   uint // ordinal in the line of the next key
	clean bool // every key of the line so far was predicted
	set   *predSet
	sets  [numSets]predSet
	gens  uint64    // the last gen given to a set
	clock uint64    // for the sets' last use
	hint  uint8     // the line's slot in hints
	hints [64]uint8 // by the line's first 16 bytes: the set that took the last such line

	// Current leaf.
	kind     Kind
	flags    uint8 // flagKeyPlain etc.
	plain    uint8 // flags of a plain leaf in this object: flagValPlain, and flagKeyPlain at the top level
	keyStart int   // key contents, without quotes
	keyEnd   int
	valStart int // Raw value
	valEnd   int

	// frames[d] is the object at depth d+1; len(frames) is the depth of
	// the current object. The prefix of nested keys ("a.b.") is built
	// lazily, by Key: keyBuf[:frames[prefixDepth-1].prefixEnd] holds the
	// keys of frames[:prefixDepth].
	frames      []frame
	prefixDepth int
	keyBuf      []byte // prefix, then the current nested key (see Key)
	valBuf      []byte
	val         []byte
	stack       []byte // scratch for skipContainer

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
	it.state, it.ord, it.clean = stateStart, 0, true
	it.kind, it.flags, it.plain = 0, 0, flagKeyPlain|flagValPlain
	it.frames, it.prefixDepth = it.frames[:0], 0
	it.hasErr = false
}

// Next advances to the next leaf field and reports whether there is one.
// It returns false at the end of the object or on the first syntax error,
// and keeps returning false until Reset. After the last leaf, the call that
// returns false still scans the rest of the line (closing brackets and
// trailing whitespace), so Err then tells whether the whole line was a
// valid JSON object. Callers must drive Next until it returns false before
// trusting Err. Leaves the caller passed over with Skip are validated but
// not returned. Cost: linear in the bytes scanned, about one word operation
// per 8 bytes of string contents; no allocation once buffers have grown.
//
// Next is the fast path for compact lines of printable ASCII: a key
// without escapes right after `,` or `{`, and a string value without
// escapes, a number such as 200 or 18.188, a literal or an object. It
// leaves the rest of a field with anything else (whitespace, escapes,
// non-ASCII, arrays, other numbers, errors) to nextStrict, falling back
// before it changes any state, so that nextStrict scans that field from
// its start: the results, errors included, are those of nextStrict alone
// (TestFastPathMatchesStrict, FuzzFastPath).
func (it *Iter) Next() bool {
	if it.set == nil {
		it.initSets() // a zero Iter: Reset was not called
	}
	s, i := it.line, it.pos
	for {
		o := it.ord
		it.ord = o + 1
		var ks, ke int
		if p := &it.set.preds[o%uint(len(it.set.preds))]; p.state == it.state+1 && i < len(s)-16 &&
			(binary.LittleEndian.Uint64(s[i:])^p.w0)&p.m0|(binary.LittleEndian.Uint64(s[i+8:])^p.w1)&p.m1 == 0 {
			// Fast path: the same key as in the previous lines, checked in
			// two word compares instead of a scan (see predict.go). The
			// value starts before line[i+16], so s[vs] exists.
			ks, ke = i+p.ks, i+p.ke
		} else if it.clean && i < len(s)-16 && it.switchSet(o, i) {
			// Another layout's set predicts this key after the same keys
			// (see predict.go): the line stays clean.
			p := &it.set.preds[o%uint(len(it.set.preds))]
			ks, ke = i+p.ks, i+p.ke
		} else {
			st := it.state
			k := i + 1 // the opening quote of the key
			if st != stateAfterValue || i >= len(s)-1 || binary.LittleEndian.Uint16(s[i:]) != ','|'"'<<8 {
				if st == stateAfterValue && len(s)-i == len(it.frames)+1 && it.closeAll(i) {
					return false
				}
				// Slow path: the first key of an object, whitespace,
				// closing brackets, the end of the line or an error. On a
				// key, seekKey moves it.pos and it.state to it, so that
				// nextStrict, if called, starts there.
				if k = it.seekKey(i); k < 0 {
					return false
				}
				s = it.line
			}
			ks = k + 1
			ke = findSpecial(s, ks)
			if ke >= len(s)-2 || binary.LittleEndian.Uint16(s[ke:]) != '"'|':'<<8 {
				return it.nextStrict()
			}
			it.learn(o, st, i, k, ke)
			s = it.line
		}
		// Stored early, to free registers: nextStrict overwrites them.
		it.keyStart, it.keyEnd = ks, ke
		vs := ke + 2
		switch c := s[vs]; {
		case c == '"':
			vs++
			ve := vs
			// Four words per step, each with its own exit branch: less
			// loop overhead, and values of different lengths take
			// different branches, which predict better than one shared
			// exit. The window also proves the quote check in bounds
			// (BenchmarkIter/walk: 7% fewer instructions and about 5%
			// faster than one word per step).
			for ve <= len(s)-32 {
				win := (*[32]byte)(s[ve:])
				if m := specialMask(binary.LittleEndian.Uint64(win[:])); m != 0 {
					j := bits.TrailingZeros64(m) >> 3
					if win[j] != '"' {
						return it.nextStrict()
					}
					ve += j
					goto valOK
				}
				if m := specialMask(binary.LittleEndian.Uint64(win[8:])); m != 0 {
					j := 8 + bits.TrailingZeros64(m)>>3
					if win[j] != '"' {
						return it.nextStrict()
					}
					ve += j
					goto valOK
				}
				if m := specialMask(binary.LittleEndian.Uint64(win[16:])); m != 0 {
					j := 16 + bits.TrailingZeros64(m)>>3
					if win[j] != '"' {
						return it.nextStrict()
					}
					ve += j
					goto valOK
				}
				if m := specialMask(binary.LittleEndian.Uint64(win[24:])); m != 0 {
					j := 24 + bits.TrailingZeros64(m)>>3
					if win[j&31] != '"' { // j < 32, as m != 0
						return it.nextStrict()
					}
					ve += j
					goto valOK
				}
				ve += 32
			}
			for {
				if ve > len(s)-8 {
					if len(s) < 8 {
						return it.nextStrict()
					}
					// The last 1..7 bytes: load the last word and shift out
					// the bytes before s[ve]; see findSpecial.
					w := binary.LittleEndian.Uint64(s[len(s)-8:]) >> (8 * (8 - (len(s) - ve)))
					ve += bits.TrailingZeros64(specialMask(w)) >> 3
					break
				}
				if m := specialMask(binary.LittleEndian.Uint64(s[ve:])); m != 0 {
					ve += bits.TrailingZeros64(m) >> 3
					break
				}
				ve += 8
			}
			if ve >= len(s) || s[ve] != '"' {
				return it.nextStrict()
			}
		valOK:
			it.kind, it.valStart, it.valEnd, it.pos = KindString, vs, ve, ve+1
			it.flags = it.plain
		case c-'1' < 9:
			// A number without sign, exponent or leading zero.
			ve := digitsEnd(s, vs+1)
			if ve < len(s) && s[ve] == '.' {
				f := ve + 1
				if ve = digitsEnd(s, f); ve == f {
					return it.nextStrict()
				}
			}
			if ve < len(s) && s[ve]|0x20 == 'e' {
				return it.nextStrict()
			}
			it.kind, it.valStart, it.valEnd, it.pos = KindNumber, vs, ve, ve
			it.flags = it.plain
		case c == '{':
			if !it.enter(vs) {
				return it.nextStrict()
			}
			// Reload rather than keep values live across the call.
			s, i = it.line, it.pos
			continue
		case c == 'n' && vs <= len(s)-4 && string(s[vs:vs+4]) == "null":
			it.kind, it.valStart, it.valEnd, it.pos = KindNull, vs, vs+4, vs+4
			it.flags = it.plain &^ flagValPlain
		case c == 't' && vs <= len(s)-4 && string(s[vs:vs+4]) == "true":
			it.kind, it.valStart, it.valEnd, it.pos = KindTrue, vs, vs+4, vs+4
			it.flags = it.plain
		case c == 'f' && vs <= len(s)-5 && string(s[vs:vs+5]) == "false":
			it.kind, it.valStart, it.valEnd, it.pos = KindFalse, vs, vs+5, vs+5
			it.flags = it.plain
		default:
			return it.nextStrict()
		}
		it.state = stateAfterValue
		if it.set.skip>>o&1 != 0 && it.clean {
			// The caller has no use for this key (see Skip): the value is
			// validated, go on to the next one.
			i = it.pos
			continue
		}
		return true
	}
}

// enter is Next's fast path into the object that is the value of the
// plain key line[keyStart:keyEnd] and starts at line[i]: it pushes a frame
// and moves past the '{', or it reports false, changing nothing, when the
// object would be too deep.
//
// It is kept out of line, so that Next need not save its registers around
// append's call on every field (the compiler spills them where they are
// set, not only on the path of the call).
//
//go:noinline
func (it *Iter) enter(i int) bool {
	if len(it.frames) >= MaxDepth-1 {
		return false
	}
	it.frames = append(it.frames, frame{keyStart: it.keyStart, keyEnd: it.keyEnd})
	it.plain = flagValPlain
	it.pos, it.state = i+1, stateObjOpen
	return true
}

// closeAll is the fast path of seekKey and end for a line that ends with
// line[i:], just after a value, when len(line)-i is one more than the depth:
// if those bytes are all '}', it ends the walk and reports true.
func (it *Iter) closeAll(i int) bool {
	for _, c := range it.line[i:] {
		if c != '}' {
			return false
		}
	}
	it.frames, it.prefixDepth, it.plain = it.frames[:0], 0, flagKeyPlain|flagValPlain
	it.pos, it.state = len(it.line), stateDone
	it.kind, it.flags = 0, 0
	return true
}

// nextStrict is Next's slow path: it walks from it.pos to the next leaf
// like Next, validating every byte with the general scanners, and reports
// every error. It never predicts keys, and the line is no longer clean.
func (it *Iter) nextStrict() bool {
	it.clean = false
	s, i := it.line, it.pos
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
		it.keyStart, it.keyEnd = ks, ke
		flags := it.plain &^ flagValPlain
		if kesc {
			flags = flagKeyEsc
		}

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
			if esc {
				flags |= flagEsc
			} else {
				flags |= flagValPlain
			}
			i = ve + 1
		case '{':
			it.frames = append(it.frames, frame{keyStart: ks, keyEnd: ke, keyEsc: kesc})
			it.plain = flagValPlain
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
			it.kind, it.valStart, it.valEnd = KindArray, i, ve
			if spaced {
				flags |= flagSpaced
			} else {
				flags |= flagValPlain
			}
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
			it.kind, it.valStart, it.valEnd = kind, i, ve
			if kind != KindNull {
				flags |= flagValPlain
			}
			i = ve
		}
		it.flags = flags
		it.pos, it.state = i, stateAfterValue
		return true
	}
}

// seekKey moves from s[i], in it.state, to the opening quote of the next
// key, closing objects on the way, and returns its index, which it also
// stores in it.pos with it.state stateObjOpen; or it returns -1 when the
// walk ends, at the end of the line or on an error. It handles everything
// but the `,"` between fields: the first key of an object, whitespace, and
// closing brackets.
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
				if i++; i < len(s) && s[i] <= ' ' {
					i = skipSpace(s, i)
				}
				if i < len(s) && s[i] == '"' {
					it.pos, it.state = i, stateObjOpen
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
				it.pos, it.state = i, stateObjOpen
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
			d := len(it.frames) - 1
			it.frames = it.frames[:d]
			it.prefixDepth = min(it.prefixDepth, d)
			if d == 0 {
				it.plain = flagKeyPlain | flagValPlain
			}
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
	it.kind, it.flags = 0, 0
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
	it.kind, it.flags = 0, 0
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
// are built in an internal buffer on the first call after Next, or come
// from a cache of those built for earlier lines. Either way the slice is
// valid until the next Next or Reset, and must not be modified. Key
// returns nil unless Next has just returned true.
func (it *Iter) Key() []byte {
	if it.flags&flagKeyPlain != 0 {
		// Fast path (inlined): a top-level plain key.
		return it.line[it.keyStart:it.keyEnd]
	}
	return it.buildKey()
}

// KeyToken identifies the current leaf's key across lines, without
// building it: two leaves with the same non-zero token, from any lines of
// one Iter, have the same Key. It is 0 when the Iter cannot vouch for that
// (some key of the line so far had to be scanned, see keyCache), and after
// Next returned false. Callers can cache what they derive from a key by
// token; the low 5 bits are the key's ordinal in the line, so token%32
// indexes a small direct-mapped cache well. Tokens change whenever the
// Iter's key predictions do (a line with another layout), so a file whose
// layouts alternate gets fewer hits.
func (it *Iter) KeyToken() uint64 {
	if !it.clean || it.kind == 0 {
		return 0
	}
	// A clean run stays below ordinal 32 and gen is at least 1 in it.
	return it.set.gen<<5 | uint64((it.ord-1)%32)
}

// Skip asks Next to pass over, without returning them, the later leaves
// whose key has token tok (a non-zero KeyToken): a caller that has
// classified a key as useless says so once, and Next no longer stops at
// it. Next still validates those leaves, so Err is unchanged. The request
// holds while tokens do: only in clean runs (see KeyToken) and until the
// Iter's key predictions change, which clears every request. Skip(0)
// does nothing.
func (it *Iter) Skip(tok uint64) {
	if tok != 0 && tok>>5 == it.set.gen {
		it.set.skip |= 1 << (tok % 32)
	}
}

// buildKey is Key's slow path: a nested or escaped key, built once per
// leaf in keyBuf, or found in the cache of keyCache.
func (it *Iter) buildKey() []byte {
	if it.kind == 0 {
		return nil
	}
	if it.clean {
		// Fast path: the keys and objects up to this leaf are those of
		// the line that cached its key (see keyCache).
		o := it.ord - 1
		set := it.set
		c := &set.keys[o%uint(len(set.keys))]
		if c.gen != set.gen || c.ord != o {
			c.key, c.gen, c.ord = append(c.key[:0], it.appendKey()...), set.gen, o
		}
		return c.key
	}
	if it.flags&flagKeyOK == 0 {
		it.appendKey()
		it.flags |= flagKeyOK
	}
	return it.keyBuf
}

// appendKey builds the current leaf's flattened key in keyBuf and
// returns it.
func (it *Iter) appendKey() []byte {
	var b []byte
	if d := len(it.frames); d > 0 && d == it.prefixDepth {
		// Fast path: the prefix is built; only the key changes.
		b = it.keyBuf[:it.frames[d-1].prefixEnd]
	} else {
		b = it.appendPrefix()
	}
	ks, ke, n := it.keyStart, it.keyEnd, len(b)
	switch {
	case it.flags&flagKeyEsc != 0:
		b = appendUnescapeValid(b, it.line[ks:ke])
	case ke-ks <= 16 && n+16 <= cap(b) && ks+16 <= len(it.line):
		// Fast path: copy a short key as one 16-byte block, without a
		// call (append would call memmove). appendPrefix leaves room.
		*(*[16]byte)(b[n : n+16]) = [16]byte(it.line[ks : ks+16])
		b = b[:n+ke-ks]
	default:
		b = append(b, it.line[ks:ke]...)
	}
	it.keyBuf = b
	return b
}

// appendPrefix returns keyBuf holding the "a.b." prefix of the current
// object, appending the keys of the frames entered since the last call.
func (it *Iter) appendPrefix() []byte {
	d := it.prefixDepth
	b := it.keyBuf[:0]
	if d > 0 {
		b = it.keyBuf[:it.frames[d-1].prefixEnd]
	}
	for ; d < len(it.frames); d++ {
		f := &it.frames[d]
		k := it.line[f.keyStart:f.keyEnd]
		if f.keyEsc {
			b = appendUnescapeValid(b, k)
		} else {
			b = append(b, k...)
		}
		b = append(b, '.')
		f.prefixEnd = len(b)
	}
	it.prefixDepth = d
	if cap(b)-len(b) < 16 {
		// Room for appendKey's fast path.
		b = append(b, make([]byte, 16)...)[:len(b)]
	}
	return b
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

// Rest returns the part of the line Next has not scanned yet: all of it
// after the current leaf's value (after a string's closing quote), or nil
// unless Next has just returned true. Every later leaf's key is spelled in
// Rest: a caller that finds neither a backslash nor a name's last dotted
// segment in it knows that no later leaf of the line has that name.
func (it *Iter) Rest() []byte {
	if it.kind == 0 {
		return nil
	}
	return it.line[it.pos:]
}

// KeyEscaped reports whether the current leaf's key, or the key of an
// object enclosing it, holds backslash escapes: whether Key differs from
// the raw keys joined with '.'. Cost: a flag, and one more per enclosing
// object.
func (it *Iter) KeyEscaped() bool {
	if it.kind == 0 {
		return false
	}
	if it.flags&flagKeyEsc != 0 {
		return true
	}
	for i := range it.frames {
		if it.frames[i].keyEsc {
			return true
		}
	}
	return false
}

// Escaped reports whether the current value is a string holding backslash
// escapes, that is whether Value differs from Raw for a string.
func (it *Iter) Escaped() bool { return it.kind == KindString && it.flags&flagEsc != 0 }

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
	if it.flags&flagValPlain != 0 {
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
	case it.flags&flagValOK != 0:
	case it.kind == KindNull:
		it.val = it.line[it.valStart:it.valStart]
	case it.kind == KindString: // with escapes
		it.valBuf = appendUnescapeValid(it.valBuf[:0], it.line[it.valStart:it.valEnd])
		it.val = it.valBuf
	default: // an array with whitespace
		it.valBuf = appendCompactValid(it.valBuf[:0], it.line[it.valStart:it.valEnd])
		it.val = it.valBuf
	}
	it.flags |= flagValOK
	return it.val
}
