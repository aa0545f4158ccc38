package query

import (
	"unicode"
	"unicode/utf8"
)

// PipeUnpackWords stores the words of From (default _msg) as a JSON array
// of strings in Result (default From): "unpack_words [from f] [as r]
// [drop_duplicates]". Words are VictoriaLogs' tokens: runs of letters,
// digits and '_' (Unicode ones too); drop_duplicates keeps each word's
// first occurrence only. A value without words gives [].
type PipeUnpackWords struct {
	From, Result   string
	DropDuplicates bool
}

func (*PipeUnpackWords) isPipe() {}

func (p *PipeUnpackWords) String() string {
	s := "unpack_words"
	if p.From != "_msg" {
		s += " from " + quoteToken(p.From)
	}
	if p.Result != p.From {
		s += " as " + quoteToken(p.Result)
	}
	if p.DropDuplicates {
		s += " drop_duplicates"
	}
	return s
}

// parseUnpackWordsPipe parses "unpack_words [[from] f] [[as] r]
// [drop_duplicates]".
func (p *parser) parseUnpackWordsPipe(_ string) (Pipe, error) {
	p.next()
	pu := &PipeUnpackWords{From: "_msg"}
	var err error
	if !p.isTrailer() && !p.isKw("drop_duplicates", "as") {
		if p.isKw("from") {
			p.next()
		}
		if pu.From, err = p.parseFieldName("field after 'from'"); err != nil {
			return nil, err
		}
	}
	pu.Result = pu.From
	if !p.isTrailer() && !p.isKw("drop_duplicates") {
		if p.isKw("as") {
			p.next()
		}
		if pu.Result, err = p.parseFieldName("result field"); err != nil {
			return nil, err
		}
	}
	if p.isKw("drop_duplicates") {
		p.next()
		pu.DropDuplicates = true
	}
	return pu, nil
}

func (p *PipeUnpackWords) newProcessor(_ *plan, next processor) (processor, error) {
	return &unpackWordsProc{p: p, next: next}, nil
}

type unpackWordsProc struct {
	p     *PipeUnpackWords
	next  processor
	words []string
	seen  map[string]struct{}
	buf   []byte
}

func (p *unpackWordsProc) push(r *Row) error {
	p.words = appendWords(p.words[:0], r.Get(p.p.From))
	if p.p.DropDuplicates && len(p.words) > 1 {
		if p.seen == nil {
			p.seen = map[string]struct{}{}
		}
		clear(p.seen)
		kept := p.words[:0]
		for _, w := range p.words {
			if _, ok := p.seen[w]; !ok {
				p.seen[w] = struct{}{}
				kept = append(kept, w)
			}
		}
		p.words = kept
	}
	p.buf = append(p.buf[:0], '[')
	for i, w := range p.words {
		if i > 0 {
			p.buf = append(p.buf, ',')
		}
		p.buf = appendJSONStringVL(p.buf, w)
	}
	p.buf = append(p.buf, ']')
	clear(p.words) // they alias the row
	if p.seen != nil {
		clear(p.seen)
	}
	r.Set(p.p.Result, unsafeString(p.buf))
	return p.next.push(r)
}

func (p *unpackWordsProc) flush() error { return p.next.flush() }

// appendWords appends the words of s (substrings of it) to dst.
func appendWords(dst []string, s string) []string {
	start := -1
	for i := 0; i < len(s); {
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		word := r < utf8.RuneSelf && isTokenByte(byte(r)) ||
			r >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r))
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			dst = append(dst, s[start:i])
			start = -1
		}
		i += size
	}
	if start >= 0 {
		dst = append(dst, s[start:])
	}
	return dst
}
