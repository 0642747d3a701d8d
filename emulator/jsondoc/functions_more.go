package jsondoc

import (
	"math"
	"strings"
)

// The system functions added for issue 24, each as its Microsoft Learn page
// documents it (https://learn.microsoft.com/azure/cosmos-db/nosql/query/<name>; the
// pages' examples, from github.com/Azure-Samples/cosmos-db-nosql-query-samples, are
// the vectors of functions_more_test.go and datetime_test.go).
func addMoreFunctions(functions map[string]*function) {
	for name, f := range map[string]*function{
		// https://learn.microsoft.com/azure/cosmos-db/nosql/query/iif: the second
		// argument when the first is the boolean true, otherwise the third, whatever
		// the first is ("IIF(123, 123, 456)" is 456).
		"IIF": {3, 3, func(a args) *Value {
			if isBool(a.v[0], true) {
				return a.v[1]
			}
			return a.v[2]
		}},

		// date and time (datetime.go)
		"GETCURRENTDATETIME":        {0, 0, fnGetCurrentDateTime(false)},
		"GETCURRENTDATETIMESTATIC":  {0, 0, fnGetCurrentDateTime(true)},
		"GETCURRENTTICKS":           {0, 0, fnGetCurrentTicks(false)},
		"GETCURRENTTICKSSTATIC":     {0, 0, fnGetCurrentTicks(true)},
		"GETCURRENTTIMESTAMP":       {0, 0, fnGetCurrentTimestamp(false)},
		"GETCURRENTTIMESTAMPSTATIC": {0, 0, fnGetCurrentTimestamp(true)},
		"DATETIMEADD":               {3, 3, fnDateTimeAdd},
		"DATETIMEDIFF":              {3, 3, fnDateTimeDiff},
		"DATETIMEPART":              {2, 2, fnDateTimePart},
		"DATETIMEFROMPARTS":         {3, 7, fnDateTimeFromParts},
		"DATETIMETOTICKS":           {1, 1, fnDateTimeToTicks},
		"DATETIMETOTIMESTAMP":       {1, 1, fnDateTimeToTimestamp},
		"TICKSTODATETIME":           {1, 1, fnTicksToDateTime},
		"TIMESTAMPTODATETIME":       {1, 1, fnTimestampToDateTime},
		"DATETIMEBIN":               {2, 4, fnDateTimeBin},

		// strings (strings16.go for the positional ones)
		"LENGTH":          {1, 1, fnLength},
		"SUBSTRING":       {3, 3, fnSubstring},
		"LEFT":            {2, 2, fnLeft},
		"RIGHT":           {2, 2, fnRight},
		"INDEX_OF":        {2, 3, fnIndexOf},
		"REVERSE":         {1, 1, fnReverse},
		"REPLICATE":       {2, 2, fnReplicate},
		"TRIM":            {1, 2, trimFunc(trimBoth)},
		"LTRIM":           {1, 2, trimFunc(strings.TrimLeftFunc)},
		"RTRIM":           {1, 2, trimFunc(strings.TrimRightFunc)},
		"STRINGEQUALS":    {2, 3, stringTest(func(s, t string) bool { return s == t })},
		"STRINGJOIN":      {2, 2, fnStringJoin},
		"STRINGSPLIT":     {2, 2, fnStringSplit},
		"STRINGTOARRAY":   {1, 1, stringToKind(KindArray)},
		"STRINGTOOBJECT":  {1, 1, stringToKind(KindObject)},
		"STRINGTOBOOLEAN": {1, 1, stringToKind(KindBool)},
		"STRINGTONULL":    {1, 1, stringToKind(KindNull)},
		"STRINGTONUMBER":  {1, 1, stringToKind(KindNumber)},

		// arrays and objects
		"ARRAY_CONCAT":       {2, -1, fnArrayConcat},
		"ARRAY_CONTAINS_ANY": {2, -1, arrayContainsSome(false)},
		"ARRAY_CONTAINS_ALL": {2, -1, arrayContainsSome(true)},
		"OBJECTTOARRAY":      {1, 3, fnObjectToArray},
		"CHOOSE":             {2, -1, fnChoose},

		// type checks and numbers
		"IS_INTEGER":       {1, 1, fnIsInteger},
		"IS_FINITE_NUMBER": {1, 1, func(a args) *Value { return boolResult(a.v[0] != nil && a.v[0].Kind == KindNumber) }},
		"NUMBERBIN":        {1, 2, fnNumberBin},
		"TRUNC":            {1, 1, numberMap(nil, math.Trunc)},
		"SIGN":             {1, 1, numberMap(func(n int64) int64 { return int64(max(min(n, 1), -1)) }, sign)},
		"SQRT":             {1, 1, floatMap(math.Sqrt)},
		"SQUARE":           {1, 1, floatMap(func(x float64) float64 { return x * x })},
		"EXP":              {1, 1, floatMap(math.Exp)},
		"LOG10":            {1, 1, floatMap(math.Log10)},
		"LOG":              {1, 2, fnLog},
		"POWER":            {2, 2, floatMap2(math.Pow)},
		"PI":               {0, 0, func(args) *Value { return floatValue(math.Pi) }},
		"SIN":              {1, 1, floatMap(math.Sin)},
		"COS":              {1, 1, floatMap(math.Cos)},
		"TAN":              {1, 1, floatMap(math.Tan)},
		"COT":              {1, 1, floatMap(func(x float64) float64 { return 1 / math.Tan(x) })},
		"ASIN":             {1, 1, floatMap(math.Asin)},
		"ACOS":             {1, 1, floatMap(math.Acos)},
		"ATAN":             {1, 1, floatMap(math.Atan)},
		"ATN2":             {2, 2, floatMap2(math.Atan2)}, // ATN2(35.175643, 129.44) is 0.265344532064832
		"DEGREES":          {1, 1, floatMap(func(x float64) float64 { return x * 180 / math.Pi })},
		"RADIANS":          {1, 1, floatMap(func(x float64) float64 { return x * math.Pi / 180 })},
	} {
		functions[name] = f
	}
}

func sign(f float64) float64 {
	switch {
	case f > 0:
		return 1
	case f < 0:
		return -1
	}
	return 0
}

// floatMap applies a function of a real number; a NaN or infinite result is
// undefined, as the engine holds no non-finite numbers.
func floatMap(f func(float64) float64) func(a args) *Value {
	return func(a args) *Value {
		v := a.v[0]
		if v == nil || v.Kind != KindNumber {
			return nil
		}
		return floatValue(f(numberFloat(v.Num)))
	}
}

func floatMap2(f func(x, y float64) float64) func(a args) *Value {
	return func(a args) *Value {
		x, y := a.v[0], a.v[1]
		if x == nil || y == nil || x.Kind != KindNumber || y.Kind != KindNumber {
			return nil
		}
		return floatValue(f(numberFloat(x.Num), numberFloat(y.Num)))
	}
}

// fnLog is LOG(x[, base]), natural by default.
func fnLog(a args) *Value {
	if a.n == 1 {
		return floatMap(math.Log)(a)
	}
	return floatMap2(func(x, b float64) float64 {
		if b == 10 {
			return math.Log10(x) // LOG(2, 10) is 0.3010299956639812, as LOG10(2)
		}
		return math.Log(x) / math.Log(b)
	})(a)
}

// fnIsInteger: a number that is a whole signed 64-bit integer
// (https://learn.microsoft.com/azure/cosmos-db/nosql/query/is-integer:
// 9223372036854775807 is one, 18446744073709551615 and 3454.123 are not).
func fnIsInteger(a args) *Value {
	v := a.v[0]
	if v == nil || v.Kind != KindNumber {
		return falseValue
	}
	if _, ok := parseInt64(v.Num); ok {
		return trueValue
	}
	f := numberFloat(v.Num)
	return boolResult(f == math.Trunc(f) && f >= math.MinInt64 && f < math.MaxInt64 && !strings.ContainsAny(string(v.Num), "eE."))
}

// fnNumberBin is NumberBin(x[, size]): x rounded down to a multiple of size
// (default 1); a size of 0 is undefined and a negative one rounds away from zero
// (NumberBin(37.752, -100) is 100 in Learn's example).
func fnNumberBin(a args) *Value {
	v := a.v[0]
	if v == nil || v.Kind != KindNumber {
		return nil
	}
	size := 1.0
	if a.n == 2 {
		s := a.v[1]
		if s == nil || s.Kind != KindNumber {
			return nil
		}
		if size = numberFloat(s.Num); size == 0 {
			return nil
		}
	}
	x := numberFloat(v.Num)
	q := math.Floor(x / size)
	// Round the multiple to the size's decimals: 377 * 0.1 is 37.7000000001 in floats.
	r := q * size
	if d := decimals(a.get(a.n - 1)); a.n == 2 && d > 0 {
		p := math.Pow(10, float64(d))
		r = math.Round(r*p) / p
	}
	if r == math.Trunc(r) && math.Abs(r) < 1<<53 {
		return intValue(int64(r))
	}
	return floatValue(r)
}

func decimals(v *Value) int {
	s := string(v.Num)
	if strings.ContainsAny(s, "eE") {
		return 0
	}
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return len(s) - i - 1
	}
	return 0
}

// fnStringJoin is StringJoin(array of strings, separator); anything else is
// undefined (StringJoin([…], undefined) in Learn's example).
func fnStringJoin(a args) *Value {
	arr := a.v[0]
	sep, ok := str(a.v[1])
	if arr == nil || arr.Kind != KindArray || !ok {
		return nil
	}
	parts := make([]string, len(arr.Arr))
	for i, e := range arr.Arr {
		s, ok := str(e)
		if !ok {
			return nil
		}
		parts[i] = s
	}
	return String(strings.Join(parts, sep))
}

// fnStringSplit is StringSplit(s, delimiter); an empty delimiter gives [s]
// (StringSplit("Helmet", "") is ["Helmet"] and StringSplit("", "") is [""]).
func fnStringSplit(a args) *Value {
	s, ok1 := str(a.v[0])
	sep, ok2 := str(a.v[1])
	if !ok1 || !ok2 {
		return nil
	}
	var parts []string
	if sep == "" {
		parts = []string{s}
	} else {
		parts = strings.Split(s, sep)
	}
	out := make([]*Value, len(parts))
	for i, p := range parts {
		out[i] = String(p)
	}
	return Array(out...)
}

// stringToKind is StringToArray, StringToObject, StringToBoolean, StringToNull and
// StringToNumber: the string parsed as JSON, undefined unless it is valid JSON of
// that type. Surrounding whitespace is allowed ("  false  ", "   60   ");
// JSON's rules are strict (single quotes are not JSON, so StringToArray("[ 'coats' ]")
// is undefined, as in Learn's examples).
func stringToKind(k Kind) func(a args) *Value {
	return func(a args) *Value {
		s, ok := str(a.v[0])
		if !ok {
			return nil
		}
		v, err := Parse([]byte(s))
		if err != nil || v == nil || v.Kind != k {
			return nil
		}
		return v
	}
}

func fnArrayConcat(a args) *Value {
	var out []*Value
	for i := 0; i < a.n; i++ {
		v := a.get(i)
		if v == nil || v.Kind != KindArray {
			return nil
		}
		out = append(out, v.Arr...)
	}
	return Array(out...)
}

// arrayContainsSome is ARRAY_CONTAINS_ANY and ARRAY_CONTAINS_ALL
// (https://learn.microsoft.com/azure/cosmos-db/nosql/query/array-contains-any and
// …/array-contains-all): whole-value equality with any (all) of the arguments after
// the array. Per the ANY page's examples, an undefined argument matches nothing and
// leaves the result undefined unless another argument decides it (ANY([1,2,3,4], 1,
// undefined) is true, ANY([1,2,3,4], 5, undefined) is undefined), and ALL's the
// same rule turned round (ALL([1,2,3,4], 1, undefined) is undefined, ALL([1,2,3,4],
// 5, undefined) is false).
func arrayContainsSome(all bool) func(a args) *Value {
	return func(a args) *Value {
		arr := a.v[0]
		if arr == nil || arr.Kind != KindArray {
			return nil
		}
		undefined := false
		for i := 1; i < a.n; i++ {
			want := a.get(i)
			if want == nil {
				undefined = true
				continue
			}
			found := false
			for _, e := range arr.Arr {
				if Equal(e, want) {
					found = true
					break
				}
			}
			if found != all {
				return boolResult(found)
			}
		}
		if undefined {
			return nil
		}
		return boolResult(all)
	}
}

// fnObjectToArray is ObjectToArray(obj[, keyName[, valueName]]): one {"k": name,
// "v": value} object per property, in the object's order.
func fnObjectToArray(a args) *Value {
	obj := a.v[0]
	if obj == nil || obj.Kind != KindObject {
		return nil
	}
	k, v := "k", "v"
	if a.n >= 2 {
		var ok bool
		if k, ok = str(a.v[1]); !ok {
			return nil
		}
	}
	if a.n == 3 {
		var ok bool
		if v, ok = str(a.v[2]); !ok {
			return nil
		}
	}
	out := make([]*Value, len(obj.Obj))
	for i, m := range obj.Obj {
		out[i] = Object(Member{Key: k, Val: String(m.Key)}, Member{Key: v, Val: m.Val})
	}
	return Array(out...)
}

// fnChoose is CHOOSE(index, values…), 1-based; out of range is undefined
// (https://learn.microsoft.com/azure/cosmos-db/nosql/query/choose).
func fnChoose(a args) *Value {
	i, ok := int64Arg(a.v[0])
	if !ok || i < 1 || i >= int64(a.n) {
		return nil
	}
	return a.get(int(i))
}
