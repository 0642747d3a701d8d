package cmd

import (
	"strings"
	"testing"
)

func TestParsePartitionKey(t *testing.T) {
	cases := map[string]string{
		`tenant-1`:        `["tenant-1"]`,
		`"42"`:            `["42"]`,
		`42`:              `[42]`,
		`true`:            `[true]`,
		`null`:            `[null]`,
		`["acme","u-7"]`:  `["acme","u-7"]`,
		`["acme", 3]`:     `["acme",3]`,
		`hello world`:     `["hello world"]`,
		`{not json`:       `["{not json"]`,
		`East US`:         `["East US"]`,
		`"quoted string"`: `["quoted string"]`,
	}
	for in, want := range cases {
		pk, err := parsePartitionKey(in)
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if got := pk.JSON(); got != want {
			t.Errorf("--pk %s → %s, want %s", in, got, want)
		}
	}
	for _, bad := range []string{`{"a":1}`, `[`, `[]`, `[{"a":1}]`} {
		if _, err := parsePartitionKey(bad); err == nil {
			t.Errorf("--pk %s accepted", bad)
		}
	}
}

func TestPatchBody(t *testing.T) {
	body, err := patchBody([]string{"set /a=1", `add /tags/-="x"`, "replace /name=alice", "incr /n=2", "remove /old", "move /from /to"}, "from c where c.n > 1")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"condition":"from c where c.n \u003e 1","operations":[{"op":"set","path":"/a","value":1},{"op":"add","path":"/tags/-","value":"x"},{"op":"replace","path":"/name","value":"alice"},{"op":"incr","path":"/n","value":2},{"op":"remove","path":"/old"},{"op":"move","path":"/to","from":"/from"}]}`
	if string(body) != want {
		t.Fatalf("body\n%s\nwant\n%s", body, want)
	}
	for _, bad := range []string{"set a=1", "set /a", "incr /n=x", "remove /a=1", "move /a", "explode /a=1", ""} {
		if _, err := patchBody([]string{bad}, ""); err == nil {
			t.Errorf("--op %q accepted", bad)
		}
	}
	if _, err := patchBody(nil, ""); err == nil || !strings.Contains(err.Error(), "--op") {
		t.Errorf("no ops: %v", err)
	}
	if _, err := patchBody([]string{"set /a=1"}, "where c.a = 1"); err == nil {
		t.Error("condition without FROM accepted")
	}
}
