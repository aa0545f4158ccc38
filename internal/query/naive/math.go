package naive

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/spate-io/spate/internal/query"
)

// applyMath is the math pipe. Each "expr as result" is computed for every
// row and stored before the next one is computed, so later expressions see
// earlier results. A field is read as a mathNumber (NaN if it is not one;
// _time as Unix nanoseconds). The result is printed in shortest plain form,
// "NaN" for NaN.
func (ev *evaluator) applyMath(p *query.PipeMath, rows []row) ([]row, error) {
	for _, r := range rows {
		for _, a := range p.Assigns {
			f, err := ev.evalMath(a.Expr, r)
			if err != nil {
				return nil, err
			}
			r.set(a.Result, formatFloat(f))
		}
	}
	return rows, nil
}

func (ev *evaluator) evalMath(e *query.MathExpr, r row) (float64, error) {
	switch e.Op {
	case "num":
		return e.Num, nil
	case "field":
		if e.Field == "_time" {
			if ns, ok := parseTime(r["_time"]); ok {
				return float64(ns), nil
			}
			return math.NaN(), nil
		}
		return mathNumber(r[e.Field]), nil
	}

	args := make([]float64, len(e.Args))
	for i, a := range e.Args {
		f, err := ev.evalMath(a, r)
		if err != nil {
			return 0, err
		}
		args[i] = f
	}
	need := func(n int) error {
		if len(args) != n {
			return fmt.Errorf("math %s needs %d args; got %d", e.Op, n, len(args))
		}
		return nil
	}

	switch e.Op {
	case "+", "-", "*", "/", "%", "^", "default", "&", "or", "xor":
		if err := need(2); err != nil {
			return 0, err
		}
		x, y := args[0], args[1]
		switch e.Op {
		case "+":
			return x + y, nil
		case "-":
			return x - y, nil
		case "*":
			return x * y, nil
		case "/":
			return x / y, nil
		case "%":
			return mathMod(x, y), nil
		case "^":
			return math.Pow(x, y), nil
		case "default":
			if math.IsNaN(x) {
				return y, nil
			}
			return x, nil
		default: // bitwise on the uint64 values
			if math.IsNaN(x) || math.IsNaN(y) {
				return math.NaN(), nil
			}
			a, b := uint64(x), uint64(y)
			switch e.Op {
			case "&":
				return float64(a & b), nil
			case "or":
				return float64(a | b), nil
			}
			return float64(a ^ b), nil
		}
	case "neg":
		if err := need(1); err != nil {
			return 0, err
		}
		return -args[0], nil
	case "abs", "ceil", "exp", "floor", "ln":
		if err := need(1); err != nil {
			return 0, err
		}
		fn := map[string]func(float64) float64{
			"abs": math.Abs, "ceil": math.Ceil, "exp": math.Exp, "floor": math.Floor, "ln": math.Log,
		}[e.Op]
		return fn(args[0]), nil
	case "max", "min":
		// NaN arguments are skipped unless all are NaN.
		res := math.NaN()
		for _, a := range args {
			if math.IsNaN(res) || (e.Op == "max" && a > res) || (e.Op == "min" && a < res) {
				res = a
			}
		}
		return res, nil
	case "round":
		switch len(args) {
		case 1:
			return math.Round(args[0]), nil
		case 2:
			return roundToNearest(args[0], args[1]), nil
		}
		return 0, fmt.Errorf("math round needs 1 or 2 args; got %d", len(args))
	case "now":
		return float64(ev.opts.Now.UnixNano()), nil
	case "rand":
		return rand.Float64(), nil
	}
	return 0, fmt.Errorf("unsupported math operation %q", e.Op)
}

// mathMod is '%': integer remainder when both sides are integers (NaN for a
// zero divisor), else math.Mod.
func mathMod(x, y float64) float64 {
	xi, yi := int64(x), int64(y)
	if float64(xi) == x && float64(yi) == y {
		if yi == 0 {
			return math.NaN()
		}
		return float64(xi % yi)
	}
	return math.Mod(x, y)
}

// roundToNearest rounds f to the nearest multiple of nearest, halves away
// from zero, then trims float noise to the decimal places nearest has
// (round(12.5, 10) = 10; round(1.2345, 0.01) = 1.23).
func roundToNearest(f, nearest float64) float64 {
	if math.IsNaN(f) || math.IsNaN(nearest) || nearest == 0 {
		return math.NaN()
	}
	f += 0.5 * math.Copysign(nearest, f)
	f -= math.Mod(f, nearest)
	p10 := math.Pow10(decimalPlaces(nearest))
	f, _ = math.Modf(f * p10)
	return f / p10
}

// decimalPlaces is the number of digits after the decimal point in the
// shortest text of f (negative for multiples of 10: 100 gives -2).
func decimalPlaces(f float64) int {
	s := strconv.FormatFloat(math.Abs(f), 'e', -1, 64) // d.ddde±x
	mant, expText, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(expText)
	frac := 0
	if _, fr, ok := strings.Cut(mant, "."); ok {
		frac = len(fr)
	}
	return frac - exp
}
