package jsonenc

import (
	"encoding/json"
	"testing"
)

func TestMarshalWritesHTMLCharactersAsTheyAreAndNoNewline(t *testing.T) {
	v := map[string]any{"q": "SELECT * FROM c WHERE c.a < 1 && c.b > 2", "n": 1.5}
	got, err := Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"n":1.5,"q":"SELECT * FROM c WHERE c.a < 1 && c.b > 2"}`; string(got) != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	std, _ := json.Marshal(v)
	if string(std) == string(got) {
		t.Fatal("encoding/json escapes <, > and &: the two should differ")
	}
	if _, err := Marshal(func() {}); err == nil {
		t.Fatal("a func is not JSON: want an error")
	}
}
