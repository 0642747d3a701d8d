package jsondoc

import (
	"fmt"
	"strings"
)

// expr is a WHERE expression node. eval returns nil for Cosmos SQL's
// "undefined", which is distinct from JSON null: a missing property, a
// comparison between different types and anything derived from those are
// undefined, and a document matches only when the filter is exactly true.
type expr interface {
	eval(env *evalEnv) *Value
	appendSQL(b []byte) []byte
}

type evalEnv struct {
	doc    *Value
	params map[string]*Value
}

// Shared results; expression evaluation never mutates values.
var (
	trueValue  = Bool(true)
	falseValue = Bool(false)
)

func boolResult(b bool) *Value {
	if b {
		return trueValue
	}
	return falseValue
}

// Match reports whether doc satisfies the filter. params holds query
// parameters under their names as sent by the SDKs ("@name"; the bare name
// is accepted too). Every parameter the filter mentions must be present,
// even if evaluation would not reach it, so a typo fails on every
// document rather than only on some. A nil Filter matches everything.
func (f *Filter) Match(doc *Value, params map[string]*Value) (bool, error) {
	if f == nil {
		return true, nil
	}
	for _, name := range f.params {
		if _, ok := lookupParam(params, name); !ok {
			return false, fmt.Errorf("query parameter %s is not defined", name)
		}
	}
	v := f.root.eval(&evalEnv{doc: doc, params: params})
	return v != nil && v.Kind == KindBool && v.Bool, nil
}

func lookupParam(params map[string]*Value, name string) (*Value, bool) {
	if v, ok := params[name]; ok {
		return v, true
	}
	v, ok := params[strings.TrimPrefix(name, "@")]
	return v, ok
}

type literalExpr struct{ v *Value }

func (x *literalExpr) eval(*evalEnv) *Value { return x.v }

type paramExpr struct{ name string }

func (x *paramExpr) eval(env *evalEnv) *Value {
	v, _ := lookupParam(env.params, x.name)
	if v == nil {
		// A parameter given as a nil *Value is JSON null, consistent with
		// how the encoder treats nil.
		return &nullValue
	}
	return v
}

type pathSeg struct {
	key     string
	index   int
	isIndex bool
}

type pathExpr struct {
	alias string
	segs  []pathSeg
}

// eval distinguishes c.a["0"] from c.a[0]: an index applies only to arrays
// and a name only to objects, as in Cosmos DB.
func (x *pathExpr) eval(env *evalEnv) *Value {
	cur := env.doc
	for _, s := range x.segs {
		if cur == nil {
			return nil
		}
		switch {
		case s.isIndex && cur.Kind == KindArray:
			if s.index >= len(cur.Arr) {
				return nil
			}
			cur = cur.Arr[s.index]
		case !s.isIndex && cur.Kind == KindObject:
			cur = cur.Get(s.key)
		default:
			return nil
		}
	}
	return cur
}

type cmpExpr struct {
	op   string
	l, r expr
}

func (x *cmpExpr) eval(env *evalEnv) *Value {
	l, r := x.l.eval(env), x.r.eval(env)
	if l == nil || r == nil || l.Kind != r.Kind {
		return nil
	}
	var c int
	switch l.Kind {
	case KindNull:
	case KindBool:
		c = boolInt(l.Bool) - boolInt(r.Bool)
	case KindNumber:
		c = compareNumbers(l.Num, r.Num)
	case KindString:
		c = strings.Compare(l.Str, r.Str)
	default:
		// Objects and arrays have equality but no order.
		switch x.op {
		case "=":
			return boolResult(Equal(l, r))
		case "!=":
			return boolResult(!Equal(l, r))
		}
		return nil
	}
	switch x.op {
	case "=":
		return boolResult(c == 0)
	case "!=":
		return boolResult(c != 0)
	case "<":
		return boolResult(c < 0)
	case "<=":
		return boolResult(c <= 0)
	case ">":
		return boolResult(c > 0)
	}
	return boolResult(c >= 0)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// logicExpr is AND or OR with three-valued logic: false AND undefined is
// false and true OR undefined is true; other mixes with undefined or with
// non-boolean operands are undefined.
type logicExpr struct {
	and  bool
	l, r expr
}

func (x *logicExpr) eval(env *evalEnv) *Value {
	decisive := !x.and // false decides AND, true decides OR
	l := x.l.eval(env)
	if isBool(l, decisive) {
		return boolResult(decisive)
	}
	r := x.r.eval(env)
	if isBool(r, decisive) {
		return boolResult(decisive)
	}
	if isBool(l, !decisive) && isBool(r, !decisive) {
		return boolResult(!decisive)
	}
	return nil
}

func isBool(v *Value, b bool) bool { return v != nil && v.Kind == KindBool && v.Bool == b }

type notExpr struct{ x expr }

func (x *notExpr) eval(env *evalEnv) *Value {
	v := x.x.eval(env)
	if v == nil || v.Kind != KindBool {
		return nil
	}
	return boolResult(!v.Bool)
}

type callExpr struct {
	fn   string
	args []expr
}

func (x *callExpr) eval(env *evalEnv) *Value {
	var buf [3]*Value // no function takes more; keeps evaluation allocation-free
	a := buf[:len(x.args)]
	for i, e := range x.args {
		a[i] = e.eval(env)
	}
	switch x.fn {
	case "IS_DEFINED":
		return boolResult(a[0] != nil)
	case "IS_NULL":
		return boolResult(a[0] != nil && a[0].Kind == KindNull)
	case "STARTSWITH", "CONTAINS":
		s, sub, ok := stringArgs(a)
		if !ok {
			return nil
		}
		if x.fn == "STARTSWITH" {
			return boolResult(strings.HasPrefix(s, sub))
		}
		return boolResult(strings.Contains(s, sub))
	case "ARRAY_CONTAINS":
		arr := a[0]
		partial := false
		if len(a) == 3 {
			if a[2] == nil || a[2].Kind != KindBool {
				return nil
			}
			partial = a[2].Bool
		}
		if arr == nil || arr.Kind != KindArray {
			return nil
		}
		if a[1] == nil {
			return falseValue
		}
		for _, e := range arr.Arr {
			if Equal(e, a[1]) || (partial && partialMatch(e, a[1])) {
				return trueValue
			}
		}
		return falseValue
	}
	panic("jsondoc: unexpected function " + x.fn)
}

// stringArgs extracts the operands of STARTSWITH and CONTAINS, applying the
// optional ignoreCase flag. Any non-string operand makes the call
// undefined, as in Cosmos DB.
func stringArgs(a []*Value) (string, string, bool) {
	if a[0] == nil || a[0].Kind != KindString || a[1] == nil || a[1].Kind != KindString {
		return "", "", false
	}
	s, sub := a[0].Str, a[1].Str
	if len(a) == 3 {
		if a[2] == nil || a[2].Kind != KindBool {
			return "", "", false
		}
		if a[2].Bool {
			s, sub = strings.ToLower(s), strings.ToLower(sub)
		}
	}
	return s, sub, true
}

// partialMatch is ARRAY_CONTAINS's partial mode: an object element matches
// when it has every top-level property of the searched object.
func partialMatch(elem, want *Value) bool {
	if elem == nil || elem.Kind != KindObject || want.Kind != KindObject {
		return false
	}
	for _, m := range want.Obj {
		if i := elem.index(m.Key); i < 0 || !Equal(elem.Obj[i].Val, m.Val) {
			return false
		}
	}
	return true
}
