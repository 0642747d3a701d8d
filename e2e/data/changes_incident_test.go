package data_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"

	"github.com/cosmosctl/cosmosctl/internal/clitest"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// TestChangesSurvivesASickFirstRegion: the incident path. Whatever is wrong with the
// first region, the change feed is read to its end from the others, every poll bounded
// by the attempt timeout or a hedge, each change once.
func TestChangesSurvivesASickFirstRegion(t *testing.T) {
	items := testkit.QueryItems(testkit.QueryTestItems)
	hedged := []string{"--hedge-threshold", "50ms", "--attempt-timeout", "500ms"}
	for _, tc := range []struct {
		name string
		rule faults.Rule
		args []string
		// avoid says no poll may be answered by the sick region.
		avoid bool
	}{
		{"hung, hedged", faults.Rule{Region: "East US", Operations: []string{faults.GroupReads}, Effect: faults.EffectHang}, hedged, true},
		{"hung, not hedged: the attempt timeout fails polls over", faults.Rule{Region: "East US", Operations: []string{faults.GroupReads}, Effect: faults.EffectHang},
			[]string{"--attempt-timeout", "300ms"}, true},
		{"refusing connections", faults.Rule{Region: "East US", Effect: faults.EffectRefuse}, hedged, true},
		{"throttling", faults.Rule{Region: "East US", Operations: []string{faults.GroupReads}, Effect: faults.EffectStatus, Status: 429,
			RetryAfter: faults.Duration(20 * time.Millisecond)}, hedged, false},
		{"slow", faults.Rule{Region: "East US", Operations: []string{faults.GroupReads}, Effect: faults.EffectDelay,
			Delay: faults.Distribution{Kind: faults.KindFixed, Value: faults.Duration(2 * time.Second)}}, hedged, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := testkit.QueryAccount(t, items)
			// A command before the incident saves the account's topology, as an
			// operator's earlier commands did.
			if r := clitest.Run(t, "", "changes", "--from", "now"); r.Code != 0 {
				t.Fatalf("before the fault: %+v", r)
			}
			if _, err := srv.AddFault(tc.rule); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			r := clitest.Run(t, "", append([]string{"changes", "--page-size", "20", "--diagnostics"}, tc.args...)...)
			elapsed := time.Since(start)
			if r.Code != 0 {
				t.Fatalf("exit %d: %s", r.Code, r.ErrOut)
			}
			wantOnce(t, changeIDs(t, r.Out), itemIDs(items))
			if !strings.Contains(r.ErrOut, "US won") {
				t.Fatalf("no poll won in any region:\n%s", r.ErrOut)
			}
			if tc.avoid && strings.Contains(r.ErrOut, "East US won") {
				t.Fatalf("a poll was answered by the sick region:\n%s", r.ErrOut)
			}
			// Generous: polls of at most an attempt timeout or a hedge each, in
			// parallel over four ranges, on a loaded machine.
			if elapsed > 30*time.Second {
				t.Fatalf("took %s", elapsed)
			}
		})
	}
}

// TestChangesCatchesUpOnAThrottledContainer: the emulator throttles by provisioned
// throughput (400 RU/s in its one range); catching up costs ten seconds of it. Each page
// (50 items of 40 KB, ≈2,000 RU) is admitted on a full budget and leaves the range ≈4 s
// in debt, so the next poll is throttled however slowly a loaded machine sends it. Polls
// answered 429/3200 wait the service's retry-after and the feed is read to its end.
func TestChangesCatchesUpOnAThrottledContainer(t *testing.T) {
	srv := testkit.Account(t, func(c *emulator.Config) { c.Ranges = 1 })
	pad := strings.Repeat("x", 40<<10)
	var items []testkit.QueryItem
	for i := 0; i < 100; i++ {
		items = append(items, testkit.QueryItem{ID: fmt.Sprintf("t%04d", i), PK: fmt.Sprintf("p%d", i%7), Name: pad})
	}
	upsertRaw(t, srv, items...)
	srv.SetEnforceThroughput(true)
	start := time.Now()
	r := clitest.Run(t, "", "changes", "--page-size", "50")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.ErrOut)
	}
	wantOnce(t, changeIDs(t, r.Out), itemIDs(items))
	if n := srv.State().Throttled; n == 0 {
		t.Fatal("no poll was throttled: the test shows nothing")
	}
	if elapsed := time.Since(start); elapsed > 60*time.Second {
		t.Fatalf("took %s", elapsed)
	}
}
