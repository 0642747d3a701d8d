package cmd

import (
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// The items probe and hedge-test write into a container that may be production's: named
// for what wrote them, with a ttl, and deleted at the end unless --cleanup=false.

func TestProbeDeletesTheItemItCreated(t *testing.T) {
	testAccount(t)
	r := runProbe(t, "--count", "2")
	if r.code != ExitOK || !strings.Contains(r.errOut, `created the probe item "cosmosctl-probe"`) || !strings.Contains(r.errOut, "deleted when the probe ends") {
		t.Fatalf("exit %d, stderr %q", r.code, r.errOut)
	}
	if n := strings.Count(r.errOut, "\n"); n != 1 {
		t.Fatalf("a successful cleanup says nothing more: stderr %q", r.errOut)
	}
	if got := cosmosctl(t, "", "read", "cosmosctl-probe", "--pk", "cosmosctl-probe"); got.code != ExitNotFound {
		t.Fatalf("the probe item outlived the probe: %+v", got)
	}
}

func TestProbeCleanupFalseKeepsItsItemWithATTL(t *testing.T) {
	testAccount(t)
	if r := runProbe(t, "--count", "2", "--cleanup=false"); r.code != ExitOK || !strings.Contains(r.errOut, "kept: --cleanup=false") {
		t.Fatalf("exit %d, stderr %q", r.code, r.errOut)
	}
	got := cosmosctl(t, "", "read", "cosmosctl-probe", "--pk", "cosmosctl-probe")
	if got.code != ExitOK || !strings.Contains(got.out, `"ttl":3600`) || !strings.Contains(got.out, `"purpose":"cosmosctl probe: safe to delete"`) {
		t.Fatalf("want the probe item kept, with an hour's ttl: %+v", got)
	}
	// The next probe finds it: it did not create it, so it leaves it.
	if r := runProbe(t, "--count", "1"); r.code != ExitOK || r.errOut != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.errOut)
	}
	if got := cosmosctl(t, "", "read", "cosmosctl-probe", "--pk", "cosmosctl-probe"); got.code != ExitOK {
		t.Fatalf("a probe item that was there before the probe was deleted: %+v", got)
	}
}

func TestProbeNeverDeletesAnItemNamedByID(t *testing.T) {
	testAccount(t)
	if r := cosmosctl(t, `{"id":"order-1","pk":"tenant-7"}`, "create", "-f", "-"); r.code != ExitOK {
		t.Fatalf("create: %+v", r)
	}
	if r := runProbe(t, "--count", "2", "--id", "order-1", "--pk", "tenant-7"); r.code != ExitOK || r.errOut != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.errOut)
	}
	if got := cosmosctl(t, "", "read", "order-1", "--pk", "tenant-7"); got.code != ExitOK {
		t.Fatalf("probe --id deleted the item it read: %+v", got)
	}
}

func TestProbeCleanupOnASickWriteRegionIsOneBoundedNotice(t *testing.T) {
	for _, tc := range []struct {
		name   string
		effect faults.Rule
		why    string
	}{
		{"503", faults.Rule{Effect: faults.EffectStatus, Status: 503}, "503/0"},
		{"hang", faults.Rule{Effect: faults.EffectHang}, "timed out"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := testAccount(t)
			rule := tc.effect
			rule.Region, rule.Operations = "East US", []string{faults.OpDelete}
			if _, err := srv.AddFault(rule); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			r := runProbe(t, "--count", "2", "--e2e-timeout", "500ms")
			if took := time.Since(start); took > 8*time.Second {
				t.Fatalf("the probe took %s: the cleanup waited on the sick write region", took)
			}
			if r.code != ExitOK {
				t.Fatalf("a failed cleanup does not fail the probe: exit %d, stderr %q", r.code, r.errOut)
			}
			lines := strings.Split(strings.TrimSpace(r.errOut), "\n")
			if len(lines) != 2 || !strings.Contains(lines[1], `could not delete the probe item "cosmosctl-probe" from app/items (`+tc.why+`)`) ||
				!strings.Contains(lines[1], "cosmosctl delete cosmosctl-probe --pk") {
				t.Fatalf("want the created notice and one cleanup notice, stderr %q", r.errOut)
			}
		})
	}
}

func TestHedgeTestDeletesItsItems(t *testing.T) {
	testAccount(t)
	r := cosmosctl(t, "", "hedge-test", "--count", "20", "--concurrency", "2", "--items", "3", "--strategies", "none")
	if r.code != ExitOK || strings.Contains(r.errOut, "could not delete") {
		t.Fatalf("exit %d, stderr %q", r.code, r.errOut)
	}
	for _, id := range []string{"cosmosctl-hedge-test-0", "cosmosctl-hedge-test-2"} {
		if got := cosmosctl(t, "", "read", id, "--pk", id); got.code != ExitNotFound {
			t.Fatalf("%s outlived the test: %+v", id, got)
		}
	}
}

func TestHedgeTestCleanupFalseKeepsItsItemsWithATTL(t *testing.T) {
	testAccount(t)
	r := cosmosctl(t, "", "hedge-test", "--count", "20", "--concurrency", "2", "--items", "3", "--strategies", "none", "--cleanup=false")
	if r.code != ExitOK {
		t.Fatalf("exit %d, stderr %q", r.code, r.errOut)
	}
	got := cosmosctl(t, "", "read", "cosmosctl-hedge-test-2", "--pk", "cosmosctl-hedge-test-2")
	if got.code != ExitOK || !strings.Contains(got.out, `"ttl":3600`) || !strings.Contains(got.out, "cosmosctl hedge-test") {
		t.Fatalf("want the item kept, with an hour's ttl: %+v", got)
	}
	if got := cosmosctl(t, "", "read", "hedge-test-2", "--pk", "hedge-test-2"); got.code != ExitNotFound {
		t.Fatalf("items are named cosmosctl-hedge-test-N only: %+v", got)
	}
}

func TestHedgeTestCleanupOnASickWriteRegionIsOneBoundedNotice(t *testing.T) {
	for _, tc := range []struct {
		name   string
		effect faults.Rule
		why    string
	}{
		{"503", faults.Rule{Effect: faults.EffectStatus, Status: 503}, "503/0"},
		{"hang", faults.Rule{Effect: faults.EffectHang}, "timed out"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := testAccount(t)
			rule := tc.effect
			rule.Region, rule.Operations = "East US", []string{faults.OpDelete}
			if _, err := srv.AddFault(rule); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			r := cosmosctl(t, "", "hedge-test", "--count", "20", "--concurrency", "2", "--items", "3", "--strategies", "none", "-o", "json")
			if took := time.Since(start); took > 15*time.Second {
				t.Fatalf("hedge-test took %s: the cleanup waited on the sick write region", took)
			}
			if r.code != ExitOK {
				t.Fatalf("a failed cleanup does not fail the test: exit %d, stderr %q", r.code, r.errOut)
			}
			if n := strings.Count(r.errOut, "could not delete"); n != 1 || !strings.Contains(r.errOut, "could not delete 3 of the 3 hedge-test items cosmosctl-hedge-test-0…2 from app/items ("+tc.why+")") {
				t.Fatalf("want one notice, stderr %q", r.errOut)
			}
			if !strings.HasPrefix(r.out, "{") {
				t.Fatalf("stdout is the report only: %q", r.out)
			}
		})
	}
}
