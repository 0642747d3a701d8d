package jsondoc

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParsePatchBodyAcceptsBothForms(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		condition string
		ops       []PatchOp
	}{
		{
			name:      "object with condition",
			body:      `{"condition":"from c where c.a = 1","operations":[{"op":"set","path":"/a","value":2}]}`,
			condition: "from c where c.a = 1",
			ops:       []PatchOp{{Op: "set", Path: "/a", Value: json.RawMessage(`2`)}},
		},
		{
			name: "object without condition",
			body: `{"operations":[{"op":"remove","path":"/a"}]}`,
			ops:  []PatchOp{{Op: "remove", Path: "/a"}},
		},
		{
			name: "null condition is no condition",
			body: `{"condition":null,"operations":[{"op":"remove","path":"/a"}]}`,
			ops:  []PatchOp{{Op: "remove", Path: "/a"}},
		},
		{
			name: "bare array from the JavaScript SDK",
			body: `[{"op":"add","path":"/tags/-","value":"x"},{"op":"move","from":"/a","path":"/b"}]`,
			ops: []PatchOp{
				{Op: "add", Path: "/tags/-", Value: json.RawMessage(`"x"`)},
				{Op: "move", Path: "/b", From: "/a"},
			},
		},
		{
			name: "explicit null value is present",
			body: `[{"op":"set","path":"/a","value":null}]`,
			ops:  []PatchOp{{Op: "set", Path: "/a", Value: json.RawMessage(`null`)}},
		},
		{
			name: "value is re-encoded compactly",
			body: `[{"op":"add","path":"/a","value":{ "x" : [1, 2] }}]`,
			ops:  []PatchOp{{Op: "add", Path: "/a", Value: json.RawMessage(`{"x":[1,2]}`)}},
		},
		{
			name: "unknown fields are ignored",
			body: `[{"op":"incr","path":"/n","value":1,"extra":true}]`,
			ops:  []PatchOp{{Op: "incr", Path: "/n", Value: json.RawMessage(`1`)}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := ParsePatchBody([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if req.Condition != tt.condition {
				t.Errorf("condition = %q, want %q", req.Condition, tt.condition)
			}
			if len(req.Operations) != len(tt.ops) {
				t.Fatalf("got %d operations, want %d", len(req.Operations), len(tt.ops))
			}
			for i, op := range req.Operations {
				w := tt.ops[i]
				if op.Op != w.Op || op.Path != w.Path || op.From != w.From || string(op.Value) != string(w.Value) ||
					(op.Value == nil) != (w.Value == nil) {
					t.Errorf("op %d = %+v, want %+v", i, op, w)
				}
			}
		})
	}
}

func TestParsePatchBodyRejectsBadRequests(t *testing.T) {
	eleven := "[" + strings.TrimSuffix(strings.Repeat(`{"op":"remove","path":"/a"},`, 11), ",") + "]"
	tests := []struct{ name, body, wantMsg string }{
		{"invalid JSON", `{"operations":`, "invalid patch body"},
		{"scalar body", `"set"`, "JSON object with"},
		{"missing operations", `{"condition":"from c where true"}`, `must contain "operations"`},
		{"operations not an array", `{"operations":{}}`, "must be an array"},
		{"condition not a string", `{"condition":1,"operations":[{"op":"remove","path":"/a"}]}`, "condition"},
		{"no operations", `[]`, "at least one operation"},
		{"too many operations", eleven, "at most 10 patch operations are allowed"},
		{"operation not an object", `[1]`, "must be an object"},
		{"unknown op names the op and the valid ones", `[{"op":"delete","path":"/a"}]`,
			`unknown patch operation "delete"; valid operations are add, set, replace, remove, incr, move`},
		{"op names are case-sensitive", `[{"op":"Set","path":"/a","value":1}]`, `unknown patch operation "Set"`},
		{"missing op", `[{"path":"/a"}]`, `missing "op"`},
		{"op not a string", `[{"op":1,"path":"/a"}]`, `"op" must be a string`},
		{"missing path", `[{"op":"remove"}]`, "patch path must name a property"},
		{"root path", `[{"op":"remove","path":"/"}]`, "patch path must name a property"},
		{"relative path", `[{"op":"remove","path":"a"}]`, `must start with "/"`},
		{"bad escape", `[{"op":"remove","path":"/a~2"}]`, "invalid escape"},
		{"add without value", `[{"op":"add","path":"/a"}]`, `add: "value" is required`},
		{"set without value", `[{"op":"set","path":"/a"}]`, `set: "value" is required`},
		{"replace without value", `[{"op":"replace","path":"/a"}]`, `replace: "value" is required`},
		{"incr without value", `[{"op":"incr","path":"/a"}]`, `incr: "value" is required`},
		{"incr with a string", `[{"op":"incr","path":"/a","value":"1"}]`, "incr: value must be a number"},
		{"move without from", `[{"op":"move","path":"/a"}]`, `move: "from" is required`},
		{"move from root", `[{"op":"move","path":"/a","from":"/"}]`, "patch path must name a property"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParsePatchBody([]byte(tt.body))
			var pe *PatchError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want *PatchError", err)
			}
			if !strings.Contains(pe.Error(), tt.wantMsg) {
				t.Errorf("err = %q, want it to contain %q", pe, tt.wantMsg)
			}
		})
	}
}

func TestParsePatchBodyAllowsTenOperations(t *testing.T) {
	ten := "[" + strings.TrimSuffix(strings.Repeat(`{"op":"remove","path":"/a"},`, 10), ",") + "]"
	if _, err := ParsePatchBody([]byte(ten)); err != nil {
		t.Fatal(err)
	}
}

func applyJSON(t *testing.T, doc string, body string, protected func([]string) bool) (string, error) {
	t.Helper()
	d := mustParse(t, doc)
	req, err := ParsePatchBody([]byte(body))
	if err != nil {
		t.Fatalf("ParsePatchBody(%s): %v", body, err)
	}
	before := string(d.AppendJSON(nil))
	err = ApplyPatch(d, req.Operations, protected)
	if err != nil {
		if after := string(d.AppendJSON(nil)); after != before {
			t.Errorf("failed patch changed the document from %s to %s", before, after)
		}
		var pe *PatchError
		if !errors.As(err, &pe) {
			t.Errorf("error %v is not a *PatchError", err)
		}
	}
	return string(d.AppendJSON(nil)), err
}

func TestApplyPatchOperations(t *testing.T) {
	const doc = `{"id":"1","a":1,"obj":{"x":1},"arr":[10,20,30],"s":"str"}`
	tests := []struct {
		name string
		ops  string
		want string
	}{
		{"add new member appends", `[{"op":"add","path":"/b","value":2}]`,
			`{"id":"1","a":1,"obj":{"x":1},"arr":[10,20,30],"s":"str","b":2}`},
		{"add existing member replaces in place", `[{"op":"add","path":"/a","value":{"n":null}}]`,
			`{"id":"1","a":{"n":null},"obj":{"x":1},"arr":[10,20,30],"s":"str"}`},
		{"add into array inserts", `[{"op":"add","path":"/arr/1","value":15}]`,
			`{"id":"1","a":1,"obj":{"x":1},"arr":[10,15,20,30],"s":"str"}`},
		{"add at array length appends", `[{"op":"add","path":"/arr/3","value":40}]`,
			`{"id":"1","a":1,"obj":{"x":1},"arr":[10,20,30,40],"s":"str"}`},
		{"add with dash appends", `[{"op":"add","path":"/arr/-","value":40}]`,
			`{"id":"1","a":1,"obj":{"x":1},"arr":[10,20,30,40],"s":"str"}`},
		{"add nested member", `[{"op":"add","path":"/obj/y","value":[]}]`,
			`{"id":"1","a":1,"obj":{"x":1,"y":[]},"arr":[10,20,30],"s":"str"}`},
		{"set array index replaces", `[{"op":"set","path":"/arr/1","value":21}]`,
			`{"id":"1","a":1,"obj":{"x":1},"arr":[10,21,30],"s":"str"}`},
		{"set at array length appends", `[{"op":"set","path":"/arr/3","value":40}]`,
			`{"id":"1","a":1,"obj":{"x":1},"arr":[10,20,30,40],"s":"str"}`},
		{"set null", `[{"op":"set","path":"/a","value":null}]`,
			`{"id":"1","a":null,"obj":{"x":1},"arr":[10,20,30],"s":"str"}`},
		{"replace member", `[{"op":"replace","path":"/obj/x","value":"y"}]`,
			`{"id":"1","a":1,"obj":{"x":"y"},"arr":[10,20,30],"s":"str"}`},
		{"replace array element", `[{"op":"replace","path":"/arr/0","value":0}]`,
			`{"id":"1","a":1,"obj":{"x":1},"arr":[0,20,30],"s":"str"}`},
		{"remove member keeps order", `[{"op":"remove","path":"/a"}]`,
			`{"id":"1","obj":{"x":1},"arr":[10,20,30],"s":"str"}`},
		{"remove array element shifts", `[{"op":"remove","path":"/arr/0"}]`,
			`{"id":"1","a":1,"obj":{"x":1},"arr":[20,30],"s":"str"}`},
		{"incr integer stays integer", `[{"op":"incr","path":"/a","value":41}]`,
			`{"id":"1","a":42,"obj":{"x":1},"arr":[10,20,30],"s":"str"}`},
		{"incr negative", `[{"op":"incr","path":"/arr/2","value":-31}]`,
			`{"id":"1","a":1,"obj":{"x":1},"arr":[10,20,-1],"s":"str"}`},
		{"incr by float gives float", `[{"op":"incr","path":"/a","value":0.5}]`,
			`{"id":"1","a":1.5,"obj":{"x":1},"arr":[10,20,30],"s":"str"}`},
		{"incr missing creates", `[{"op":"incr","path":"/obj/count","value":3}]`,
			`{"id":"1","a":1,"obj":{"x":1,"count":3},"arr":[10,20,30],"s":"str"}`},
		{"incr missing array element appends", `[{"op":"incr","path":"/arr/-","value":3}]`,
			`{"id":"1","a":1,"obj":{"x":1},"arr":[10,20,30,3],"s":"str"}`},
		{"move member", `[{"op":"move","from":"/a","path":"/obj/a"}]`,
			`{"id":"1","obj":{"x":1,"a":1},"arr":[10,20,30],"s":"str"}`},
		{"move within array", `[{"op":"move","from":"/arr/0","path":"/arr/-"}]`,
			`{"id":"1","a":1,"obj":{"x":1},"arr":[20,30,10],"s":"str"}`},
		{"move onto itself is a no-op", `[{"op":"move","from":"/obj","path":"/obj"}]`, doc},
		{"move replaces an existing member", `[{"op":"move","from":"/s","path":"/a"}]`,
			`{"id":"1","a":"str","obj":{"x":1},"arr":[10,20,30]}`},
		{"operations see earlier results", `[{"op":"add","path":"/n","value":{}},{"op":"add","path":"/n/m","value":1},{"op":"incr","path":"/n/m","value":1}]`,
			`{"id":"1","a":1,"obj":{"x":1},"arr":[10,20,30],"s":"str","n":{"m":2}}`},
		{"escaped path", `[{"op":"add","path":"/a~1b~0c","value":1}]`,
			`{"id":"1","a":1,"obj":{"x":1},"arr":[10,20,30],"s":"str","a/b~c":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := applyJSON(t, doc, tt.ops, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestApplyPatchRejectsInvalidTargets(t *testing.T) {
	const doc = `{"id":"1","a":1,"obj":{"x":1},"arr":[10,20,30],"s":"str","big":9223372036854775807,"f":1e308}`
	tests := []struct{ name, ops, wantMsg string }{
		{"add to missing parent", `[{"op":"add","path":"/nope/x","value":1}]`, "add: parent /nope of path /nope/x does not exist"},
		{"add under a scalar", `[{"op":"add","path":"/s/x","value":1}]`, "is a string, not an object or array"},
		{"add beyond array end", `[{"op":"add","path":"/arr/4","value":1}]`, "add: array index 4 in path /arr/4 is out of range (array length 3)"},
		{"add with a name into an array", `[{"op":"add","path":"/arr/x","value":1}]`, "is not a valid array index"},
		{"add with leading zero index", `[{"op":"add","path":"/arr/01","value":1}]`, "is not a valid array index"},
		{"set beyond array end", `[{"op":"set","path":"/arr/9","value":1}]`, "out of range"},
		{"replace missing member", `[{"op":"replace","path":"/x","value":1}]`, "replace: path /x does not exist"},
		{"replace missing parent", `[{"op":"replace","path":"/x/y","value":1}]`, "replace: path /x/y does not exist"},
		{"replace array end", `[{"op":"replace","path":"/arr/3","value":1}]`, "replace: path /arr/3 does not exist"},
		{"replace dash", `[{"op":"replace","path":"/arr/-","value":1}]`, "replace: path /arr/- does not exist"},
		{"remove missing", `[{"op":"remove","path":"/obj/y"}]`, "remove: path /obj/y does not exist"},
		{"remove missing array element", `[{"op":"remove","path":"/arr/3"}]`, "remove: path /arr/3 does not exist"},
		{"incr a string", `[{"op":"incr","path":"/s","value":1}]`, "incr: path /s is not a number"},
		{"incr missing parent", `[{"op":"incr","path":"/x/y","value":1}]`, "does not exist"},
		{"incr overflowing float", `[{"op":"incr","path":"/f","value":1e308}]`, "out of range"},
		{"move missing from", `[{"op":"move","from":"/x","path":"/y"}]`, "move: from path /x does not exist"},
		{"move into own child", `[{"op":"move","from":"/obj","path":"/obj/x/y"}]`, "move: cannot move /obj into its own child /obj/x/y"},
		{"move to missing parent", `[{"op":"move","from":"/a","path":"/x/y"}]`, "does not exist"},
		{"later failure undoes earlier ops", `[{"op":"set","path":"/a","value":2},{"op":"remove","path":"/zzz"}]`, "remove: path /zzz does not exist"},
		{"too deep value", `[{"op":"add","path":"/obj/deep","value":` + strings.Repeat("[", MaxDepth-2) + strings.Repeat("]", MaxDepth-2) + `},` +
			`{"op":"add","path":"/obj/deep` + strings.Repeat("/0", MaxDepth-3) + `/-","value":[]}]`, "would nest deeper than 128 levels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := applyJSON(t, doc, tt.ops, nil)
			if err == nil {
				t.Fatal("patch succeeded")
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("err = %q, want it to contain %q", err, tt.wantMsg)
			}
		})
	}
}

func TestApplyPatchIncrArithmetic(t *testing.T) {
	tests := []struct{ cur, by, want string }{
		{"1", "2", "3"},
		{"-5", "5", "0"},
		{"9223372036854775806", "1", "9223372036854775807"},
		{"9223372036854775807", "1", "9.223372036854776e+18"}, // overflow falls back to float
		{"-9223372036854775808", "-1", "-9.223372036854776e+18"},
		{"1.0", "1", "2"},
		{"0.1", "0.2", "0.30000000000000004"},
		{"1e2", "1", "101"},
		{"1e20", "1e20", "2e+20"},
		{"123456789012345678901234567890", "0", "1.2345678901234568e+29"},
	}
	for _, tt := range tests {
		got, err := applyJSON(t, `{"n":`+tt.cur+`}`, `[{"op":"incr","path":"/n","value":`+tt.by+`}]`, nil)
		if err != nil {
			t.Errorf("%s + %s: %v", tt.cur, tt.by, err)
			continue
		}
		if want := `{"n":` + tt.want + `}`; got != want {
			t.Errorf("%s + %s = %s, want %s", tt.cur, tt.by, got, want)
		}
	}
}

func TestApplyPatchConsultsProtected(t *testing.T) {
	var asked [][]string
	protected := func(path []string) bool {
		asked = append(asked, slices.Clone(path))
		return len(path) == 1 && (path[0] == "id" || path[0] == "_ts")
	}
	tests := []struct{ name, ops, wantMsg string }{
		{"protected path", `[{"op":"set","path":"/_ts","value":1}]`, "cannot patch system or identity property /_ts"},
		{"protected move source", `[{"op":"move","from":"/id","path":"/x"}]`, "cannot patch system or identity property /id"},
		{"checked before anything runs", `[{"op":"set","path":"/a","value":1},{"op":"remove","path":"/id"}]`, "cannot patch system or identity property /id"},
		{"unprotected paths pass", `[{"op":"set","path":"/id2","value":1},{"op":"set","path":"/x/id","value":1}]`, "parent /x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asked = nil
			_, err := applyJSON(t, `{"id":"1","_ts":5}`, tt.ops, protected)
			if err == nil || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("err = %v, want it to contain %q", err, tt.wantMsg)
			}
		})
	}
	asked = nil
	if _, err := applyJSON(t, `{"a":1}`, `[{"op":"move","from":"/a","path":"/b/~1c"}]`, protected); err == nil {
		t.Fatal("move to a missing parent succeeded")
	}
	if want := [][]string{{"b", "/c"}, {"a"}}; !slices.EqualFunc(asked, want, slices.Equal) {
		t.Errorf("protected was asked about %q, want %q", asked, want)
	}
}

func TestApplyPatchValidatesHandBuiltOps(t *testing.T) {
	tests := []struct {
		name    string
		op      PatchOp
		wantMsg string
	}{
		{"unknown op", PatchOp{Op: "copy", Path: "/a", From: "/b"}, `unknown patch operation "copy"`},
		{"empty raw value is absent", PatchOp{Op: "set", Path: "/a", Value: json.RawMessage{}}, "invalid value"},
		{"nil value is absent", PatchOp{Op: "set", Path: "/a"}, `"value" is required`},
		{"malformed value", PatchOp{Op: "set", Path: "/a", Value: json.RawMessage(`{`)}, "invalid value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ApplyPatch(mustParse(t, `{}`), []PatchOp{tt.op}, nil)
			if err == nil || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("err = %v, want it to contain %q", err, tt.wantMsg)
			}
		})
	}
	if err := ApplyPatch(nil, []PatchOp{{Op: "remove", Path: "/a"}}, nil); err == nil {
		t.Error("patching a nil document succeeded")
	}
}

func TestApplyPatchDoesNotAliasPatchValues(t *testing.T) {
	d := mustParse(t, `{}`)
	ops := []PatchOp{{Op: "set", Path: "/a", Value: json.RawMessage(`{"x":1}`)}}
	if err := ApplyPatch(d, ops, nil); err != nil {
		t.Fatal(err)
	}
	if err := ApplyPatch(d, []PatchOp{{Op: "set", Path: "/a/x", Value: json.RawMessage(`2`)}}, nil); err != nil {
		t.Fatal(err)
	}
	if string(ops[0].Value) != `{"x":1}` {
		t.Errorf("patch value was modified: %s", ops[0].Value)
	}
}

func TestApplyPatchKeepsDocumentsParseable(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth-2) + strings.Repeat("]", MaxDepth-2)
	body := `[{"op":"add","path":"/obj/deep","value":` + deep + `},` +
		`{"op":"add","path":"/obj/deep` + strings.Repeat("/0", MaxDepth-3) + `/-","value":"leaf"}]`
	got, err := applyJSON(t, `{"obj":{}}`, body, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse([]byte(got)); err != nil {
		t.Fatalf("patched document at the depth limit does not parse: %v", err)
	}
}
