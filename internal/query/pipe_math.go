package query

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// This file holds the math pipe ("math" or "eval"), parsed as
//
//	math expr [as] result, ...
//
// with VictoriaLogs' operator priorities: '^' binds tightest, then '*', '/'
// and '%', then '+' and '-', then '&', "xor" and "or" (bitwise, on the
// numbers' uint64 conversions), and "default" loosest ("x default -1"). All
// binary operators are left-associative. Unary minus applies to the operand
// that follows it ("-x ^ 2" is (-x)^2). Operands are numbers (with units:
// "1KiB", "5m"), field names, parenthesized expressions and the functions
// abs, ceil, exp, floor, ln, max, min, round, now (the query's time, in
// Unix nanoseconds) and rand (uniform in [0, 1)).

// MathExpr is a node of a math expression.
//   - Op "num": a number literal, Num (Text as written).
//   - Op "field": the value of field Field, as a number (NaN if not a number).
//   - Op "+", "-", "*", "/", "%", "^": binary, Args[0] op Args[1].
//   - Op "neg": unary minus, Args[0].
//   - Op "default": Args[0] if it is not NaN, else Args[1] ("x default -1").
//   - Op "abs", "ceil", "exp", "floor", "ln", "max", "min", "round", ...: a
//     function call over Args (round takes an optional second argument, the
//     step).
type MathExpr struct {
	Op    string
	Num   float64
	Text  string
	Field string
	Args  []*MathExpr
}

// MathAssign is one "expr as result" of math.
type MathAssign struct {
	Expr   *MathExpr
	Result string
}

// PipeMath computes numbers: "math a * 2 as b, round(c) as d" (also eval).
// A result that is NaN is stored as "NaN".
type PipeMath struct{ Assigns []MathAssign }

func (*PipeMath) isPipe() {}

// isMathBinary reports whether e is a binary operator node and returns its
// priority.
func isMathBinary(e *MathExpr) (int, bool) {
	prio, ok := mathOps[e.Op]
	return prio, ok && len(e.Args) == 2
}

// quoteMathField prints a field name inside a math expression; names that
// start like a number are quoted as well.
func quoteMathField(s string) string {
	if isNumberPrefixLit(s) {
		return strconv.Quote(s)
	}
	return quoteToken(s)
}

// String prints the expression with the fewest parentheses that keep its
// structure.
func (e *MathExpr) String() string {
	switch e.Op {
	case "num":
		if e.Text != "" {
			return e.Text
		}
		return strconv.FormatFloat(e.Num, 'g', -1, 64)
	case "field":
		return quoteMathField(canonicalField(e.Field))
	case "neg":
		if len(e.Args) == 1 {
			s := e.Args[0].String()
			if _, ok := isMathBinary(e.Args[0]); ok {
				s = "(" + s + ")"
			}
			return "-" + s
		}
	}
	if prio, ok := isMathBinary(e); ok {
		l, r := e.Args[0].String(), e.Args[1].String()
		if lp, ok := isMathBinary(e.Args[0]); ok && lp > prio {
			l = "(" + l + ")"
		}
		if rp, ok := isMathBinary(e.Args[1]); ok && rp >= prio {
			r = "(" + r + ")"
		}
		return l + " " + e.Op + " " + r
	}
	a := make([]string, len(e.Args))
	for i, arg := range e.Args {
		a[i] = arg.String()
	}
	return e.Op + "(" + strings.Join(a, ", ") + ")"
}

func (p *PipeMath) String() string {
	a := make([]string, len(p.Assigns))
	for i, as := range p.Assigns {
		a[i] = as.Expr.String() + " as " + quoteToken(as.Result)
	}
	return "math " + strings.Join(a, ", ")
}

// mathOps gives the priority of each binary operator; a lower number binds
// tighter, as in VictoriaLogs (lib/logstorage/pipe_math.go).
var mathOps = map[string]int{
	"^":       1,
	"*":       2,
	"/":       2,
	"%":       2,
	"+":       3,
	"-":       3,
	"&":       4,
	"xor":     5,
	"or":      6,
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
	case tokIsKw(t, "default", "xor", "or"):
		op := strings.ToLower(t.text)
		return op, mathOps[op], true
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
	"now":   {0, 0},
	"rand":  {0, 0},
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

func (p *PipeMath) newProcessor(pl *plan, next processor) (processor, error) {
	now := pl.opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	env := &mathEnv{now: float64(now.UnixNano())}
	if usesRand(p.Assigns) {
		env.rng = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	return &mathProc{assigns: p.Assigns, env: env, next: next}, nil
}

// mathProc implements math (eval): each assignment is computed in order, so
// later expressions see earlier results.
type mathProc struct {
	assigns []MathAssign
	env     *mathEnv
	next    processor
	arena   arena
}

// mathEnv is what now() and rand() read: the query's time (Options.Now,
// or the time the pipe was compiled), in Unix nanoseconds, and a random
// source of the processor's own (a worker's).
type mathEnv struct {
	now float64
	rng *rand.Rand
}

// usesRand reports whether an expression of assigns calls rand().
func usesRand(assigns []MathAssign) bool {
	var walk func(e *MathExpr) bool
	walk = func(e *MathExpr) bool {
		if e.Op == "rand" {
			return true
		}
		return slices.ContainsFunc(e.Args, walk)
	}
	return slices.ContainsFunc(assigns, func(a MathAssign) bool { return walk(a.Expr) })
}

func (p *mathProc) push(r *Row) error {
	p.arena.reset()
	for _, a := range p.assigns {
		v := evalMath(a.Expr, r, p.env)
		r.Set(a.Result, p.arena.take(appendNumber(p.arena.appendBuf(32), v)))
	}
	return p.next.push(r)
}

func (p *mathProc) flush() error { return p.next.flush() }

// evalMath evaluates e over r; a field that is not a number is NaN.
func evalMath(e *MathExpr, r *Row, env *mathEnv) float64 {
	arg := func(i int) float64 {
		if i < len(e.Args) {
			return evalMath(e.Args[i], r, env)
		}
		return math.NaN()
	}
	switch e.Op {
	case "num":
		return e.Num
	case "field":
		v := r.Get(e.Field)
		if n, ok := mathNumber(v); ok {
			return n
		}
		if e.Field == "_time" {
			if t, ok := rowTime(r); ok {
				return float64(t)
			}
		}
		return math.NaN()
	case "+":
		return arg(0) + arg(1)
	case "-":
		return arg(0) - arg(1)
	case "*":
		return arg(0) * arg(1)
	case "/":
		return arg(0) / arg(1)
	case "%":
		// As VictoriaLogs: whole numbers take the integer remainder (no
		// -0; NaN for a zero divisor), others math.Mod.
		x, y := arg(0), arg(1)
		if xi, yi := int64(x), int64(y); float64(xi) == x && float64(yi) == y {
			if yi == 0 {
				return math.NaN()
			}
			return float64(xi % yi)
		}
		return math.Mod(x, y)
	case "^":
		return math.Pow(arg(0), arg(1))
	case "neg":
		return -arg(0)
	case "default":
		if v := arg(0); !math.IsNaN(v) {
			return v
		}
		return arg(1)
	case "abs":
		return math.Abs(arg(0))
	case "ceil":
		return math.Ceil(arg(0))
	case "floor":
		return math.Floor(arg(0))
	case "exp":
		return math.Exp(arg(0))
	case "ln":
		return math.Log(arg(0))
	case "round":
		v := arg(0)
		if len(e.Args) > 1 {
			step := arg(1)
			if step == 0 || math.IsNaN(step) {
				return v
			}
			return math.Round(v/step) * step
		}
		return math.Round(v)
	case "max":
		m := math.NaN()
		for i := range e.Args {
			v := arg(i)
			if math.IsNaN(m) || v > m {
				m = v
			}
		}
		return m
	case "min":
		m := math.NaN()
		for i := range e.Args {
			v := arg(i)
			if math.IsNaN(m) || v < m {
				m = v
			}
		}
		return m
	case "&", "xor", "or":
		// On the numbers' uint64 conversions, as VictoriaLogs computes them.
		x, y := arg(0), arg(1)
		if math.IsNaN(x) || math.IsNaN(y) {
			return math.NaN()
		}
		a, b := uint64(x), uint64(y)
		switch e.Op {
		case "&":
			return float64(a & b)
		case "xor":
			return float64(a ^ b)
		}
		return float64(a | b)
	case "now":
		return env.now
	case "rand":
		// As VictoriaLogs: a uint32 over 2^32.
		return float64(env.rng.Uint32()) / (1 << 32)
	}
	return math.NaN()
}
