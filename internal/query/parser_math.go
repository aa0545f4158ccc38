package query

import (
	"slices"
	"strconv"
	"strings"
)

// This file parses the math pipe ("math" or "eval"):
//
//	math expr [as] result, ...
//
// with VictoriaLogs' operator priorities: '^' binds tightest, then '*', '/'
// and '%', then '+' and '-', and "default" loosest ("x default -1"). All
// binary operators are left-associative. Unary minus applies to the operand
// that follows it ("-x ^ 2" is (-x)^2). Operands are numbers (with units:
// "1KiB", "5m"), field names, parenthesized expressions and the functions
// abs, ceil, exp, floor, ln, max, min and round.

// mathOps gives the priority of each binary operator; a lower number binds
// tighter, as in VictoriaLogs (lib/logstorage/pipe_math.go).
var mathOps = map[string]int{
	"^":       1,
	"*":       2,
	"/":       2,
	"%":       2,
	"+":       3,
	"-":       3,
	"default": 10,
}

// mathLoosest is the priority of the loosest operator.
const mathLoosest = 10

// parseMathPipe parses "math ..." and "eval ...".
func (p *parser) parseMathPipe(_ string) (Pipe, error) {
	p.next()
	pm := &PipeMath{}
	for {
		e, err := p.parseMathExpr(mathLoosest)
		if err != nil {
			return nil, err
		}
		a := MathAssign{Expr: e}
		if p.isTrailer() || p.isPunct(",") {
			a.Result = e.String()
		} else {
			if p.isKw("as") {
				p.next()
			}
			if a.Result, err = p.parseFieldName("result name"); err != nil {
				return nil, err
			}
		}
		pm.Assigns = append(pm.Assigns, a)
		if p.isTrailer() {
			return pm, nil
		}
		if !p.isPunct(",") {
			return nil, p.errorf(p.cur().pos, "unexpected %s after math expression %s; expecting ',' or '|'", p.describe(), e)
		}
		p.next()
	}
}

// mathOp returns the binary operator at the current token and its priority.
func (p *parser) mathOp() (string, int, bool) {
	t := p.cur()
	switch {
	case t.kind == lexPunct:
		prio, ok := mathOps[t.text]
		return t.text, prio, ok
	case tokIsKw(t, "default"):
		return "default", mathOps["default"], true
	}
	return "", 0, false
}

// parseMathExpr parses a chain of operands joined by operators of priority
// maxPrio or tighter.
func (p *parser) parseMathExpr(maxPrio int) (*MathExpr, error) {
	left, err := p.parseMathOperand()
	if err != nil {
		return nil, err
	}
	for {
		op, prio, ok := p.mathOp()
		if !ok {
			if t := p.cur(); t.kind == lexPunct && t.text == "&" || tokIsKw(t, "xor", "or") {
				return nil, p.errorf(t.pos, "math operator %q is not supported by spate", strings.ToLower(t.text))
			}
			return left, nil
		}
		if prio > maxPrio {
			return left, nil
		}
		opPos := p.cur().pos
		p.next()
		if p.isTrailer() || p.isPunct(",") {
			return nil, p.errorf(opPos, "missing operand after %q", op)
		}
		// Left associativity: the right operand takes only tighter operators.
		right, err := p.parseMathExpr(prio - 1)
		if err != nil {
			return nil, err
		}
		left = &MathExpr{Op: op, Args: []*MathExpr{left, right}}
	}
}

// mathArity gives the allowed argument counts of the math functions: min
// and max take two or more.
var mathArity = map[string][2]int{
	"abs":   {1, 1},
	"ceil":  {1, 1},
	"exp":   {1, 1},
	"floor": {1, 1},
	"ln":    {1, 1},
	"max":   {2, -1},
	"min":   {2, -1},
	"round": {1, 2},
}

// parseMathOperand parses a number, a field, "(expr)", "-operand" or a
// function call.
func (p *parser) parseMathOperand() (*MathExpr, error) {
	t := p.cur()
	if err := p.enter(t.pos); err != nil {
		return nil, err
	}
	defer p.leave()
	switch {
	case t.kind == lexEOF:
		return nil, p.errorf(t.pos, "missing math expression; got end of query")
	case t.kind == lexPunct && t.text == "(":
		p.next()
		e, err := p.parseMathExpr(mathLoosest)
		if err != nil {
			return nil, err
		}
		if err := p.expectPunct(")", "in math expression"); err != nil {
			return nil, err
		}
		return e, nil
	case t.kind == lexPunct && t.text == "-":
		p.next()
		e, err := p.parseMathOperand()
		if err != nil {
			return nil, err
		}
		return &MathExpr{Op: "neg", Args: []*MathExpr{e}}, nil
	case t.kind == lexPunct && t.text == "+":
		p.next()
		return p.parseMathOperand()
	case t.kind == lexWord && slices.Contains(unsupportedMathFuncs, strings.ToLower(t.text)):
		return nil, p.errorf(t.pos, "math function %q is not supported by spate: its result is not deterministic", strings.ToLower(t.text))
	case t.kind == lexWord && slices.Contains(supportedMathFuncs, strings.ToLower(t.text)):
		return p.parseMathFunc()
	case t.kind == lexWord || t.kind == lexQuoted:
		if isNumberPrefixLit(t.text) {
			return p.parseMathNumber()
		}
		name, err := p.compound(stopsMath, "field name")
		if err != nil {
			return nil, err
		}
		return &MathExpr{Op: "field", Field: canonicalField(name)}, nil
	}
	return nil, p.errorf(t.pos, "unexpected %s in math expression", p.describe())
}

// parseMathNumber parses a number operand. A quoted number keeps its quotes
// in Text so that String() gives the same tree back.
func (p *parser) parseMathNumber() (*MathExpr, error) {
	pos := p.cur().pos
	s, quoted, err := p.compoundQ(stopsMath, "number")
	if err != nil {
		return nil, err
	}
	n, ok := parseNumberLit(s)
	if !ok {
		return nil, p.errorHint(pos, "numbers look like 10, -1.5, 1e3, 10KiB or 1.5s; quote field names that start with a digit",
			"cannot parse %q as a number", s)
	}
	if quoted {
		s = strconv.Quote(s)
	}
	return &MathExpr{Op: "num", Num: n, Text: s}, nil
}

// parseMathFunc parses "name(arg, ...)".
func (p *parser) parseMathFunc() (*MathExpr, error) {
	t := p.cur()
	name := strings.ToLower(t.text)
	p.next()
	if err := p.expectPunct("(", "after math function "+strconv.Quote(name)); err != nil {
		return nil, err
	}
	e := &MathExpr{Op: name}
	for !p.isPunct(")") {
		arg, err := p.parseMathExpr(mathLoosest)
		if err != nil {
			return nil, err
		}
		e.Args = append(e.Args, arg)
		if p.isPunct(")") {
			break
		}
		if !p.isPunct(",") {
			return nil, p.errorf(p.cur().pos, "missing ',' or ')' in %s(); got %s", name, p.describe())
		}
		p.next()
	}
	p.next()
	arity := mathArity[name]
	if n := len(e.Args); n < arity[0] || arity[1] >= 0 && n > arity[1] {
		want := strconv.Itoa(arity[0])
		switch {
		case arity[1] < 0:
			want = "at least " + want
		case arity[1] != arity[0]:
			want += " or " + strconv.Itoa(arity[1])
		}
		return nil, p.errorf(t.pos, "math function %s() takes %s arguments; got %d", name, want, n)
	}
	return e, nil
}
