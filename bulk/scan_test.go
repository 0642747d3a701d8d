package bulk

import (
	"reflect"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// A line is scanned once (scanLine) and decoded only when the scan is not sure of it:
// whatever the way, the line comes out as the decoder alone made it (decodeLine, the
// way every line went before): the same item, id and partition key, or the same
// rejection in the same words.
func TestAScannedLineComesOutAsTheDecodedOne(t *testing.T) {
	hierarchical := cosmos.PartitionKeyDefinition{Paths: []string{"/tenant", "/user/region"}, Kind: "MultiHash", Version: 2}
	for _, tc := range []struct {
		name    string
		text    string
		def     cosmos.PartitionKeyDefinition
		scanned bool // the line is an item the scan reads itself
	}{
		{"a plain item", `{"id":"a","pk":"p","n":1}`, pkDef, true},
		{"nested objects", `{"nested":{"id":"x","pk":{"pk":1}},"id":"a","pk":"p"}`, pkDef, true},
		{"escaped keys", `{"i\u0064":"a","\u0070k":"p"}`, pkDef, true},
		{"escaped values", `{"id":"a\u00e9\n","pk":"\"p\""}`, pkDef, true},
		{"duplicate keys: the last wins", `{"id":"a","pk":"p","id":"b","pk":"q"}`, pkDef, true},
		{"duplicate ids, the last not a string", `{"id":"a","pk":"p","id":5}`, pkDef, false},
		{"hierarchical keys", `{"id":"a","tenant":"t","user":{"region":"eu"}}`, hierarchical, true},
		{"hierarchical keys, a nested one missing", `{"id":"a","tenant":"t","user":{"name":"x"}}`, hierarchical, false},
		{"hierarchical keys through a non-object", `{"id":"a","tenant":"t","user":"x"}`, hierarchical, false},
		{"a number key", `{"id":"a","pk":42.5}`, pkDef, true},
		{"a number key out of range", `{"id":"a","pk":1e999}`, pkDef, false},
		{"a boolean key", `{"id":"a","pk":true}`, pkDef, true},
		{"a null key", `{"id":"a","pk":null}`, pkDef, true},
		{"an object key", `{"id":"a","pk":{"x":1}}`, pkDef, false},
		{"no key", `{"id":"a"}`, pkDef, false},
		{"whitespace-padded members", "  {  \"id\" : \"a\" ,\t\"pk\" : \"p\"  }\r", pkDef, true},
		{"an existing _trackingId", `{"id":"a","pk":"p","_trackingId":"old"}`, pkDef, true},
		{"invalid UTF-8", "{\"id\":\"a\xe9\",\"pk\":\"p\"}", pkDef, false},
		{"invalid UTF-8 after invalid JSON", "{\"id\":\"a\",\"pk\": \xe9}", pkDef, false},
		{"truncated", `{"id":"a","pk":"p"`, pkDef, false},
		{"truncated in a string", `{"id":"a","pk":"p`, pkDef, false},
		{"two objects", `{"id":"a","pk":"p"} {"id":"b"}`, pkDef, false},
		{"not an object", `[1,2]`, pkDef, false},
		{"blank", " \t ", pkDef, false},
		{"blank with a non-breaking space", "\u00a0", pkDef, false},
		{"no id", `{"pk":"p"}`, pkDef, false},
		{"an empty id", `{"id":"","pk":"p"}`, pkDef, false},
		{"a number id", `{"id":7,"pk":"p"}`, pkDef, false},
		{"deeply nested", `{"id":"a","pk":"p","x":` + strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + `}`, pkDef, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := line{n: 3, text: []byte(tc.text)}
			j, r := parseLine(l, tc.def)
			if (j.doc != nil) != tc.scanned {
				t.Fatalf("scanned: %v, want %v (%+v)", j.doc != nil, tc.scanned, r)
			}
			oldJ, oldR := decodeLine(l, tc.def)
			j.doc = nil
			if !reflect.DeepEqual(j, oldJ) || !reflect.DeepEqual(r, oldR) {
				t.Fatalf("got %+v %+v\nthe decoder's %+v %+v", j, r, oldJ, oldR)
			}
		})
	}
}
