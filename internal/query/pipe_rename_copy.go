package query

import (
	"fmt"
	"strings"
)

// This file holds the rename and copy pipes, which share their pairs
// (RenamePair, parseRenamePairs) and their processor (renameProc).

// PipeRename renames fields: "rename a as b, c as d" (also mv).
type PipeRename struct{ Pairs []RenamePair }

// PipeCopy copies fields: "copy a as b" (also cp).
type PipeCopy struct{ Pairs []RenamePair }

// RenamePair is one "src as dst" of rename and copy. If Src ends in '*', Dst
// must too, and every field starting with Src's prefix is renamed to Dst's
// prefix plus the rest of its name.
type RenamePair struct{ Src, Dst string }

func (*PipeRename) isPipe() {}

func (*PipeCopy) isPipe() {}

func (p *PipeRename) String() string { return "rename " + joinRenamePairs(p.Pairs) }

func (p *PipeCopy) String() string { return "copy " + joinRenamePairs(p.Pairs) }

// joinRenamePairs prints "a as b, c as d".
func joinRenamePairs(pairs []RenamePair) string {
	a := make([]string, len(pairs))
	for i, rp := range pairs {
		a[i] = quoteFieldPattern(rp.Src) + " as " + quoteFieldPattern(rp.Dst)
	}
	return strings.Join(a, ", ")
}

// parseRenamePipe parses "rename a as b, ..." and "mv a b, ...".
func (p *parser) parseRenamePipe(name string) (Pipe, error) {
	pairs, err := p.parseRenamePairs(name)
	if err != nil {
		return nil, err
	}
	return &PipeRename{Pairs: pairs}, nil
}

// parseCopyPipe parses "copy a as b, ..." and "cp a b, ...".
func (p *parser) parseCopyPipe(name string) (Pipe, error) {
	pairs, err := p.parseRenamePairs(name)
	if err != nil {
		return nil, err
	}
	return &PipeCopy{Pairs: pairs}, nil
}

// parseRenamePairs parses "src as dst, ..." of rename and copy ("as" is
// optional).
func (p *parser) parseRenamePairs(pipe string) ([]RenamePair, error) {
	p.next()
	var pairs []RenamePair
	for {
		srcPos := p.cur().pos
		src, _, err := p.parseFieldPattern("source field")
		if err != nil {
			return nil, err
		}
		if p.isKw("as") {
			p.next()
		}
		dstPos := p.cur().pos
		dst, _, err := p.parseFieldPattern("destination field")
		if err != nil {
			return nil, err
		}
		srcWild, dstWild := strings.HasSuffix(src, "*"), strings.HasSuffix(dst, "*")
		switch {
		case srcWild && !dstWild:
			return nil, p.errorHint(dstPos, fmt.Sprintf("write %s as %s*", quoteFieldPattern(src), quoteToken(dst)),
				"%s: the destination of the pattern %s must end with '*'", pipe, quoteFieldPattern(src))
		case dstWild && !srcWild:
			return nil, p.errorf(srcPos, "%s: the source of the pattern %s must end with '*'", pipe, quoteFieldPattern(dst))
		}
		pairs = append(pairs, RenamePair{Src: src, Dst: dst})
		if !p.isPunct(",") {
			return pairs, nil
		}
		p.next()
	}
}

func (p *PipeRename) newProcessor(_ *plan, next processor) (processor, error) {
	return &renameProc{pairs: p.Pairs, next: next}, nil
}

func (p *PipeCopy) newProcessor(_ *plan, next processor) (processor, error) {
	return &renameProc{pairs: p.Pairs, copy: true, next: next}, nil
}

// renameProc implements rename and copy.
type renameProc struct {
	pairs []RenamePair
	copy  bool
	next  processor
	buf   []Field
	arena arena
}

func (p *renameProc) push(r *Row) error {
	p.arena.reset()
	for _, pr := range p.pairs {
		src, hasPrefix := strings.CutSuffix(pr.Src, "*")
		if !hasPrefix {
			i := r.index(pr.Src)
			if pr.Src == pr.Dst {
				continue
			}
			if i < 0 {
				// A missing source makes the destination empty (missing) too.
				r.Delete(pr.Dst)
				continue
			}
			v := r.Fields[i].Value
			wasTime := pr.Src == "_time" && r.HasTime
			t := r.Time
			if !p.copy {
				r.Delete(pr.Src)
			}
			r.Set(pr.Dst, v)
			if pr.Dst == "_time" && wasTime {
				r.Time, r.HasTime = t, true
			}
			continue
		}
		dst := strings.TrimSuffix(pr.Dst, "*")
		p.buf = p.buf[:0]
		for _, f := range r.Fields {
			if strings.HasPrefix(f.Name, src) {
				p.buf = append(p.buf, f)
			}
		}
		for _, f := range p.buf {
			if !p.copy {
				r.Delete(f.Name)
			}
		}
		for _, f := range p.buf {
			name := p.arena.addString(dst + f.Name[len(src):])
			r.Set(name, f.Value)
		}
	}
	return p.next.push(r)
}

func (p *renameProc) flush() error { return p.next.flush() }
