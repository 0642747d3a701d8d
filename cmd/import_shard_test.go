package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
	"github.com/cosmosctl/cosmosctl/output"
	"github.com/cosmosctl/cosmosctl/shard"
)

func shardReport(t *testing.T, r runResult) output.ImportReport {
	t.Helper()
	var rep output.ImportReport
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil || rep.Event != "report" {
		t.Fatalf("exit %d, stdout %q is not the report (%v); stderr %q", r.code, r.out, err, r.errOut)
	}
	return rep
}

// N processes started with the same file, flags and N, each its own shard and state:
// together they import every line once, with the _trackingId a single process of the
// run would give it, whichever shard was interrupted and resumed on the way.
func TestImportShardsImportEveryLineExactlyOnce(t *testing.T) {
	every := importCheckpointEvery
	importCheckpointEvery = 50 * time.Millisecond
	t.Cleanup(func() { importCheckpointEvery = every })
	counts := []int{1, 3, 4, 7}
	srv := testAccount(t, func(c *emulator.Config) {
		for _, n := range counts {
			c.Databases[0].Containers = append(c.Databases[0].Containers, emulator.ContainerConfig{ID: fmt.Sprintf("n%d", n), PartitionKey: []string{"/pk"}})
		}
	})
	const lines = 300
	input := importFile(t, items(1, lines))
	for _, n := range counts {
		container := fmt.Sprintf("n%d", n)
		dir := t.TempDir()
		runIDs := map[string]bool{}
		var done, passed int64
		for i := range n {
			state := filepath.Join(dir, fmt.Sprintf("shard-%d.state", i))
			args := []string{"import", input, "--container", container, "--shard", fmt.Sprintf("%d/%d", i, n), "--state", state, "-o", "json"}
			switch {
			case n == 4 && i == 2:
				// As a pod of a Kubernetes Indexed Job runs it.
				t.Setenv(shard.IndexEnv, "2")
				args[5] = "auto/4"
			case n == 7 && i == 3:
				interruptShard(t, srv, args, state)
			}
			r := cosmosctl(t, "", args...)
			rep := shardReport(t, r)
			want := int64(lines / n)
			if i < lines%n {
				want++
			}
			if r.code != 0 || !rep.Complete || rep.Created != want || rep.Lines != want || rep.Shard == nil ||
				rep.Shard.Index != i || rep.Shard.Count != n || rep.Shard.Lines+rep.Shard.OtherLines != lines {
				t.Fatalf("%d/%d: exit %d, report %+v %+v, stderr %q", i, n, r.code, rep, rep.Shard, r.errOut)
			}
			if resumed := n == 7 && i == 3; resumed != (rep.Runs == 2) || resumed && rep.ThisRun.Skipped == 0 {
				t.Fatalf("%d/%d: %d runs, %d lines skipped", i, n, rep.Runs, rep.ThisRun.Skipped)
			}
			runIDs[rep.RunID] = true
			done += rep.Lines
			passed += rep.Shard.OtherLines
		}
		if len(runIDs) != 1 || done != lines {
			t.Fatalf("N=%d: run ids %v, %d lines done", n, runIDs, done)
		}
		var runID string
		for id := range runIDs {
			runID = id
		}
		r := cosmosctl(t, "", "query", "SELECT c.n, c._trackingId FROM c", "--all", "--container", container, "-o", "ndjson")
		seen := map[int]bool{}
		for _, l := range strings.Split(strings.TrimSpace(r.out), "\n") {
			var it struct {
				N          int    `json:"n"`
				TrackingID string `json:"_trackingId"`
			}
			if err := json.Unmarshal([]byte(l), &it); err != nil || seen[it.N] || it.TrackingID != fmt.Sprintf("%s:%d", runID, it.N) {
				t.Fatalf("N=%d: item %s (seen before: %v), want _trackingId %s:%d", n, l, seen[it.N], runID, it.N)
			}
			seen[it.N] = true
		}
		if len(seen) != lines {
			t.Fatalf("N=%d: %d items stored, want %d", n, len(seen), lines)
		}
	}
}

// interruptShard runs the shard with writes slowed down (its 43 lines take 2 s one at a
// time) until its first checkpoint counts a created item, then stops it as Ctrl-C does:
// the test then resumes it.
func interruptShard(t *testing.T, srv *emulator.Server, args []string, state string) {
	t.Helper()
	if _, err := srv.AddFault(faults.Rule{Operations: []string{"create"}, Effect: faults.EffectDelay, Delay: faults.Distribution{Kind: faults.KindFixed, Value: faults.Duration(50 * time.Millisecond)}}); err != nil {
		t.Fatal(err)
	}
	defer srv.Faults().Clear()
	io, _, errOut := testIO()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- Run(ctx, io, append(args[:len(args):len(args)], "--concurrency", "1")) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(state); err == nil && strings.Contains(string(b), `"created": `) && !strings.Contains(string(b), `"created": 0,`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint within 30 s: %s", errOut.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != ExitInterrupted {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(errOut.String(), "resume with the same command: cosmosctl import") || !strings.Contains(errOut.String(), "--shard 3/7") {
		t.Fatalf("stderr %q", errOut.String())
	}
}

// A shard's state is its own: another shard's, the whole import's, or another run's is
// refused before anything is sent, in one line, exit 2.
func TestImportRefusesAnotherShardsState(t *testing.T) {
	testAccount(t)
	dir := t.TempDir()
	input := importFile(t, items(1, 20))
	state := filepath.Join(dir, "s1.state")
	if r := cosmosctl(t, "", "import", input, "--shard", "1/4", "--state", state); r.code != 0 {
		t.Fatalf("%+v", r)
	}
	whole := filepath.Join(dir, "whole.state")
	if r := cosmosctl(t, "", "import", input, "--state", whole); r.code != 0 {
		t.Fatalf("%+v", r)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--shard", "2/4", "--state", state}, "it is shard 1/4's, not shard 2/4's (each shard keeps its own --state)"},
		{[]string{"--shard", "1/5", "--state", state}, "it is shard 1/4's, not shard 1/5's"},
		{[]string{"--state", state}, "it is shard 1/4's, not the import of the whole input"},
		{[]string{"--shard", "1/4", "--state", whole}, "it is the import of the whole input, not of shard 1/4"},
		{[]string{"--shard", "1/4", "--state", state, "--run-id", "job-7"}, "not --run-id job-7"},
		{[]string{"--shard", "4/4"}, "the shard index 4 is outside 0..3"},
		{[]string{"--shard", "auto/4"}, "JOB_COMPLETION_INDEX is not set"},
		{[]string{"--max-ru-per-second-per-shard", "100"}, "give --shard i/N too"},
		{[]string{"--shard", "0/2", "--run-id", "a b"}, "--run-id \"a b\": give 1 to 128 characters"},
	} {
		r := cosmosctl(t, "", append([]string{"import", input}, tc.args...)...)
		if r.code != ExitUsage || !strings.Contains(r.errOut, tc.want) || strings.Count(strings.TrimSpace(r.errOut), "\n") > 0 {
			t.Fatalf("%v: exit %d, stderr %q", tc.args, r.code, r.errOut)
		}
	}
	// Resuming with the right shard is accepted, and does nothing more.
	r := cosmosctl(t, "", "import", input, "--shard", "1/4", "--state", state, "-o", "json")
	if rep := shardReport(t, r); r.code != 0 || rep.Created != 5 || rep.ThisRun.Skipped != 5 || rep.Runs != 2 {
		t.Fatalf("exit %d, report %+v", r.code, rep)
	}
}

// --max-ru-per-second is the total of all shards: each keeps to its share, unless
// --max-ru-per-second-per-shard gives its own cap.
func TestShardRULimitDividesTheTotal(t *testing.T) {
	for _, tc := range []struct {
		name            string
		total, perShard float64
		spec            shard.Spec
		want            float64
	}{
		{"no shard: the total", 1000, 0, shard.Spec{}, 1000},
		{"4 shards: a quarter each", 1000, 0, shard.Spec{Index: 3, Count: 4}, 250},
		{"7 shards", 700, 0, shard.Spec{Index: 0, Count: 7}, 100},
		{"a per-shard cap wins", 1000, 400, shard.Spec{Index: 1, Count: 4}, 400},
		{"no cap stays no cap", 0, 0, shard.Spec{Index: 1, Count: 4}, 0},
	} {
		if got := shardRULimit(tc.total, tc.perShard, tc.spec); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The cap an import shard keeps to is the one its limiter gets, and its report says so.
func TestAnImportShardKeepsToItsShareOfTheRU(t *testing.T) {
	testAccount(t)
	input := importFile(t, items(1, 8))
	for _, tc := range []struct {
		args []string
		want float64
	}{
		{[]string{"--shard", "1/4", "--max-ru-per-second", "4000"}, 1000},
		{[]string{"--shard", "1/4", "--max-ru-per-second", "4000", "--max-ru-per-second-per-shard", "1500"}, 1500},
	} {
		var got []float64
		newImportLimiter = func(ru float64) bulkLimiter { got = append(got, ru); return defaultImportLimiter(ru) }
		r := cosmosctl(t, "", append([]string{"import", input, "--mode", "upsert", "-o", "json"}, tc.args...)...)
		newImportLimiter = defaultImportLimiter
		rep := shardReport(t, r)
		if r.code != 0 || len(got) != 1 || got[0] != tc.want || rep.Shard.MaxRUPerSecond == nil || *rep.Shard.MaxRUPerSecond != tc.want {
			t.Fatalf("%v: exit %d, limiter got %v, report %+v", tc.args, r.code, got, rep.Shard)
		}
	}
}

// Several files go in as one, concatenated on standard input: every shard numbers
// their lines alike.
func TestImportShardsOfConcatenatedFilesOnStandardInput(t *testing.T) {
	testAccount(t)
	in := items(1, 11) + items(12, 25)
	var lines int64
	for i := range 3 {
		r := cosmosctl(t, in, "import", "-", "--shard", fmt.Sprintf("%d/3", i), "-o", "json")
		rep := shardReport(t, r)
		if r.code != 0 || rep.Shard.Lines+rep.Shard.OtherLines != 25 {
			t.Fatalf("%d/3: exit %d, report %+v", i, r.code, rep.Shard)
		}
		lines += rep.Created
	}
	if n := countItems(t); lines != 25 || n != "25" {
		t.Fatalf("created %d, %s stored", lines, n)
	}
}
