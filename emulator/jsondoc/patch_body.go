package jsondoc

import (
	"encoding/json"
	"strconv"
	"strings"
)

// PatchError reports a patch request that Cosmos DB answers with
// 400 Bad Request. The emulator returns Msg to the client verbatim.
type PatchError struct{ Msg string }

func (e *PatchError) Error() string { return e.Msg }

func patchErrorf(parts ...string) error { return &PatchError{Msg: strings.Join(parts, "")} }

// PatchOp is one operation of a partial document update, in the wire form
// the SDKs send.
type PatchOp struct {
	Op   string `json:"op"`
	Path string `json:"path"`
	From string `json:"from,omitempty"`
	// Value is nil when the operation has no "value" and the four bytes
	// null for an explicit JSON null: "set /x to null" is a valid request
	// that must not be mistaken for a missing value.
	Value json.RawMessage `json:"value,omitempty"`
}

// PatchRequest is a parsed patch body. Condition is the optional
// "FROM c WHERE ..." filter (see [ParseCondition]); it is not parsed here so
// that the caller decides how to report a bad condition.
type PatchRequest struct {
	Condition  string
	Operations []PatchOp
}

// MaxPatchOperations is Cosmos DB's limit per patch request.
const MaxPatchOperations = 10

const validOpList = "add, set, replace, remove, incr, move"

// ParsePatchBody accepts both body forms in use: the object
// {"condition": ..., "operations": [...]} sent by most SDKs and the bare
// array of operations sent by the JavaScript SDK. Every operation is
// validated here, so a request that parses can only fail in ApplyPatch
// because of the document it is applied to.
func ParsePatchBody(body []byte) (*PatchRequest, error) {
	v, err := Parse(body)
	if err != nil {
		return nil, patchErrorf("invalid patch body: ", err.Error())
	}
	req := &PatchRequest{}
	var ops *Value
	switch v.Kind {
	case KindArray:
		ops = v
	case KindObject:
		if c := v.Get("condition"); c != nil {
			switch c.Kind {
			case KindString:
				req.Condition = c.Str
			case KindNull:
			default:
				return nil, patchErrorf(`patch "condition" must be a string such as "from c where c.status = 'active'"`)
			}
		}
		ops = v.Get("operations")
		if ops == nil {
			return nil, patchErrorf(`patch body must contain "operations"`)
		}
		if ops.Kind != KindArray {
			return nil, patchErrorf(`patch "operations" must be an array`)
		}
	default:
		return nil, patchErrorf(`patch body must be a JSON object with "operations" or a JSON array of operations`)
	}
	if len(ops.Arr) == 0 {
		return nil, patchErrorf("patch request must contain at least one operation")
	}
	if len(ops.Arr) > MaxPatchOperations {
		return nil, patchErrorf("at most ", strconv.Itoa(MaxPatchOperations), " patch operations are allowed")
	}
	req.Operations = make([]PatchOp, len(ops.Arr))
	for i, o := range ops.Arr {
		op, err := decodeOp(i, o)
		if err != nil {
			return nil, err
		}
		if _, err := compileOp(op); err != nil {
			return nil, err
		}
		req.Operations[i] = op
	}
	return req, nil
}

func decodeOp(i int, o *Value) (PatchOp, error) {
	var op PatchOp
	where := "patch operation " + strconv.Itoa(i)
	if o.Kind != KindObject {
		return op, patchErrorf(where, " must be an object such as {\"op\": \"set\", \"path\": \"/a\", \"value\": 1}")
	}
	str := func(name string, dst *string) error {
		f := o.Get(name)
		if f == nil || f.Kind == KindNull {
			return nil
		}
		if f.Kind != KindString {
			return patchErrorf(where, `: "`, name, `" must be a string`)
		}
		*dst = f.Str
		return nil
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"op", &op.Op}, {"path", &op.Path}, {"from", &op.From}} {
		if err := str(f.name, f.dst); err != nil {
			return op, err
		}
	}
	if val := o.Get("value"); val != nil {
		op.Value = val.AppendJSON(nil)
	}
	return op, nil
}

// compiledOp is a validated operation with its paths split and value
// decoded, so ApplyPatch fails on a bad request before touching anything.
type compiledOp struct {
	op       string
	rawPath  string
	rawFrom  string
	path     []string
	from     []string
	val      *Value
	valDepth int
}

func compileOp(op PatchOp) (*compiledOp, error) {
	c := &compiledOp{op: op.Op, rawPath: op.Path, rawFrom: op.From}
	needValue, needFrom := false, false
	switch op.Op {
	case "add", "set", "replace", "incr":
		needValue = true
	case "remove":
	case "move":
		needFrom = true
	case "":
		return nil, patchErrorf(`patch operation is missing "op"; valid operations are `, validOpList)
	default:
		return nil, patchErrorf("unknown patch operation ", strconv.Quote(op.Op), "; valid operations are ", validOpList)
	}
	var err error
	if c.path, err = ParsePointer(op.Path); err != nil {
		return nil, patchErrorf(op.Op, ": ", err.Error())
	}
	if needFrom {
		if op.From == "" {
			return nil, patchErrorf(op.Op, `: "from" is required`)
		}
		if c.from, err = ParsePointer(op.From); err != nil {
			return nil, patchErrorf(op.Op, ": from: ", err.Error())
		}
	}
	if needValue {
		if op.Value == nil {
			return nil, patchErrorf(op.Op, `: "value" is required`)
		}
		if c.val, err = Parse(op.Value); err != nil {
			return nil, patchErrorf(op.Op, ": invalid value: ", err.Error())
		}
		if op.Op == "incr" && c.val.Kind != KindNumber {
			return nil, patchErrorf("incr: value must be a number")
		}
		c.valDepth = depth(c.val)
	}
	return c, nil
}

// depth counts nesting levels the way Parse limits them: a scalar is 0,
// an empty array 1.
func depth(v *Value) int {
	if v == nil {
		return 0
	}
	d := 0
	switch v.Kind {
	case KindArray:
		for _, e := range v.Arr {
			d = max(d, depth(e))
		}
		return d + 1
	case KindObject:
		for _, m := range v.Obj {
			d = max(d, depth(m.Val))
		}
		return d + 1
	}
	return 0
}
