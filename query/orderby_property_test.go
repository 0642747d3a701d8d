package query

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
	"github.com/cosmosctl/cosmosctl/engine"
)

// mixedContainer is the property tests' container: composite indexes for every pair of
// directions of (a, b), as the service needs for a two-key ORDER BY.
const mixedContainer = `{"id":"m","partitionKey":{"paths":["/pk"],"kind":"Hash"},"indexingPolicy":{` +
	`"indexingMode":"consistent","automatic":true,"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/\"_etag\"/?"}],` +
	`"compositeIndexes":[` +
	`[{"path":"/a","order":"ascending"},{"path":"/b","order":"ascending"}],` +
	`[{"path":"/a","order":"ascending"},{"path":"/b","order":"descending"}]]}}`

// mixedValue is a random JSON value of any type, or nil with missing set (the property
// is left out: undefined). Strings mix ASCII, full-width forms (U+FF01…, above every
// surrogate in UTF-16's order but below astral code points in code point order) and
// astral characters (surrogate pairs in UTF-16), so that the two string orders differ.
func mixedValue(rng *rand.Rand, depth int) (v any, missing bool) {
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
		pieces := []string{"a", "b", "Z", "é", "ｚ", "Ａ", "😀", "𝄞", "\uE000", "中", ""}
		var b strings.Builder
		for n := rng.Intn(3) + 1; n > 0; n-- {
			b.WriteString(pieces[rng.Intn(len(pieces))])
		}
		return b.String(), false
	case 7:
		if depth > 1 {
			return []any{}, false
		}
		arr := []any{}
		for n := rng.Intn(3); n > 0; n-- {
			if e, m := mixedValue(rng, depth+1); !m {
				arr = append(arr, e)
			}
		}
		return arr, false
	}
	if depth > 1 {
		return map[string]any{}, false
	}
	obj := map[string]any{}
	for n := rng.Intn(3); n > 0; n-- {
		if e, m := mixedValue(rng, depth+1); !m {
			obj[fmt.Sprintf("k%d", rng.Intn(3))] = e
		}
	}
	return obj, false
}

// mixedDocs are n documents whose a and b are of every JSON type, over 41 partition
// keys (every range holds some). Few distinct values, so that ties are common.
func mixedDocs(seed int64, n int) []json.RawMessage {
	rng := rand.New(rand.NewSource(seed))
	out := make([]json.RawMessage, n)
	for i := range out {
		body := map[string]any{"id": fmt.Sprintf("m%04d", i), "pk": fmt.Sprintf("p%d", rng.Intn(41))}
		for _, k := range []string{"a", "b"} {
			if v, missing := mixedValue(rng, 0); !missing {
				body[k] = v
			}
		}
		out[i], _ = json.Marshal(body)
	}
	return out
}

// startMixed is an emulator with 4 ranges holding mixedDocs in container "m".
func startMixed(tb testing.TB, seed int64, n int) *engine.Client {
	tb.Helper()
	srv, err := emulator.Start(emulator.Config{Ranges: 4, Databases: []emulator.DatabaseConfig{{ID: "db", Containers: []emulator.ContainerConfig{{ID: "m", PartitionKey: []string{"/pk"}}}}}}, emulator.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	cred, _ := cosmos.NewMasterKey(srv.Key())
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
	req := &cosmos.Request{Method: http.MethodPut, Path: cosmos.EscapePath("dbs", "db", "colls", "m"), Header: http.Header{}, Body: []byte(mixedContainer)}
	if resp, err := tr.Do(context.Background(), srv.Endpoint(), req); err != nil || resp.StatusCode != http.StatusOK {
		tb.Fatalf("replacing the container's indexing policy: %v %+v", err, resp)
	}
	c, err := engine.New(engine.Options{Endpoint: srv.Endpoint(), Transport: tr})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		c.Close()
		tr.HTTP.CloseIdleConnections()
		srv.Close()
	})
	e := &emulatorQuery{c: c}
	docs := make([]fdoc, 0, n)
	for _, raw := range mixedDocs(seed, n) {
		docs = append(docs, fdoc{raw: raw})
	}
	for _, d := range docs {
		if _, err := c.Execute(context.Background(), engine.Operation{Kind: engine.OpCreate, Database: "db", Container: "m", Body: d.raw}); err != nil {
			tb.Fatalf("creating %s: %v", d.raw, err)
		}
	}
	_ = e
	return c
}

// mixedOrderForms are the ORDER BY forms the property tests run: one key and two, each
// direction, and mixed directions.
var mixedOrderForms = []struct {
	by   string
	keys []string
	desc []bool
}{
	{"c.a", []string{"a"}, []bool{false}},
	{"c.a DESC", []string{"a"}, []bool{true}},
	{"c.a ASC, c.b ASC", []string{"a", "b"}, []bool{false, false}},
	{"c.a DESC, c.b DESC", []string{"a", "b"}, []bool{true, true}},
	{"c.a ASC, c.b DESC", []string{"a", "b"}, []bool{false, true}},
	{"c.a DESC, c.b ASC", []string{"a", "b"}, []bool{true, false}},
}

func runMixed(t *testing.T, o Options) ([]json.RawMessage, string) {
	t.Helper()
	it, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	items, _, err := drainAll(it)
	if err != nil {
		t.Fatalf("%s: %v", o.Spec.Query, err)
	}
	return items, it.Continuation()
}

// checkSorted fails unless items (projections {id, a, b}) are in the ORDER BY's order by
// the emulator's own comparison, and hold every one of n documents once.
func checkSorted(t *testing.T, items []json.RawMessage, keys []string, desc []bool, n int) {
	t.Helper()
	seen := map[string]bool{}
	var prev map[string]*jsondoc.Value
	for i, raw := range items {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("item %d: %s", i, raw)
		}
		id := string(m["id"])
		if seen[id] {
			t.Fatalf("item %d, %s, returned twice", i, id)
		}
		seen[id] = true
		cur := map[string]*jsondoc.Value{}
		for _, k := range keys {
			if r, ok := m[k]; ok {
				v, err := jsondoc.Parse(r)
				if err != nil {
					t.Fatal(err)
				}
				cur[k] = v
			}
		}
		if prev != nil {
			for j, k := range keys {
				c := jsondoc.CompareOrder(prev[k], cur[k])
				if desc[j] {
					c = -c
				}
				if c > 0 {
					t.Fatalf("item %d (%s) sorts before the item ahead of it", i, raw)
				}
				if c < 0 {
					break
				}
			}
		}
		prev = cur
	}
	if len(seen) != n {
		t.Fatalf("%d distinct items, want %d", len(seen), n)
	}
}

// Over documents whose sort values are of every JSON type, spread over 4 ranges, every
// ORDER BY form returns every item once, in order; and runs of MaxItems items, each
// resumed from the last one's token, return exactly what one run does, in the same
// order, and end.
func TestOrderByOverMixedTypesResumesAtEveryPageBoundary(t *testing.T) {
	const n = 700
	c := startMixed(t, 24, n)
	for _, form := range mixedOrderForms {
		t.Run(form.by, func(t *testing.T) {
			o := Options{Client: c, Database: "db", Container: "m", Spec: cosmos.QuerySpec{Query: "SELECT c.id, c.a, c.b FROM c ORDER BY " + form.by}}
			all, _ := runMixed(t, o)
			checkSorted(t, all, form.keys, form.desc, n)
			for _, maxItems := range []int{97, 23} {
				var got []json.RawMessage
				tok := ""
				for runs := 0; ; runs++ {
					if runs > n/maxItems+2 {
						t.Fatalf("max %d: the runs never end (%d items so far)", maxItems, len(got))
					}
					ro := o
					ro.MaxItems, ro.Continuation = maxItems, tok
					items, next := runMixed(t, ro)
					got = append(got, items...)
					if tok = next; tok == "" {
						break
					}
				}
				if len(got) != len(all) {
					t.Fatalf("max %d: %d items resumed, %d in one run", maxItems, len(got), len(all))
				}
				for i := range all {
					if string(got[i]) != string(all[i]) {
						t.Fatalf("max %d: item %d is %s resumed, %s in one run", maxItems, i, got[i], all[i])
					}
				}
			}
		})
	}
}
