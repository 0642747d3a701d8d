package query

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/hedging"
)

// emulatorQuery is an emulator with 4 ranges holding docs, and an engine client.
type emulatorQuery struct {
	srv  *emulator.Server
	c    *engine.Client
	docs []fdoc
}

func startEmulator(tb testing.TB) *emulatorQuery {
	tb.Helper()
	srv, err := emulator.Start(emulator.Config{Ranges: 4, Databases: []emulator.DatabaseConfig{{ID: "db", Containers: []emulator.ContainerConfig{{ID: "c", PartitionKey: []string{"/pk"}}}}}}, emulator.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	cred, _ := cosmos.NewMasterKey(srv.Key())
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
	// The container has the composite indexes the cases' multi-key ORDER BYs need, as a
	// real container must: without one such a query is a 400.
	req := &cosmos.Request{Method: http.MethodPut, Path: cosmos.EscapePath("dbs", "db", "colls", "c"), Header: http.Header{}, Body: []byte(queryContainer)}
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
	return &emulatorQuery{srv: srv, c: c}
}

// queryContainer is the test container's definition: the default indexing policy with
// a composite index for each multi-key ORDER BY of emulatorCases and jsCases.
const queryContainer = `{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash"},"indexingPolicy":{` +
	`"indexingMode":"consistent","automatic":true,"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/\"_etag\"/?"}],` +
	`"compositeIndexes":[` +
	`[{"path":"/n","order":"ascending"},{"path":"/s","order":"descending"}],` +
	`[{"path":"/s","order":"descending"},{"path":"/id","order":"ascending"}],` +
	`[{"path":"/x","order":"ascending"},{"path":"/id","order":"ascending"}],` +
	`[{"path":"/g","order":"ascending"},{"path":"/n","order":"ascending"}]]}}`

// load creates n documents in parallel (the pk spreads them over every range).
func (e *emulatorQuery) load(tb testing.TB, docs []fdoc) {
	tb.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(docs) {
					return
				}
				if _, err := e.c.Execute(context.Background(), engine.Operation{Kind: engine.OpCreate, Database: "db", Container: "c", Body: docs[i].raw}); err != nil {
					errs <- fmt.Errorf("creating %s: %v", docs[i].raw, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		tb.Fatal(err)
	}
	e.docs = append(e.docs, docs...)
}

// emulatorDocs are like genDocs' documents, with a partition key.
func emulatorDocs(seed int64, n int) []fdoc {
	docs := genDocs(rand.New(rand.NewSource(seed)), n)
	for i := range docs {
		docs[i].body["pk"] = fmt.Sprintf("p%d", i%37)
		docs[i].raw, _ = json.Marshal(docs[i].body)
	}
	return docs
}

// strip drops the system properties the emulator adds to stored documents (_rid, _ts,
// _etag, _self, _attachments), so that a SELECT * result compares with the document
// as written.
func strip(t *testing.T, items []json.RawMessage) []json.RawMessage {
	out := make([]json.RawMessage, len(items))
	for i, it := range items {
		var m map[string]json.RawMessage
		if json.Unmarshal(it, &m) != nil {
			out[i] = it
			continue
		}
		for k := range m {
			if strings.HasPrefix(k, "_") {
				delete(m, k)
			}
		}
		out[i], _ = json.Marshal(m)
	}
	return out
}

func filterDocs(docs []fdoc, keep func(fdoc) bool) []fdoc {
	var out []fdoc
	for _, d := range docs {
		if keep(d) {
			out = append(out, d)
		}
	}
	return out
}

func project(docs []fdoc, f func(fdoc) any) []json.RawMessage {
	var out []json.RawMessage
	for _, d := range docs {
		out = append(out, jsonOf(f(d)))
	}
	return out
}

// sqlCase is a query form run against the emulator, with its in-memory evaluation.
type sqlCase struct {
	sql    string
	params []cosmos.QueryParameter
	qcase
}

func emulatorCases() []sqlCase {
	all := func(d []fdoc) []json.RawMessage { return raws(d) }
	asc, desc := []bool{false}, []bool{true}
	wantSorted := func(s []bool, paths ...string) func([]fdoc) []json.RawMessage {
		return func(docs []fdoc) []json.RawMessage { return raws(sortedDocs(docs, sorter{desc: s}, paths...)) }
	}
	byG := func(docs []fdoc) map[string][]fdoc {
		m := map[string][]fdoc{}
		for _, d := range docs {
			m[d.body["g"].(string)] = append(m[d.body["g"].(string)], d)
		}
		return m
	}
	maxOf := func(docs []fdoc, path string) float64 {
		m := -1.0
		for _, d := range docs {
			if n, ok := numberOf(d, path); ok && n > m {
				m = n
			}
		}
		return m
	}
	sumOf := func(docs []fdoc, path string) float64 {
		s := 0.0
		for _, d := range docs {
			n, _ := numberOf(d, path)
			s += n
		}
		return s
	}
	minValue := func(docs []fdoc, path string, max bool) json.RawMessage {
		var best value
		has := false
		for _, d := range docs {
			v := mustValue(d.get(path))
			if v.k == kindUndefined {
				continue
			}
			if c := compareValues(v, best); !has || (max && c > 0) || (!max && c < 0) {
				best, has = v, true
			}
		}
		return best.raw
	}
	return []sqlCase{
		{sql: "SELECT * FROM c WHERE c.n > 5", qcase: qcase{check: "set", want: func(d []fdoc) []json.RawMessage {
			return raws(filterDocs(d, func(x fdoc) bool { return x.body["n"].(int) > 5 }))
		}}},
		{sql: "SELECT c.id, c.n FROM c WHERE c.g = 'g1'", qcase: qcase{check: "set", want: func(d []fdoc) []json.RawMessage {
			return project(filterDocs(d, func(x fdoc) bool { return x.body["g"] == "g1" }), func(x fdoc) any { return map[string]any{"id": x.body["id"], "n": x.body["n"]} })
		}}},
		{sql: "SELECT * FROM c ORDER BY c.n DESC", qcase: qcase{check: "ordered", sorts: desc, keyOf: docKey("n"), want: wantSorted(desc, "n")}},
		{sql: "SELECT * FROM c ORDER BY c.k", qcase: qcase{check: "ordered", sorts: asc, keyOf: docKey("k"), want: wantSorted(asc, "k")}},
		{sql: "SELECT c.id, c.n, c.s FROM c ORDER BY c.n ASC, c.s DESC", qcase: qcase{check: "ordered", sorts: []bool{false, true}, keyOf: docKey("n", "s"),
			want: func(d []fdoc) []json.RawMessage {
				return project(sortedDocs(d, sorter{desc: []bool{false, true}}, "n", "s"), func(x fdoc) any {
					return map[string]any{"id": x.body["id"], "n": x.body["n"], "s": x.body["s"]}
				})
			}}},
		{sql: "SELECT * FROM c WHERE c.n >= @lo ORDER BY c.x", params: []cosmos.QueryParameter{{Name: "@lo", Value: json.RawMessage("4")}}, qcase: qcase{check: "ordered", sorts: asc, keyOf: docKey("x"),
			want: func(d []fdoc) []json.RawMessage {
				return wantSorted(asc, "x")(filterDocs(d, func(x fdoc) bool { return x.body["n"].(int) >= 4 }))
			}}},
		{sql: "SELECT TOP 7 * FROM c ORDER BY c.x DESC", qcase: qcase{check: "prefix", sorts: desc, keyOf: docKey("x"), pool: all,
			want: func(d []fdoc) []json.RawMessage { return wantSorted(desc, "x")(d)[:7] }}},
		{sql: "SELECT * FROM c ORDER BY c.s OFFSET 5 LIMIT 10", qcase: qcase{check: "prefix", sorts: asc, keyOf: docKey("s"), pool: all,
			want: func(d []fdoc) []json.RawMessage { return wantSorted(asc, "s")(d)[5:15] }}},
		{sql: "SELECT TOP 9 * FROM c", qcase: qcase{check: "some", n: 9, pool: all, want: all}},
		{sql: "SELECT DISTINCT VALUE c.g FROM c", qcase: qcase{check: "set", want: func(d []fdoc) []json.RawMessage {
			var out []json.RawMessage
			for g := range byG(d) {
				out = append(out, jsonOf(g))
			}
			return out
		}}},
		{sql: "SELECT DISTINCT VALUE c.n FROM c ORDER BY c.n", qcase: qcase{check: "ordered", sorts: asc, keyOf: func(item json.RawMessage) []value { v, _ := parseValue(item); return []value{v} },
			want: func(d []fdoc) []json.RawMessage {
				seen := map[int]bool{}
				var ns []int
				for _, x := range d {
					if n := x.body["n"].(int); !seen[n] {
						seen[n] = true
						ns = append(ns, n)
					}
				}
				sort.Ints(ns)
				var out []json.RawMessage
				for _, n := range ns {
					out = append(out, jsonOf(n))
				}
				return out
			}}},
		{sql: "SELECT VALUE COUNT(1) FROM c", qcase: qcase{check: "set", want: func(d []fdoc) []json.RawMessage { return []json.RawMessage{jsonOf(len(d))} }}},
		{sql: "SELECT VALUE SUM(c.x) FROM c", qcase: qcase{check: "set", want: func(d []fdoc) []json.RawMessage {
			return []json.RawMessage{json.RawMessage(formatNumber(sumOf(d, "x")))}
		}}},
		{sql: "SELECT VALUE AVG(c.x) FROM c", qcase: qcase{check: "set", want: func(d []fdoc) []json.RawMessage {
			return []json.RawMessage{json.RawMessage(formatNumber(sumOf(d, "x") / float64(len(d))))}
		}}},
		{sql: "SELECT VALUE MIN(c.k) FROM c", qcase: qcase{check: "set", want: func(d []fdoc) []json.RawMessage { return []json.RawMessage{minValue(d, "k", false)} }}},
		{sql: "SELECT VALUE MAX(c.k) FROM c", qcase: qcase{check: "set", want: func(d []fdoc) []json.RawMessage { return []json.RawMessage{minValue(d, "k", true)} }}},
		{sql: "SELECT COUNT(1) AS n, SUM(c.x) AS s, MIN(c.s) AS lo, MAX(c.x) AS hi, AVG(c.x) AS a FROM c", qcase: qcase{check: "set", want: func(d []fdoc) []json.RawMessage {
			return []json.RawMessage{json.RawMessage(fmt.Sprintf(`{"n":%d,"s":%s,"lo":%s,"hi":%s,"a":%s}`, len(d), formatNumber(sumOf(d, "x")), minValue(d, "s", false), formatNumber(maxOf(d, "x")), formatNumber(sumOf(d, "x")/float64(len(d)))))}
		}}},
		{sql: "SELECT c.g, COUNT(1) AS cnt, MAX(c.x) AS mx FROM c GROUP BY c.g", qcase: qcase{check: "set", want: func(d []fdoc) []json.RawMessage {
			var out []json.RawMessage
			for g, ds := range byG(d) {
				out = append(out, jsonOf(map[string]any{"g": g, "cnt": len(ds), "mx": maxOf(ds, "x")}))
			}
			return out
		}}},
		{sql: "SELECT VALUE COUNT(1) FROM c GROUP BY c.g", qcase: qcase{check: "set", want: func(d []fdoc) []json.RawMessage {
			var out []json.RawMessage
			for _, ds := range byG(d) {
				out = append(out, jsonOf(len(ds)))
			}
			return out
		}}},
	}
}

func (e *emulatorQuery) options(c sqlCase, o Options) Options {
	o.Client, o.Database, o.Container = e.c, "db", "c"
	o.Spec = cosmos.QuerySpec{Query: c.sql, Parameters: c.params}
	return o
}

func runEmulator(t *testing.T, o Options) ([]json.RawMessage, *Iterator, []PageInfo) {
	t.Helper()
	it, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	items, infos, err := drainAll(it)
	if err != nil {
		t.Fatalf("%s: %v", o.Spec.Query, err)
	}
	return strip(t, items), it, infos
}

// Every supported query form, across the emulator's 4 ranges, returns what an in-memory
// evaluation of the same documents does; run again in runs of 30 items each, resumed
// from the last run's token, it returns every item once.
func TestEveryQueryFormAgainstTheEmulator(t *testing.T) {
	e := startEmulator(t)
	e.load(t, emulatorDocs(7, 240))
	for _, c := range emulatorCases() {
		c.name = c.sql
		t.Run(c.sql, func(t *testing.T) {
			for _, pageSize := range []int{0, 7} {
				got, it, infos := runEmulator(t, e.options(c, Options{PageSize: pageSize}))
				checkResult(t, c.qcase, e.docs, got)
				pages := 0
				for _, in := range infos {
					if in.Kind == KindPage {
						pages++
						if in.Diagnostics == nil || in.Diagnostics.Operation != engine.OpQuery || in.RangeID == "" {
							t.Fatalf("page info %+v", in)
						}
					}
				}
				if st := it.Stats(); pages < 4 || st.Pages != pages || st.RequestCharge <= 0 || len(st.Regions) == 0 {
					t.Fatalf("%d pages reported (every one of the 4 ranges is read), stats %+v", pages, st)
				}
			}
			var all []json.RawMessage
			tok := ""
			for runs := 0; ; runs++ {
				if runs > 500 {
					t.Fatal("the runs never end")
				}
				got, it, _ := runEmulator(t, e.options(c, Options{PageSize: 7, MaxItems: 30, Continuation: tok}))
				all = append(all, got...)
				if tok = it.Continuation(); tok == "" {
					break
				}
			}
			checkResult(t, c.qcase, e.docs, all)
		})
	}
}

// With ReuseItemMemory every query form still returns what it returns without: the
// pages of an unordered query are read into buffers lent again once their items were
// returned, and a buffer given back is zeroed (cosmos.BodyBuffers.Put), so that an item
// returned from a buffer given back too early, or a buffer lent to a new page while an
// earlier page's items are still the caller's, shows here as NUL bytes or as changed
// items. Runs of 30 items resumed from tokens too: the pages of a run cut short.
func TestReusedPageMemoryReturnsEveryItemWhole(t *testing.T) {
	e := startEmulator(t)
	e.load(t, emulatorDocs(7, 240))
	for _, c := range emulatorCases() {
		c.name = c.sql
		t.Run(c.sql, func(t *testing.T) {
			var all []json.RawMessage
			tok := ""
			for runs := 0; ; runs++ {
				if runs > 500 {
					t.Fatal("the runs never end")
				}
				if runs == 0 {
					// The whole query in one run first, its pages reused throughout.
					got, _ := drainReusing(t, e.options(c, Options{PageSize: 7, ReuseItemMemory: true}))
					checkResult(t, c.qcase, e.docs, strip(t, got))
				}
				got, it := drainReusing(t, e.options(c, Options{PageSize: 7, MaxItems: 30, Continuation: tok, ReuseItemMemory: true}))
				all = append(all, got...)
				if tok = it.Continuation(); tok == "" {
					break
				}
			}
			checkResult(t, c.qcase, e.docs, strip(t, all))
		})
	}
}

// drainReusing runs a query to its end as a caller of ReuseItemMemory may: it copies
// what each Next returns before it calls Next again. It fails the test for an item
// holding NUL bytes, or one that changed before the next call of Next.
func drainReusing(t *testing.T, o Options) ([]json.RawMessage, *Iterator) {
	t.Helper()
	it, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var copies, last, lastCopies []json.RawMessage
	for {
		for i := range last {
			if string(last[i]) != string(lastCopies[i]) {
				t.Fatalf("%s: an item changed before the next call of Next: %q, was %q", o.Spec.Query, last[i], lastCopies[i])
			}
		}
		items, _, err := it.Next(context.Background())
		lastCopies = lastCopies[:0]
		for _, item := range items {
			if strings.IndexByte(string(item), 0) >= 0 {
				t.Fatalf("%s: an item came from a buffer already given back: %q", o.Spec.Query, item)
			}
			cp := append(json.RawMessage(nil), item...)
			copies = append(copies, cp)
			lastCopies = append(lastCopies, cp)
		}
		last = items
		if errors.Is(err, io.EOF) {
			return copies, it
		}
		if err != nil {
			t.Fatalf("%s: %v", o.Spec.Query, err)
		}
	}
}

// With a partition key the query goes to that partition as it is (no plan): the service
// runs ORDER BY, TOP and aggregates itself.
func TestSinglePartitionQueriesAgainstTheEmulator(t *testing.T) {
	e := startEmulator(t)
	e.load(t, emulatorDocs(8, 150))
	pk, _ := cosmos.PK("p3")
	in := filterDocs(e.docs, func(d fdoc) bool { return d.body["pk"] == "p3" })
	cases := []sqlCase{
		{sql: "SELECT * FROM c ORDER BY c.n DESC", qcase: qcase{check: "ordered", sorts: []bool{true}, keyOf: docKey("n"),
			want: func([]fdoc) []json.RawMessage { return raws(sortedDocs(in, sorter{desc: []bool{true}}, "n")) }}},
		{sql: "SELECT VALUE COUNT(1) FROM c", qcase: qcase{check: "set", want: func([]fdoc) []json.RawMessage { return []json.RawMessage{jsonOf(len(in))} }}},
		{sql: "SELECT TOP 2 c.id FROM c ORDER BY c.id", qcase: qcase{check: "set", want: func([]fdoc) []json.RawMessage {
			ids := []string{}
			for _, d := range in {
				ids = append(ids, d.body["id"].(string))
			}
			sort.Strings(ids)
			return []json.RawMessage{jsonOf(map[string]any{"id": ids[0]}), jsonOf(map[string]any{"id": ids[1]})}
		}}},
	}
	for _, c := range cases {
		c.name = c.sql
		t.Run(c.sql, func(t *testing.T) {
			got, _, infos := runEmulator(t, e.options(c, Options{PartitionKey: pk, PageSize: 3}))
			checkResult(t, c.qcase, e.docs, got)
			for _, in := range infos {
				if in.Kind != KindPage || string(in.Diagnostics.PartitionKey) != `["p3"]` {
					t.Fatalf("only pages to the partition key are sent: %+v", in)
				}
			}
		})
	}
}

// Each page is hedged like a point read: with the first region slow for queries, every
// page (and the plan) is answered by the second region at the threshold.
func TestQueryPagesAreHedgedAgainstTheEmulator(t *testing.T) {
	e := startEmulator(t)
	e.load(t, emulatorDocs(9, 60))
	const slow = 2 * time.Second
	if err := e.srv.Faults().SetLatency("East US", "query", faults.Distribution{Kind: "fixed", Value: faults.Duration(slow)}); err != nil {
		t.Fatal(err)
	}
	c := emulatorCases()[2] // ORDER BY across the 4 ranges
	o := e.options(c, Options{})
	o.Page.Hedge = hedging.Threshold{Threshold: 50 * time.Millisecond, Step: 50 * time.Millisecond, MaxRegions: 2}
	start := time.Now()
	got, _, infos := runEmulator(t, o)
	elapsed := time.Since(start)
	c.name = c.sql
	checkResult(t, c.qcase, e.docs, strip(t, got))
	for _, in := range infos {
		if in.Kind == KindRanges {
			continue
		}
		d := in.Diagnostics
		if d.WinningRegion != "West US" || d.Attempts[0].Region != "East US" || d.Attempts[0].Outcome != engine.OutcomeCancelled {
			t.Fatalf("%s: attempts %+v", in.Kind, d.Attempts)
		}
	}
	// The plan and the pages of 4 ranges in parallel: a few hedge thresholds, far less
	// than one slow answer (with a wide margin for a loaded machine).
	if elapsed > slow*8/10 {
		t.Fatalf("the hedged query took %v; one slow answer takes %v", elapsed, slow)
	}
}

// A range that answers 410/1002 mid-query (the emulator's fault: the ranges do not
// change) is re-read from its continuation after the ranges are refreshed; a region that
// answers 503 is failed over; nothing is lost or repeated.
func TestGoneRangesAndFailoverMidQueryAgainstTheEmulator(t *testing.T) {
	e := startEmulator(t)
	e.load(t, emulatorDocs(10, 200))
	for _, c := range []sqlCase{emulatorCases()[2], emulatorCases()[0], emulatorCases()[5]} {
		c.name = c.sql
		t.Run(c.sql, func(t *testing.T) {
			it, err := Run(context.Background(), e.options(c, Options{PageSize: 5}))
			if err != nil {
				t.Fatal(err)
			}
			defer it.Close()
			var got []json.RawMessage
			var infos []PageInfo
			for i := 0; ; i++ {
				items, info, err := it.Next(context.Background())
				got = append(got, items...)
				if info != nil {
					infos = append(infos, *info)
				}
				if i == 2 {
					if _, err := e.srv.Faults().Add(faults.Rule{Effect: faults.EffectStatus, Status: 410, SubStatus: 1002, Operations: []string{"query"}, Count: 2}); err != nil {
						t.Fatal(err)
					}
					if _, err := e.srv.Faults().Add(faults.Rule{Region: "East US", Effect: faults.EffectStatus, Status: 503, Operations: []string{"query"}, Count: 3}); err != nil {
						t.Fatal(err)
					}
				}
				if err != nil {
					if err.Error() != "EOF" {
						t.Fatal(err)
					}
					break
				}
			}
			e.srv.Faults().Clear()
			checkResult(t, c.qcase, e.docs, strip(t, got))
			gone, refreshed, failedOver := 0, 0, 0
			for _, in := range infos {
				switch {
				case strings.Contains(in.Note, "410/1002"):
					gone++
				case in.Kind == KindRanges:
					refreshed++
				}
				if in.Diagnostics != nil && in.Diagnostics.WinningRegion == "West US" {
					failedOver++
				}
			}
			if gone == 0 || refreshed < gone || failedOver == 0 {
				t.Fatalf("%d pages gone, %d range reads, %d pages failed over: %+v", gone, refreshed, failedOver, infos)
			}
		})
	}
}

func TestEmptyContainersAndBadQueriesAgainstTheEmulator(t *testing.T) {
	e := startEmulator(t)
	for sql, want := range map[string]string{
		"SELECT * FROM c ORDER BY c.n":                  "[]",
		"SELECT VALUE COUNT(1) FROM c":                  "[0]",
		"SELECT c.g, COUNT(1) AS n FROM c GROUP BY c.g": "[]",
		"SELECT VALUE MAX(c.n) FROM c":                  "[]",
	} {
		got, _, _ := runEmulator(t, e.options(sqlCase{sql: sql}, Options{}))
		if b, _ := json.Marshal(got); string(b) != want && !(want == "[]" && string(b) == "null") {
			t.Fatalf("%s over nothing: %s, want %s", sql, b, want)
		}
	}
	it, err := Run(context.Background(), e.options(sqlCase{sql: "SELECT * FROM c WHERE"}, Options{}))
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	_, info, err := it.Next(context.Background())
	var ce *cosmos.Error
	if !errors.As(err, &ce) || ce.StatusCode != 400 || info == nil || info.Kind != KindPlan {
		t.Fatalf("err = %v (info %+v), want the plan request's 400", err, info)
	}
}

// A query abandoned part way, through the real engine and HTTP, leaves no request or
// timer behind (TestMain checks for goroutines once every test is done): closed after
// a few pages, or with its context cancelled and never closed.
func TestAbandonedQueriesAgainstTheEmulatorLeaveNothingBehind(t *testing.T) {
	e := startEmulator(t)
	e.load(t, emulatorDocs(11, 300))
	if err := e.srv.Faults().SetLatency("West US", "query", faults.Distribution{Kind: "fixed", Value: faults.Duration(time.Second)}); err != nil {
		t.Fatal(err)
	}
	c := emulatorCases()[2]
	for _, how := range []string{"closed", "cancelled"} {
		o := e.options(c, Options{PageSize: 10})
		o.Page.Hedge = hedging.Threshold{Threshold: time.Millisecond, MaxRegions: 2} // hedges to the slow region stay in flight
		ctx, cancel := context.WithCancel(context.Background())
		it, err := Run(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		for n := 0; n < 3; n++ {
			if _, _, err := it.Next(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		if how == "closed" {
			it.Close()
		} else {
			cancel()
			it.wg.Wait()
		}
		cancel()
	}
}
