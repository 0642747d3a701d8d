package changefeed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
)

func fakeOptions(clk clock.Clock) Options {
	return Options{Database: "db", Container: "c", Until: CaughtUp, PageSize: 10, Clock: clk}
}

func idsOf(t *testing.T, items []json.RawMessage) []string {
	var out []string
	for _, it := range items {
		var d struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(it, &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, d.ID)
	}
	return out
}

func readAll(t *testing.T, f *Feed) (map[string]int, []*Batch) {
	t.Helper()
	seen := map[string]int{}
	var bs []*Batch
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		b, err := f.Next(ctx)
		if errors.Is(err, io.EOF) {
			return seen, bs
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		bs = append(bs, b)
		for _, id := range idsOf(t, b.Items) {
			seen[id]++
		}
	}
}

func TestSplitsAreFollowedFromTheParentsContinuation(t *testing.T) {
	for _, tc := range []struct {
		name  string
		split []string // ranges that split when next polled
	}{
		{"one range splits on its first poll", []string{"0"}},
		{"two ranges split", []string{"1", "3"}},
		{"every range splits", []string{"0", "1", "2", "3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			be := newFake(4)
			be.write(0, 500)
			for _, id := range tc.split {
				be.splitOnPoll[id] = true
			}
			f, err := open(context.Background(), fakeOptions(nil), be)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			seen, bs := readAll(t, f)
			if len(seen) != 500 {
				t.Errorf("%d distinct ids, want 500", len(seen))
			}
			for id, n := range seen {
				if n != 1 {
					t.Errorf("%s delivered %d times", id, n)
				}
			}
			splits := 0
			for _, b := range bs {
				if b.Info.Kind == KindRanges {
					splits++
				}
			}
			st := f.State()
			if splits != len(tc.split) || len(st.Ranges) != 4+len(tc.split) {
				t.Errorf("%d splits reported, %d ranges in the state; want %d and %d", splits, len(st.Ranges), len(tc.split), 4+len(tc.split))
			}
		})
	}
}

// A split mid-read: the parent delivered part of its changes, its children go on from
// its etag: every change once, whatever page the split came after.
func TestSplitAfterSomePagesLosesAndRepeatsNothing(t *testing.T) {
	for pages := 1; pages <= 5; pages++ {
		t.Run(fmt.Sprintf("after %d pages", pages), func(t *testing.T) {
			be := newFake(2)
			be.write(0, 300)
			n := 0
			be.pollHook = func(req pollRequest) {
				if req.rangeID != "0" {
					return
				}
				be.mu.Lock()
				n++
				if n == pages+1 {
					be.splitOnPoll["0"] = true
				}
				be.mu.Unlock()
			}
			f, err := open(context.Background(), fakeOptions(nil), be)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			seen, _ := readAll(t, f)
			if len(seen) != 300 {
				t.Errorf("%d distinct ids, want 300", len(seen))
			}
			for id, c := range seen {
				if c != 1 {
					t.Errorf("%s delivered %d times", id, c)
				}
			}
		})
	}
}

// A state saved before a split resumes on the children: the gone range answers 410/1002.
func TestStateFromBeforeASplitResumesOnTheChildren(t *testing.T) {
	be := newFake(2)
	be.write(0, 100)
	f, err := open(context.Background(), fakeOptions(nil), be)
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, f)
	f.Close()
	st := f.State()
	be.split("1")
	be.write(100, 200)
	o := fakeOptions(nil)
	o.State = st
	f2, err := open(context.Background(), o, be)
	if err != nil {
		t.Fatal(err)
	}
	defer f2.Close()
	seen, _ := readAll(t, f2)
	if len(seen) != 100 || seen["id-100"] != 1 || seen["id-0"] != 0 {
		t.Errorf("resumed across a split: %d ids (id-100 %d, id-0 %d times)", len(seen), seen["id-100"], seen["id-0"])
	}
}

// Ranges merged mid-read go on in the merged range, each from its own continuation and
// narrowed to its own keys: every change once, also with a split after the merge.
func TestMergesAreFollowedFromEachRangesContinuation(t *testing.T) {
	for _, tc := range []struct {
		name  string
		merge []string // ranges that merge with a neighbour when next polled
		split bool     // the merged range splits when polled next
	}{
		{"two ranges merge", []string{"0"}, false},
		{"two pairs merge", []string{"0", "2"}, false},
		{"a merged range splits again", []string{"1"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			be := newFake(4)
			be.write(0, 500)
			for _, id := range tc.merge {
				be.mergeOnPoll[id] = true
			}
			if tc.split {
				be.splitOnPoll["4"] = true // the first merged range's id
			}
			o := fakeOptions(nil)
			o.PageSize = 7
			f, err := open(context.Background(), o, be)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			seen, _ := readAll(t, f)
			if len(seen) != 500 {
				t.Errorf("%d distinct ids, want 500", len(seen))
			}
			for id, n := range seen {
				if n != 1 {
					t.Errorf("%s delivered %d times", id, n)
				}
			}
			narrowed := 0
			be.mu.Lock()
			for _, p := range be.polls {
				if p.endEPK != "" {
					narrowed++
				}
			}
			be.mu.Unlock()
			if narrowed == 0 {
				t.Error("no poll was narrowed to a merged range's keys")
			}
		})
	}
}

// A state saved before a merge resumes in the merged range, narrowed to each old
// range's keys, and the state it saves then says so and resumes again.
func TestStateFromBeforeAMergeResumesInTheMergedRange(t *testing.T) {
	be := newFake(2)
	be.write(0, 100)
	f, err := open(context.Background(), fakeOptions(nil), be)
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, f)
	f.Close()
	st := f.State()
	be.merge("0")
	be.write(100, 200)
	o := fakeOptions(nil)
	o.State = st
	f2, err := open(context.Background(), o, be)
	if err != nil {
		t.Fatal(err)
	}
	seen, _ := readAll(t, f2)
	f2.Close()
	if len(seen) != 100 || seen["id-100"] != 1 || seen["id-0"] != 0 {
		t.Errorf("resumed across a merge: %d ids (id-100 %d, id-0 %d times)", len(seen), seen["id-100"], seen["id-0"])
	}
	st2 := f2.State()
	for _, r := range st2.Ranges {
		if r.ID != "2" || !r.Scoped {
			t.Fatalf("state after the merge: %+v, want both old ranges scoped in range 2", st2.Ranges)
		}
	}
	b, _ := json.Marshal(st2)
	var back State
	if err := json.Unmarshal(b, &back); err != nil || len(back.Ranges) != 2 || !back.Ranges[0].Scoped {
		t.Fatalf("the saved state does not keep the scope: %s", b)
	}
	be.write(200, 250)
	o.State = st2
	f3, err := open(context.Background(), o, be)
	if err != nil {
		t.Fatal(err)
	}
	defer f3.Close()
	seen, _ = readAll(t, f3)
	if len(seen) != 50 || seen["id-249"] != 1 || seen["id-199"] != 0 {
		t.Errorf("resumed from the merged state: %d ids", len(seen))
	}
}

func TestAfterA304TheRangeWaitsThePollDelay(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	be := newFake(1)
	o := fakeOptions(clk)
	o.Until, o.PollDelay = Forever, 5*time.Second
	f, err := open(context.Background(), o, be)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := f.Next(ctx)
	if err != nil || !b.Info.CaughtUp || len(b.Items) != 0 {
		t.Fatalf("first batch %+v, %v: want a 304", b, err)
	}
	if !clk.WaitForTimerIn(5*time.Second, 10*time.Second) {
		t.Fatal("no poll delay timer after a 304")
	}
	if n := be.pollCount(); n != 1 {
		t.Fatalf("%d polls before the delay passed, want 1", n)
	}
	be.write(0, 3)
	clk.Advance(4 * time.Second)
	if n := be.pollCount(); n != 1 {
		t.Fatalf("%d polls 4s into a 5s delay, want 1", n)
	}
	clk.Advance(time.Second)
	b, err = f.Next(ctx)
	if err != nil || len(b.Items) != 3 {
		t.Fatalf("after the delay: %+v, %v: want the 3 changes", b, err)
	}
	// Changes: polled again at once, no delay.
	b, err = f.Next(ctx)
	if err != nil || !b.Info.CaughtUp {
		t.Fatalf("after the changes: %+v, %v: want a 304 polled without a delay", b, err)
	}
}

func TestThrottledPollsWaitTheServicesRetryAfter(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	be := newFake(1)
	be.write(0, 5)
	be.throttle, be.retryAfter = 2, 1500
	f, err := open(context.Background(), fakeOptions(clk), be)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < 2; i++ {
		b, err := f.Next(ctx)
		if err != nil || b.Info.Err == nil || b.Info.Wait != 1500*time.Millisecond {
			t.Fatalf("throttled poll %d: %+v, %v: want a reported 429 waiting 1.5s", i, b, err)
		}
		if !clk.WaitForTimerIn(1500*time.Millisecond, 10*time.Second) {
			t.Fatal("no retry-after timer")
		}
		clk.Advance(1500 * time.Millisecond)
	}
	b, err := f.Next(ctx)
	if err != nil || len(b.Items) != 5 {
		t.Fatalf("after the throttling: %+v, %v", b, err)
	}
}

func TestRepeatedFailuresEndAFeedThatIsNotFollowing(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	be := newFake(1)
	be.failWith = &cosmos.Error{StatusCode: 503}
	f, err := open(context.Background(), fakeOptions(clk), be)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < 2; i++ {
		b, err := f.Next(ctx)
		if err != nil || b.Info.Err == nil {
			t.Fatalf("failed poll %d: %+v, %v", i, b, err)
		}
		clk.WaitForTimers(1, 10*time.Second)
		clk.Advance(time.Minute)
	}
	_, err = f.Next(ctx)
	if err == nil || !strings.Contains(err.Error(), "3 polls in a row failed") {
		t.Fatalf("third failure: %v", err)
	}
	if _, err2 := f.Next(ctx); err2 != err {
		t.Errorf("Next after the end: %v, want the same error", err2)
	}
}

func TestAFinalErrorEndsTheFeedAtOnce(t *testing.T) {
	be := newFake(2)
	be.failWith = &cosmos.Error{StatusCode: 404}
	f, err := open(context.Background(), fakeOptions(nil), be)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = f.Next(context.Background())
	var ce *cosmos.Error
	if !errors.As(err, &ce) || ce.StatusCode != 404 {
		t.Fatalf("Next: %v, want the 404", err)
	}
}

// StateAfter positions the cut range after the n-th item: resumed, the rest of the
// batch comes again and nothing before it.
func TestStateAfterACutInsideABatch(t *testing.T) {
	be := newFake(1)
	be.write(0, 25)
	f, err := open(context.Background(), fakeOptions(nil), be)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	b1, _ := f.Next(ctx)
	b2, err := f.Next(ctx)
	if err != nil || len(b2.Items) != 10 {
		t.Fatalf("second batch: %v", err)
	}
	st, err := f.StateAfter(b2, 4)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	want := append(idsOf(t, b2.Items[4:]), "") // then the third batch
	o := fakeOptions(nil)
	o.State = st
	f2, err := open(ctx, o, be)
	if err != nil {
		t.Fatal(err)
	}
	defer f2.Close()
	seen, _ := readAll(t, f2)
	for _, id := range idsOf(t, b1.Items) {
		if seen[id] != 0 {
			t.Errorf("%s of the first batch delivered again", id)
		}
	}
	for _, id := range want[:len(want)-1] {
		if seen[id] != 1 {
			t.Errorf("%s (after the cut) delivered %d times, want once", id, seen[id])
		}
	}
	if len(seen) != 25-14 {
		t.Errorf("resumed: %d ids, want 11", len(seen))
	}
	if st0, _ := f2.StateAfter(b2, 0); st0 == nil {
		t.Error("StateAfter(b, 0)")
	}
}

func TestStateFiles(t *testing.T) {
	dir := t.TempDir()
	be := newFake(2)
	be.write(0, 10)
	f, err := open(context.Background(), fakeOptions(nil), be)
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, f)
	f.Close()
	path := filepath.Join(dir, "s.json")
	if err := f.State().Save(path); err != nil {
		t.Fatal(err)
	}
	st, err := LoadState(path)
	if err != nil || len(st.Ranges) != 2 || st.Ranges[0].Continuation == "" {
		t.Fatalf("round trip: %+v, %v", st, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("state file mode %v", fi.Mode().Perm())
	}
	if _, err := LoadState(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want ErrNotExist", err)
	}
	for name, content := range map[string]string{
		"not JSON":      "{",
		"another kind":  `{"kind":"something","version":1}`,
		"newer version": `{"kind":"cosmosctl-changefeed","version":9,"database":"db","container":"c","ranges":[{"id":"0"}]}`,
		"no ranges":     `{"kind":"cosmosctl-changefeed","version":1,"database":"db","container":"c","ranges":[]}`,
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		os.WriteFile(p, []byte(content), 0o600)
		_, err := LoadState(p)
		var se *StateError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), p) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want a one-line StateError naming the file", name, err)
		}
	}
	// Another account.
	st.Endpoint = "https://other.documents.azure.com:443/"
	o := fakeOptions(nil)
	o.State = st
	if _, err := open(context.Background(), o, be); err == nil || !strings.Contains(err.Error(), "other.documents.azure.com") {
		t.Errorf("state of another account: %v", err)
	}
}

func TestBadOptions(t *testing.T) {
	for name, mod := range map[string]func(*Options){
		"negative poll delay": func(o *Options) { o.PollDelay = -time.Second },
		"page size too large": func(o *Options) { o.PageSize = 5000 },
		"no container":        func(o *Options) { o.Container = "" },
		"time without a time": func(o *Options) { o.From = StartFrom{Kind: AtTime} },
	} {
		o := fakeOptions(nil)
		mod(&o)
		if _, err := open(context.Background(), o, newFake(1)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// Until StartPoint: a snapshot of the feed at Open. Changes written after Open are not
// delivered, even when a page holds them beside earlier ones, nor after a split.
func TestStartPointIsASnapshotAtOpen(t *testing.T) {
	for _, split := range []bool{false, true} {
		t.Run(fmt.Sprintf("split %v", split), func(t *testing.T) {
			be := newFake(2)
			be.write(0, 95)
			o := fakeOptions(nil)
			o.Until, o.PageSize = StartPoint, 40
			// The feed's polls wait until the writes after Open are in (Open's own
			// position reads, "*", go through).
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
			be.write(95, 130) // after Open: the last pages hold old and new changes
			be.write(0, 5)    // five old items changed again: their new versions are after the point
			if split {
				be.mu.Lock()
				be.splitOnPoll["1"] = true
				be.mu.Unlock()
			}
			close(gate)
			seen, _ := readAll(t, f)
			for id := range seen {
				var n int
				fmt.Sscanf(id, "id-%d", &n)
				if n >= 95 {
					t.Errorf("%s was written after Open and delivered", id)
				}
			}
			// id-0…4 changed after Open: their latest version is past the point, so the
			// snapshot cannot hold them (latest version mode keeps no older versions).
			if len(seen) != 90 {
				t.Errorf("%d changes delivered, want the 90 unchanged since Open", len(seen))
			}
			for _, r := range f.State().Ranges {
				if r.StopAt == "" {
					t.Errorf("range %s has no stop position in the state", r.ID)
				}
			}
		})
	}
}

func TestItemLSNReadsWhatDecodingReads(t *testing.T) {
	decoded := func(item string) (int64, bool) {
		var v struct {
			LSN *json.Number `json:"_lsn"`
		}
		if json.Unmarshal([]byte(item), &v) != nil || v.LSN == nil {
			return 0, false
		}
		n, err := v.LSN.Int64()
		return n, err == nil
	}
	for _, item := range []string{
		`{"id":"1","_lsn":42}`, `{"_lsn":42,"n":{"_lsn":7},"s":"\"_lsn\":9"}`, ` { "_lsn" : 1 } `, `{"_lsn":1,"_lsn":2}`,
		`{"_lsn":1,"_lsn":null}`, `{"_lsn":null}`, `{"_lsn":"12"}`, `{"_lsn":"x"}`, `{"_lsn":true}`, `{"_lsn":1.5}`, `{"_lsn":1e3}`,
		`{"_lsn":99999999999999999999}`, `{"_lsn":-3}`, `{"_LSN":5}`, `{"_l\u0073n":5}`, "{\"_l\u017fn\":5}", `{"id":"x"}`,
		`[]`, `null`, `{"_lsn":5`, `{"_lsn":5}x`, ``,
	} {
		n, ok := itemLSN(json.RawMessage(item))
		wn, wok := decoded(item)
		if n != wn || ok != wok {
			t.Errorf("itemLSN(%s) = %d, %v; decoding the item gives %d, %v", item, n, ok, wn, wok)
		}
	}
}
