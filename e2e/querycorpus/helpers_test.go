package querycorpus_test

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// param is a query parameter as the REST API and the SDKs take it.
type param struct {
	Name  string `json:"name"`
	Value any    `json:"value"`
}

// entry is one query of the corpus and its answer by the oracle.
type entry struct {
	sql    string
	params []param
	// pk is the partition key of the entry's single-partition run ("": the key pkOf
	// picks by the entry's position).
	pk string
	// want is the oracle's answer over the documents the query runs on (every
	// document, or the partition key's).
	want func(ds []doc) expect
	// jsBug names a known bug of the JavaScript SDK (jsBugs) that makes its answer
	// differ: the JavaScript test asserts it still does.
	jsBug string
	// noPK: the entry runs across partitions only (the query names its partition key
	// itself, or means to cross them).
	noPK bool
	// crossRefused: across partitions the service refuses the query (400, with why
	// here); within a partition key it runs.
	crossRefused string
	// refused: the emulator refuses the query everywhere with a 400 containing this
	// text, a documented construct it does not serve (named in the README).
	refused string
}

func q(sql string, want func([]doc) expect, params ...param) entry {
	return entry{sql: sql, params: params, want: want}
}

func (e entry) js(bug string) entry { e.jsBug = bug; return e }
func (e entry) in(pk string) entry  { e.pk = pk; return e }
func (e entry) crossOnly() entry    { e.noPK = true; return e }

// refusedAcross marks a query the service runs in one partition only.
func (e entry) refusedAcross(why string) entry { e.crossRefused = why; return e }

func p(name string, v any) param { return param{name, v} }

// ---- building answers ----

type pred = func(doc) any
type proj = func(doc) any

// rowsOf is sel of every document where holds (nil: all), undefined results left
// out (SELECT VALUE; an object projection is never undefined).
func rowsOf(ds []doc, where pred, sel proj, key func(doc) []any) []row {
	var out []row
	for _, d := range ds {
		if where != nil && !truth(where(d)) {
			continue
		}
		v := sel(d)
		if isUndef(v) {
			continue
		}
		r := row{v: v}
		if key != nil {
			r.key = key(d)
		}
		out = append(out, r)
	}
	return out
}

// set is an unordered answer.
func set(ds []doc, where pred, sel proj) expect {
	return expect{rows: rowsOf(ds, where, sel, nil), limit: -1}
}

// sorted is an ORDER BY answer: key is the ORDER BY values, desc their directions.
func sorted(ds []doc, where pred, sel proj, key func(doc) []any, desc ...bool) expect {
	return expect{rows: rowsOf(ds, where, sel, key), desc: desc, limit: -1}
}

// window is OFFSET off LIMIT lim (TOP lim is window(0, lim)).
func (e expect) window(off, lim int) expect { e.offset, e.limit = off, lim; return e }

// values is an unordered answer of the given rows (undefined ones left out).
func values(vs ...any) expect {
	e := expect{limit: -1}
	for _, v := range vs {
		if !isUndef(v) {
			e.rows = append(e.rows, row{v: v})
		}
	}
	return e
}

// emit builds rows by hand (JOINs): f calls add for each row with its ORDER BY values.
func emit(f func(add func(v any, key ...any))) []row {
	var out []row
	f(func(v any, key ...any) {
		if !isUndef(v) {
			out = append(out, row{v: v, key: key})
		}
	})
	return out
}

func all(ds []doc) proj  { return func(d doc) any { return d } }
func path(p ...any) proj { return func(d doc) any { return get(d, p...) } }

// elems is a JOIN's iteration: the elements of an array, none for anything else.
func elems(v any) []any {
	a, _ := v.([]any)
	return a
}

// ---- GROUP BY and aggregates ----

// groups partitions the documents where holds by the canonical text of their GROUP
// BY values (undefined is a value of its own: documents without the property form a
// group, projected without it).
func groups(ds []doc, where pred, key func(doc) []any) [][]doc {
	idx := map[string]int{}
	var out [][]doc
	for _, d := range ds {
		if where != nil && !truth(where(d)) {
			continue
		}
		var parts []string
		for _, k := range key(d) {
			parts = append(parts, canon(k))
		}
		k := strings.Join(parts, "|")
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], d)
	}
	return out
}

// grouped is one row per group.
func grouped(ds []doc, where pred, key func(doc) []any, sel func(g []doc) any) expect {
	e := expect{limit: -1}
	for _, g := range groups(ds, where, key) {
		if v := sel(g); !isUndef(v) {
			e.rows = append(e.rows, row{v: v})
		}
	}
	return e
}

// aggregate is a query with aggregates and no GROUP BY: one row over the documents
// where holds (COUNT of nothing is 0, so there is always a row unless the VALUE is
// undefined).
func aggregate(ds []doc, where pred, sel func(g []doc) any) expect {
	var g []doc
	for _, d := range ds {
		if where == nil || truth(where(d)) {
			g = append(g, d)
		}
	}
	return values(sel(g))
}

// count is COUNT(expr): the defined values
// (https://learn.microsoft.com/azure/cosmos-db/nosql/query/count).
func count(g []doc, f proj) any {
	n := 0
	for _, d := range g {
		if !isUndef(f(d)) {
			n++
		}
	}
	return float64(n)
}

// sum is SUM: undefined values ignored, any other non-number makes it undefined
// (https://learn.microsoft.com/azure/cosmos-db/nosql/query/sum: "If any arguments in
// SUM are string, boolean, or null, the entire aggregate system function returns
// undefined"). The corpus never sums nothing (not documented).
func sum(g []doc, f proj) any {
	s, n, ok := total(g, f)
	switch {
	case !ok:
		return undef
	case n == 0:
		panic("SUM over no values: the corpus must not depend on it")
	}
	return s
}

// total adds the numbers f gives over g, skipping undefined ones; ok is false when
// one is defined but not a number.
func total(g []doc, f proj) (s float64, n int, ok bool) {
	for _, d := range g {
		v := f(d)
		if isUndef(v) {
			continue
		}
		x, isNum := num(v)
		if !isNum {
			return 0, 0, false
		}
		s += x
		n++
	}
	return s, n, true
}

// avg is AVG, as SUM for types; over no values it is undefined
// (https://learn.microsoft.com/azure/cosmos-db/nosql/query/average).
func avg(g []doc, f proj) any {
	s, n, ok := total(g, f)
	if !ok || n == 0 {
		return undef
	}
	return s / float64(n)
}

// extreme is MIN (sign -1) or MAX (+1): undefined values ignored, across types null <
// booleans < numbers < strings (https://learn.microsoft.com/azure/cosmos-db/nosql/query/max,
// .../min); over no values undefined. Arrays and objects are not documented
// arguments: the corpus filters them out.
func extreme(g []doc, f proj, sign int) any {
	best := undef
	for _, d := range g {
		v := f(d)
		if isUndef(v) {
			continue
		}
		if typeRank(v) >= 5 {
			panic("MIN/MAX of an array or object: not documented")
		}
		if isUndef(best) || sign*sortCompare(v, best) > 0 {
			best = v
		}
	}
	return best
}

func minOf(g []doc, f proj) any { return extreme(g, f, -1) }
func maxOf(g []doc, f proj) any { return extreme(g, f, 1) }

// distinct is DISTINCT: one of each value (deep equality).
func distinct(e expect) expect {
	seen := map[string]bool{}
	var out []row
	for _, r := range e.rows {
		if c := canon(r.v); !seen[c] {
			seen[c] = true
			out = append(out, r)
		}
	}
	e.rows = out
	return e
}

// ---- functions ----

func isType(v any, rank int) any { return typeRank(v) == rank }

// str is a string argument, or false.
func str(v any) (string, bool) { s, ok := v.(string); return s, ok }

// strFn applies f to a string, undefined for anything else.
func strFn(v any, f func(string) any) any {
	s, ok := str(v)
	if !ok {
		return undef
	}
	return f(s)
}

// numFn applies f to a number, undefined for anything else.
func numFn(v any, f func(float64) float64) any {
	x, ok := num(v)
	if !ok {
		return undef
	}
	return f(x)
}

// round is ROUND: half away from zero
// (https://learn.microsoft.com/azure/cosmos-db/nosql/query/round).
func round(x float64) float64 { return math.Round(x) }

// arraySlice is ARRAY_SLICE(a, start[, length]): a negative start counts from the end,
// a negative length gives nothing
// (https://learn.microsoft.com/azure/cosmos-db/nosql/query/array-slice).
func arraySlice(v any, start int, length ...int) any {
	a, ok := v.([]any)
	if !ok {
		return undef
	}
	if start < 0 {
		start = max(0, len(a)+start)
	}
	if start > len(a) {
		start = len(a)
	}
	end := len(a)
	if len(length) > 0 {
		if length[0] < 0 {
			return []any{}
		}
		end = min(len(a), start+length[0])
	}
	return append([]any{}, a[start:end]...)
}

// arrayContains is ARRAY_CONTAINS(a, v[, partial]): partial matches an object that
// has v's properties with v's values
// (https://learn.microsoft.com/azure/cosmos-db/nosql/query/array-contains).
func arrayContains(v, x any, partial bool) any {
	a, ok := v.([]any)
	if !ok {
		return undef
	}
	for _, e := range a {
		if deepEqual(e, x) {
			return true
		}
		if partial {
			em, ok1 := e.(map[string]any)
			xm, ok2 := x.(map[string]any)
			if ok1 && ok2 {
				match := true
				for k, xv := range xm {
					if ev, ok := em[k]; !ok || !deepEqual(ev, xv) {
						match = false
						break
					}
				}
				if match {
					return true
				}
			}
		}
	}
	return false
}

// like is the LIKE operator: % any run of characters, _ one character, [a-c] and
// [^a-c] one character of (or not of) a set, esc (0: none) making the next character
// literal; case-sensitive; a non-string is undefined
// (https://learn.microsoft.com/azure/cosmos-db/nosql/query/keywords#like).
func like(v any, pattern string, esc rune) any {
	s, ok := str(v)
	if !ok {
		return undef
	}
	return likeMatch([]rune(s), []rune(pattern), esc)
}

func likeMatch(s, p []rune, esc rune) bool {
	if len(p) == 0 {
		return len(s) == 0
	}
	switch c := p[0]; {
	case esc != 0 && c == esc && len(p) > 1:
		return len(s) > 0 && s[0] == p[1] && likeMatch(s[1:], p[2:], esc)
	case c == '%':
		for i := 0; i <= len(s); i++ {
			if likeMatch(s[i:], p[1:], esc) {
				return true
			}
		}
		return false
	case c == '_':
		return len(s) > 0 && likeMatch(s[1:], p[1:], esc)
	case c == '[':
		end := -1
		for i := 1; i < len(p); i++ {
			if p[i] == ']' {
				end = i
				break
			}
		}
		if end < 0 || len(s) == 0 {
			return false
		}
		set := p[1:end]
		negate := len(set) > 0 && set[0] == '^'
		if negate {
			set = set[1:]
		}
		hit := false
		for i := 0; i < len(set); i++ {
			if i+2 < len(set) && set[i+1] == '-' {
				if s[0] >= set[i] && s[0] <= set[i+2] {
					hit = true
				}
				i += 2
			} else if s[0] == set[i] {
				hit = true
			}
		}
		return hit != negate && likeMatch(s[1:], p[end+1:], esc)
	default:
		return len(s) > 0 && s[0] == c && likeMatch(s[1:], p[1:], esc)
	}
}

// iif is IIF(cond, a, b): a when cond is true, b for false and anything that is not a
// boolean (https://learn.microsoft.com/azure/cosmos-db/nosql/query/iif).
func iif(cond, a, b any) any {
	if cond == true {
		return a
	}
	return b
}

// sortedStrings is a sorted copy (for answers over a set of groups).
func sortedStrings(s []string) []string {
	out := append([]string{}, s...)
	sort.Strings(out)
	return out
}

var _ = fmt.Sprint
