package testkit

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"
)

// JSONLines parses out as NDJSON, every line one JSON object, and fails the test naming
// what (the stream, for the message) at the first line that is not.
func JSONLines(t testing.TB, what, out string) []map[string]any {
	t.Helper()
	var values []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	for sc.Scan() {
		var v map[string]any
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s: a line is not a JSON object: %q (%v)\nall of it:\n%s", what, sc.Text(), err, out)
		}
		values = append(values, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return values
}
