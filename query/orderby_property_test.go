package query

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// startMixed is an emulator with 4 ranges whose container "m" holds n documents of
// testkit.MixedDocs(seed, n), and a client of it.
func startMixed(tb testing.TB, seed int64, n int) *engine.Client {
	return startMixedWith(tb, testkit.MixedDocs(seed, n)).c
}

// startMixedWith is an emulator with 4 ranges whose container "m" of database "db"
// holds docs, with the indexes testkit.MixedOrderForms need.
func startMixedWith(tb testing.TB, docs []json.RawMessage) *emulatorQuery {
	tb.Helper()
	srv, err := emulator.Start(emulator.Config{Ranges: 4, Databases: []emulator.DatabaseConfig{{ID: "db", Containers: []emulator.ContainerConfig{{ID: "m", PartitionKey: []string{"/pk"}}}}}}, emulator.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	testkit.SeedMixed(tb, srv, "db", "m", docs)
	cred, _ := cosmos.NewMasterKey(srv.Key())
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
	c, err := engine.New(engine.Options{Endpoint: srv.Endpoint(), Transport: tr})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		c.Close()
		tr.HTTP.CloseIdleConnections()
		srv.Close()
	})
	return &emulatorQuery{srv: srv, c: c}
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

// Over documents whose sort values are of every JSON type (missing, null, booleans,
// numbers of both signs and fractions, strings with full-width and astral characters,
// arrays, objects), spread over 4 ranges, every ORDER BY form (one key and two, ASC,
// DESC and mixed) returns every item once, in order; and runs of MaxItems items, each
// resumed from the last one's token, return exactly what one run does, in the same
// order, and end; a run resumed from the token after any Next returns the rest.
// Before the fix, runs over arrays and objects lost and repeated items, and DESC never
// ended.
func TestOrderByOverMixedTypesResumesAtEveryPageBoundary(t *testing.T) {
	const n = 450
	c := startMixed(t, 24, n)
	for _, form := range testkit.MixedOrderForms {
		t.Run(form.By, func(t *testing.T) {
			o := Options{Client: c, Database: "db", Container: "m", Spec: cosmos.QuerySpec{Query: "SELECT c.id, c.a, c.b FROM c ORDER BY " + form.By}}
			all, _ := runMixed(t, o)
			if err := testkit.MixedOrderError(all, form.Keys, form.Desc, n); err != nil {
				t.Fatal(err)
			}
			// Resumed from the token after any Next of a run in pages of 10 (a spread of
			// 8 of them), the rest is what follows in one run.
			it, err := Run(context.Background(), Options{Client: c, Database: "db", Container: "m", Spec: o.Spec, PageSize: 10})
			if err != nil {
				t.Fatal(err)
			}
			type point struct {
				n   int
				tok string
			}
			var points []point
			returned := 0
			for {
				items, _, err := it.Next(context.Background())
				returned += len(items)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if tok := it.Continuation(); tok != "" && len(items) > 0 {
					points = append(points, point{returned, tok})
				}
			}
			it.Close()
			if len(points) < 8 {
				t.Fatalf("only %d tokens", len(points))
			}
			for i := 0; i < 8; i++ {
				p := points[i*(len(points)-1)/7]
				ro := o
				ro.Continuation = p.tok
				rest, _ := runMixed(t, ro)
				if len(rest) != len(all)-p.n {
					t.Fatalf("resumed after %d items: %d more, want %d", p.n, len(rest), len(all)-p.n)
				}
				for j := range rest {
					if string(rest[j]) != string(all[p.n+j]) {
						t.Fatalf("resumed after %d items: item %d is %s, %s in one run", p.n, p.n+j, rest[j], all[p.n+j])
					}
				}
			}
			for _, run := range []struct{ maxItems, pageSize int }{{97, 0}, {29, 10}} {
				var got []json.RawMessage
				tok := ""
				for runs := 0; ; runs++ {
					if runs > n/run.maxItems+1 {
						t.Fatalf("max %d: %d items after %d runs, more than %d items take: items repeat, or the runs never end", run.maxItems, len(got), runs, n)
					}
					ro := o
					ro.MaxItems, ro.PageSize, ro.Continuation = run.maxItems, run.pageSize, tok
					items, next := runMixed(t, ro)
					got = append(got, items...)
					if tok = next; tok == "" {
						break
					}
					if len(items) != run.maxItems {
						t.Fatalf("max %d: a run returned %d items with more to come", run.maxItems, len(items))
					}
				}
				if len(got) != len(all) {
					t.Fatalf("max %d: %d items resumed, %d in one run", run.maxItems, len(got), len(all))
				}
				for i := range all {
					if string(got[i]) != string(all[i]) {
						t.Fatalf("max %d: item %d is %s resumed, %s in one run", run.maxItems, i, got[i], all[i])
					}
				}
			}
		})
	}
}

// The official JavaScript SDK's cross-partition ORDER BY over the mixed documents
// returns what query.Run does, in the same order, for every form: both merge strings by
// UTF-16 code unit, which is how the emulator's ranges now sort them (by code point,
// the SDK's merge came out of order with full-width and astral characters). The SDK
// (4.10.1) refuses to merge values of different types ("Cannot execute cross partition
// order-by queries on mixed types", and it throws on null, arrays and objects), so each
// query keeps one type with IS_STRING, IS_NUMBER or IS_BOOL, as its message advises.
func TestTheJavaScriptSDKMergesMixedDocumentsAsRunDoes(t *testing.T) {
	const n = 600
	e := startMixedWith(t, testkit.MixedDocs(41, n))
	type jsForm struct {
		sql  string
		keys []string
		desc []bool
	}
	var forms []jsForm
	for _, form := range testkit.MixedOrderForms {
		for _, is := range []string{"IS_STRING", "IS_NUMBER", "IS_BOOL"} {
			where := make([]string, len(form.Keys))
			for i, k := range form.Keys {
				where[i] = is + "(c." + k + ")"
			}
			forms = append(forms, jsForm{"SELECT c.id, c.a, c.b FROM c WHERE " + strings.Join(where, " AND ") + " ORDER BY " + form.By, form.Keys, form.Desc})
		}
	}
	var specs []cosmos.QuerySpec
	for _, f := range forms {
		specs = append(specs, cosmos.QuerySpec{Query: f.sql})
	}
	results := jsQueryResultsIn(t, e, "m", specs)
	for i, f := range forms {
		t.Run(f.sql, func(t *testing.T) {
			js := results[i]
			if js.Error != "" {
				t.Fatalf("the JavaScript SDK failed: %s", js.Error)
			}
			got, _ := runMixed(t, Options{Client: e.c, Database: "db", Container: "m", Spec: specs[i]})
			if len(got) < 2 {
				t.Fatalf("%d items: the comparison would say little", len(got))
			}
			if err := testkit.MixedOrderError(js.Resources, f.keys, f.desc, len(got)); err != nil {
				t.Fatalf("the JavaScript SDK: %v", err)
			}
			if g, w := jsCanonicalAll(t, got), jsCanonicalAll(t, js.Resources); !slices.Equal(g, w) {
				t.Fatalf("query.Run and the SDK differ in order or items:\n%s", diffLines(g, w))
			}
		})
	}
}
