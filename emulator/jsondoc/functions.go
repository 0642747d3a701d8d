package jsondoc

import (
	"math"
	"strings"
	"sync"
	"unicode"
)

// function is a built-in scalar function: its argument counts (max < 0 for
// any number) and its evaluation. Functions never fail: arguments of the
// wrong type make the result undefined, as in Cosmos DB; the type checks
// are the exception and always answer true or false.
type function struct {
	min, max int
	eval     func(a args) *Value
}

// args are a call's argument values, passed by value: a slice of them would
// escape to the heap through the indirect call on every evaluation.
type args struct {
	n    int
	v    [4]*Value
	more []*Value   // beyond the fourth (CONCAT)
	now  *queryTime // the query's clock, for the current-time functions
}

func (a args) get(i int) *Value {
	if i < len(a.v) {
		return a.v[i]
	}
	return a.more[i-len(a.v)]
}

// builtins are the supported built-ins by upper-case name, made when a query is
// first parsed rather than at every start of the binary (a `read` needs none).
var builtins = sync.OnceValue(func() map[string]*function {
	m := map[string]*function{
		// type checks
		"IS_DEFINED":   {1, 1, func(a args) *Value { return boolResult(a.v[0] != nil) }},
		"IS_NULL":      {1, 1, kindCheck(KindNull)},
		"IS_BOOL":      {1, 1, kindCheck(KindBool)},
		"IS_NUMBER":    {1, 1, kindCheck(KindNumber)},
		"IS_STRING":    {1, 1, kindCheck(KindString)},
		"IS_ARRAY":     {1, 1, kindCheck(KindArray)},
		"IS_OBJECT":    {1, 1, kindCheck(KindObject)},
		"IS_PRIMITIVE": {1, 1, func(a args) *Value { return boolResult(a.v[0] != nil && a.v[0].Kind <= KindString) }},

		// strings
		"STARTSWITH": {2, 3, stringTest(strings.HasPrefix)},
		"ENDSWITH":   {2, 3, stringTest(strings.HasSuffix)},
		"CONTAINS":   {2, 3, stringTest(strings.Contains)},
		"LOWER":      {1, 1, stringMap(strings.ToLower)},
		"UPPER":      {1, 1, stringMap(strings.ToUpper)},
		"CONCAT":     {2, -1, fnConcat},
		"REPLACE":    {3, 3, fnReplace},
		"TOSTRING":   {1, 1, fnToString},

		// full-text search (filters only; FullTextScore and RRF ranking are not modelled)
		"FULLTEXTCONTAINS":    {2, 2, fullText(true)},
		"FULLTEXTCONTAINSALL": {2, -1, fullText(true)},
		"FULLTEXTCONTAINSANY": {2, -1, fullText(false)},

		// arrays
		"ARRAY_CONTAINS": {2, 3, fnArrayContains},
		"ARRAY_LENGTH":   {1, 1, fnArrayLength},
		"ARRAY_SLICE":    {2, 3, fnArraySlice},

		// mathematics
		"ABS":     {1, 1, numberMap(func(n int64) int64 { return max(n, -n) }, math.Abs)},
		"FLOOR":   {1, 1, numberMap(nil, math.Floor)},
		"CEILING": {1, 1, numberMap(nil, math.Ceil)},
		"ROUND":   {1, 1, numberMap(nil, math.Round)}, // half away from zero, as the service rounds
	}
	addMoreFunctions(m)
	addFullTextFunctions(m)
	return m
})

func kindCheck(k Kind) func(a args) *Value {
	return func(a args) *Value { return boolResult(a.v[0] != nil && a.v[0].Kind == k) }
}

func str(v *Value) (string, bool) {
	if v == nil || v.Kind != KindString {
		return "", false
	}
	return v.Str, true
}

// integer reads an integral number argument (counts and positions).
func integer(v *Value) (int, bool) {
	if v == nil || v.Kind != KindNumber {
		return 0, false
	}
	if n, ok := parseInt64(v.Num); ok {
		return int(max(min(n, math.MaxInt32), math.MinInt32)), true
	}
	f := numberFloat(v.Num)
	if f != math.Trunc(f) {
		return 0, false
	}
	return int(max(min(f, math.MaxInt32), math.MinInt32)), true
}

// stringTest is STARTSWITH, ENDSWITH and CONTAINS with the optional
// ignoreCase flag.
func stringTest(test func(s, sub string) bool) func(a args) *Value {
	return func(a args) *Value {
		s, ok1 := str(a.v[0])
		sub, ok2 := str(a.v[1])
		if !ok1 || !ok2 {
			return nil
		}
		if a.n == 3 {
			if a.v[2] == nil || a.v[2].Kind != KindBool {
				return nil
			}
			if a.v[2].Bool {
				s, sub = strings.ToLower(s), strings.ToLower(sub)
			}
		}
		return boolResult(test(s, sub))
	}
}

func stringMap(f func(string) string) func(a args) *Value {
	return func(a args) *Value {
		s, ok := str(a.v[0])
		if !ok {
			return nil
		}
		return String(f(s))
	}
}

func fnConcat(a args) *Value {
	var b strings.Builder
	for i := 0; i < a.n; i++ {
		s, ok := str(a.get(i))
		if !ok {
			return nil
		}
		b.WriteString(s)
	}
	return String(b.String())
}

func fnReplace(a args) *Value {
	s, ok1 := str(a.v[0])
	old, ok2 := str(a.v[1])
	repl, ok3 := str(a.v[2])
	if !ok1 || !ok2 || !ok3 {
		return nil
	}
	if old == "" {
		return String(s)
	}
	return String(strings.ReplaceAll(s, old, repl))
}

func fnToString(a args) *Value {
	v := a.v[0]
	switch {
	case v == nil:
		return nil
	case v.Kind == KindString:
		return v
	case v.Kind == KindNumber:
		return String(string(v.Num))
	}
	return String(string(v.AppendJSON(nil)))
}

// fnArrayContains is ARRAY_CONTAINS(arr, value[, partial]); in partial
// mode an object element matches when it has every top-level property of
// the searched object.
func fnArrayContains(a args) *Value {
	arr := a.v[0]
	partial := false
	if a.n == 3 {
		if a.v[2] == nil || a.v[2].Kind != KindBool {
			return nil
		}
		partial = a.v[2].Bool
	}
	if arr == nil || arr.Kind != KindArray {
		return nil
	}
	if a.v[1] == nil {
		return falseValue
	}
	for _, e := range arr.Arr {
		if Equal(e, a.v[1]) || (partial && partialMatch(e, a.v[1])) {
			return trueValue
		}
	}
	return falseValue
}

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

func fnArrayLength(a args) *Value {
	if a.v[0] == nil || a.v[0].Kind != KindArray {
		return nil
	}
	return intValue(int64(len(a.v[0].Arr)))
}

// fnArraySlice is ARRAY_SLICE(arr, start[, length]); a negative start
// counts from the end.
func fnArraySlice(a args) *Value {
	arr := a.v[0]
	start, ok := integer(a.v[1])
	if arr == nil || arr.Kind != KindArray || !ok {
		return nil
	}
	n := len(arr.Arr)
	if start < 0 {
		start = max(n+start, 0)
	}
	end := n
	if a.n == 3 {
		l, ok := integer(a.v[2])
		if !ok {
			return nil
		}
		end = min(n, start+max(l, 0))
	}
	if start >= end {
		return Array()
	}
	return Array(arr.Arr[start:end:end]...)
}

// numberMap applies a mathematical function, exactly on integers when ints
// is given (ABS) and through float64 otherwise; integers are their own
// floor, ceiling and rounding.
func numberMap(ints func(int64) int64, floats func(float64) float64) func(a args) *Value {
	return func(a args) *Value {
		v := a.v[0]
		if v == nil || v.Kind != KindNumber {
			return nil
		}
		if n, ok := parseInt64(v.Num); ok {
			if ints == nil {
				return v
			}
			if n != math.MinInt64 {
				return intValue(ints(n))
			}
		}
		return floatValue(floats(numberFloat(v.Num)))
	}
}

// fullText is FullTextContains (one phrase), FullTextContainsAll (all: every phrase) and
// FullTextContainsAny (any phrase): whether the text at the path holds each phrase
// (learn.microsoft.com/azure/cosmos-db/nosql/query/fulltextcontains: "whether the keyword
// string expression is contained in a specified property path"). The service's
// tokenizer, stemming and stop words per the full-text policy's language are not
// documented; the emulator matches a phrase as the same words, consecutive, compared
// without case, a word being a run of letters and digits (README, emulator fidelity).
func fullText(all bool) func(a args) *Value {
	return func(a args) *Value {
		text, ok := str(a.get(0))
		if !ok {
			return nil
		}
		words := fullTextWords(text)
		for i := 1; i < a.n; i++ {
			phrase, ok := str(a.get(i))
			if !ok {
				return nil
			}
			if hasPhrase(words, fullTextWords(phrase)) != all {
				return boolResult(!all)
			}
		}
		return boolResult(all)
	}
}

func fullTextWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func hasPhrase(words, phrase []string) bool {
	if len(phrase) == 0 {
		return false
	}
	for i := 0; i+len(phrase) <= len(words); i++ {
		match := true
		for j, w := range phrase {
			if words[i+j] != w {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}
