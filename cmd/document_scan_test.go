package cmd

import (
	"strings"
	"testing"
)

// create, upsert and replace hand the engine the document with its scan, so that the
// engine reads it once: the scan must be of the very bytes passed on (the engine ignores
// a scan of other bytes), and only an object has one.
func TestADocumentReadFromAFileComesWithItsScan(t *testing.T) {
	for _, tc := range []struct {
		name, data, want string
		scanned          bool
	}{
		{"an object", `{"id":"a","pk":"p"}`, `{"id":"a","pk":"p"}`, true},
		{"an object with a mark and white space around it", "\xEF\xBB\xBF \n{\"id\":\"a\"}\u00a0\n", `{"id":"a"}`, true},
		{"an array is passed on, for the engine to refuse", `[1]`, `[1]`, false},
		{"a string is passed on, for the engine to refuse", ` "a" `, `"a"`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body, doc, err := readScannedDocument("-", strings.NewReader(tc.data))
			if err != nil || string(body) != tc.want || (doc != nil) != tc.scanned {
				t.Fatalf("%q, scanned %v, %v", body, doc != nil, err)
			}
			if doc != nil && &doc.Bytes()[0] != &body[0] {
				t.Fatal("the scan is of a copy of the body")
			}
			old, err := readDocument("-", strings.NewReader(tc.data))
			if err != nil || string(old) != string(body) {
				t.Fatalf("readDocument: %q, %v", old, err)
			}
		})
	}
}
