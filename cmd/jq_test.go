package cmd

import (
	"bytes"
	"errors"
	"testing"
)

func TestJQWriterFiltersEachJSONValueAsItCompletes(t *testing.T) {
	cases := []struct {
		name   string
		expr   string
		pretty bool
		writes []string
		want   string
	}{
		{"a string prints raw", ".etag", true, []string{`{"etag":"\"0a\"","n":1}` + "\n"}, "\"0a\"\n"},
		{"an object of -o json prints indented", "{n}", true, []string{"{\n  \"n\": 1,\n  \"x\": 2\n}\n"}, "{\n  \"n\": 1\n}\n"},
		{"each line of a stream, one line each", "{id}", false, []string{"{\"id\":\"a\"}\n{\"id\":\"b\"}\n"}, "{\"id\":\"a\"}\n{\"id\":\"b\"}\n"},
		{"a value split across writes waits for its end", ".id", false, []string{`{"i`, `d":"a"}`, "\n{\"id\":", "\"b\"}\n"}, "a\nb\n"},
		{"several results a value, none for empty", ".[]", false, []string{"[1,2]\n[]\n[3]\n"}, "1\n2\n3\n"},
		{"numbers keep their digits", ".n", false, []string{`{"n":12345678901234567890}` + "\n"}, "12345678901234567890\n"},
		{"no HTML escaping", ".s", false, []string{`{"s":"<a&b>"}` + "\n"}, "<a&b>\n"},
		{"halt stops quietly", "halt", false, []string{"{}\n"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, err := compileJQ(tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			w := newJQWriter(&out, code, tc.pretty)
			for _, s := range tc.writes {
				if _, err := w.Write([]byte(s)); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.want {
				t.Fatalf("got %q, want %q", out.String(), tc.want)
			}
		})
	}
}

func TestJQWriterFailures(t *testing.T) {
	code, _ := compileJQ(".id + 1")
	var out bytes.Buffer
	stream := newJQWriter(&out, code, false)
	if _, err := stream.Write([]byte("{\"id\":\"a\"}\n")); err == nil {
		t.Fatal("a stream's write goes on after the expression failed")
	}
	var je *jqError
	if !errors.As(stream.Err(), &je) || ExitCode(stream.Err()) != ExitUsage {
		t.Fatalf("the failure %v is not a usage error", stream.Err())
	}
	// -o json's one object: the failure waits for Run, so that the command's own
	// outcome (a 404's exit code) is reported first.
	one := newJQWriter(&out, code, true)
	if _, err := one.Write([]byte("{\"id\":\"a\"}\n")); err != nil || one.Close() == nil {
		t.Fatalf("write %v, close %v", err, one.Close())
	}
	// A value cut short is an error at the end.
	ok, _ := compileJQ(".")
	cut := newJQWriter(&out, ok, false)
	cut.Write([]byte(`{"id":`))
	if cut.Close() == nil {
		t.Fatal("a value cut short passes")
	}
	for _, expr := range []string{"", "  ", ".[", "nosuch(1)"} {
		if _, err := compileJQ(expr); ExitCode(err) != ExitUsage {
			t.Errorf("--jq %q: %v", expr, err)
		}
	}
}
