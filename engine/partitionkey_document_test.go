package engine

import (
	"errors"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

func TestPartitionKeyFromDocument(t *testing.T) {
	single := cosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}
	nested := cosmos.PartitionKeyDefinition{Paths: []string{"/tenant/id"}}
	hier := cosmos.PartitionKeyDefinition{Paths: []string{"/tenant", "/user"}, Kind: "MultiHash"}
	cases := []struct {
		name    string
		def     cosmos.PartitionKeyDefinition
		doc     map[string]any
		want    string
		wantErr string
	}{
		{"the value at the path", single, map[string]any{"pk": "t1"}, `["t1"]`, ""},
		{"null is a value", single, map[string]any{"pk": nil}, `[null]`, ""},
		{"a nested path", nested, map[string]any{"tenant": map[string]any{"id": "a"}}, `["a"]`, ""},
		{"a hierarchical key", hier, map[string]any{"tenant": "a", "user": "u"}, `["a","u"]`, ""},
		{"a missing property is refused, naming the path and the fix", single, map[string]any{"id": "x"}, "", "no value at the container's partition key path /pk"},
		{"a missing nested property is refused", nested, map[string]any{"tenant": map[string]any{}}, "", "/tenant/id"},
		{"a missing level of a hierarchical key is refused", hier, map[string]any{"tenant": "a"}, "", "path /user (the container's key is /tenant, /user)"},
		{"an object is refused", single, map[string]any{"pk": map[string]any{}}, "", "object or array"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pk, err := partitionKeyFromDocument(c.doc, c.def)
			if c.wantErr != "" {
				var ie *InputError
				if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v, want an input error with %q", err, c.wantErr)
				}
				if strings.Contains(c.wantErr, "no value") && !strings.Contains(err.Error(), "--pk '[{}]'") {
					t.Errorf("the error does not say how to store it under the none key: %v", err)
				}
				return
			}
			if err != nil || pk.JSON() != c.want {
				t.Fatalf("%v, %v; want %s", pk, err, c.want)
			}
		})
	}
}

func TestInvalidUTF8Offset(t *testing.T) {
	for s, want := range map[string]int{"a\xFFb": 1, "\xC3": 0, "caf\xC3\xA9\xE9": 5} {
		if got := invalidUTF8Offset(s); got != want {
			t.Errorf("%q: %d, want %d", s, got, want)
		}
	}
}
