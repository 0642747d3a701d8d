package jsondoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
)

func mustParse(t testing.TB, s string) *Value {
	t.Helper()
	v, err := Parse([]byte(s))
	if err != nil {
		t.Fatalf("Parse(%q): %v", s, err)
	}
	return v
}

func TestParseRoundTripsCompactJSON(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"null", `null`, `null`},
		{"true", ` true `, `true`},
		{"false", "\n\tfalse\r", `false`},
		{"integer", `42`, `42`},
		{"negative zero", `-0`, `-0`},
		{"big integer keeps every digit", `123456789012345678901234567890`, `123456789012345678901234567890`},
		{"number text is not normalised", `1.50E+10`, `1.50E+10`},
		{"empty string", `""`, `""`},
		{"empty array", `[ ]`, `[]`},
		{"empty object", `{ }`, `{}`},
		{"object keeps member order", `{"z":1, "a":2, "m":3}`, `{"z":1,"a":2,"m":3}`},
		{"nested", `{"a":[1,{"b":null},[]],"c":{"d":"e"}}`, `{"a":[1,{"b":null},[]],"c":{"d":"e"}}`},
		{"duplicate key keeps first position and last value", `{"a":1,"b":2,"a":3}`, `{"a":3,"b":2}`},
		{"escapes are decoded and re-encoded", `"a\/b\u0041\n\"\\"`, `"a/bA\n\"\\"`},
		{"non-ASCII passes through", `"héllo 世界"`, `"héllo 世界"`},
		{"surrogate pair", `"\ud83d\ude00"`, `"😀"`},
		{"lone surrogate becomes U+FFFD", `"\ud800x"`, `"�x"`},
		{"surrogate followed by non-surrogate escape", `"\ud800\u0041"`, `"�A"`},
		{"invalid UTF-8 becomes U+FFFD per byte", "\"a\xff\xfeb\"", `"a��b"`},
		{"HTML is not escaped", `"<a href='x'>&</a>"`, `"<a href='x'>&</a>"`},
		{"line separators are escaped", "\"\u2028\u2029\"", `"\u2028\u2029"`},
		{"control characters are escaped", `"\u0001\b\f\t"`, `"\u0001\b\f\t"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := mustParse(t, tt.in)
			if got := string(v.AppendJSON(nil)); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestParseRejectsInvalidJSON(t *testing.T) {
	tests := []struct{ name, in, wantMsg string }{
		{"empty", ``, "unexpected end"},
		{"only space", `   `, "unexpected end"},
		{"trailing value", `{} {}`, "after top-level value"},
		{"trailing garbage", `1x`, "after top-level value"},
		{"leading zero", `01`, "after top-level value"},
		{"bare minus", `-`, "unexpected end"},
		{"minus letter", `-a`, "numeric literal"},
		{"dot without digits", `1.`, "unexpected end"},
		{"exponent without digits", `1e+`, "unexpected end"},
		{"plus sign", `+1`, "beginning of value"},
		{"trailing comma in array", `[1,]`, "beginning of value"},
		{"trailing comma in object", `{"a":1,}`, "object key"},
		{"missing colon", `{"a" 1}`, "after object key"},
		{"unquoted key", `{a:1}`, "object key"},
		{"single quotes", `'a'`, "beginning of value"},
		{"unterminated string", `"abc`, "unexpected end"},
		{"raw newline in string", "\"a\nb\"", "in string literal"},
		{"bad escape", `"\x"`, "escape code"},
		{"short unicode escape", `"\u12"`, "hexadecimal"},
		{"misspelled literal", `nul`, "unexpected end"},
		{"wrong literal", `tru3`, "literal true"},
		{"unclosed array", `[1,2`, "unexpected end"},
		{"missing comma", `[1 2]`, "after array element"},
		{"NaN", `NaN`, "beginning of value"},
		{"BOM", "\xef\xbb\xbf{}", "beginning of value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.in))
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q) = %v, want *SyntaxError", tt.in, err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q does not mention %q", err, tt.wantMsg)
			}
			if json.Valid([]byte(tt.in)) {
				t.Errorf("encoding/json accepts %q", tt.in)
			}
		})
	}
}

func TestParseLimitsNestingDepth(t *testing.T) {
	nest := func(n int, open, close string) string {
		return strings.Repeat(open, n) + strings.Repeat(close, n)
	}
	tests := []struct {
		name string
		in   string
		ok   bool
	}{
		{"arrays at the limit", nest(MaxDepth, "[", "]"), true},
		{"arrays beyond the limit", nest(MaxDepth+1, "[", "]"), false},
		{"objects at the limit", strings.Repeat(`{"a":`, MaxDepth-1) + "{}" + strings.Repeat("}", MaxDepth-1), true},
		{"objects beyond the limit", strings.Repeat(`{"a":`, MaxDepth) + "{}" + strings.Repeat("}", MaxDepth), false},
		{"unclosed deep input fails on depth first", strings.Repeat("[", 100000), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.in))
			if (err == nil) != tt.ok {
				t.Fatalf("err = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

func TestParseDeduplicatesLargeObjects(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range 100 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"k` + strconv.Itoa(i%40) + `":` + strings.Repeat("1", 1+i/40))
	}
	b.WriteString("}")
	v := mustParse(t, b.String())
	if len(v.Obj) != 40 {
		t.Fatalf("got %d members, want 40", len(v.Obj))
	}
	if v.Obj[0].Key != "k0" || string(v.Obj[0].Val.Num) != "111" {
		t.Errorf("first member = %s:%s, want k0:111", v.Obj[0].Key, v.Obj[0].Val.Num)
	}
	if got := string(v.Get("k39").Num); got != "11" {
		t.Errorf("k39 = %s, want the last value 11", got)
	}
}

func TestParseObjectRequiresAnObject(t *testing.T) {
	for _, in := range []string{`[]`, `"x"`, `1`, `null`, `true`} {
		if _, err := ParseObject([]byte(in)); err == nil || err.Error() != "document must be a JSON object" {
			t.Errorf("ParseObject(%s) = %v", in, err)
		}
	}
	if _, err := ParseObject([]byte(`{"id":"1"}`)); err != nil {
		t.Errorf("ParseObject(object) = %v", err)
	}
	if _, err := ParseObject([]byte(`{`)); err == nil || err.Error() == "document must be a JSON object" {
		t.Errorf("ParseObject of invalid JSON should report the syntax error, got %v", err)
	}
}

// fromAny converts encoding/json's decoding into a Value so both decoders
// can be compared with Equal.
func fromAny(x any) *Value {
	switch x := x.(type) {
	case nil:
		return Null()
	case bool:
		return Bool(x)
	case json.Number:
		return Number(string(x))
	case string:
		return String(x)
	case []any:
		a := Array()
		for _, e := range x {
			a.Arr = append(a.Arr, fromAny(e))
		}
		return a
	case map[string]any:
		o := Object()
		for k, e := range x {
			o.Set(k, fromAny(e))
		}
		return o
	}
	panic("unexpected type")
}

func decodeStd(data []byte) (*Value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("trailing data")
	}
	return fromAny(x), nil
}

// checkAgainstEncodingJSON is shared by the differential test and fuzzer.
func checkAgainstEncodingJSON(t *testing.T, data []byte) {
	got, err := Parse(data)
	valid := json.Valid(data)
	if errors.As(err, new(*SyntaxError)) && strings.Contains(err.Error(), "nesting depth") {
		return // encoding/json allows 10000 levels
	}
	if (err == nil) != valid {
		t.Fatalf("Parse(%q) error = %v, but json.Valid = %v", data, err, valid)
	}
	if !valid {
		return
	}
	want, err := decodeStd(data)
	if err != nil {
		t.Fatalf("encoding/json: %v", err)
	}
	if !Equal(got, want) {
		t.Fatalf("Parse(%q) = %s, encoding/json gives %s", data, got.AppendJSON(nil), want.AppendJSON(nil))
	}
	again, err := Parse(got.AppendJSON(nil))
	if err != nil || !Equal(again, got) {
		t.Fatalf("re-parsing %s: %v", got.AppendJSON(nil), err)
	}
}

func TestParseAgreesWithEncodingJSON(t *testing.T) {
	inputs := []string{
		`{"a":"\ud83d","b":"\udc00\ud800","c":"\ud800\ud800\udc00"}`,
		"[\"\xc0\xaf\", \"\xed\xa0\x80\", \"\xf4\x90\x80\x80\", \"\xe2\x82\"]",
		`{"a":1,"a":{"x":[1,2]},"b":1e400,"c":-1.5e-400}`,
		`[0.1, 1E2, -0.0e-0, 10000000000000000000000000]`,
		`{"":"","\u0000":"\u0000"}`,
	}
	for _, in := range inputs {
		checkAgainstEncodingJSON(t, []byte(in))
	}
}

func TestAppendJSONEscapesLikeEncodingJSON(t *testing.T) {
	var all []byte
	for b := range 256 {
		all = append(all, byte(b))
	}
	for _, s := range []string{string(all), "\u2028x\u2029", "é😀", "\xed\xa0\x80", "<>&'"} {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSuffix(buf.String(), "\n")
		if got := string(String(s).AppendJSON(nil)); got != want {
			t.Errorf("AppendJSON(%q)\n got %s\nwant %s", s, got, want)
		}
	}
}

func TestMarshalJSONReportsInvalidNumbers(t *testing.T) {
	tests := []struct {
		name    string
		v       *Value
		want    string
		wantErr bool
	}{
		{"nil value is null", nil, `null`, false},
		{"zero number is 0 like json.Number", &Value{Kind: KindNumber}, `0`, false},
		{"invalid number", Object(Member{"n", Number("1,5")}), `{"n":null}`, true},
		{"nil members are null", &Value{Kind: KindObject, Obj: []Member{{"a", nil}}}, `{"a":null}`, false},
		{"unknown kind", &Value{Kind: 99}, `null`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(tt.v.AppendJSON(nil)); got != tt.want {
				t.Errorf("AppendJSON = %s, want %s", got, tt.want)
			}
			b, err := json.Marshal(tt.v)
			if (err != nil) != tt.wantErr {
				t.Fatalf("json.Marshal error = %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil && string(b) != tt.want {
				t.Errorf("json.Marshal = %s, want %s", b, tt.want)
			}
		})
	}
}

func TestCloneSharesNothing(t *testing.T) {
	orig := mustParse(t, `{"a":[1,{"b":"c"}],"d":{"e":true}}`)
	before := string(orig.AppendJSON(nil))
	c := orig.Clone()
	c.Get("a").Arr[1].Set("b", String("changed"))
	c.Get("a").Arr = append(c.Get("a").Arr, Null())
	c.Get("d").Delete("e")
	c.Set("new", Bool(false))
	if got := string(orig.AppendJSON(nil)); got != before {
		t.Errorf("original changed to %s", got)
	}
	if (*Value)(nil).Clone() != nil {
		t.Error("Clone of nil should be nil")
	}
}

func TestObjectAccessorsKeepOrder(t *testing.T) {
	tests := []struct {
		name string
		edit func(v *Value)
		want string
	}{
		{"set replaces in place", func(v *Value) { v.Set("a", Number("9")) }, `{"a":9,"b":2,"c":3}`},
		{"set appends new keys", func(v *Value) { v.Set("d", String("x")) }, `{"a":1,"b":2,"c":3,"d":"x"}`},
		{"set nil stores null", func(v *Value) { v.Set("b", nil) }, `{"a":1,"b":null,"c":3}`},
		{"delete keeps the rest in order", func(v *Value) { v.Delete("b") }, `{"a":1,"c":3}`},
		{"delete of a missing key is a no-op", func(v *Value) { v.Delete("x") }, `{"a":1,"b":2,"c":3}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := mustParse(t, `{"a":1,"b":2,"c":3}`)
			tt.edit(v)
			if got := string(v.AppendJSON(nil)); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
	v := mustParse(t, `{"a":1}`)
	if !v.Delete("a") || v.Delete("a") {
		t.Error("Delete should report presence")
	}
	if mustParse(t, `[1]`).Get("a") != nil || (*Value)(nil).Get("a") != nil {
		t.Error("Get on non-objects should return nil")
	}
}

func TestSetPanicsOnNonObjects(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Set on an array did not panic")
		}
	}()
	Array().Set("a", Null())
}

func TestLookupWalksObjectsAndArrays(t *testing.T) {
	doc := mustParse(t, `{"a":{"b":[10,{"c":"x"}]},"0":"zero","arr":[[1,2]]}`)
	tests := []struct {
		path []string
		want string // "" means nil
	}{
		{nil, string(doc.AppendJSON(nil))},
		{[]string{"a", "b", "0"}, `10`},
		{[]string{"a", "b", "1", "c"}, `"x"`},
		{[]string{"0"}, `"zero"`},
		{[]string{"arr", "0", "1"}, `2`},
		{[]string{"a", "b", "2"}, ""},
		{[]string{"a", "b", "01"}, ""},
		{[]string{"a", "b", "-1"}, ""},
		{[]string{"a", "b", "-"}, ""},
		{[]string{"a", "missing"}, ""},
		{[]string{"a", "b", "1", "c", "d"}, ""},
	}
	for _, tt := range tests {
		got := doc.Lookup(tt.path)
		if tt.want == "" {
			if got != nil {
				t.Errorf("Lookup(%q) = %s, want nil", tt.path, got.AppendJSON(nil))
			}
			continue
		}
		if got == nil || string(got.AppendJSON(nil)) != tt.want {
			t.Errorf("Lookup(%q) = %v, want %s", tt.path, got, tt.want)
		}
	}
}

func TestEqualIsJSONEquality(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{`1`, `1.0`, true},
		{`100`, `1e2`, true},
		{`-0`, `0`, true},
		{`9007199254740993`, `9007199254740992`, false},
		{`1`, `"1"`, false},
		{`null`, `false`, false},
		{`{"a":1,"b":[1,2]}`, `{"b":[1,2.0],"a":1}`, true},
		{`{"a":1}`, `{"a":1,"b":2}`, false},
		{`{"a":1,"b":2}`, `{"a":1,"c":2}`, false},
		{`[1,2]`, `[2,1]`, false},
		{`[]`, `{}`, false},
		{`"é"`, `"\u00e9"`, true},
	}
	for _, tt := range tests {
		if got := Equal(mustParse(t, tt.a), mustParse(t, tt.b)); got != tt.want {
			t.Errorf("Equal(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if got := Equal(mustParse(t, tt.b), mustParse(t, tt.a)); got != tt.want {
			t.Errorf("Equal(%s, %s) = %v, want %v", tt.b, tt.a, got, tt.want)
		}
	}
	if !Equal(nil, Null()) || Equal(nil, Bool(false)) {
		t.Error("nil should equal null only")
	}
}
