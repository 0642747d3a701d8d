package output

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/internal/docfeed"
)

// trickyPage is a change feed page whose items are compact or not in every way the
// output could get wrong: white space between tokens and inside strings, escaped quotes
// and backslashes before a quote, unicode escapes, raw U+2028, HTML characters, bytes
// that are not UTF-8, numbers in every form, nesting.
const trickyPage = "{\"_rid\":\"r\",\"Documents\":[" +
	`{"id":"compact","pk":"a","_lsn":1},` +
	`{ "id" : "spaced" , "a" : [ 1 , 2 ] }, ` +
	"{\"id\":\"tabs\",\n\t\"a\":\r\n[1,\t2]},\n" +
	`{"id":"space inside a string","s":"a b  c"},` +
	`{"id":"esc\"aped","s":"\\","t":"\\\"", "after":"an escaped backslash, then a space between tokens"},` +
	`{"id":"ends in backslash\\","s":"x"},` +
	`{"id":"\u00e9\u2028\ud83d\ude00","html":"<a href=\"x\">&amp;</a>","lt":"\u003c"},` +
	"{\"id\":\"raw\u2028line separator\",\"s\":\"é\"},\n" +
	"{\"id\":\"not utf-8 \xff\xfe\",\"s\":\"\xc3\"},\n" +
	`{"id":"numbers","n":[0,-0,1.5e+10,-2E-3,123456789012345678901234567890]},` +
	`{"id":"nested","a":{"b":[{"c":{ }},[ ],null,true,false]}},` +
	`"a string item", 42 , null, [ 1, "two" ] ,{}` +
	"],\"_count\":16}"

func TestWriteChangeLinesWritesWhatWriteItemLinesWrites(t *testing.T) {
	items, err := docfeed.Items([]byte(trickyPage))
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 16 {
		t.Fatalf("%d items, want 16", len(items))
	}
	var want, got bytes.Buffer
	if err := WriteItemLines(&want, items); err != nil {
		t.Fatal(err)
	}
	if err := WriteChangeLines(&got, items); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Fatalf("WriteChangeLines wrote\n%s\nWriteItemLines\n%s", got.String(), want.String())
	}
	// The compact items went out as they came.
	if !strings.HasPrefix(got.String(), `{"id":"compact","pk":"a","_lsn":1}`+"\n"+`{"id":"spaced","a":[1,2]}`+"\n") {
		t.Fatalf("unexpected lines:\n%s", got.String())
	}
}

func TestHasSpace(t *testing.T) {
	for v, want := range map[string]bool{
		`{"a":"b c"}`: false, `{"a": "b"}`: true, `{"a":"\\"}`: false, `{"a":"\\" }`: true, `{"a":"\" "}`: false,
		`{"a":"\\\" "}`: false, `{"a":"\\\\" ,"b":1}`: true, `[1,2]`: false, "[1,\n2]": true, `"open`: true, `"a\"`: true, ``: false,
	} {
		if got := hasSpace([]byte(v)); got != want {
			t.Errorf("hasSpace(%s) = %v, want %v", v, got, want)
		}
	}
}

func FuzzWriteChangeLines(f *testing.F) {
	f.Add([]byte(trickyPage))
	f.Add([]byte(`{"Documents":[{"a":"\\\\" , "b":"\" "}]}`))
	f.Fuzz(func(t *testing.T, page []byte) {
		items, err := docfeed.Items(page)
		if err != nil {
			return
		}
		var want, got bytes.Buffer
		_ = WriteItemLines(&want, items)
		_ = WriteChangeLines(&got, items)
		if got.String() != want.String() {
			t.Fatalf("%q: WriteChangeLines wrote %q, WriteItemLines %q", page, got.String(), want.String())
		}
	})
}

func BenchmarkWriteChangeLines(b *testing.B) {
	var page bytes.Buffer
	page.WriteString(`{"Documents":[`)
	for i := range 1000 {
		if i > 0 {
			page.WriteByte(',')
		}
		page.WriteString(`{"id":"b000123","pk":"p5","n":42,"g":"g3","pad":"0123456789abcdef0123456789abcdef","_rid":"abcdefghijklmnop==","_self":"dbs/abc==/colls/abc=/docs/abcdefghijklmnop==/","_etag":"\"00000000-0000-0000-0000-000000000000\"","_attachments":"attachments/","_ts":1764979200,"_lsn":12345}`)
	}
	page.WriteString(`]}`)
	items, err := docfeed.Items(page.Bytes())
	if err != nil {
		b.Fatal(err)
	}
	var sink bytes.Buffer
	b.Run("WriteChangeLines", func(b *testing.B) {
		for b.Loop() {
			sink.Reset()
			_ = WriteChangeLines(&sink, items)
		}
	})
	b.Run("WriteItemLines", func(b *testing.B) {
		for b.Loop() {
			sink.Reset()
			_ = WriteItemLines(&sink, items)
		}
	})
	_ = json.Valid(sink.Bytes())
}
