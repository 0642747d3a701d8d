package jsondoc

import (
	"fmt"
	"strings"
)

// expr is an expression node. eval returns nil for Cosmos SQL's
// "undefined", which is distinct from JSON null: a missing property, a
// comparison between different types and anything derived from those are
// undefined, and a document matches only when the filter is exactly true.
type expr interface {
	eval(env *evalEnv) *Value
	appendSQL(b []byte) []byte
	children() []expr
}

type evalEnv struct {
	doc    *Value
	params map[string]*Value
	// aggs holds the final values of the query's aggregates while a grouped
	// row is projected; aggExpr.index points into it. (A pointer keeps the
	// environment, allocated per document, at three words.)
	aggs *[]*Value
	// vectors are the query's VectorDistance calls as bound to the container's
	// vector embedding policy (vector.go); nil outside a bound program.
	vectors map[*vectorDistanceExpr]vectorSpec
	// now is the clock of the date and time functions (datetime.go); nil reads
	// the wall clock.
	now *queryTime
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
	return isBool(f.root.eval(&evalEnv{doc: doc, params: params}), true), nil
}

func lookupParam(params map[string]*Value, name string) (*Value, bool) {
	if v, ok := params[name]; ok {
		return v, true
	}
	v, ok := params[strings.TrimPrefix(name, "@")]
	return v, ok
}

type literalExpr struct{ v *Value } // v is nil for the literal undefined

func (x *literalExpr) eval(*evalEnv) *Value { return x.v }
func (x *literalExpr) children() []expr     { return nil }

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

func (x *paramExpr) children() []expr { return nil }

// pathSeg is one step of a path: a property name, an array index, or an
// expression (c[@name]) whose value picks one or the other.
type pathSeg struct {
	key     string
	index   int
	isIndex bool
	quoted  bool // written c["key"]; kept when the query is rendered, as the gateway keeps it
	dyn     expr
}

// pathExpr walks segs from the document (alias) or from the value of
// base, for member access on other expressions.
type pathExpr struct {
	alias string
	base  expr
	segs  []pathSeg
}

// eval distinguishes c.a["0"] from c.a[0]: an index applies only to arrays
// and a name only to objects, as in Cosmos DB.
func (x *pathExpr) eval(env *evalEnv) *Value {
	cur := env.doc
	if x.base != nil {
		cur = x.base.eval(env)
	}
	for _, s := range x.segs {
		if cur == nil {
			return nil
		}
		if s.dyn != nil {
			if cur = dynamicStep(cur, s.dyn.eval(env)); cur == nil {
				return nil
			}
			continue
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

// dynamicStep is c[k] for a computed k: a string names a property of an
// object, a non-negative integer indexes an array; anything else is
// undefined.
func dynamicStep(cur, k *Value) *Value {
	switch {
	case k == nil:
		return nil
	case k.Kind == KindString && cur.Kind == KindObject:
		return cur.Get(k.Str)
	case k.Kind == KindNumber && cur.Kind == KindArray:
		i, ok := parseInt64(k.Num)
		if !ok {
			f := numberFloat(k.Num)
			if f != float64(int64(f)) {
				return nil
			}
			i = int64(f)
		}
		if i < 0 || i >= int64(len(cur.Arr)) {
			return nil
		}
		return cur.Arr[i]
	}
	return nil
}

func (x *pathExpr) children() []expr {
	var c []expr
	if x.base != nil {
		c = append(c, x.base)
	}
	for _, s := range x.segs {
		if s.dyn != nil {
			c = append(c, s.dyn)
		}
	}
	return c
}

type cmpExpr struct {
	op   string
	l, r expr
}

func (x *cmpExpr) eval(env *evalEnv) *Value {
	return compareOp(x.op, x.l.eval(env), x.r.eval(env))
}

func (x *cmpExpr) children() []expr { return []expr{x.l, x.r} }

// compareOp applies a comparison operator. Values of different types, and
// undefined, compare as undefined; objects and arrays have equality but no
// order.
func compareOp(op string, l, r *Value) *Value {
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
		c = compareUTF16(l.Str, r.Str) // the order of ORDER BY (order.go)
	default:
		switch op {
		case "=":
			return boolResult(Equal(l, r))
		case "!=":
			return boolResult(!Equal(l, r))
		}
		return nil
	}
	switch op {
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

func (x *logicExpr) children() []expr { return []expr{x.l, x.r} }

func isBool(v *Value, b bool) bool { return v != nil && v.Kind == KindBool && v.Bool == b }

type notExpr struct{ x expr }

func (x *notExpr) eval(env *evalEnv) *Value {
	v := x.x.eval(env)
	if v == nil || v.Kind != KindBool {
		return nil
	}
	return boolResult(!v.Bool)
}

func (x *notExpr) children() []expr { return []expr{x.x} }

// inExpr is x IN (a, b, …): true when x equals one of the values, false
// when it equals none, undefined when x is undefined.
type inExpr struct {
	x    expr
	list []expr
}

func (x *inExpr) eval(env *evalEnv) *Value {
	v := x.x.eval(env)
	if v == nil {
		return nil
	}
	for _, e := range x.list {
		if w := e.eval(env); w != nil && w.Kind == v.Kind && Equal(v, w) {
			return trueValue
		}
	}
	return falseValue
}

func (x *inExpr) children() []expr { return append([]expr{x.x}, x.list...) }

// betweenExpr is x BETWEEN lo AND hi, that is x >= lo AND x <= hi.
type betweenExpr struct{ x, lo, hi expr }

func (x *betweenExpr) eval(env *evalEnv) *Value {
	v := x.x.eval(env)
	lo, hi := compareOp(">=", v, x.lo.eval(env)), compareOp("<=", v, x.hi.eval(env))
	if lo == nil || hi == nil {
		return nil
	}
	return boolResult(lo.Bool && hi.Bool)
}

func (x *betweenExpr) children() []expr { return []expr{x.x, x.lo, x.hi} }

// coalesceExpr is l ?? r: l unless it is undefined.
type coalesceExpr struct{ l, r expr }

func (x *coalesceExpr) eval(env *evalEnv) *Value {
	if v := x.l.eval(env); v != nil {
		return v
	}
	return x.r.eval(env)
}

func (x *coalesceExpr) children() []expr { return []expr{x.l, x.r} }

// condExpr is cond ? then : els; a condition that is not a boolean makes
// the expression undefined.
type condExpr struct{ cond, then, els expr }

func (x *condExpr) eval(env *evalEnv) *Value {
	c := x.cond.eval(env)
	switch {
	case isBool(c, true):
		return x.then.eval(env)
	case isBool(c, false):
		return x.els.eval(env)
	}
	return nil
}

func (x *condExpr) children() []expr { return []expr{x.cond, x.then, x.els} }

// objectExpr is {"a": x, …}; properties whose value is undefined are left
// out, as in the service.
type objectExpr struct {
	keys []string
	vals []expr
}

func (x *objectExpr) eval(env *evalEnv) *Value {
	v := &Value{Kind: KindObject, Obj: make([]Member, 0, len(x.keys))}
	for i, k := range x.keys {
		if e := x.vals[i].eval(env); e != nil {
			v.Obj = append(v.Obj, Member{Key: k, Val: e})
		}
	}
	return v
}

func (x *objectExpr) children() []expr { return x.vals }

// arrayExpr is [x, …]; undefined elements are left out.
type arrayExpr struct{ elems []expr }

func (x *arrayExpr) eval(env *evalEnv) *Value {
	v := &Value{Kind: KindArray, Arr: make([]*Value, 0, len(x.elems))}
	for _, e := range x.elems {
		if el := e.eval(env); el != nil {
			v.Arr = append(v.Arr, el)
		}
	}
	return v
}

func (x *arrayExpr) children() []expr { return x.elems }

type callExpr struct {
	fn   string
	f    *function
	args []expr
}

func (x *callExpr) eval(env *evalEnv) *Value {
	a := args{n: len(x.args), now: env.now}
	for i, e := range x.args {
		if i < len(a.v) {
			a.v[i] = e.eval(env)
		} else {
			a.more = append(a.more, e.eval(env))
		}
	}
	return x.f.eval(a)
}

func (x *callExpr) children() []expr { return x.args }

// aggExpr is an aggregate in a SELECT list. It evaluates to the aggregate's
// value for the group being projected; the values are computed by
// [aggregation] beforehand.
type aggExpr struct {
	kind  aggKind
	fn    string
	arg   expr
	index int
}

func (x *aggExpr) eval(env *evalEnv) *Value {
	if env.aggs != nil && x.index < len(*env.aggs) {
		return (*env.aggs)[x.index]
	}
	return nil
}

func (x *aggExpr) children() []expr { return []expr{x.arg} }
