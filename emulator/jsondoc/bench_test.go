package jsondoc

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// doc1KB resembles a typical emulator document: system properties, nested
// objects, arrays, numbers and a little non-ASCII and escaped text.
const doc1KB = `{"id":"7c9e6679-7425-40de-944b-e07fc1f90ae7","pk":"tenant-42","type":"order",` +
	`"status":"shipped","createdAt":"2024-05-17T09:31:22.123Z","total":1249.99,"currency":"EUR",` +
	`"customer":{"id":"c-1001","name":"Zoë Müller","email":"zoe@example.com","vip":true,` +
	`"address":{"street":"Hauptstraße 5","city":"Berlin","zip":"10115","country":"DE"}},` +
	`"items":[{"sku":"A-100","name":"Widget","qty":2,"price":199.5,"tags":["blue","small"]},` +
	`{"sku":"B-200","name":"Gadget \"Pro\"","qty":1,"price":850.99,"tags":["new"]},` +
	`{"sku":"C-300","name":"Cable","qty":5,"price":0,"tags":[]}],` +
	`"notes":"Leave at the door.\nRing twice.","discount":null,"version":12,` +
	`"audit":[{"at":1715938282,"by":"system","action":"created"},{"at":1715938999,"by":"ops","action":"paid"},` +
	`{"at":1716000000,"by":"warehouse","action":"shipped"}],"flags":{"fragile":false,"gift":true},` +
	`"counter":9007199254740993,"_rid":"abcDEF==","_self":"dbs/abc==/colls/def==/docs/ghi==/",` +
	`"_etag":"\"0000d-0000-0000-0000-000000000000\"","_attachments":"attachments/","_ts":1716000000}`

func BenchmarkParse1KB(b *testing.B) {
	data := []byte(doc1KB)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendJSON1KB(b *testing.B) {
	v, err := Parse([]byte(doc1KB))
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, 2*len(doc1KB))
	b.SetBytes(int64(len(doc1KB)))
	b.ReportAllocs()
	for b.Loop() {
		buf = v.AppendJSON(buf[:0])
	}
}

// BenchmarkUnmarshalStdlib1KB is the baseline Parse replaces.
func BenchmarkUnmarshalStdlib1KB(b *testing.B) {
	data := []byte(doc1KB)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var x any
		if err := json.Unmarshal(data, &x); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkApplyPatch1KB(b *testing.B) {
	v, err := Parse([]byte(doc1KB))
	if err != nil {
		b.Fatal(err)
	}
	req, err := ParsePatchBody([]byte(`[{"op":"incr","path":"/version","value":1},{"op":"set","path":"/status","value":"delivered"}]`))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := ApplyPatch(v, req.Operations, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFilterMatch1KB(b *testing.B) {
	v, err := Parse([]byte(doc1KB))
	if err != nil {
		b.Fatal(err)
	}
	q, err := ParseQuery(`SELECT * FROM c WHERE c.status = @s AND c.customer.address.city = 'Berlin' AND ARRAY_CONTAINS(c.items[0].tags, 'blue') AND c.total > 1000`)
	if err != nil {
		b.Fatal(err)
	}
	params := map[string]*Value{"@s": String("shipped")}
	b.ReportAllocs()
	for b.Loop() {
		if ok, err := q.Where.Match(v, params); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// orderByDocs are n stored documents of about 1 KB with a permuted "n".
func orderByDocs(n int) []Doc {
	docs := make([]Doc, n)
	pad := strings.Repeat("x", 900)
	for i := range docs {
		docs[i] = Doc{Seq: uint64(i + 1), Body: []byte(fmt.Sprintf(
			`{"id":"q%06d","pk":"p%d","n":%d,"cat":"red","pad":%q,"_rid":"abcDEF==","_self":"dbs/abc==/colls/def==/docs/ghi==/","_etag":"\"0000d-0000\"","_attachments":"attachments/","_ts":1716000000}`,
			i, i%97, (i*7919)%n, pad))}
	}
	return docs
}

// BenchmarkMaterializeOrderBy25k is the work behind a range's first ORDER BY page:
// filter, sort keys and the sort over 25,000 documents (the rewritten query a
// cross-partition ORDER BY sends to each of 4 ranges holding 100,000 items).
func BenchmarkMaterializeOrderBy25k(b *testing.B) {
	docs := orderByDocs(25000)
	q, err := ParseQuery("SELECT c._rid, [{\"item\": c.n}] AS orderByItems, c AS payload\nFROM c\nWHERE (true)\nORDER BY c.n DESC")
	if err != nil {
		b.Fatal(err)
	}
	prog, err := q.Bind(nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		res, err := prog.Materialize(func(yield func(Doc) bool) {
			for _, d := range docs {
				if !yield(d) {
					return
				}
			}
		})
		if err != nil || res.Len() != len(docs) {
			b.Fatal(res.Len(), err)
		}
	}
}
