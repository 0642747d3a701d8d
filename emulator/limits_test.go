package emulator

import (
	"net/http"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

func stringPK(s string) string {
	return cosmos.PartitionKey{{Kind: cosmos.KindString, Str: s}}.JSON()
}

func nested(depth int) string {
	return strings.Repeat(`{"a":`, depth-1) + `{}` + strings.Repeat(`}`, depth-1)
}

// TestItemLimits: what the service refuses, the emulator refuses with the same status,
// and a message that says which limit; what is just inside a limit is stored.
func TestItemLimits(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	items := cosmos.ItemsPath("db", "items")
	doc := func(id, pk, extra string) string {
		return `{"id":` + quoteJSON(id) + `,"pk":` + quoteJSON(pk) + extra + `}`
	}
	cases := []struct {
		name    string
		id, pk  string
		extra   string
		want    int
		message string
	}{
		{"a key of 2,048 bytes is stored", "k1", strings.Repeat("k", 2048), "", 201, ""},
		{"a key of 1,024 'é' (2,048 bytes) is stored", "k2", strings.Repeat("é", 1024), "", 201, ""},
		{"a key of 2,048 '<' (12,288 bytes of header JSON) is stored", "k3", strings.Repeat("<", 2048), "", 201, ""},
		{"a key of 2,049 bytes is refused", "k4", strings.Repeat("k", 2049), "", 400, "partition key value is 2049 bytes"},
		{"a key of 1,025 'é' (2,050 bytes) is refused", "k5", strings.Repeat("é", 1025), "", 400, "2050 bytes"},
		{"the issue's 11,000 '<' are refused", "k6", strings.Repeat("<", 11000), "", 400, "limit is 2048 bytes"},
		{"the issue's 11,000 'é' are refused", "k7", strings.Repeat("é", 11000), "", 400, "22000 bytes"},
		{"a key over bbolt's 32 KiB key limit is refused, not a 500", "k8", strings.Repeat("é", 20000), "", 400, "40000 bytes"},
		{"an id of 1,023 bytes is stored", strings.Repeat("i", 1023), "p", "", 201, ""},
		{"an id of 256 bytes is stored (the limit for databases and containers is not the one for items)", strings.Repeat("i", 256), "p", "", 201, ""},
		{"an id of 1,024 bytes is refused", strings.Repeat("i", 1024), "p", "", 400, "limit is 1023 bytes"},
		// Ids with '/', '\', '?' or '#' are created too; how the gateway then addresses
		// them is gatewaypath_test.go's.
		{"an id with a question mark is stored and read back", "a?b", "p", "", 201, ""},
		{"a document nested 128 levels deep is stored", "n1", "p", `,"deep":` + nested(127), 201, ""},
		{"a document nested 129 levels deep is refused", "n2", "p", `,"deep":` + nested(128), 400, "more than 128 levels"},
		{"a document nested 10,000 levels deep is refused", "n3", "p", `,"deep":` + nested(10000), 400, "more than 128 levels"},
		{"a document over 2 MB is too large", "big", "p", `,"pad":"` + strings.Repeat("x", MaxDocumentBytes) + `"`, 413, "2 MB"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := c.do(s.Endpoint(), http.MethodPost, items, pkHeader(stringPK(tc.pk)), doc(tc.id, tc.pk, tc.extra))
			code, sub := statusOf(t, resp, err)
			if code != tc.want || (tc.message != "" && !strings.Contains(string(resp.Body), tc.message)) {
				t.Fatalf("status %d/%d, want %d with %q: %.300s", code, sub, tc.want, tc.message, resp.Body)
			}
			if code != 201 {
				return
			}
			got := crashMustDo(c, s.Endpoint(), http.MethodGet, cosmos.ItemPath("db", "items", tc.id), pkHeader(stringPK(tc.pk)), nil, http.StatusOK)
			if !strings.Contains(string(got.Body), `"id":`+quoteJSON(tc.id)) {
				t.Errorf("read back %.300s", got.Body)
			}
		})
	}

	// Upsert and replace are held to the same limits as create.
	long := strings.Repeat("é", 1025)
	hdr := pkHeader(stringPK(long))
	hdr[cosmos.HeaderIsUpsert] = "true"
	crashMustDo(c, s.Endpoint(), http.MethodPost, items, hdr, doc("u", long, ""), http.StatusBadRequest)
	crashMustDo(c, s.Endpoint(), http.MethodPut, cosmos.ItemPath("db", "items", "u"), pkHeader(stringPK(long)), doc("u", long, ""), http.StatusBadRequest)

	// A patch cannot nest a document deeper than a request body could: a value 118
	// levels deep fits in a patch body, and set 11 levels down it makes 129.
	crashMustDo(c, s.Endpoint(), http.MethodPost, items, pkHeader(`["p"]`), doc("patched", "p", `,"a":`+nested(10)), http.StatusCreated)
	at := strings.Repeat("/a", 10) + "/c"
	resp, err := c.do(s.Endpoint(), http.MethodPatch, cosmos.ItemPath("db", "items", "patched"), pkHeader(`["p"]`),
		`{"operations":[{"op":"set","path":"`+at+`","value":`+nested(118)+`}]}`)
	if code, sub := statusOf(t, resp, err); code != 400 || !strings.Contains(string(resp.Body), "128 levels") {
		t.Errorf("a patch to 129 levels: status %d/%d: %.300s", code, sub, resp.Body)
	}
	resp, err = c.do(s.Endpoint(), http.MethodPatch, cosmos.ItemPath("db", "items", "patched"), pkHeader(`["p"]`),
		`{"operations":[{"op":"set","path":"`+at+`","value":`+nested(117)+`}]}`)
	if code, sub := statusOf(t, resp, err); code != 200 {
		t.Errorf("a patch to 128 levels: status %d/%d: %.300s", code, sub, resp.Body)
	}
}

// TestItemLimitsInTheStore: the store refuses what the service would refuse, whichever
// handler calls it, so that nothing beyond the limits reaches the data file.
func TestItemLimitsInTheStore(t *testing.T) {
	s := startTest(t)
	co, cerr := s.store.container("db", "items")
	if cerr != nil {
		t.Fatal(cerr)
	}
	put := func(id string, pk cosmos.PartitionKey) *cosmos.Error {
		_, err := s.store.write(co, pk, id, 0, func(*itemVersion, string) ([]byte, bool, *cosmos.Error) {
			return []byte(`{"id":` + quoteJSON(id) + `}`), false, nil
		})
		return err
	}
	hier := cosmos.PartitionKey{{Kind: cosmos.KindString, Str: strings.Repeat("a", 1024)}, {Kind: cosmos.KindString, Str: strings.Repeat("b", 1024)}, {Kind: cosmos.KindNumber, Num: 1}}
	cases := []struct {
		name string
		id   string
		pk   cosmos.PartitionKey
		want int
	}{
		{"a long key", "a", cosmos.PartitionKey{{Kind: cosmos.KindString, Str: strings.Repeat("<", 11000)}}, 400},
		{"a hierarchical key whose components add up to over 2,048 bytes", "b", hier, 400},
		{"a long id", strings.Repeat("i", 1024), cosmos.PartitionKey{{Kind: cosmos.KindString, Str: "p"}}, 400},
		{"a key and an id at their limits", strings.Repeat("i", 1023), cosmos.PartitionKey{{Kind: cosmos.KindString, Str: strings.Repeat("é", 1024)}}, 0},
	}
	for _, tc := range cases {
		err := put(tc.id, tc.pk)
		got := 0
		if err != nil {
			got = err.StatusCode
		}
		if got != tc.want {
			t.Errorf("%s: %v, want status %d", tc.name, err, tc.want)
		}
	}
}
