package query

// PipeDecolorize removes ANSI color escape sequences ("\x1b[31m" and the
// like: ESC '[', parameter bytes, intermediate bytes, a final byte) from a
// field (default _msg): "decolorize [field]".
type PipeDecolorize struct{ Field string }

func (*PipeDecolorize) isPipe() {}

func (p *PipeDecolorize) String() string {
	if p.Field == "_msg" {
		return "decolorize"
	}
	return "decolorize " + quoteToken(p.Field)
}

// parseDecolorizePipe parses "decolorize [field]".
func (p *parser) parseDecolorizePipe(_ string) (Pipe, error) {
	p.next()
	pd := &PipeDecolorize{Field: "_msg"}
	if !p.isTrailer() {
		var err error
		if pd.Field, err = p.parseFieldName("field after 'decolorize'"); err != nil {
			return nil, err
		}
	}
	return pd, nil
}

func (p *PipeDecolorize) newProcessor(_ *plan, next processor) (processor, error) {
	return &decolorizeProc{field: p.Field, next: next}, nil
}

type decolorizeProc struct {
	field string
	next  processor
	buf   []byte
}

func (p *decolorizeProc) push(r *Row) error {
	v := r.Get(p.field)
	if hasColorSequence(v) {
		p.buf = appendDecolorized(p.buf[:0], v)
		r.Set(p.field, unsafeString(p.buf))
	}
	return p.next.push(r)
}

func (p *decolorizeProc) flush() error { return p.next.flush() }

func hasColorSequence(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == 0x1b && s[i+1] == '[' {
			return true
		}
	}
	return false
}

// appendDecolorized appends s without its escape sequences: each "\x1b["
// with the parameter bytes (0x30-0x3f), intermediate bytes (0x20-0x2f) and
// final byte (0x30-0x7e) after it, any of them may be missing (ECMA-48).
func appendDecolorized(dst []byte, s string) []byte {
	for {
		i := -1
		for j := 0; j+1 < len(s); j++ {
			if s[j] == 0x1b && s[j+1] == '[' {
				i = j
				break
			}
		}
		if i < 0 {
			return append(dst, s...)
		}
		dst = append(dst, s[:i]...)
		s = s[i+2:]
		n := 0
		for n < len(s) && s[n] >= 0x30 && s[n] <= 0x3f {
			n++
		}
		for n < len(s) && s[n] >= 0x20 && s[n] <= 0x2f {
			n++
		}
		if n < len(s) && s[n] >= 0x30 && s[n] <= 0x7e {
			n++
		}
		s = s[n:]
	}
}
