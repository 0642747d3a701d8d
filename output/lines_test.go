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

// compactLines is the reference: every item through json.Compact, trimmed as it is when
// json.Compact refuses it.
func compactLines(items []json.RawMessage) string {
	var b bytes.Buffer
	for _, it := range items {
		n := b.Len()
		if err := json.Compact(&b, it); err != nil {
			b.Truncate(n)
			b.Write(bytes.TrimSpace(it))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func TestWriteItemLinesWritesWhatJSONCompactMakes(t *testing.T) {
	items, err := docfeed.Items([]byte(trickyPage))
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 16 {
		t.Fatalf("%d items, want 16", len(items))
	}
	var got bytes.Buffer
	if err := WriteItemLines(&got, items); err != nil {
		t.Fatal(err)
	}
	if want := compactLines(items); got.String() != want {
		t.Fatalf("WriteItemLines wrote\n%s\njson.Compact makes\n%s", got.String(), want)
	}
	// The compact items went out as they came.
	if !strings.HasPrefix(got.String(), `{"id":"compact","pk":"a","_lsn":1}`+"\n"+`{"id":"spaced","a":[1,2]}`+"\n") {
		t.Fatalf("unexpected lines:\n%s", got.String())
	}
}

func FuzzWriteItemLines(f *testing.F) {
	f.Add([]byte(trickyPage))
	f.Add([]byte(`{"Documents":[{"a":"\\\\" , "b":"\" "}]}`))
	f.Fuzz(func(t *testing.T, page []byte) {
		items, err := docfeed.Items(page)
		if err != nil {
			return
		}
		var got bytes.Buffer
		_ = WriteItemLines(&got, items)
		if want := compactLines(items); got.String() != want {
			t.Fatalf("%q: WriteItemLines wrote %q, json.Compact makes %q", page, got.String(), want)
		}
	})
}

// WriteItemLines against compacting every item, on a page of compact items.
func BenchmarkWriteItemLines(b *testing.B) {
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
	b.Run("WriteItemLines", func(b *testing.B) {
		for b.Loop() {
			sink.Reset()
			_ = WriteItemLines(&sink, items)
		}
	})
	b.Run("json.Compact", func(b *testing.B) {
		for b.Loop() {
			sink.Reset()
			sink.WriteString(compactLines(items))
		}
	})
	_ = json.Valid(sink.Bytes())
}

// An ItemLineWriter reuses its buffer: each page, larger or smaller than the one before,
// is written whole and alone, and nothing of an earlier page shows in a later one.
func TestItemLineWriterWritesEachPageAlone(t *testing.T) {
	var writes []string
	lw := ItemLineWriter{W: writerFunc(func(p []byte) (int, error) {
		writes = append(writes, string(p))
		return len(p), nil
	})}
	pages := [][]json.RawMessage{
		{json.RawMessage(`{"id":"a","pad":"xxxxxxxxxxxxxxxx"}`), json.RawMessage(`{ "id" : "b" }`)},
		{json.RawMessage(`1`)},
		{},
		{json.RawMessage(`{"id":"c"}`), json.RawMessage(`"s"`), json.RawMessage(`[1, 2]`), json.RawMessage(`{"id":"d","n":123456789}`)},
	}
	for _, p := range pages {
		if err := lw.Write(p); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"{\"id\":\"a\",\"pad\":\"xxxxxxxxxxxxxxxx\"}\n{\"id\":\"b\"}\n", "1\n", "", "{\"id\":\"c\"}\n\"s\"\n[1,2]\n{\"id\":\"d\",\"n\":123456789}\n"}
	if len(writes) != len(want) {
		t.Fatalf("%d writes, want %d: %q", len(writes), len(want), writes)
	}
	for i := range want {
		if writes[i] != want[i] {
			t.Errorf("page %d wrote %q, want %q", i, writes[i], want[i])
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
