package cmd

import (
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// TestChangesSurvivesASickFirstRegion: the incident path. Whatever is wrong with the
// first region, the change feed is read to its end from the others, every poll bounded
// by the attempt timeout or a hedge, each change once.
func TestChangesSurvivesASickFirstRegion(t *testing.T) {
	items := makeQueryItems(queryTestItems)
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
			srv := queryAccount(t, items)
			// A command before the incident saves the account's topology, as an
			// operator's earlier commands did.
			if r := cosmosctl(t, "", "changes", "--from", "now"); r.code != 0 {
				t.Fatalf("before the fault: %+v", r)
			}
			if _, err := srv.AddFault(tc.rule); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			r := cosmosctl(t, "", append([]string{"changes", "--page-size", "20", "--diagnostics"}, tc.args...)...)
			elapsed := time.Since(start)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.errOut)
			}
			wantOnce(t, changeIDs(t, r.out), itemIDs(items))
			if !strings.Contains(r.errOut, "US won") {
				t.Fatalf("no poll won in any region:\n%s", r.errOut)
			}
			if tc.avoid && strings.Contains(r.errOut, "East US won") {
				t.Fatalf("a poll was answered by the sick region:\n%s", r.errOut)
			}
			// Generous: polls of at most an attempt timeout or a hedge each, in
			// parallel over four ranges, on a loaded machine.
			if elapsed > 30*time.Second {
				t.Fatalf("took %s", elapsed)
			}
		})
	}
}
