package docfeed

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// unmarshalItems is what the pages were read with before: json.Unmarshal into a
// cosmos.DocumentFeed.
func unmarshalItems(body []byte) ([]json.RawMessage, error) {
	var feed cosmos.DocumentFeed
	if err := json.Unmarshal(body, &feed); err != nil {
		return nil, err
	}
	return feed.Documents, nil
}

// sameAsUnmarshal fails t unless Items gives what json.Unmarshal gives: the same items,
// byte for byte, or the same error.
func sameAsUnmarshal(t *testing.T, body []byte) {
	t.Helper()
	got, gotErr := Items(body)
	want, wantErr := unmarshalItems(body)
	if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
		t.Fatalf("%q: error %v, json.Unmarshal's %v", body, gotErr, wantErr)
	}
	if (got == nil) != (want == nil) || len(got) != len(want) {
		t.Fatalf("%q: items %q, json.Unmarshal's %q", body, got, want)
	}
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("%q: item %d is %q, json.Unmarshal's %q", body, i, got[i], want[i])
		}
	}
}

var pages = []string{
	// The usual pages, compact and not.
	`{"_rid":"abc==","Documents":[{"id":"1","pk":"a","_lsn":5},{"id":"2","pk":"b","_lsn":6}],"_count":2}`,
	`{"_rid":"abc==","Documents":[],"_count":0}`,
	"{\n  \"_rid\" : \"x\",\n  \"Documents\" : [ {\"id\" : \"1\", \"a\" : [1, 2 ,3]} ,\n\t{ \"id\":\"2\" } ],\r\n \"_count\" : 2 }\n",
	`  {"Documents":[1,"two",null,true,false,-0.5e+10,[],{},[[{"a":[]}]]]}  `,
	// Strings: escapes, unicode escapes, bytes that are not UTF-8, a space inside.
	`{"Documents":[{"id":"a\"b\\c\/d\b\f\n\r\t","s":"\u00e9\u2028\uD83D\uDE00 \u003c&>"}]}`,
	"{\"Documents\":[{\"id\":\"\xff\xfe bad utf-8\",\"e\":\"é ü\"}]}",
	`{"Documents":[{"id":"x","<":"<>&"}]}`,
	// Other members, anywhere.
	`{"_count":1,"x":{"Documents":[9]},"Documents":[{"id":"1"}],"_rid":null,"y":[1,{"z":"}"}]}`,
	`{"_rid":"r","_count":null}`,
	`{}`,
	// The odd ones json.Unmarshal decides.
	`{"documents":[{"id":"lower case key"}]}`,
	`{"DOCUMENTS":[1],"Documents":[2]}`,
	`{"Documents":[1],"Documents":[2]}`,
	`{"Documents":[1],"documents":[2]}`,
	`{"\u0044ocuments":[{"id":"escaped key"}]}`,
	`{"Documents":null}`,
	`{"Documents":{"id":"x"}}`,
	`{"Documents":"x"}`,
	`{"Documents":[1],"_count":"2"}`,
	`{"Documents":[1],"_count":2.5}`,
	`{"Documents":[1],"_count":1e3}`,
	`{"Documents":[1],"_count":99999999999999999999999}`,
	`{"Documents":[1],"_count":-3}`,
	`{"Documents":[1],"_rid":5}`,
	`{"Documents":[1],"_RID":"x"}`,
	`{"Documents":[1],"_Count":1}`,
	`null`,
	`[]`,
	`"x"`,
	// Not JSON.
	``,
	`   `,
	`{`,
	`{"Documents":[1,]}`,
	`{"Documents":[1 2]}`,
	`{"Documents":[01]}`,
	`{"Documents":[-]}`,
	`{"Documents":[1.]}`,
	`{"Documents":[1e]}`,
	`{"Documents":[.5]}`,
	`{"Documents":[+1]}`,
	`{"Documents":[tru]}`,
	`{"Documents":[nul]}`,
	`{"Documents":["a` + "\n" + `b"]}`,
	`{"Documents":["\x"]}`,
	`{"Documents":["\u12"]}`,
	`{"Documents":["\u12G4"]}`,
	`{"Documents":["open]}`,
	`{"Documents":[{"a" 1}]}`,
	`{"Documents":[{"a":1,}]}`,
	`{"Documents":[{1:1}]}`,
	`{"Documents":[]}x`,
	`{"Documents":[]}{}`,
	`{"Documents":[]`,
	`{"a":1,}`,
	`{"a":1 "b":2}`,
	"\xef\xbb\xbf{\"Documents\":[]}",
	`{"Documents":[` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `]}`,
	`{"Documents":[` + strings.Repeat("[", 9990) + strings.Repeat("]", 9990) + `]}`,
}

func TestItemsAreWhatUnmarshalGives(t *testing.T) {
	for _, p := range pages {
		sameAsUnmarshal(t, []byte(p))
	}
}

func TestItemsAreSlicesOfTheBodyThatCannotGrowIntoIt(t *testing.T) {
	body := []byte(`{"Documents":[{"id":"1"},{"id":"2"}]}`)
	items, err := Items(body)
	if err != nil || len(items) != 2 {
		t.Fatalf("items %q, error %v", items, err)
	}
	_ = append(items[0], '!')
	if string(body) != `{"Documents":[{"id":"1"},{"id":"2"}]}` {
		t.Fatalf("appending to an item changed the body: %s", body)
	}
}

func FuzzItems(f *testing.F) {
	for _, p := range pages {
		f.Add([]byte(p))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		sameAsUnmarshal(t, body)
	})
}

func BenchmarkItems(b *testing.B) {
	var page bytes.Buffer
	page.WriteString(`{"_rid":"abc==","Documents":[`)
	for i := range 1000 {
		if i > 0 {
			page.WriteByte(',')
		}
		fmt.Fprintf(&page, `{"id":"b%06d","pk":"p%d","n":%d,"g":"g%d","pad":"0123456789abcdef0123456789abcdef","_rid":"abcdefghijklmnop==","_self":"dbs/abc==/colls/abc=/docs/abcdefghijklmnop==/","_etag":"\"00000000-0000-0000-0000-000000000000\"","_attachments":"attachments/","_ts":1764979200,"_lsn":%d}`, i, i%997, i*7, i%7, i+1)
	}
	page.WriteString(`],"_count":1000}`)
	body := page.Bytes()
	b.Run("docfeed", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, err := Items(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json.Unmarshal", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, err := unmarshalItems(body); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// unmarshalMember is the value json.Unmarshal puts in a field tagged _lsn.
func unmarshalMember(item []byte) (json.RawMessage, error) {
	var v struct {
		V json.RawMessage `json:"_lsn"`
	}
	err := json.Unmarshal(item, &v)
	return v.V, err
}

var members = []string{
	`{"id":"1","_lsn":42}`,
	`{"_lsn":42,"nested":{"_lsn":7},"a":[{"_lsn":8}],"s":"\"_lsn\":9"}`,
	` { "id" : "x" , "_lsn" : 1 } `,
	`{"_lsn":1,"_lsn":2}`,
	`{"_lsn":1,"_lsn":null}`,
	`{"_lsn":null}`,
	`{"_lsn":"12"}`,
	`{"_lsn":true}`,
	`{"_lsn":{"a":[1]}}`,
	`{"_LSN":5}`,
	`{"_lsn":1,"_Lsn":5}`,
	`{"_l\u0073n":5}`,
	"{\"_l\u017fn\":5}",
	`{"id":"no lsn"}`,
	`{}`,
	`[]`,
	`null`,
	`"x"`,
	`{"_lsn":5`,
	`{"_lsn":5}x`,
	`{"_lsn":05}`,
	`{"_lsn":-5e2}`,
}

func TestMemberFindsWhatUnmarshalFinds(t *testing.T) {
	for _, item := range members {
		v, found, ok := Member([]byte(item), "_lsn")
		if !ok {
			continue // the caller decodes it
		}
		want, err := unmarshalMember([]byte(item))
		if err != nil || found != (want != nil) || !bytes.Equal(v, want) {
			t.Fatalf("%s: Member gives %q (found %v), json.Unmarshal %q (%v)", item, v, found, want, err)
		}
	}
}

func FuzzMember(f *testing.F) {
	for _, item := range members {
		f.Add([]byte(item))
	}
	f.Fuzz(func(t *testing.T, item []byte) {
		v, found, ok := Member(item, "_lsn")
		if !ok {
			return
		}
		want, err := unmarshalMember(item)
		if err != nil || found != (want != nil) || !bytes.Equal(v, want) {
			t.Fatalf("%q: Member gives %q (found %v), json.Unmarshal %q (%v)", item, v, found, want, err)
		}
	})
}
