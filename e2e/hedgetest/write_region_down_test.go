package hedgetest_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator/faults"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// Against a configured account hedge-test writes the items it reads through the write
// region. When that region is down — when comparing read strategies matters most — it
// reads items already in the container instead, and says so; it fails only when no
// region can read them either. These run the real binary against an emulator account
// whose write region (East US) is sick.

// allButAccount is every operation but the account lookup (GET /), which any command
// needs first: the global endpoint answers as the first region.
var allButAccount = []string{faults.GroupReads, faults.GroupWrites, faults.OpMetadata, faults.OpPKRanges, faults.OpAddresses}

// seedItems writes n items o0…o(n-1) through the healthy account, before any fault.
func seedItems(t *testing.T, bin string, n int) {
	t.Helper()
	var docs strings.Builder
	for i := range n {
		docs.WriteString(`{"id":"o` + string(rune('0'+i)) + `","pk":"t` + string(rune('0'+i)) + `"}` + "\n")
	}
	for _, doc := range strings.Split(strings.TrimSpace(docs.String()), "\n") {
		if code, _, errOut := testkit.RunBinary(t, bin, os.Environ(), doc, "upsert", "-f", "-"); code != 0 {
			t.Fatalf("seeding %s: exit %d: %s", doc, code, errOut)
		}
	}
}

func TestHedgeTestReadsExistingItemsWhenTheWriteRegionIsDown(t *testing.T) {
	cases := []struct {
		name string
		rule faults.Rule
		ops  []string
		// eastDown: East US answers no reads either, and wins none.
		eastDown bool
	}{
		{"the write region refuses writes", faults.Rule{Effect: faults.EffectRefuse}, []string{faults.GroupWrites}, false},
		{"the write region answers writes 503", faults.Rule{Effect: faults.EffectStatus, Status: 503}, []string{faults.GroupWrites}, false},
		{"the write region hangs writes", faults.Rule{Effect: faults.EffectHang}, []string{faults.GroupWrites}, false},
		{"the write region hangs", faults.Rule{Effect: faults.EffectHang}, allButAccount, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := testkit.Account(t)
			bin := testkit.Binary(t)
			seedItems(t, bin, 3)
			r := tc.rule
			r.Region, r.Operations = "East US", tc.ops
			if _, err := srv.AddFault(r); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			// The attempt timeout: a read of the hung region goes on to the next after
			// it (the end-to-end timeout, 5s here, is longer), as in the hang scenario.
			code, out, errOut := testkit.RunBinary(t, bin, os.Environ(), "", "hedge-test", "--count", "30", "--concurrency", "4", "--items", "5",
				"--attempt-timeout", "500ms", "--strategies", "none,fanout", "-o", "json")
			took := time.Since(start)
			t.Logf("hedge-test took %s; stderr:\n%s", took.Round(time.Millisecond), errOut)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if took > 45*time.Second {
				t.Fatalf("hedge-test took %s: it waited on the sick write region", took)
			}
			if !strings.Contains(errOut, "could not write the hedge-test items") || !strings.Contains(errOut, "reading 3 existing items of app/items instead, found by a query in") {
				t.Fatalf("stderr says the test reads existing items: %q", errOut)
			}
			var rep hedgeTestReport
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if len(rep.Strategies) != 2 || rep.Recommendation.Reason == "" {
				t.Fatalf("report %+v", rep)
			}
			for _, s := range rep.Strategies {
				if s.Reads != 30 || s.Timeouts != 0 || s.Failures != 0 {
					t.Errorf("every read of an existing item is answered: %+v", s)
				}
				if tc.eastDown && s.winsPct("East US") != 0 {
					t.Errorf("the hung region answered a read: %+v", s)
				}
			}
		})
	}
	t.Run("no region can read either", func(t *testing.T) {
		srv := testkit.Account(t)
		bin := testkit.Binary(t)
		seedItems(t, bin, 1)
		for _, region := range []string{"East US", "West US", "North Europe"} {
			if _, err := srv.AddFault(faults.Rule{Region: region, Effect: faults.EffectStatus, Status: 503, Operations: allButAccount}); err != nil {
				t.Fatal(err)
			}
		}
		code, _, errOut := testkit.RunBinary(t, bin, os.Environ(), "", "hedge-test", "--count", "10", "--items", "2", "--strategies", "none", "-o", "json")
		if code != 8 || !strings.Contains(errOut, "reading existing items of app/items instead") {
			t.Fatalf("exit %d, want 8 (unavailable), saying reads failed too: %s", code, errOut)
		}
	})
	t.Run("an empty container", func(t *testing.T) {
		srv := testkit.Account(t)
		bin := testkit.Binary(t)
		if _, err := srv.AddFault(faults.Rule{Region: "East US", Effect: faults.EffectStatus, Status: 503, Operations: []string{faults.GroupWrites}}); err != nil {
			t.Fatal(err)
		}
		code, _, errOut := testkit.RunBinary(t, bin, os.Environ(), "", "hedge-test", "--count", "10", "--items", "2", "--strategies", "none", "-o", "json")
		if code != 8 || !strings.Contains(errOut, "has no items to read instead") {
			t.Fatalf("exit %d, want 8 (unavailable), saying there is nothing to read: %s", code, errOut)
		}
	})
}
