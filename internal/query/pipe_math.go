package query

import (
	"math"
)

// mathProc implements math (eval): each assignment is computed in order, so
// later expressions see earlier results.
type mathProc struct {
	assigns []MathAssign
	next    processor
	arena   arena
}

func (p *PipeMath) newProcessor(_ *plan, next processor) (processor, error) {
	return &mathProc{assigns: p.Assigns, next: next}, nil
}

func (p *mathProc) push(r *Row) error {
	p.arena.reset()
	for _, a := range p.assigns {
		v := evalMath(a.Expr, r)
		r.Set(a.Result, p.arena.take(appendNumber(p.arena.appendBuf(32), v)))
	}
	return p.next.push(r)
}

func (p *mathProc) flush() error { return p.next.flush() }

// evalMath evaluates e over r; a field that is not a number is NaN.
func evalMath(e *MathExpr, r *Row) float64 {
	arg := func(i int) float64 {
		if i < len(e.Args) {
			return evalMath(e.Args[i], r)
		}
		return math.NaN()
	}
	switch e.Op {
	case "num":
		return e.Num
	case "field":
		v := r.Get(e.Field)
		if n, ok := parseNumber(v); ok {
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
		return math.Mod(arg(0), arg(1))
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
	case "&":
		return float64(uint64(arg(0)) & uint64(arg(1)))
	case "|":
		return float64(uint64(arg(0)) | uint64(arg(1)))
	case "xor":
		return float64(uint64(arg(0)) ^ uint64(arg(1)))
	}
	return math.NaN()
}
