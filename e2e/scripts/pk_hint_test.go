package scripts_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// --pk 42 is the number 42, a different key from the string "42": a read of an item
// stored under "42" gets a 404, and the message says how the key was read and how to
// give it as a string. A 404 that the key's type cannot explain says nothing more.
func TestA404ReadWithANonStringKeySaysHowToPassAString(t *testing.T) {
	bin := testkit.Binary(t)
	testkit.Account(t)
	env := os.Environ()
	for _, doc := range []string{`{"id":"o42","pk":"42"}`, `{"id":"otrue","pk":"true"}`, `{"id":"onull","pk":"null"}`} {
		if code, _, errOut := testkit.RunBinary(t, bin, env, doc, "create", "-f", "-"); code != 0 {
			t.Fatalf("create %s: exit %d: %s", doc, code, errOut)
		}
	}
	for _, tc := range []struct {
		name, id, pk string
		hint         string // "" for none
	}{
		{"a number", "o42", "42", `--pk 42 was read as the number 42, not a string: if the item's partition key is the string "42", pass --pk '"42"'`},
		{"a number, written as a decimal", "o42", "42.0", `--pk 42.0 was read as the number 42.0, not a string: if the item's partition key is the string "42.0", pass --pk '"42.0"'`},
		{"a boolean", "otrue", "true", `--pk true was read as the boolean true, not a string: if the item's partition key is the string "true", pass --pk '"true"'`},
		{"null", "onull", "null", `--pk null was read as null, not a string: if the item's partition key is the string "null", pass --pk '"null"'`},
		{"a string key that is not there", "o42", "tenant-7", ""},
		{"a quoted string key that is not there", "o42", `"43"`, ""},
		{"a hierarchical key, typed explicitly", "o42", `[42]`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := testkit.RunBinary(t, bin, env, "", "read", tc.id, "--pk", tc.pk)
			if code != 3 {
				t.Fatalf("exit %d, want 3 (not found): %s", code, errOut)
			}
			if out != "" || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Errorf("want nothing on stdout and one line on stderr: stdout %q, stderr %q", out, errOut)
			}
			if got := strings.Contains(errOut, "was read as"); got != (tc.hint != "") {
				t.Errorf("hint given = %v, want %v: %q", got, tc.hint != "", errOut)
			}
			if tc.hint != "" && !strings.Contains(errOut, tc.hint) {
				t.Errorf("stderr %q\nwant it to say %q", errOut, tc.hint)
			}
			if tc.hint == "" {
				return
			}
			// The same sentence in the JSON error, whose kind and status stay the service's.
			code, out, _ = testkit.RunBinary(t, bin, env, "", "read", tc.id, "--pk", tc.pk, "-o", "json")
			var res struct {
				Error struct {
					Kind       string `json:"kind"`
					StatusCode int    `json:"status_code"`
					Message    string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil || code != 3 {
				t.Fatalf("-o json: exit %d, %v: %s", code, err, out)
			}
			if res.Error.Kind != "service" || res.Error.StatusCode != 404 || !strings.Contains(res.Error.Message, tc.hint) {
				t.Errorf("-o json error %+v, want a service 404 whose message has the hint", res.Error)
			}
		})
	}
	// The advice works: the key passed as a string finds the item.
	if code, out, errOut := testkit.RunBinary(t, bin, env, "", "read", "o42", "--pk", `"42"`); code != 0 || !strings.Contains(out, `"o42"`) {
		t.Errorf(`--pk '"42"': exit %d: %s %s`, code, out, errOut)
	}
	// A container that does not exist is a 404 too (1003), which no key explains.
	code, _, errOut := testkit.RunBinary(t, bin, env, "", "read", "o42", "--pk", "42", "--container", "nope")
	if code != 3 || strings.Contains(errOut, "was read as") {
		t.Errorf("missing container: exit %d, stderr %q; want 3 and no partition key hint", code, errOut)
	}
}
