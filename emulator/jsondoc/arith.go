package jsondoc

import (
	"encoding/json"
	"math"
	"strconv"
)

// arithExpr is a binary arithmetic operator (+ - * / %) or string
// concatenation (||). Operands of the wrong type make the result
// undefined, as do division by zero and results that are not finite.
type arithExpr struct {
	op   string
	l, r expr
}

func (x *arithExpr) eval(env *evalEnv) *Value {
	l, r := x.l.eval(env), x.r.eval(env)
	if l == nil || r == nil {
		return nil
	}
	if x.op == "||" {
		if l.Kind != KindString || r.Kind != KindString {
			return nil
		}
		return String(l.Str + r.Str)
	}
	if l.Kind != KindNumber || r.Kind != KindNumber {
		return nil
	}
	return arith(x.op, l.Num, r.Num)
}

func (x *arithExpr) children() []expr { return []expr{x.l, x.r} }

// arith keeps integer arithmetic exact while it fits in int64 (ids and
// counters beyond 2^53 stay what they are) and falls back to float64,
// which is what the service computes in.
func arith(op string, a, b json.Number) *Value {
	if x, ok := parseInt64(a); ok {
		if y, ok := parseInt64(b); ok {
			if v, ok := intArith(op, x, y); ok {
				return v
			}
		}
	}
	x, y := numberFloat(a), numberFloat(b)
	var f float64
	switch op {
	case "+":
		f = x + y
	case "-":
		f = x - y
	case "*":
		f = x * y
	case "/":
		if y == 0 {
			return nil
		}
		f = x / y
	case "%":
		if y == 0 {
			return nil
		}
		f = math.Mod(x, y)
	}
	return floatValue(f)
}

// intArith succeeds when the exact result is an int64.
func intArith(op string, x, y int64) (*Value, bool) {
	var r int64
	switch op {
	case "+":
		r = x + y
		if (x >= 0) == (y >= 0) && (r >= 0) != (x >= 0) {
			return nil, false
		}
	case "-":
		r = x - y
		if (x >= 0) != (y >= 0) && (r >= 0) != (x >= 0) {
			return nil, false
		}
	case "*":
		if x != 0 && y != 0 {
			r = x * y
			if r/y != x || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64) {
				return nil, false
			}
		}
	case "/":
		if y == 0 || x%y != 0 || (x == math.MinInt64 && y == -1) {
			return nil, false
		}
		r = x / y
	case "%":
		if y == 0 {
			return nil, false
		}
		if y == -1 {
			return intValue(0), true
		}
		r = x % y // the sign follows the dividend, as in JavaScript
	}
	return intValue(r), true
}

func intValue(n int64) *Value { return Number(strconv.FormatInt(n, 10)) }

// floatValue is a computed number, or undefined when it is not finite.
func floatValue(f float64) *Value {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return Number(formatFloat(f))
}

// formatFloat writes numbers the way JavaScript prints them: plain digits
// from 1e-6 up to 1e21, exponent notation outside that.
func formatFloat(f float64) string {
	if a := math.Abs(f); a == 0 || (a >= 1e-6 && a < 1e21) {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// negExpr is unary minus (or plus) applied to something other than a
// number literal, which the parser folds.
type negExpr struct {
	x    expr
	plus bool
}

func (x *negExpr) eval(env *evalEnv) *Value {
	v := x.x.eval(env)
	if v == nil || v.Kind != KindNumber {
		return nil
	}
	if x.plus {
		return v
	}
	if n, ok := parseInt64(v.Num); ok && n != math.MinInt64 {
		return intValue(-n)
	}
	return floatValue(-numberFloat(v.Num))
}

func (x *negExpr) children() []expr { return []expr{x.x} }
