package changefeed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// prefixFake is a fake change feed of a container partitioned by /tenant,/user whose
// ranges cut through the keys of tenant t1 twice: its span reaches into the range below
// it, lies wholly over one range, and ends inside the range above it; the other ranges
// hold no key of t1.
func prefixFake(t *testing.T) (*fakeBackend, cosmos.PartitionKey, cosmos.EPKRange) {
	t.Helper()
	prefix, _ := cosmos.PK("t1")
	span := cosmos.PrefixRange(prefix)
	bounds := []string{"", "10", "20", "30", span.Min + "10", span.Min + "20"}
	sort.Strings(bounds)
	bounds = append(bounds, "FF")
	be := newFake(1)
	be.rs = nil
	for i := 0; i+1 < len(bounds); i++ {
		be.rs = append(be.rs, frange{fmt.Sprint(i), bounds[i], bounds[i+1]})
	}
	be.nextID = len(be.rs)
	return be, prefix, span
}

// writeKeys changes an item of every tenant t0…t3 for each user from … to-1, the item
// of tenant t and user u named "t-u", at the key's effective partition key.
func writeKeys(be *fakeBackend, from, to int) {
	be.mu.Lock()
	defer be.mu.Unlock()
	for u := from; u < to; u++ {
		for tn := 0; tn < 4; tn++ {
			pk, _ := cosmos.PK(fmt.Sprintf("t%d", tn), fmt.Sprintf("u%d", u))
			be.lsn++
			id := fmt.Sprintf("t%d-u%d", tn, u)
			be.docs[id] = fdoc{id: id, epk: cosmos.EffectivePartitionKey(pk), lsn: be.lsn}
		}
	}
}

// checkOnce checks that seen holds the items of tenant t1 for users from … to-1, each
// once, and nothing else.
func checkOnce(t *testing.T, seen map[string]int, from, to int) {
	t.Helper()
	for id, n := range seen {
		if !strings.HasPrefix(id, "t1-") {
			t.Errorf("%s delivered: not an item of the prefix", id)
		} else if n != 1 {
			t.Errorf("%s delivered %d times", id, n)
		}
	}
	for u := from; u < to; u++ {
		if id := fmt.Sprintf("t1-u%d", u); seen[id] != 1 {
			t.Errorf("%s delivered %d times, want once", id, seen[id])
		}
	}
}

// checkPolls checks that every poll read the prefix's keys only: no partition key
// header, and a range that reaches beyond the span narrowed to its part of it.
func checkPolls(t *testing.T, be *fakeBackend, span cosmos.EPKRange) {
	t.Helper()
	be.mu.Lock()
	defer be.mu.Unlock()
	if len(be.polls) == 0 {
		t.Fatal("no poll")
	}
	for _, p := range be.polls {
		if p.pk != nil || p.rangeID == "" {
			t.Fatalf("poll %+v: a prefix is read by range, not as a partition key", p)
		}
		lo, hi := p.startEPK, p.endEPK
		if hi == "" {
			found := false
			for _, r := range be.rs {
				if r.id == p.rangeID {
					lo, hi, found = r.min, r.max, true
				}
			}
			if !found {
				continue // a range gone since: the poll answered 410
			}
		}
		if !span.Contains(cosmos.EPKRange{Min: lo, Max: hi}) {
			t.Fatalf("a poll of range %s reads [%s, %s), beyond the prefix's keys [%s, %s)", p.rangeID, lo, hi, span.Min, span.Max)
		}
	}
}

func TestAPrefixIsReadRangeByRangeNarrowedToItsKeys(t *testing.T) {
	be, prefix, span := prefixFake(t)
	writeKeys(be, 0, 60)
	o := fakeOptions(nil)
	o.PartitionKeyPrefix = prefix
	f, err := open(context.Background(), o, be)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen, _ := readAll(t, f)
	checkOnce(t, seen, 0, 60)
	checkPolls(t, be, span)
	want := map[string][2]string{}
	for _, r := range be.rs {
		pr := cosmos.PartitionKeyRange{ID: r.id, MinInclusive: r.min, MaxExclusive: r.max}
		if span.Overlaps(pr) {
			part, narrowed := span.Within(pr)
			if !narrowed {
				part = cosmos.EPKRange{}
			}
			want[r.id] = [2]string{part.Min, part.Max}
		}
	}
	if len(want) != 3 {
		t.Fatalf("the test's ranges give the span %d ranges, want 3", len(want))
	}
	polled := map[string]bool{}
	for _, p := range be.polls {
		w, ok := want[p.rangeID]
		if !ok {
			t.Fatalf("range %s was polled, which holds no key of the prefix", p.rangeID)
		}
		if got := [2]string{p.startEPK, p.endEPK}; got != w {
			t.Errorf("range %s: poll narrowed to %q, want %q", p.rangeID, got, w)
		}
		polled[p.rangeID] = true
	}
	if len(polled) != 3 {
		t.Errorf("ranges polled: %v, want the 3 of the span", polled)
	}
}

// Ranges of the span that split (inside the span and outside it) or merge while the
// feed is read go on narrowed to the prefix's keys.
func TestAPrefixFeedAcrossSplitsAndMerges(t *testing.T) {
	for _, tc := range []struct {
		name string
		// change reshapes the ranges when a range of the span is first polled.
		change func(be *fakeBackend, span cosmos.EPKRange, polled string)
	}{
		{"the range reaching into the span splits inside it", func(be *fakeBackend, span cosmos.EPKRange, polled string) {
			for _, r := range be.rs {
				if r.id == polled && r.min < span.Min {
					be.splitAtLocked(r.id, span.Min+"08")
				}
			}
		}},
		{"the range reaching into the span splits below it", func(be *fakeBackend, span cosmos.EPKRange, polled string) {
			for _, r := range be.rs {
				if r.id == polled && r.min < span.Min {
					be.splitAtLocked(r.id, span.Min[:len(span.Min)-1]+"0")
				}
			}
		}},
		{"the range inside the span splits", func(be *fakeBackend, span cosmos.EPKRange, polled string) {
			for _, r := range be.rs {
				if r.id == polled && r.min == span.Min+"10" {
					be.splitAtLocked(r.id, span.Min+"18")
				}
			}
		}},
		{"the range inside the span merges with the one above", func(be *fakeBackend, span cosmos.EPKRange, polled string) {
			for _, r := range be.rs {
				if r.id == polled && r.min == span.Min+"10" {
					be.mergeLocked(r.id)
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			be, prefix, span := prefixFake(t)
			writeKeys(be, 0, 60)
			polls := map[string]int{}
			be.pollHook = func(req pollRequest) {
				be.mu.Lock()
				defer be.mu.Unlock()
				if polls[req.rangeID]++; polls[req.rangeID] == 2 {
					tc.change(be, span, req.rangeID)
				}
			}
			o := fakeOptions(nil)
			o.PartitionKeyPrefix, o.PageSize = prefix, 4
			f, err := open(context.Background(), o, be)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			seen, bs := readAll(t, f)
			checkOnce(t, seen, 0, 60)
			checkPolls(t, be, span)
			reshaped := false
			for _, b := range bs {
				reshaped = reshaped || b.Info.Kind == KindRanges
			}
			if !reshaped {
				t.Error("the feed saw no split or merge")
			}
			for _, r := range f.State().Ranges {
				if !span.Contains(cosmos.EPKRange{Min: r.Min, Max: r.Max}) {
					t.Errorf("state range %+v reaches beyond the prefix", r)
				}
			}
		})
	}
}

// A state of a prefix records the prefix's keys and each range's narrowing: resumed, the
// feed reads on within the prefix; a state of another --pk, or one damaged to reach
// beyond the prefix, is refused.
func TestAPrefixStateResumesWithinThePrefixAndIsRefusedForAnother(t *testing.T) {
	be, prefix, span := prefixFake(t)
	writeKeys(be, 0, 30)
	o := fakeOptions(nil)
	o.PartitionKeyPrefix = prefix
	f, err := open(context.Background(), o, be)
	if err != nil {
		t.Fatal(err)
	}
	seen, _ := readAll(t, f)
	f.Close()
	checkOnce(t, seen, 0, 30)
	st := f.State()
	if st.PrefixRange == nil || *st.PrefixRange != span || string(st.PartitionKey) != `["t1"]` {
		t.Fatalf("state %+v: want the prefix and its range %v", st, span)
	}
	scoped := 0
	for _, r := range st.Ranges {
		if r.Scoped {
			scoped++
		}
	}
	if len(st.Ranges) != 3 || scoped != 2 {
		t.Fatalf("state ranges %+v: want the span's 3, two of them narrowed", st.Ranges)
	}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}

	writeKeys(be, 30, 45)
	be.mu.Lock()
	be.polls = nil
	be.mu.Unlock()
	o.State = &back
	f2, err := open(context.Background(), o, be)
	if err != nil {
		t.Fatal(err)
	}
	seen, _ = readAll(t, f2)
	f2.Close()
	checkOnce(t, seen, 30, 45)
	checkPolls(t, be, span)

	other, _ := cosmos.PK("t2")
	whole, _ := cosmos.PK("t1", "u1")
	damaged := back
	damaged.Ranges = append([]RangeState(nil), back.Ranges...)
	damaged.Ranges[0].Min = ""
	for name, tc := range map[string]struct {
		mod  func(o *Options)
		want string
	}{
		"another prefix":             {func(o *Options) { o.PartitionKeyPrefix = other }, `partition key prefix ["t2"]`},
		"no --pk":                    {func(o *Options) { o.PartitionKeyPrefix = nil }, `partition key prefix ["t1"]), not of container db/c`},
		"the prefix as a whole key":  {func(o *Options) { o.PartitionKeyPrefix, o.PartitionKey = nil, prefix }, `(partition key ["t1"])`},
		"a whole key of the prefix":  {func(o *Options) { o.PartitionKeyPrefix, o.PartitionKey = nil, whole }, `(partition key ["t1","u1"])`},
		"a range beyond the prefix":  {func(o *Options) { o.State = &damaged }, "reaches beyond partition key prefix"},
		"a key and a prefix at once": {func(o *Options) { o.PartitionKey = whole }, "not both"},
	} {
		t.Run(name, func(t *testing.T) {
			o := fakeOptions(nil)
			o.PartitionKeyPrefix, o.State = prefix, &back
			tc.mod(&o)
			_, err := open(context.Background(), o, be)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %v, want one line saying %q", err, tc.want)
			}
			var se *StateError
			if tc.want != "not both" && !errors.As(err, &se) {
				t.Fatalf("err = %T, want a StateError", err)
			}
		})
	}
}

// From now: each range's current position is read narrowed to the prefix too, and only
// the prefix's later changes come.
func TestAPrefixFeedFromNow(t *testing.T) {
	be, prefix, span := prefixFake(t)
	writeKeys(be, 0, 20)
	o := fakeOptions(nil)
	o.PartitionKeyPrefix, o.From = prefix, StartFrom{Kind: Now}
	// The ranges' first polls wait for the writes: a poll before them would find the
	// range caught up and end it.
	gate := make(chan struct{})
	be.pollHook = func(req pollRequest) {
		if req.continuation != "*" {
			<-gate
		}
	}
	f, err := open(context.Background(), o, be)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	writeKeys(be, 20, 25)
	close(gate)
	seen, _ := readAll(t, f)
	checkOnce(t, seen, 20, 25)
	checkPolls(t, be, span)
}
