package bulk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestShardsTakeEveryLineExactlyOnce(t *testing.T) {
	const lines = 103
	for _, n := range []int{1, 3, 4, 7} {
		c := newFakeContainer()
		runID := ShardRunID(Fingerprint{Size: 1}, Target{Database: "app", Container: "items"}, Create, n)
		var total, passed int64
		for i := range n {
			sh := Shard{Index: i, Count: n}
			st := NewState(Fingerprint{}, Target{}, Create)
			st.RunID, st.Shard = runID, &sh
			rep, err := Import(context.Background(), mustSource(t, ndjson(lines)), st, testOptions(c))
			if err != nil || !rep.Complete {
				t.Fatalf("%d/%d: %v", i, n, err)
			}
			if rep.Lines != sh.LinesOf(lines) || rep.ShardLines != rep.Lines || rep.ShardLines+rep.OtherShards != lines || rep.Shard != sh {
				t.Fatalf("%d/%d: report %+v", i, n, rep)
			}
			total += rep.Created
			passed += rep.OtherShards
		}
		if total != lines || len(c.items) != lines || passed != int64(n-1)*lines {
			t.Fatalf("N=%d: created %d, stored %d, passed over %d", n, total, len(c.items), passed)
		}
		for k := 1; k <= lines; k++ {
			if want := fmt.Sprintf(`"_trackingId":"%s:%d"`, runID, k); !strings.Contains(c.items[idOf(k)], want) {
				t.Fatalf("N=%d: item %d is %s, want %s", n, k, c.items[idOf(k)], want)
			}
		}
	}
}

func TestAnInterruptedShardResumesItsOwnLinesOnly(t *testing.T) {
	c := newFakeContainer()
	sh := Shard{Index: 2, Count: 4}
	st := NewState(Fingerprint{}, Target{}, Create)
	st.Shard = &sh
	var saved *State
	for run := 1; ; run++ {
		ctx, cancel := context.WithCancel(context.Background())
		c.mu.Lock()
		c.cancel, c.cancelAfter, c.stored = cancel, 10, 0
		c.mu.Unlock()
		o := testOptions(c)
		o.Checkpoint = func(s *State) error { saved = s; return nil }
		rep, err := Import(ctx, mustSource(t, ndjson(100)), st, o)
		cancel()
		if err == nil {
			if rep.Created != 25 || rep.Lines != 25 || len(c.items) != 25 || run < 2 {
				t.Fatalf("run %d: report %+v, stored %d", run, rep.Counts, len(c.items))
			}
			break
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("run %d: %v", run, err)
		}
		// The other shards' lines are passed over into the prefix, not kept above it.
		if len(saved.Above) > 3*testOptions(c).Concurrency {
			t.Fatalf("run %d: %d lines above the prefix %d", run, len(saved.Above), saved.Prefix)
		}
		st = saved
	}
	for k := 1; k <= 100; k++ {
		if _, ok := c.items[idOf(k)]; ok != sh.Has(int64(k)) {
			t.Fatalf("line %d stored %v", k, ok)
		}
	}
}

func TestAStateIsResumedOnlyByItsShardAndRun(t *testing.T) {
	two := Shard{Index: 2, Count: 4}
	st := &State{RunID: "r", Shard: &two}
	for _, tc := range []struct {
		shard Shard
		runID string
		want  string
	}{
		{Shard{Index: 1, Count: 4}, "", "it is shard 2/4's, not shard 1/4's (each shard keeps its own --state)"},
		{Shard{Index: 2, Count: 5}, "", "it is shard 2/4's, not shard 2/5's"},
		{Shard{}, "", "it is shard 2/4's, not the import of the whole input"},
		{two, "other", "it is run r, not --run-id other"},
	} {
		err := st.CheckRun("s.state", tc.shard, tc.runID)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("%v %q: %v", tc.shard, tc.runID, err)
		}
	}
	if err := st.CheckRun("s.state", two, "r"); err != nil {
		t.Fatal(err)
	}
	whole := &State{RunID: "r"}
	if err := whole.CheckRun("s.state", two, ""); err == nil || !strings.Contains(err.Error(), "it is the import of the whole input, not of shard 2/4") {
		t.Fatal(err)
	}
}

func TestShardRunIDIsTheSameForEveryShardAndDiffersByCount(t *testing.T) {
	in := Fingerprint{Name: "a.ndjson", Size: 10, PrefixSHA256: "ab", PrefixBytes: 10}
	tg := Target{Endpoint: "https://a", Database: "app", Container: "items"}
	a := ShardRunID(in, tg, Create, 4)
	in.Name, tg.Endpoint = "/mnt/other/a.ndjson", "https://b" // another path, another name for the account
	if b := ShardRunID(in, tg, Create, 4); b != a {
		t.Fatalf("%s != %s", a, b)
	}
	if b := ShardRunID(in, tg, Create, 3); b == a {
		t.Fatal("the count is part of the run id")
	}
}

func TestPassingOverLinesKeepsTheNumbering(t *testing.T) {
	big := strings.Repeat("x", MaxItemBytes+10)
	text := "\xEF\xBB\xBFa\n" + big + "\nb\r\nc"
	for _, pattern := range []string{"ppp", "nnnn", "pnpn", "npnp", "nnpn"} {
		src := mustSource(t, text)
		var got []int64
		for k := 0; ; k++ {
			var err error
			if k < len(pattern) && pattern[k] == 'p' {
				err = src.pass(context.Background())
			} else {
				var l line
				l, err = src.next(context.Background())
				if err == nil {
					got = append(got, l.n)
				}
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if src.n != 4 {
			t.Fatalf("%s: %d lines (%v)", pattern, src.n, got)
		}
	}
}
