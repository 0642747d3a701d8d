package cmd

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// TestImportCompletesWithARegionInTrouble: with any one region hung, refusing,
// throttling or slow, an import completes, in bounded time, every item once.
func TestImportCompletesWithARegionInTrouble(t *testing.T) {
	for _, tc := range []struct {
		name string
		rule faults.Rule
	}{
		{"a read region hung", faults.Rule{Region: "West US", Effect: faults.EffectHang}},
		{"a read region refusing", faults.Rule{Region: "West US", Effect: faults.EffectRefuse}},
		{"the write region slow", faults.Rule{Region: "East US", Operations: []string{"create"}, Effect: faults.EffectDelay,
			Delay: faults.Distribution{Kind: faults.KindFixed, Value: faults.Duration(30 * time.Millisecond)}, Probability: 0.5}},
		// A burst of 429s, as a container over its throughput answers: the import
		// waits out each retry-after, and a line the engine gave up on after its 9
		// retries (10 429s) is sent again, not failed: twice here. (429s at random
		// whatever the rate would hold it at its floor: each one says the container is
		// over.) One writer, so that every 429 comes before the first success: with 8,
		// a success could come first under load, and a 429 after it would cut the rate
		// to 0.8 times what a ~100 ms old import measured, ~40 RU/s, and the test to
		// however long the climb back takes (15-25 s with a linear climb): that is
		// internal/rulimit's business, tested there, not import's.
		{"the write region throttling", faults.Rule{Region: "East US", Operations: []string{"create"}, Effect: faults.EffectStatus,
			Status: 429, RetryAfter: faults.Duration(20 * time.Millisecond), Count: 25}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := testAccount(t)
			if _, err := srv.AddFault(tc.rule); err != nil {
				t.Fatal(err)
			}
			input := importFile(t, items(1, 300))
			start := time.Now()
			concurrency := "8"
			if tc.rule.Status == 429 {
				concurrency = "1"
			}
			r := cosmosctl(t, "", "import", input, "--concurrency", concurrency, "-o", "json")
			took := time.Since(start)
			rep := lastReport(t, r.out)
			if r.code != 0 || rep.Created != 300 || !rep.Complete {
				t.Fatalf("exit %d, report %+v: %s", r.code, rep, r.errOut)
			}
			if took > 30*time.Second {
				t.Fatalf("took %s", took)
			}
			if tc.rule.Status == 429 && rep.Throttles != int64(tc.rule.Count) {
				t.Fatalf("the report counts %d 429s, want %d", rep.Throttles, tc.rule.Count)
			}
			srv.Faults().Clear()
			if n := countItems(t); n != "300" {
				t.Fatalf("%s items stored", n)
			}
		})
	}
}

// TestImportStopsWhenTheWriteRegionIsDownAndResumesWhenItIsBack: a write region that
// refuses or hangs stops the import, bounded, with exit 8 and the lines that failed
// not marked done; resuming once it is back stores every item once.
func TestImportStopsWhenTheWriteRegionIsDownAndResumesWhenItIsBack(t *testing.T) {
	shortenRetryWaits(t)
	for _, tc := range []struct {
		name string
		rule faults.Rule
		args []string
		says string // why it stopped
	}{
		{"refusing", faults.Rule{Region: "East US", Effect: faults.EffectRefuse}, nil, "writes in a row failed"},
		// A write that times out with no other write answered meanwhile stops it at once.
		{"hung", faults.Rule{Region: "East US", Operations: []string{"create"}, Effect: faults.EffectHang}, []string{"--e2e-timeout", "250ms"}, "the write region is hung or unreachable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := testAccount(t)
			seed(t) // the account's topology and container are known
			if _, err := srv.AddFault(tc.rule); err != nil {
				t.Fatal(err)
			}
			state := filepath.Join(t.TempDir(), "down.state")
			input := importFile(t, items(1, 100))
			args := []string{"import", input, "--state", state, "--concurrency", "20"}
			start := time.Now()
			r := cosmosctl(t, "", append(args, tc.args...)...)
			took := time.Since(start)
			if r.code != ExitUnavailable || !strings.Contains(r.errOut, tc.says) || !strings.Contains(r.errOut, "resume with the same command") {
				t.Fatalf("exit %d, stderr %q", r.code, r.errOut)
			}
			if took > 30*time.Second {
				t.Fatalf("took %s to stop", took)
			}
			srv.Faults().Clear()
			// The same command, but for the short --e2e-timeout that made the hung
			// writes give up quickly: a region that is back needs none.
			r = cosmosctl(t, "", append(args, "-o", "json")...)
			rep := lastReport(t, r.out)
			if r.code != 0 || rep.Created+rep.AlreadyPresent != 100 || rep.Failed != 0 || rep.Runs != 2 {
				t.Fatalf("exit %d, report %+v: %s", r.code, rep, r.errOut)
			}
			if n := countItems(t); n != "101" { // with the seeded item
				t.Fatalf("%s items stored", n)
			}
		})
	}
}

// shortenRetryWaits makes the waits between the sends of a failed write 5 ms (doubling,
// up to 40 ms) instead of 50 to 1,000 ms: the engine's retries of a write whose answer
// was lost or that never left, and import's retries of a failed line. How many times a
// write is sent, and when a command gives up, stay as they are: that is what a test of
// a region in trouble shows, not how long it sleeps in between.
func shortenRetryWaits(t *testing.T) {
	policy, wait := retryPolicy, importLineRetryWait
	retryPolicy.WriteRetryBaseWait, retryPolicy.WriteRetryMaxWait = 5*time.Millisecond, 40*time.Millisecond
	retryPolicy.SameRegionRetryWait = 5 * time.Millisecond
	importLineRetryWait = 5 * time.Millisecond
	t.Cleanup(func() { retryPolicy, importLineRetryWait = policy, wait })
}
