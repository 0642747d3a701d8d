package jsonenc

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestHasSpace(t *testing.T) {
	for v, want := range map[string]bool{
		`{"a":"b c"}`: false, `{"a": "b"}`: true, `{"a":"\\"}`: false, `{"a":"\\" }`: true, `{"a":"\" "}`: false,
		`{"a":"\\\" "}`: false, `{"a":"\\\\" ,"b":1}`: true, `[1,2]`: false, "[1,\n2]": true, `"open `: true, `"a\" `: true, ``: false,
		// No white space byte at all: compact, whatever else it is (the feed checked it).
		`"open`: false, `{"a"1}`: false,
	} {
		if got := hasSpace([]byte(v)); got != want {
			t.Errorf("hasSpace(%s) = %v, want %v", v, got, want)
		}
	}
}

// AppendCompact gives json.Compact's bytes and error, for values with and without space.
func TestAppendCompactIsJSONCompact(t *testing.T) {
	for _, v := range []string{
		`{"a":"b c"}`, `{"a": "b"}`, "[1,\n2]", `{"a":"\\" ,"b":1}`, `"a\"b"`, `{"a" 1}`, `{"a": }`, `"open `, ` 1 `,
	} {
		var want bytes.Buffer
		want.WriteString("prefix")
		werr := json.Compact(&want, []byte(v))
		got, err := AppendCompact([]byte("prefix"), []byte(v))
		if (err == nil) != (werr == nil) || err == nil && string(got) != want.String() {
			t.Errorf("AppendCompact(%q) = %q, %v; json.Compact: %q, %v", v, got, err, want.String(), werr)
		}
		if err != nil && string(got) != "prefix" {
			t.Errorf("AppendCompact(%q) failed and left %q, want the prefix alone", v, got)
		}
	}
}
