package query

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
)

// No page request outlives its query: abandoned, closed or finished.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func fakeFor(c qcase, seed int64, nranges int, docs []fdoc) *fakeBackend {
	f := newFake(seed, nranges, docs)
	f.planJSON, f.rows, f.partial, f.sorts = c.plan, c.rows, c.partial, sorter{desc: c.sorts}
	return f
}

func testOptions(o Options) Options {
	o.Database, o.Container = "db", "c"
	if o.Spec.Query == "" {
		o.Spec.Query = "SELECT * FROM c"
	}
	o.Clock = clock.NewFake(time.Unix(0, 0))
	return o
}

func mustStart(t *testing.T, be backend, o Options) *Iterator {
	t.Helper()
	it, err := start(context.Background(), testOptions(o), be)
	if err != nil {
		t.Fatal(err)
	}
	return it
}

// runAll runs a query to its end and returns its items.
func runAll(t *testing.T, be backend, o Options) ([]json.RawMessage, *Iterator) {
	t.Helper()
	it := mustStart(t, be, o)
	defer it.Close()
	got, _, err := drainAll(it)
	if err != nil {
		t.Fatal(err)
	}
	return got, it
}

func canon(t *testing.T, items []json.RawMessage) []string {
	t.Helper()
	out := make([]string, len(items))
	for i, it := range items {
		c, err := canonical(it)
		if err != nil {
			t.Fatalf("item %d is not JSON: %s", i, it)
		}
		out[i] = string(c)
	}
	return out
}

func sameMultiset(t *testing.T, got, want []json.RawMessage) bool {
	g, w := canon(t, got), canon(t, want)
	sort.Strings(g)
	sort.Strings(w)
	if len(g) != len(w) {
		return false
	}
	for i := range g {
		if g[i] != w[i] {
			return false
		}
	}
	return true
}

// wantCache keeps the in-memory evaluations of a test's scenarios.
var wantCache sync.Map

type wantKey struct {
	c    string
	docs *fdoc
	n    int
}

// checkResult compares a query's items with the in-memory evaluation.
func checkResult(t *testing.T, c qcase, docs []fdoc, got []json.RawMessage) {
	t.Helper()
	type evaluated struct {
		want []json.RawMessage
		pool map[string]bool
	}
	var key wantKey
	if len(docs) > 0 {
		key = wantKey{c.name, &docs[0], len(docs)}
	}
	var ev *evaluated
	if v, ok := wantCache.Load(key); ok && len(docs) > 0 {
		ev = v.(*evaluated)
	} else {
		ev = &evaluated{want: c.want(docs)}
		if c.pool != nil {
			ev.pool = map[string]bool{}
			for _, p := range canon(t, c.pool(docs)) {
				ev.pool[p] = true
			}
		}
		wantCache.Store(key, ev)
	}
	want := ev.want
	s := sorter{desc: c.sorts}
	inPool := func() {
		pool := ev.pool
		seen := map[string]bool{}
		for _, g := range canon(t, got) {
			if !pool[g] || seen[g] {
				t.Fatalf("item %s is not a result of the query, or came twice", g)
			}
			seen[g] = true
		}
	}
	switch c.check {
	case "set":
		if !sameMultiset(t, got, want) {
			t.Fatalf("got %d items %s\nwant %d items %s", len(got), canon(t, got), len(want), canon(t, want))
		}
	case "ordered":
		if !sameMultiset(t, got, want) {
			t.Fatalf("got %d items, want %d (same items in order)\ngot  %s\nwant %s", len(got), len(want), canon(t, got), canon(t, want))
		}
		for i := 1; i < len(got); i++ {
			if s.compare(c.keyOf(got[i-1]), c.keyOf(got[i])) > 0 {
				t.Fatalf("items %d and %d are out of order: %s then %s", i-1, i, got[i-1], got[i])
			}
		}
	case "prefix":
		if len(got) != len(want) {
			t.Fatalf("got %d items, want %d", len(got), len(want))
		}
		for i := range got {
			if !equalRows(c.keyOf(got[i]), c.keyOf(want[i])) {
				t.Fatalf("item %d sorts as %s, want %s", i, got[i], want[i])
			}
		}
		inPool()
	case "some":
		if n := min(c.n, len(ev.pool)); len(got) != n {
			t.Fatalf("got %d items, want %d", len(got), n)
		}
		inPool()
	}
}

type scenario struct {
	seed     int64
	docs     []fdoc
	nranges  int
	pageSize int
	par      int
}

func scenarios(n int) []scenario {
	var out []scenario
	n = max(1, n/scenarioScale)
	for seed := int64(1); seed <= int64(n); seed++ {
		rng := rand.New(rand.NewSource(seed))
		out = append(out, scenario{seed: seed, docs: genDocs(rng, rng.Intn(150)), nranges: 1 + rng.Intn(5), pageSize: []int{0, 1, 3, 17}[rng.Intn(4)], par: 1 + rng.Intn(4)})
	}
	return out
}

func TestEveryQueryFormMatchesAnInMemoryEvaluation(t *testing.T) {
	for _, c := range allCases() {
		t.Run(c.name, func(t *testing.T) {
			for _, sc := range scenarios(30) {
				f := fakeFor(c, sc.seed, sc.nranges, sc.docs)
				f.emptyPages = 0.15
				got, it := runAll(t, f, Options{PageSize: sc.pageSize, Parallelism: sc.par})
				checkResult(t, c, sc.docs, got)
				if tok := it.Continuation(); tok != "" {
					t.Fatalf("a complete query has no continuation, got %q", tok)
				}
			}
		})
	}
}

// A run stopped after every Next and resumed from its token returns every item exactly
// once, in order: for every token of a run, the items before it and the items of a run
// resumed from it are the whole result.
func TestResumingFromEveryContinuationReturnsEveryItemOnce(t *testing.T) {
	for _, c := range allCases() {
		t.Run(c.name, func(t *testing.T) {
			for _, sc := range scenarios(8) {
				f := fakeFor(c, sc.seed, sc.nranges, sc.docs)
				f.emptyPages = 0.1
				o := Options{PageSize: sc.pageSize, Parallelism: sc.par}
				it := mustStart(t, f, o)
				var prefix []json.RawMessage
				type point struct {
					n   int
					tok string
				}
				var points []point
				for {
					items, _, err := it.Next(context.Background())
					prefix = append(prefix, items...)
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					if tok := it.Continuation(); tok != "" {
						points = append(points, point{len(prefix), tok})
					}
				}
				it.Close()
				checkResult(t, c, sc.docs, prefix)
				// Every token of short runs; of long ones a spread of 30, first and last
				// among them.
				if n := len(points); n > 30 {
					var spread []point
					for i := 0; i < 30; i++ {
						spread = append(spread, points[i*(n-1)/29])
					}
					points = spread
				}
				for _, p := range points {
					o := o
					o.Continuation = p.tok
					o.PageSize = []int{0, 2, 5}[p.n%3] // a resumed run may page differently
					rest, _ := runAll(t, f, o)
					got := append(append([]json.RawMessage(nil), prefix[:p.n]...), rest...)
					checkResult(t, c, sc.docs, got)
				}
			}
		})
	}
}

// Runs of MaxItems items each, every one resumed from the last one's token, return the
// whole result once; each run returns exactly MaxItems items but the last.
func TestMaxItemsRunsChainedByTokens(t *testing.T) {
	for _, c := range allCases() {
		t.Run(c.name, func(t *testing.T) {
			for _, sc := range scenarios(10) {
				f := fakeFor(c, sc.seed, sc.nranges, sc.docs)
				f.emptyPages = 0.1
				maxItems := 1 + int(sc.seed)%7
				var all []json.RawMessage
				tok := ""
				for runs := 0; ; runs++ {
					if runs > 1000 {
						t.Fatal("the runs never end")
					}
					got, it := runAll(t, f, Options{PageSize: sc.pageSize, Parallelism: sc.par, MaxItems: maxItems, Continuation: tok})
					all = append(all, got...)
					tok = it.Continuation()
					if tok == "" {
						break
					}
					if len(got) != maxItems {
						t.Fatalf("run %d returned %d items with more to come, want %d", runs, len(got), maxItems)
					}
				}
				checkResult(t, c, sc.docs, all)
			}
		})
	}
}

// Ranges that split while the query runs (410/1002 on their next page) are replaced by
// their children, which go on from the parent's continuation: nothing lost or repeated.
func TestSplitsMidQueryLoseAndRepeatNothing(t *testing.T) {
	for _, c := range allCases() {
		t.Run(c.name, func(t *testing.T) {
			for _, sc := range scenarios(15) {
				f := fakeFor(c, sc.seed, sc.nranges, sc.docs)
				rng := rand.New(rand.NewSource(sc.seed))
				for i := 0; i < 3; i++ {
					f.splitAfter[1+rng.Intn(12)] = ""
				}
				got, it := runAll(t, f, Options{PageSize: sc.pageSize, Parallelism: sc.par})
				checkResult(t, c, sc.docs, got)
				if st := it.Stats(); len(f.rs) > sc.nranges && st.Splits == 0 && f.pageCalls > 0 {
					t.Logf("ranges split but the query saw no 410 (the split range was already finished)")
				}
			}
		})
	}
}

// A token issued before a range split resumes on its children: the parent's
// continuation, and what of its page was already returned, carry over.
func TestResumeAfterASplitBetweenRuns(t *testing.T) {
	resumeAcrossReshapes(t, func(f *fakeBackend, rng *rand.Rand, run int) {
		f.splitLocked(f.rs[rng.Intn(len(f.rs))].id)
	})
}

// resumeAcrossReshapes runs every case's query in runs of a few items, each resumed
// from the last one's token, calling reshape (with the fake locked) between runs: the
// runs together return the whole result once.
func resumeAcrossReshapes(t *testing.T, reshape func(f *fakeBackend, rng *rand.Rand, run int)) {
	t.Helper()
	for _, c := range allCases() {
		t.Run(c.name, func(t *testing.T) {
			for _, sc := range scenarios(10) {
				f := fakeFor(c, sc.seed, sc.nranges, sc.docs)
				rng := rand.New(rand.NewSource(sc.seed))
				var all []json.RawMessage
				tok := ""
				for runs := 0; ; runs++ {
					got, it := runAll(t, f, Options{PageSize: sc.pageSize, Parallelism: sc.par, MaxItems: 1 + rng.Intn(9), Continuation: tok})
					all = append(all, got...)
					if tok = it.Continuation(); tok == "" {
						break
					}
					f.mu.Lock()
					reshape(f, rng, runs)
					f.mu.Unlock()
				}
				checkResult(t, c, sc.docs, all)
			}
		})
	}
}

// Ranges merged while the query runs answer 410/1002; each goes on in the merged range
// from its own continuation, narrowed to its own keys: nothing lost or repeated, also
// with splits mixed in (a merged range that splits again, a split child merged).
func TestMergesMidQueryLoseAndRepeatNothing(t *testing.T) {
	for _, c := range allCases() {
		t.Run(c.name, func(t *testing.T) {
			for _, sc := range scenarios(15) {
				f := fakeFor(c, sc.seed, sc.nranges, sc.docs)
				rng := rand.New(rand.NewSource(sc.seed))
				for i := 0; i < 3; i++ {
					f.mergeAfter[1+rng.Intn(12)] = true
				}
				if sc.seed%2 == 0 {
					f.splitAfter[1+rng.Intn(12)] = ""
				}
				got, _ := runAll(t, f, Options{PageSize: sc.pageSize, Parallelism: sc.par})
				checkResult(t, c, sc.docs, got)
			}
		})
	}
}

// A token issued before ranges merged resumes in the merged range, narrowed to each
// old range's keys; merges and splits between runs.
func TestResumeAfterAMergeBetweenRuns(t *testing.T) {
	resumeAcrossReshapes(t, func(f *fakeBackend, rng *rand.Rand, run int) {
		if run%3 == 2 {
			f.splitLocked(f.rs[rng.Intn(len(f.rs))].id)
		} else {
			f.mergeNeighbourLocked(f.rs[rng.Intn(len(f.rs))].id)
		}
	})
}

// After a merge, the old ranges' pages go to the merged range with the old ranges' keys
// as x-ms-start-epk/x-ms-end-epk; whole ranges are never narrowed.
func TestPagesOfAMergedRangeAreNarrowedToItsKeys(t *testing.T) {
	c := allCases()[0]
	docs := genDocs(rand.New(rand.NewSource(7)), 200)
	f := fakeFor(c, 7, 4, docs)
	f.mergeAfter[2] = true
	got, it := runAll(t, f, Options{PageSize: 5, Parallelism: 1})
	checkResult(t, c, docs, got)
	if st := it.Stats(); st.Merges == 0 {
		t.Fatalf("stats %+v: no merge seen", st)
	}
	old := map[string][2]string{}
	for _, r := range newFake(7, 4, nil).rs {
		old[r.id] = [2]string{r.min, r.max}
	}
	narrowed := 0
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, req := range f.log {
		if req.endEPK == "" {
			continue
		}
		narrowed++
		var merged *fakeRange
		for i := range f.rs {
			if f.rs[i].id == req.rangeID {
				merged = &f.rs[i]
			}
		}
		if merged == nil || len(merged.parents) != 2 {
			t.Fatalf("a narrowed page went to range %s, not the merged one", req.rangeID)
		}
		span := [2]string{req.startEPK, req.endEPK}
		if span != old[merged.parents[0]] && span != old[merged.parents[1]] {
			t.Fatalf("page narrowed to %v, not to one of the merged ranges %v", span, merged.parents)
		}
	}
	if narrowed == 0 {
		t.Fatal("no page was narrowed to a merged range's keys")
	}
}

func TestSplitWhenTheRangeIsStillListedIsRetriedThenGivenUp(t *testing.T) {
	c := allCases()[0]
	f := fakeFor(c, 1, 2, genDocs(rand.New(rand.NewSource(1)), 30))
	gone := &goneBackend{fakeBackend: f, times: 2}
	got, _ := runAll(t, gone, Options{})
	checkResult(t, c, f.docs, got)

	gone = &goneBackend{fakeBackend: fakeFor(c, 1, 2, f.docs), times: 100}
	it := mustStart(t, gone, Options{})
	defer it.Close()
	if _, _, err := drainAll(it); err == nil || !bytes.Contains([]byte(err.Error()), []byte("keeps answering 410/1002")) {
		t.Fatalf("err = %v, want the range given up on", err)
	}
}

// goneBackend answers 410/1002 for the first times pages of range "0", without a split.
type goneBackend struct {
	*fakeBackend
	times int
}

func (g *goneBackend) page(ctx context.Context, req pageRequest) (page, PageInfo, error) {
	g.mu.Lock()
	if req.rangeID == "0" && g.times > 0 {
		g.times--
		g.mu.Unlock()
		return page{}, PageInfo{Kind: KindPage, RangeID: "0"}, &cosmos.Error{StatusCode: 410, SubStatus: cosmos.SubPartitionKeyRangeGone}
	}
	g.mu.Unlock()
	return g.fakeBackend.page(ctx, req)
}

func TestPlanFeaturesThePipelineDoesNotRunAreRefusedByName(t *testing.T) {
	ranges := `"queryRanges":[{"min":"","max":"FF","isMinInclusive":true,"isMaxInclusive":false}]`
	cases := []struct{ name, plan, feature string }{
		{"vector search with DISTINCT", `{"queryInfo":{"hasNonStreamingOrderBy":true,"orderBy":["Descending"],"distinctType":"Ordered","top":5},` + ranges + `}`, "non-streaming ORDER BY"},
		{"MakeList", `{"queryInfo":{"aggregates":["MakeList"],"hasSelectValue":true},` + ranges + `}`, "aggregate MakeList"},
		{"an alias's MakeSet", `{"queryInfo":{"groupByAliasToAggregateType":{"s":"MakeSet"}},` + ranges + `}`, "aggregate MakeSet"},
		{"two aggregates in one VALUE", `{"queryInfo":{"aggregates":["Count","Sum"],"hasSelectValue":true},` + ranges + `}`, "several aggregates"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(1, 2, nil)
			f.planJSON = tc.plan
			it := mustStart(t, f, Options{})
			defer it.Close()
			_, info, err := it.Next(context.Background())
			var ue *UnsupportedError
			if !errors.As(err, &ue) || !bytes.Contains([]byte(ue.Feature), []byte(tc.feature)) {
				t.Fatalf("err = %v, want an UnsupportedError naming %q", err, tc.feature)
			}
			if !bytes.Contains([]byte(err.Error()), []byte("--pk")) {
				t.Fatalf("the error says what still works: %v", err)
			}
			if info == nil || info.Kind != KindPlan {
				t.Fatalf("the plan request is reported with the error: %+v", info)
			}
			if f.pageCalls != 0 {
				t.Fatalf("no page is read for a query that cannot run: %d", f.pageCalls)
			}
		})
	}
}

func TestTokensAreRefusedForAnotherQueryOrWhenDamaged(t *testing.T) {
	c := allCases()[1] // ORDER BY
	f := fakeFor(c, 3, 3, genDocs(rand.New(rand.NewSource(3)), 40))
	it := mustStart(t, f, Options{MaxItems: 5, PageSize: 2})
	if _, _, err := drainAll(it); err != nil {
		t.Fatal(err)
	}
	it.Close()
	tok := it.Continuation()
	if tok == "" {
		t.Fatal("no token")
	}
	pk, _ := cosmos.PK("a")
	for name, o := range map[string]Options{
		"another query":         {Spec: cosmos.QuerySpec{Query: "SELECT * FROM c ORDER BY c.other"}, Continuation: tok},
		"another parameter":     {Spec: cosmos.QuerySpec{Query: "SELECT * FROM c", Parameters: []cosmos.QueryParameter{{Name: "@a", Value: json.RawMessage("1")}}}, Continuation: tok},
		"with a partition key":  {PartitionKey: pk, Continuation: tok},
		"cut short":             {Continuation: tok[:len(tok)-7]},
		"not a cosmosctl token": {Continuation: `{"token":"+RID:~abc","range":{"min":"","max":"FF"}}`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := start(context.Background(), testOptions(o), f)
			var ie *engine.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("err = %v, want an input error", err)
			}
		})
	}
	t.Run("a token of another plan shape", func(t *testing.T) {
		g := fakeFor(allCases()[0], 3, 3, f.docs) // same query text, a parallel plan
		it := mustStart(t, g, Options{Continuation: tok})
		defer it.Close()
		_, _, err := it.Next(context.Background())
		var ie *engine.InputError
		if !errors.As(err, &ie) {
			t.Fatalf("err = %v, want an input error", err)
		}
	})
}

// A merge holds one page per range and one read ahead: never more than two pages per
// range, however many items the query returns.
func TestOrderByHoldsAtMostTwoPagesPerRange(t *testing.T) {
	c := allCases()[1]
	docs := genDocs(rand.New(rand.NewSource(9)), 3000)
	f := fakeFor(c, 9, 4, docs)
	const pageSize = 20
	it := mustStart(t, f, Options{PageSize: pageSize, Parallelism: 4})
	defer it.Close()
	var got []json.RawMessage
	peak := 0
	for {
		items, _, err := it.Next(context.Background())
		got = append(got, items...)
		held := 0
		for _, r := range it.ranges {
			held += len(r.buf)
			if r.ahead != nil {
				held += len(r.ahead.items)
			}
		}
		peak = max(peak, held)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	checkResult(t, c, docs, got)
	if limit := 2 * pageSize * 4; peak > limit {
		t.Fatalf("held %d items at once; the bound is %d (2 pages × 4 ranges)", peak, limit)
	}
}

func TestAbandonedQueriesLeaveNoRequestBehind(t *testing.T) {
	c := allCases()[1]
	t.Run("Close while pages hang", func(t *testing.T) {
		defer goleak.VerifyNone(t)
		f := fakeFor(c, 1, 4, genDocs(rand.New(rand.NewSource(1)), 50))
		f.hang = true
		it := mustStart(t, f, Options{Parallelism: 4})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, _, err := it.Next(ctx)
			for err == nil {
				_, _, err = it.Next(ctx)
			}
			done <- err
		}()
		for i := 0; i < 4; i++ {
			<-f.hung
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
		it.Close()
		if _, _, err := it.Next(context.Background()); !errors.Is(err, ErrClosed) {
			t.Fatalf("Next after Close: %v", err)
		}
	})
	t.Run("the context of Run ends", func(t *testing.T) {
		defer goleak.VerifyNone(t)
		f := fakeFor(c, 1, 4, genDocs(rand.New(rand.NewSource(1)), 50))
		f.hang = true
		ctx, cancel := context.WithCancel(context.Background())
		it, err := start(ctx, testOptions(Options{Parallelism: 4}), f)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, _, err := it.Next(context.Background())
			for err == nil {
				_, _, err = it.Next(context.Background())
			}
			done <- err
		}()
		<-f.hung
		cancel()
		if err := <-done; err == nil || err == io.EOF {
			t.Fatalf("err = %v, want the cancellation", err)
		}
		it.wg.Wait() // without Close: the requests end with the context
	})
	t.Run("a failed page stops the others", func(t *testing.T) {
		defer goleak.VerifyNone(t)
		f := fakeFor(c, 1, 4, genDocs(rand.New(rand.NewSource(1)), 200))
		f.failAfter = 5
		it := mustStart(t, f, Options{PageSize: 3, Parallelism: 4})
		_, infos, err := drainAll(it)
		var ce *cosmos.Error
		if !errors.As(err, &ce) || ce.StatusCode != 500 {
			t.Fatalf("err = %v", err)
		}
		if len(infos) == 0 || it.Continuation() == "" {
			t.Fatalf("the failed run still reports its requests (%d) and can be resumed (%q)", len(infos), it.Continuation())
		}
	})
}

func TestEveryRequestIsReportedOnceAndCounted(t *testing.T) {
	c := allCases()[1]
	f := fakeFor(c, 4, 3, genDocs(rand.New(rand.NewSource(4)), 80))
	f.splitAfter[3] = ""
	it := mustStart(t, f, Options{PageSize: 7})
	defer it.Close()
	_, infos, err := drainAll(it)
	if err != nil {
		t.Fatal(err)
	}
	st := it.Stats()
	kinds := map[string]int{}
	charge := 0.0
	for _, in := range infos {
		kinds[in.Kind]++
		charge += in.RequestCharge
	}
	if kinds[KindPlan] != 1 || kinds[KindRanges] != 2 || kinds[KindPage] != f.pageCalls {
		t.Fatalf("reported %v; the fake saw %d page requests", kinds, f.pageCalls)
	}
	if st.Requests != len(infos) || st.Pages != f.pageCalls || st.RequestCharge != charge || st.Splits != 1 {
		t.Fatalf("stats %+v, reported %d requests costing %v", st, len(infos), charge)
	}
}

// A Next whose context ends returns its error; the pages already asked for go on, and
// the next Next takes up where it was.
func TestACancelledNextLeavesTheQueryUsable(t *testing.T) {
	c := allCases()[2] // ORDER BY descending
	docs := genDocs(rand.New(rand.NewSource(5)), 90)
	f := fakeFor(c, 5, 3, docs)
	f.gate = make(chan struct{})
	it := mustStart(t, f, Options{PageSize: 4})
	defer it.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	var got []json.RawMessage
	for {
		items, _, err := it.Next(ctx)
		got = append(got, items...)
		if errors.Is(err, context.DeadlineExceeded) {
			break
		}
		if err != nil {
			t.Fatalf("err = %v, want the context's deadline", err)
		}
	}
	close(f.gate)
	rest, _, err := drainAll(it)
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, c, docs, append(got, rest...))
}

// A DISTINCT over thousands of values carries them all in its token, beyond what one
// command-line argument holds: the run says it cannot be resumed rather than hand out
// a token that cannot be used.
func TestAStateTooLargeForATokenIsNotResumable(t *testing.T) {
	docs := genDocs(rand.New(rand.NewSource(6)), 6000)
	c := qcase{plan: `{"queryInfo":{"distinctType":"Unordered","rewrittenQuery":""},"queryRanges":[{"min":"","max":"FF","isMinInclusive":true,"isMaxInclusive":false}]}`,
		rows: func(docs []fdoc) []frow {
			var out []frow
			for _, d := range docs {
				out = append(out, frow{rid: d.rid, raw: jsonOf(d.body["id"])})
			}
			return out
		}}
	f := fakeFor(c, 6, 2, docs)
	got, it := runAll(t, f, Options{PageSize: 500, MaxItems: 5000})
	if len(got) != 5000 || it.Continuation() != "" || !strings.Contains(it.Unresumable(), "too large") {
		t.Fatalf("%d items, token %d bytes, unresumable %q", len(got), len(it.Continuation()), it.Unresumable())
	}
	got, it = runAll(t, f, Options{PageSize: 500, MaxItems: 100})
	if len(got) != 100 || it.Continuation() == "" || it.Unresumable() != "" {
		t.Fatalf("a small state is resumable: %d items, unresumable %q", len(got), it.Unresumable())
	}
}

// A range narrowed to part of its keys (a prefix's) that splits is a split; one whose
// replacement reaches beyond its own bounds was merged.
func TestMergedTellsAMergeFromASplitOfANarrowedRange(t *testing.T) {
	narrowed := epkRange{ID: "1", Min: "18", Max: "28", Scoped: true, RMin: "10", RMax: "30"}
	split := []cosmos.PartitionKeyRange{{ID: "5", MinInclusive: "10", MaxExclusive: "20"}, {ID: "6", MinInclusive: "20", MaxExclusive: "30"}}
	kids, err := childrenOf(narrowed, split)
	if err != nil || len(kids) != 2 || merged(narrowed, kids) {
		t.Fatalf("split of a narrowed range: %+v %v, merged %v", kids, err, merged(narrowed, kids))
	}
	outside := []cosmos.PartitionKeyRange{{ID: "5", MinInclusive: "10", MaxExclusive: "29"}, {ID: "6", MinInclusive: "29", MaxExclusive: "30"}}
	if kids, err := childrenOf(narrowed, outside); err != nil || len(kids) != 1 || merged(narrowed, kids) {
		t.Fatalf("a split outside the narrowed keys: %+v %v", kids, err)
	}
	merge := []cosmos.PartitionKeyRange{{ID: "7", MinInclusive: "", MaxExclusive: "40"}}
	if kids, err := childrenOf(narrowed, merge); err != nil || len(kids) != 1 || !merged(narrowed, kids) || kids[0].RMin != "" || kids[0].RMax != "40" {
		t.Fatalf("a merge: %+v %v", kids, err)
	}
	whole := epkRange{ID: "2", Min: "30", Max: "40"}
	if kids, err := childrenOf(whole, merge); err != nil || !merged(whole, kids) || !kids[0].Scoped {
		t.Fatalf("a merge of a whole range: %+v %v", kids, err)
	}
}
