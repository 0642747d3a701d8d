package query

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"sort"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
)

// prefixDocs are documents of a container partitioned by /tenant,/user: each one's
// effective partition key is its tenant's and user's V2 hashes, as the service places
// it. The tenant of a prefix query is "t1".
func prefixDocs(seed int64, n int) []fdoc {
	rng := rand.New(rand.NewSource(seed))
	docs := genDocs(rng, n)
	for i := range docs {
		pk, _ := cosmos.PK(fmt.Sprintf("t%d", rng.Intn(4)), fmt.Sprintf("u%d", rng.Intn(40)))
		docs[i].epk = cosmos.EffectivePartitionKey(pk)
		docs[i].body["tenant"] = pk[0].Str
		docs[i].raw = jsonOf(docs[i].body)
	}
	return docs
}

func ofTenant(docs []fdoc, tenant string) []fdoc {
	var out []fdoc
	for _, d := range docs {
		if d.body["tenant"] == tenant {
			out = append(out, d)
		}
	}
	return out
}

// prefixFake is a fake service whose ranges cut through the span of tenant t1 three
// times, so that the span reaches into a range below it, lies wholly over two ranges,
// and ends inside a range above it; the other ranges hold no key of t1.
func prefixFake(c qcase, seed int64, docs []fdoc) (*fakeBackend, cosmos.PartitionKey, cosmos.EPKRange) {
	prefix, _ := cosmos.PK("t1")
	span := cosmos.PrefixRange(prefix)
	bounds := []string{"", "10", "20", "30", span.Min + "10", span.Min + "20", span.Min + "30"}
	sort.Strings(bounds)
	bounds = append(bounds, "FF")
	f := fakeFor(c, seed, 1, docs)
	f.rs = nil
	for i := 0; i+1 < len(bounds); i++ {
		f.rs = append(f.rs, fakeRange{id: fmt.Sprint(i), min: bounds[i], max: bounds[i+1]})
	}
	f.nextID = len(f.rs)
	return f, prefix, span
}

// checkScoped checks every page request of a prefix query: it goes to a range that
// holds keys of the span, narrowed to the span exactly where the range reaches beyond
// it, and not at all where the range lies inside it.
func checkScoped(t *testing.T, f *fakeBackend, span cosmos.EPKRange) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.log) == 0 {
		t.Fatal("no page was read")
	}
	for _, req := range f.log {
		if req.pk != nil {
			t.Fatalf("a page of a prefix query carries the partition key %s", req.pk)
		}
		// The range as it was when the page was asked for: the fake keeps retired
		// ranges only by their children, so find it among every range ever listed.
		lo, hi := req.startEPK, req.endEPK
		if hi == "" {
			var r *fakeRange
			for i := range f.rs {
				if f.rs[i].id == req.rangeID {
					r = &f.rs[i]
				}
			}
			if r == nil {
				continue // a range gone since: its request answered 410
			}
			lo, hi = r.min, r.max
		}
		if !span.Contains(cosmos.EPKRange{Min: lo, Max: hi}) {
			t.Fatalf("a page to range %s reads [%s, %s), beyond the prefix's keys [%s, %s)", req.rangeID, lo, hi, span.Min, span.Max)
		}
	}
}

// A query within a prefix returns exactly the prefix's items, for every query form:
// the client-side merge, aggregates and GROUP BY work as across partitions.
func TestAPrefixQueryReturnsExactlyThePrefixsItems(t *testing.T) {
	for _, c := range allCases() {
		t.Run(c.name, func(t *testing.T) {
			for seed := int64(1); seed <= 3; seed++ {
				docs := prefixDocs(seed, 160)
				f, prefix, span := prefixFake(c, seed, docs)
				got, _ := runAll(t, f, Options{PartitionKeyPrefix: prefix, PageSize: []int{0, 1, 3}[seed%3], Parallelism: int(seed)})
				checkResult(t, c, ofTenant(docs, "t1"), got)
				checkScoped(t, f, span)
			}
		})
	}
}

// The pages go to the ranges the span overlaps: the ones it reaches into are narrowed
// to the span's part of them, the ones inside it are read whole.
func TestAPrefixQueryNarrowsThePagesOfRangesReachingBeyondIt(t *testing.T) {
	c := allCases()[0]
	docs := prefixDocs(9, 200)
	f, prefix, span := prefixFake(c, 9, docs)
	got, _ := runAll(t, f, Options{PartitionKeyPrefix: prefix, PageSize: 1000})
	checkResult(t, c, ofTenant(docs, "t1"), got)
	want := map[string][2]string{}
	for _, r := range f.rs {
		pr := cosmos.PartitionKeyRange{ID: r.id, MinInclusive: r.min, MaxExclusive: r.max}
		if !span.Overlaps(pr) {
			continue
		}
		part, narrowed := span.Within(pr)
		if narrowed {
			want[r.id] = [2]string{part.Min, part.Max}
		} else {
			want[r.id] = [2]string{}
		}
	}
	if len(want) != 4 {
		t.Fatalf("the test's ranges give the span %d ranges, want 4", len(want))
	}
	seen := map[string]bool{}
	for _, req := range f.log {
		w, ok := want[req.rangeID]
		if !ok {
			t.Fatalf("a page went to range %s, which holds no key of the prefix", req.rangeID)
		}
		if got := [2]string{req.startEPK, req.endEPK}; got != w {
			t.Errorf("range %s: page narrowed to %q, want %q", req.rangeID, got, w)
		}
		seen[req.rangeID] = true
	}
	if len(seen) != len(want) {
		t.Fatalf("pages went to ranges %v, want every one of %v", seen, want)
	}
	narrowed := map[[2]string]bool{}
	for _, w := range want {
		narrowed[w] = true
	}
	if !narrowed[[2]string{span.Min, span.Min + "10"}] || !narrowed[[2]string{span.Min + "30", span.Max}] || !narrowed[[2]string{}] {
		t.Fatalf("narrowings %v: want the span's first and last parts and whole ranges", want)
	}
}

// Every continuation of a prefix query resumes within the prefix: the token carries each
// range's narrowing.
func TestAPrefixQueryResumesWithinThePrefix(t *testing.T) {
	for _, c := range allCases() {
		t.Run(c.name, func(t *testing.T) {
			docs := prefixDocs(4, 120)
			f, prefix, span := prefixFake(c, 4, docs)
			f.emptyPages = 0.1
			mine := ofTenant(docs, "t1")
			var all []json.RawMessage
			tok := ""
			for runs := 0; ; runs++ {
				if runs > 500 {
					t.Fatal("the runs never end")
				}
				got, it := runAll(t, f, Options{PartitionKeyPrefix: prefix, PageSize: 2, Parallelism: 2, MaxItems: 3, Continuation: tok})
				all = append(all, got...)
				if tok = it.Continuation(); tok == "" {
					break
				}
			}
			checkResult(t, c, mine, all)
			checkScoped(t, f, span)
		})
	}
}

// Ranges of the span that split or merge while the query runs go on narrowed to the
// prefix's keys: nothing lost, repeated, or read from outside the prefix.
func TestAPrefixQueryAcrossSplitsAndMerges(t *testing.T) {
	for _, c := range allCases() {
		t.Run(c.name, func(t *testing.T) {
			for seed := int64(1); seed <= 4; seed++ {
				docs := prefixDocs(seed, 160)
				f, prefix, span := prefixFake(c, seed, docs)
				rng := rand.New(rand.NewSource(seed))
				for i := 0; i < 2; i++ {
					f.splitAfter[1+rng.Intn(8)] = ""
					f.mergeAfter[1+rng.Intn(8)] = true
				}
				got, _ := runAll(t, f, Options{PartitionKeyPrefix: prefix, PageSize: 3, Parallelism: 2})
				checkResult(t, c, ofTenant(docs, "t1"), got)
				checkScoped(t, f, span)
			}
		})
	}
}

func TestPrefixTokensAndOptionsAreChecked(t *testing.T) {
	c := allCases()[1] // ORDER BY
	docs := prefixDocs(5, 80)
	f, prefix, _ := prefixFake(c, 5, docs)
	it := mustStart(t, f, Options{PartitionKeyPrefix: prefix, MaxItems: 2, PageSize: 1})
	if _, _, err := drainAll(it); err != nil {
		t.Fatal(err)
	}
	it.Close()
	tok := it.Continuation()
	if tok == "" {
		t.Fatal("no token")
	}
	other, _ := cosmos.PK("t2")
	whole, _ := cosmos.PK("t1", "u1")
	for name, o := range map[string]Options{
		"another prefix":                   {PartitionKeyPrefix: other, Continuation: tok},
		"no prefix":                        {Continuation: tok},
		"the prefix as a partition key":    {PartitionKey: prefix, Continuation: tok},
		"a partition key and a prefix too": {PartitionKey: whole, PartitionKeyPrefix: prefix},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := start(context.Background(), testOptions(o), f)
			var ie *engine.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("err = %v, want an input error", err)
			}
		})
	}
	t.Run("the same prefix resumes", func(t *testing.T) {
		it := mustStart(t, f, Options{PartitionKeyPrefix: prefix, Continuation: tok})
		defer it.Close()
		if _, _, err := it.Next(context.Background()); err != nil && err != io.EOF {
			t.Fatal(err)
		}
	})
}

// A plan feature the pipeline does not run across partitions is refused for a prefix
// too, and the error says the whole key runs it, not "give --pk": a prefix was given.
func TestAPrefixQueryNeedingAnUnsupportedFeatureNamesTheWholeKey(t *testing.T) {
	f, prefix, _ := prefixFake(allCases()[0], 1, nil)
	f.planJSON = `{"queryInfo":{},"hybridSearchQueryInfo":{"globalStatisticsQuery":"…","componentQueryInfos":[{"orderBy":["Descending"],"rewrittenQuery":"SELECT …"}]},"queryRanges":[{"min":"","max":"FF","isMinInclusive":true,"isMaxInclusive":false}]}`
	it := mustStart(t, f, Options{PartitionKeyPrefix: prefix})
	defer it.Close()
	_, _, err := it.Next(context.Background())
	var ue *UnsupportedError
	if !errors.As(err, &ue) || !ue.Prefix || !bytes.Contains([]byte(err.Error()), []byte("whole partition key")) {
		t.Fatalf("err = %v, want the unsupported feature with the whole key as the way out", err)
	}
}
