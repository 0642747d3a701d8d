package bulk

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// A rejected line's error names the JSON it found as a reader says it, with the article
// cosmos.JSONKind gives and no second one: "the line is an array", "the item's "id" is
// a number", never "a JSON an array" or "is a a number".
func TestARejectedLineNamesWhatItFoundInPlainWords(t *testing.T) {
	cases := []struct{ line, want string }{
		{`[1,2]`, "the line is an array, not an object: each line is one item"},
		{`"text"`, "the line is a string, not an object: each line is one item"},
		{`42`, "the line is a number, not an object: each line is one item"},
		{`true`, "the line is a boolean, not an object: each line is one item"},
		{`null`, "the line is null, not an object: each line is one item"},
		{`{"id":7,"pk":"p"}`, `the item's "id" is a number: it must be a string`},
		{`{"id":false,"pk":"p"}`, `the item's "id" is a boolean: it must be a string`},
		{`{"id":["a"],"pk":"p"}`, `the item's "id" is an array: it must be a string`},
		{`{"id":{"a":1},"pk":"p"}`, `the item's "id" is an object: it must be a string`},
		{`{"id":{},"pk":"p"}`, `the item's "id" is an empty object: it must be a string`},
	}
	var lines []string
	for _, tc := range cases {
		lines = append(lines, tc.line)
	}
	c := newFakeContainer()
	var rej bytes.Buffer
	o := testOptions(c)
	o.Rejected = &rej
	if _, err := Import(context.Background(), mustSource(t, strings.Join(lines, "\n")+"\n"), NewState(Fingerprint{}, Target{}, Create), o); err != nil {
		t.Fatal(err)
	}
	got := map[int64]string{}
	for _, r := range rejections(t, rej.String()) {
		got[r.Line] = r.Error
	}
	for i, tc := range cases {
		if got[int64(i+1)] != tc.want {
			t.Errorf("line %d %s: error %q, want %q", i+1, tc.line, got[int64(i+1)], tc.want)
		}
	}
}
