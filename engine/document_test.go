package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/retries"
)

// decodedKey is what the old path reads from a document: the decoded map's id and the
// partition key at paths (PartitionKeyOfDocument), as JSON, or its error.
func decodedKey(t testing.TB, b []byte, paths []string) (id any, pk string) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("the decoder refuses %q: %v", b, err)
	}
	key, err := partitionKeyFromDocument(doc, cosmos.PartitionKeyDefinition{Paths: paths})
	if err != nil {
		return doc["id"], "error: " + err.Error()
	}
	return doc["id"], key.JSON()
}

func TestTheScanReadsWhatTheDecoderReads(t *testing.T) {
	for _, tc := range []struct {
		name  string
		doc   string
		paths []string
		id    string // "" when ID is not ok
		pk    string // "" when PartitionKey is not ok
	}{
		{"a flat item", `{"id":"a","pk":"p","n":1}`, []string{"/pk"}, "a", `["p"]`},
		{"nested objects are skipped over", `{"x":{"id":"no","pk":"no","y":[{"id":1}]},"id":"a","pk":"p"}`, []string{"/pk"}, "a", `["p"]`},
		{"escaped keys are read unescaped", `{"i\u0064":"a","\u0070k":"p"}`, []string{"/pk"}, "a", `["p"]`},
		{"escaped values are read unescaped", `{"id":"a\"b\u00e9\ud83d\ude00","pk":"p\\q\/"}`, []string{"/pk"}, "a\"bé😀", `["p\\q/"]`},
		{"a lone surrogate reads as U+FFFD, as the decoder reads it", `{"id":"\ud800","pk":"p"}`, []string{"/pk"}, "\uFFFD", `["p"]`},
		{"the last of duplicate keys wins", `{"id":"a","pk":"p","id":"b","pk":"q"}`, []string{"/pk"}, "b", `["q"]`},
		{"an escaped duplicate wins when it is last", `{"id":"a","i\u0064":"b"}`, []string{"/id"}, "b", `["b"]`},
		{"a duplicate object replaces, it does not merge", `{"id":"a","k":{"b":1},"k":{"c":2}}`, []string{"/k/c"}, "a", `[2]`},
		{"a key the last duplicate object lacks is missing", `{"id":"a","k":{"b":1},"k":{"c":2}}`, []string{"/k/b"}, "a", ""},
		{"hierarchical keys", `{"id":"a","tenant":"t","user":{"region":"eu","n":5}}`, []string{"/tenant", "/user/region", "/user/n"}, "a", `["t","eu",5]`},
		{"numbers", `{"id":"a","pk":-12.5e3}`, []string{"/pk"}, "a", `[-12500]`},
		{"a number out of range is the decoder's to refuse", `{"id":"a","pk":1e400}`, []string{"/pk"}, "a", ""},
		{"true", `{"id":"a","pk":true}`, []string{"/pk"}, "a", `[true]`},
		{"false", `{"id":"a","pk":false}`, []string{"/pk"}, "a", `[false]`},
		{"null", `{"id":"a","pk":null}`, []string{"/pk"}, "a", `[null]`},
		{"an object key is the decoder's to refuse", `{"id":"a","pk":{"x":1}}`, []string{"/pk"}, "a", ""},
		{"an array key is the decoder's to refuse", `{"id":"a","pk":[1]}`, []string{"/pk"}, "a", ""},
		{"a path through a non-object is the decoder's", `{"id":"a","k":5}`, []string{"/k/b"}, "a", ""},
		{"a missing key is the decoder's", `{"id":"a"}`, []string{"/pk"}, "a", ""},
		{"whitespace everywhere", " \t{ \r\n \"id\" :\t\"a\" , \"pk\" : 7 , \"x\" : [ 1 , { } ] } \n", []string{"/pk"}, "a", `[7]`},
		{"a number id is not an id", `{"id":7,"pk":"p"}`, []string{"/pk"}, "", `["p"]`},
		{"a null id is not an id", `{"id":null,"pk":"p"}`, []string{"/pk"}, "", `["p"]`},
		{"no id", `{"pk":"p"}`, []string{"/pk"}, "", `["p"]`},
		{"the empty object", `{}`, []string{"/pk"}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, ok := ScanDocument([]byte(tc.doc))
			if !ok {
				t.Fatalf("the scan refused %s", tc.doc)
			}
			id, idOK := d.ID()
			if tc.id == "" && idOK || tc.id != "" && id != tc.id {
				t.Fatalf("id %q %v, want %q", id, idOK, tc.id)
			}
			pk, pkOK := d.PartitionKey(cosmos.PartitionKeyDefinition{Paths: tc.paths})
			if tc.pk == "" && pkOK || tc.pk != "" && (!pkOK || pk.JSON() != tc.pk) {
				t.Fatalf("partition key %s %v, want %s", pk.JSON(), pkOK, tc.pk)
			}
			// What the scan reads, the decoder reads the same.
			oldID, oldPK := decodedKey(t, []byte(tc.doc), tc.paths)
			if idOK && oldID != id {
				t.Fatalf("id %q, the decoder's %v", id, oldID)
			}
			if pkOK && oldPK != pk.JSON() {
				t.Fatalf("partition key %s, the decoder's %s", pk.JSON(), oldPK)
			}
		})
	}
}

// The scan accepts nothing the decoder refuses, nor anything that is not valid UTF-8:
// those go down the old path, for the old message.
func TestTheScanLeavesWhatItIsNotSureOfToTheDecoder(t *testing.T) {
	for name, doc := range map[string]string{
		"truncated":                        `{"id":"a","pk":`,
		"truncated in a string":            `{"id":"a`,
		"truncated after a member":         `{"id":"a",`,
		"invalid UTF-8 in a string":        "{\"id\":\"a\xff\"}",
		"invalid UTF-8 in a key":           "{\"i\xc3\":\"a\"}",
		"invalid UTF-8 outside strings":    "{\"id\":\"a\"}\xff",
		"a surrogate encoded in UTF-8":     "{\"id\":\"\xed\xa0\x80\"}",
		"non-breaking space around it":     "\u00a0{\"id\":\"a\"}",
		"data after the object":            `{"id":"a"} {"id":"b"}`,
		"a brace after the object":         `{"id":"a"}}`,
		"an array":                         `[{"id":"a"}]`,
		"a string":                         `"a"`,
		"blank":                            "  ",
		"empty":                            "",
		"a trailing comma":                 `{"id":"a",}`,
		"a missing colon":                  `{"id" "a"}`,
		"a single-quoted string":           `{'id':"a"}`,
		"a control character in a string":  "{\"id\":\"a\tb\"}",
		"a bad escape":                     `{"id":"a\x"}`,
		"a short unicode escape":           `{"id":"\u12"}`,
		"a leading zero":                   `{"id":"a","n":01}`,
		"a bare minus":                     `{"id":"a","n":-}`,
		"a dot without digits":             `{"id":"a","n":1.}`,
		"an exponent without digits":       `{"id":"a","n":1e+}`,
		"a plus sign":                      `{"id":"a","n":+1}`,
		"a misspelt literal":               `{"id":"a","n":tru}`,
		"a literal run on":                 `{"id":"a","n":truex}`,
		"NaN":                              `{"id":"a","n":NaN}`,
		"an unclosed array":                `{"id":"a","n":[1,2}`,
		"too deep for the scan to go into": `{"a":` + strings.Repeat("[", maxScanDepth) + strings.Repeat("]", maxScanDepth) + `}`,
	} {
		t.Run(name, func(t *testing.T) {
			if _, ok := ScanDocument([]byte(doc)); ok {
				t.Fatalf("the scan accepted %q", doc)
			}
		})
	}
}

// tokens is the document's JSON token stream: two documents with the same tokens are the
// same document, members in the same order, whatever their whitespace and escapes.
func tokens(t testing.TB, b []byte) []json.Token {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out []json.Token
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%q: %v", b, err)
		}
		out = append(out, tok)
	}
}

func TestTheTrackingIDIsSplicedIntoTheDocumentAsGiven(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"added as the last member", `{"id":"a","pk":"p"}`, `{"id":"a","pk":"p","_trackingId":"run:1"}`},
		{"the document's bytes are kept", ` { "id" : "a\u0041", "n":[1, 2] } `, ` { "id" : "a\u0041", "n":[1, 2] ,"_trackingId":"run:1"} `},
		{"the empty object", `{}`, `{"_trackingId":"run:1"}`},
		{"the empty object with space", `{ }`, `{ "_trackingId":"run:1"}`},
		{"an existing one is replaced, and moves last", `{"id":"a","_trackingId":"old","pk":"p"}`, `{"id":"a","pk":"p","_trackingId":"run:1"}`},
		{"every duplicate is replaced", `{"_trackingId":"x","id":"a","_trackingId":"y"}`, `{"id":"a","_trackingId":"run:1"}`},
		{"an escaped one is replaced", `{"id":"a","_tracking\u0049d":"old"}`, `{"id":"a","_trackingId":"run:1"}`},
		{"the only member replaced", `{"_trackingId":"old"}`, `{"_trackingId":"run:1"}`},
		{"a nested one is not the document's", `{"id":"a","x":{"_trackingId":"n"}}`, `{"id":"a","x":{"_trackingId":"n"},"_trackingId":"run:1"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, ok := ScanDocument([]byte(tc.doc))
			if !ok {
				t.Fatalf("the scan refused %s", tc.doc)
			}
			got := d.withTrackingID("run:1")
			if string(got) != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
			// The same document as the old decode and encode made.
			old, err := withTrackingID([]byte(tc.doc), "run:1")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(tokens(t, got), tokens(t, old)) {
				t.Fatalf("got %s, the old way %s", got, old)
			}
		})
	}
}

// A caller's Document is what the engine reads the id from; one scanned from other bytes
// than Body is ignored, and Body scanned.
func TestTheEngineTakesTheCallersScanOfTheBodyOnly(t *testing.T) {
	body := []byte(` {"id":"1", "pk":"a"} `)
	scanned, _ := ScanDocument(body)
	other, _ := ScanDocument([]byte(`{"id":"2","pk":"a"}`))
	for _, tc := range []struct {
		name string
		doc  *Document
	}{{"its scan", scanned}, {"no scan", nil}, {"the scan of other bytes", other}} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newStoreTransport()
			op := createOp(retries.WriteRetriesWithTrackingID)
			op.Body, op.Document, op.TrackingID = body, tc.doc, "run-1:9"
			res, err := writeClient(t, tr).Execute(context.Background(), op)
			if err != nil || res.StatusCode != 201 {
				t.Fatalf("%v %v", res, err)
			}
			if got := string(tr.items["1"]); got != ` {"id":"1", "pk":"a","_trackingId":"run-1:9"} ` || len(tr.items) != 1 {
				t.Fatalf("stored %q (%d items)", got, len(tr.items))
			}
		})
	}
}

// FuzzScanDocument: whatever the scan accepts, encoding/json accepts and reads the same
// id, partition key and document with its _trackingId; every valid UTF-8 JSON object
// not nested too deep for it, the scan accepts.
func FuzzScanDocument(f *testing.F) {
	for _, s := range []string{`{"id":"a","pk":"p"}`, `{"i\u0064":"a","pk":{"b":1},"pk":{"b":[2]}}`, ` {"_trackingId":"x","id":"é","a":{"b":null}} `,
		`{"id":"a","pk":-1.5E+3,"a":{"b":true}}`, `{"id":"\ud800"}`, `{"id":"a",}`, "{\"id\":\"\xff\"}"} {
		f.Add([]byte(s))
	}
	paths := [][]string{{"/pk"}, {"/pk/b"}, {"/a/b", "/id"}}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, ok := ScanDocument(b)
		trimmed := bytes.TrimLeft(b, " \t\r\n")
		if !ok {
			if utf8.Valid(b) && json.Valid(b) && len(trimmed) > 0 && trimmed[0] == '{' && len(b) < maxScanDepth {
				t.Fatalf("the scan refused the valid object %q", b)
			}
			return
		}
		if !utf8.Valid(b) || !json.Valid(b) {
			t.Fatalf("the scan accepted %q", b)
		}
		id, idOK := d.ID()
		for _, p := range paths {
			oldID, oldPK := decodedKey(t, b, p)
			if s, isString := oldID.(string); idOK != isString || idOK && s != id {
				t.Fatalf("%q: id %q %v, the decoder's %v", b, id, idOK, oldID)
			}
			if pk, ok := d.PartitionKey(cosmos.PartitionKeyDefinition{Paths: p}); ok && pk.JSON() != oldPK {
				t.Fatalf("%q: partition key at %v %s, the decoder's %s", b, p, pk.JSON(), oldPK)
			}
		}
		old, err := withTrackingID(b, "t:1")
		if err != nil {
			t.Fatal(err)
		}
		if got := d.withTrackingID("t:1"); !reflect.DeepEqual(tokens(t, got), tokens(t, old)) {
			t.Fatalf("%q: with its tracking id %s, the old way %s", b, got, old)
		}
	})
}
