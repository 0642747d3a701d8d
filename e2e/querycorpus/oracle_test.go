package querycorpus_test

// The oracle: Cosmos DB's query semantics as Microsoft Learn documents them, written
// in plain Go over the generated documents, independently of the emulator's engine
// (emulator/jsondoc) and of cosmosctl's pipeline (query/): neither is imported here.
// Each corpus entry computes its answer by hand with these helpers (filter, map, sort,
// group in Go), and check compares what a pipeline returned with it.
//
// Values are what encoding/json decodes (nil for null, bool, float64, string, []any,
// map[string]any) plus undef, the query language's undefined, which is not JSON.

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
)

// undefinedT is the type of undef.
type undefinedT struct{}

// undef is an absent property or an expression with no value: "undefined" in the
// query language. An object property whose value is undefined is left out of a
// projection, and SELECT VALUE leaves out an undefined row
// (https://learn.microsoft.com/azure/cosmos-db/nosql/query/select).
var undef any = undefinedT{}

func isUndef(v any) bool { _, ok := v.(undefinedT); return ok }

// get walks a path of property names and array indexes; anything missing, or a step
// into a value of the wrong type, is undefined.
func get(v any, path ...any) any {
	for _, step := range path {
		switch s := step.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return undef
			}
			if v, ok = m[s]; !ok {
				return undef
			}
		case int:
			a, ok := v.([]any)
			if !ok || s < 0 || s >= len(a) {
				return undef
			}
			v = a[s]
		}
	}
	return v
}

// typeRank is the order across types of ORDER BY: "undefined < null < false < true <
// numbers < strings < arrays < objects" (the ORDER BY reference,
// https://learn.microsoft.com/azure/cosmos-db/nosql/query/order-by, and the .NET SDK's
// ORDER BY of arrays and objects, https://github.com/Azure/azure-cosmos-dotnet-v3/pull/853:
// "arrays come before objects but after strings"; two arrays or two objects compare by
// a hash, an order nobody documents, so check treats them as ties).
func typeRank(v any) int {
	switch v.(type) {
	case undefinedT:
		return 0
	case nil:
		return 1
	case bool:
		return 2
	case float64:
		return 3
	case string:
		return 4
	case []any:
		return 5
	case map[string]any:
		return 6
	}
	panic(fmt.Sprintf("not a query value: %T", v))
}

// compareUTF16 orders strings by UTF-16 code unit, as both SDKs merge ranges' ORDER BY
// results (.NET's string.CompareOrdinal, JavaScript's < on strings): the service's
// per-range order must agree with that merge for cross-partition ORDER BY to be right.
// The service's string order is not otherwise documented.
func compareUTF16(a, b string) int {
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

// sortCompare is ORDER BY's comparison: by typeRank, then within the type (arrays
// with arrays and objects with objects are ties, see typeRank).
func sortCompare(a, b any) int {
	if ra, rb := typeRank(a), typeRank(b); ra != rb {
		return ra - rb
	}
	switch x := a.(type) {
	case bool:
		y := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case float64:
		y := b.(float64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case string:
		return compareUTF16(x, b.(string))
	}
	return 0
}

// deepEqual is equality of two JSON values of the same type: objects equal with the
// same properties and values whatever their order, arrays element by element.
func deepEqual(a, b any) bool { return canon(a) == canon(b) }

// Comparison operators: "comparison across types or between two objects or arrays
// produces undefined" for <, <=, >, >=, !=; = compares any two values of one type
// (https://learn.microsoft.com/azure/cosmos-db/nosql/query/equality-comparison-operators).
func eq(a, b any) any {
	if isUndef(a) || isUndef(b) || typeRank(a) != typeRank(b) {
		return undef
	}
	return deepEqual(a, b)
}

func cmpOp(op string, a, b any) any {
	ra, rb := typeRank(a), typeRank(b)
	if ra == 0 || rb == 0 || ra != rb || ra >= 5 {
		return undef
	}
	c := sortCompare(a, b)
	switch op {
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	case "!=":
		return c != 0
	}
	panic(op)
}

// Logical operators over true, false and anything else as undefined
// (https://learn.microsoft.com/azure/cosmos-db/nosql/query/logical-operators): false
// AND x is false, true OR x is true, NOT of a non-boolean is undefined.
func and(vs ...any) any {
	out := any(true)
	for _, v := range vs {
		switch v {
		case false:
			return false
		case true:
		default:
			out = undef
		}
	}
	return out
}

func or(vs ...any) any {
	out := any(false)
	for _, v := range vs {
		switch v {
		case true:
			return true
		case false:
		default:
			out = undef
		}
	}
	return out
}

func not(v any) any {
	if b, ok := v.(bool); ok {
		return !b
	}
	return undef
}

// truth is what WHERE keeps: only true ("undefined doesn't equate to true").
func truth(v any) bool { return v == true }

// in is x IN (list): x = one of them.
func in(x any, list ...any) any {
	var ors []any
	for _, l := range list {
		ors = append(ors, eq(x, l))
	}
	return or(ors...)
}

// between is x BETWEEN lo AND hi: x >= lo AND x <= hi.
func between(x, lo, hi any) any { return and(cmpOp(">=", x, lo), cmpOp("<=", x, hi)) }

// num is a number value, or false for anything else.
func num(v any) (float64, bool) { f, ok := v.(float64); return f, ok }

// arith is + - * / % over numbers; any other operand makes it undefined
// (https://learn.microsoft.com/azure/cosmos-db/nosql/query/operators).
func arith(op string, a, b any) any {
	x, ok1 := num(a)
	y, ok2 := num(b)
	if !ok1 || !ok2 {
		return undef
	}
	switch op {
	case "+":
		return x + y
	case "-":
		return x - y
	case "*":
		return x * y
	case "/":
		return x / y
	case "%":
		return math.Mod(x, y)
	}
	panic(op)
}

// concat is || over strings; anything else makes it undefined.
func concatOp(vs ...any) any {
	var b strings.Builder
	for _, v := range vs {
		s, ok := v.(string)
		if !ok {
			return undef
		}
		b.WriteString(s)
	}
	return b.String()
}

// coalesce is a ?? b: a unless it is undefined.
func coalesce(a, b any) any {
	if isUndef(a) {
		return b
	}
	return a
}

// obj builds a projection's object from name, value pairs, leaving out undefined
// values.
func obj(kv ...any) any {
	m := map[string]any{}
	for i := 0; i < len(kv); i += 2 {
		if v := kv[i+1]; !isUndef(v) {
			m[kv[i].(string)] = v
		}
	}
	return m
}

// arr is an array constructor over defined values (what an array constructor does
// with an undefined element is not documented, so the corpus builds none).
func arr(vs ...any) any {
	out := []any{}
	for _, v := range vs {
		if isUndef(v) {
			panic("an undefined array element: the corpus must not depend on it")
		}
		out = append(out, v)
	}
	return out
}

// utf16Len is LENGTH: the number of UTF-16 code units (issue 24 point 4: the service
// counts as .NET strings do; LENGTH('😀smile') is 7).
func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }

// utf16Sub is SUBSTRING(s, start, length) in UTF-16 code units (0-based start, the
// length cut at the end; a start past the end gives "").
func utf16Sub(s string, start, length int) string {
	u := utf16.Encode([]rune(s))
	if start < 0 {
		start = 0
	}
	if start >= len(u) || length <= 0 {
		return ""
	}
	end := min(len(u), start+length)
	return string(utf16.Decode(u[start:end]))
}

// canon is a value's canonical text: object keys sorted, numbers to 12 significant
// digits (a SUM or AVG added up per range in another order differs in the last bits),
// so that 5 and 5.0, and {"a":1,"b":2} and {"b":2,"a":1}, are one value.
func canon(v any) string {
	var b strings.Builder
	writeCanon(&b, v)
	return b.String()
}

func writeCanon(b *strings.Builder, v any) {
	switch x := v.(type) {
	case undefinedT:
		b.WriteString("undefined")
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case float64:
		r, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 12, 64), 64)
		if r == 0 {
			r = 0 // -0 is 0
		}
		b.WriteString(strconv.FormatFloat(r, 'g', -1, 64))
	case int:
		writeCanon(b, float64(x))
	case string:
		q, _ := json.Marshal(x)
		b.Write(q)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanon(b, e)
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			q, _ := json.Marshal(k)
			b.Write(q)
			b.WriteByte(':')
			writeCanon(b, x[k])
		}
		b.WriteByte('}')
	default:
		panic(fmt.Sprintf("not a query value: %T", v))
	}
}

// row is one result of the oracle with the ORDER BY values it sorts by.
type row struct {
	v   any
	key []any
}

// expect is the oracle's answer to one query: every row the query could return, how
// they are ordered, and which of them it returns.
type expect struct {
	rows []row
	// desc is the direction of each ORDER BY item; nil for a query without ORDER BY,
	// whose rows come in any order.
	desc []bool
	// offset and limit select a window of the ordered rows (OFFSET … LIMIT, TOP);
	// limit < 0 is every row. Without ORDER BY, TOP n returns some n of the rows.
	offset, limit int
}

// blocks sorts the rows and cuts them into runs of equal ORDER BY values (ties, which
// may come back in any order: which range a tied row is on decides), then takes the
// window: it returns the blocks and, for each position of the window, its block.
func (e expect) blocks() (blocks [][]any, positions []int) {
	rows := slices.Clone(e.rows)
	if e.desc == nil {
		all := []any{}
		for _, r := range rows {
			all = append(all, r.v)
		}
		blocks = [][]any{all}
	} else {
		cmp := func(a, b row) int {
			for i, d := range e.desc {
				if c := sortCompare(a.key[i], b.key[i]); c != 0 {
					if d {
						return -c
					}
					return c
				}
			}
			return 0
		}
		slices.SortStableFunc(rows, cmp)
		for i, r := range rows {
			if i == 0 || cmp(rows[i-1], r) != 0 {
				blocks = append(blocks, nil)
			}
			blocks[len(blocks)-1] = append(blocks[len(blocks)-1], r.v)
		}
	}
	n := 0
	for b, blk := range blocks {
		for range blk {
			if n >= e.offset && (e.limit < 0 || n < e.offset+e.limit) {
				positions = append(positions, b)
			}
			n++
		}
	}
	return blocks, positions
}

// check compares a pipeline's items with the oracle's answer: the same number of
// items, each position's item one of its block's (a multiset: each row used once).
func check(e expect, got []any) error {
	blocks, positions := e.blocks()
	if len(got) != len(positions) {
		return fmt.Errorf("%d items, want %d\n got:  %s\n want: %s", len(got), len(positions), short(got), short(flatten(blocks, positions)))
	}
	left := make([]map[string]int, len(blocks))
	for b, blk := range blocks {
		left[b] = map[string]int{}
		for _, v := range blk {
			left[b][canon(v)]++
		}
	}
	for i, g := range got {
		b := positions[i]
		c := canon(g)
		if left[b][c] == 0 {
			return fmt.Errorf("item %d is %s, which is not among the expected ones there (or is one too many)\n got:  %s\n want: %s", i, c, short(got), short(flatten(blocks, positions)))
		}
		left[b][c]--
	}
	return nil
}

// flatten is the window of the blocks, a block's rows in the oracle's order.
func flatten(blocks [][]any, positions []int) []any {
	var out []any
	used := map[int]int{}
	for _, b := range positions {
		out = append(out, blocks[b][used[b]])
		used[b]++
	}
	return out
}

func short(vs []any) string {
	var parts []string
	for i, v := range vs {
		if i == 12 {
			parts = append(parts, fmt.Sprintf("… (%d more)", len(vs)-12))
			break
		}
		parts = append(parts, canon(v))
	}
	return "[" + strings.Join(parts, " ") + "]"
}
