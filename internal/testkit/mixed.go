package testkit

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/jsondoc"
)

// MixedOrderForms are the ORDER BY clauses the mixed-type property tests run over
// MixedDocs: one key and two, each direction, and mixed directions. Keys and Desc say
// what each sorts by, for an independent check of the order.
var MixedOrderForms = []struct {
	By   string
	Keys []string
	Desc []bool
}{
	{"c.a", []string{"a"}, []bool{false}},
	{"c.a DESC", []string{"a"}, []bool{true}},
	{"c.a ASC, c.b ASC", []string{"a", "b"}, []bool{false, false}},
	{"c.a DESC, c.b DESC", []string{"a", "b"}, []bool{true, true}},
	{"c.a ASC, c.b DESC", []string{"a", "b"}, []bool{false, true}},
	{"c.a DESC, c.b ASC", []string{"a", "b"}, []bool{true, false}},
}

// mixedIndexingPolicy has the composite indexes MixedOrderForms need, as the service
// requires of a two-key ORDER BY (a composite index serves its reverse too).
const mixedIndexingPolicy = `{"indexingMode":"consistent","automatic":true,"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/\"_etag\"/?"}],` +
	`"compositeIndexes":[` +
	`[{"path":"/a","order":"ascending"},{"path":"/b","order":"ascending"}],` +
	`[{"path":"/a","order":"ascending"},{"path":"/b","order":"descending"}]]}`

// mixedPieces make strings whose UTF-16 order differs from their code point order:
// full-width forms and private use (U+E000–U+FFFF) against astral characters (surrogate
// pairs), with ASCII, Latin-1 and CJK among them.
var mixedPieces = []string{"a", "b", "Z", "é", "ｚ", "Ａ", "😀", "𝄞", "\uE000", "中", ""}

// MixedValue is a random JSON value of any type, or missing (the property is left out:
// undefined): null, booleans, integers and fractions of both signs, strings, arrays and
// objects nested at most twice.
func MixedValue(rng *rand.Rand, depth int) (v any, missing bool) {
	switch rng.Intn(9) {
	case 0:
		return nil, true
	case 1:
		return nil, false
	case 2:
		return rng.Intn(2) == 0, false
	case 3:
		return rng.Intn(21) - 10, false
	case 4:
		return float64(rng.Intn(400)-200) / 8, false
	case 5, 6:
		var b strings.Builder
		for n := rng.Intn(3) + 1; n > 0; n-- {
			b.WriteString(mixedPieces[rng.Intn(len(mixedPieces))])
		}
		return b.String(), false
	case 7:
		arr := []any{}
		for n := rng.Intn(3); n > 0 && depth < 2; n-- {
			if e, m := MixedValue(rng, depth+1); !m {
				arr = append(arr, e)
			}
		}
		return arr, false
	}
	obj := map[string]any{}
	for n := rng.Intn(3); n > 0 && depth < 2; n-- {
		if e, m := MixedValue(rng, depth+1); !m {
			obj[fmt.Sprintf("k%d", rng.Intn(3))] = e
		}
	}
	return obj, false
}

// MixedDocs are n documents (ids m0000…) whose a and b are MixedValues, over 41
// partition keys (pk), so that every range of a 4-range container holds some. Few
// distinct values, so that ties are common. The same seed gives the same documents.
func MixedDocs(seed int64, n int) []json.RawMessage {
	rng := rand.New(rand.NewSource(seed))
	out := make([]json.RawMessage, n)
	for i := range out {
		body := map[string]any{"id": fmt.Sprintf("m%04d", i), "pk": fmt.Sprintf("p%d", rng.Intn(41))}
		for _, k := range []string{"a", "b"} {
			if v, missing := MixedValue(rng, 0); !missing {
				body[k] = v
			}
		}
		out[i], _ = json.Marshal(body)
	}
	return out
}

// SeedMixed gives container (partition key /pk) of srv the indexing policy
// MixedOrderForms need and writes docs to it straight through the REST API.
func SeedMixed(tb testing.TB, srv *emulator.Server, database, container string, docs []json.RawMessage) {
	tb.Helper()
	cred, _ := cosmos.NewMasterKey(srv.Key())
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
	defer tr.HTTP.CloseIdleConnections()
	def := fmt.Sprintf(`{"id":%q,"partitionKey":{"paths":["/pk"],"kind":"Hash"},"indexingPolicy":%s}`, container, mixedIndexingPolicy)
	replace := &cosmos.Request{Method: http.MethodPut, Path: cosmos.EscapePath("dbs", database, "colls", container), Header: http.Header{}, Body: []byte(def)}
	if resp, err := tr.Do(context.Background(), srv.Endpoint(), replace); err != nil || resp.StatusCode != http.StatusOK {
		tb.Fatalf("replacing %s's indexing policy: %v %+v", container, err, resp)
	}
	for _, body := range docs {
		var d struct{ PK string }
		json.Unmarshal(body, &d)
		pk, _ := cosmos.PK(d.PK)
		req := &cosmos.Request{Method: http.MethodPost, Path: cosmos.ItemsPath(database, container), Header: http.Header{}, Body: body}
		req.Header.Set(cosmos.HeaderPartitionKey, pk.JSON())
		if resp, err := tr.Do(context.Background(), srv.Endpoint(), req); err != nil || resp.StatusCode != http.StatusCreated {
			tb.Fatalf("seeding %s: %v %+v", body, err, resp)
		}
	}
}

// MixedOrderError checks a result of SELECT c.id, c.a, c.b … ORDER BY over MixedDocs:
// every one of n documents once, in the order of keys (descending where desc says) by
// the emulator's comparison (jsondoc.CompareOrder). nil when it holds.
func MixedOrderError(items []json.RawMessage, keys []string, desc []bool, n int) error {
	seen := map[string]bool{}
	var prev map[string]*jsondoc.Value
	for i, raw := range items {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return fmt.Errorf("item %d is not an object: %s", i, raw)
		}
		id := string(m["id"])
		if seen[id] {
			return fmt.Errorf("item %d, %s, came twice", i, id)
		}
		seen[id] = true
		cur := map[string]*jsondoc.Value{}
		for _, k := range keys {
			if r, ok := m[k]; ok {
				v, err := jsondoc.Parse(r)
				if err != nil {
					return fmt.Errorf("item %d: %v", i, err)
				}
				cur[k] = v
			}
		}
		for j, k := range keys {
			if prev == nil {
				break
			}
			c := jsondoc.CompareOrder(prev[k], cur[k])
			if desc[j] {
				c = -c
			}
			if c > 0 {
				return fmt.Errorf("item %d (%s) sorts before the item ahead of it", i, raw)
			}
			if c < 0 {
				break
			}
		}
		prev = cur
	}
	if len(seen) != n {
		return fmt.Errorf("%d distinct items, want %d", len(seen), n)
	}
	return nil
}
