package probe_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator/faults"

	"github.com/cosmosctl/cosmosctl/cmd"
	"github.com/cosmosctl/cosmosctl/internal/clitest"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// The items probe and hedge-test write into a container that may be production's: named
// for what wrote them, with a ttl, and deleted at the end unless --cleanup=false.

func TestProbeDeletesTheItemItCreated(t *testing.T) {
	testkit.Account(t)
	r := runProbe(t, "--count", "2")
	if r.Code != cmd.ExitOK || !strings.Contains(r.ErrOut, `created the probe item "cosmosctl-probe"`) || !strings.Contains(r.ErrOut, "deleted when the probe ends") {
		t.Fatalf("exit %d, stderr %q", r.Code, r.ErrOut)
	}
	if n := strings.Count(r.ErrOut, "\n"); n != 1 {
		t.Fatalf("a successful cleanup says nothing more: stderr %q", r.ErrOut)
	}
	if got := clitest.Run(t, "", "read", "cosmosctl-probe", "--pk", "cosmosctl-probe"); got.Code != cmd.ExitNotFound {
		t.Fatalf("the probe item outlived the probe: %+v", got)
	}
}

func TestProbeCleanupFalseKeepsItsItemWithATTL(t *testing.T) {
	testkit.Account(t)
	if r := runProbe(t, "--count", "2", "--cleanup=false"); r.Code != cmd.ExitOK || !strings.Contains(r.ErrOut, "kept: --cleanup=false") {
		t.Fatalf("exit %d, stderr %q", r.Code, r.ErrOut)
	}
	got := clitest.Run(t, "", "read", "cosmosctl-probe", "--pk", "cosmosctl-probe")
	if got.Code != cmd.ExitOK || !strings.Contains(got.Out, `"ttl":3600`) || !strings.Contains(got.Out, `"purpose":"cosmosctl probe: safe to delete"`) {
		t.Fatalf("want the probe item kept, with an hour's ttl: %+v", got)
	}
	// The next probe finds it: it did not create it, so it leaves it.
	if r := runProbe(t, "--count", "1"); r.Code != cmd.ExitOK || r.ErrOut != "" {
		t.Fatalf("exit %d, stderr %q", r.Code, r.ErrOut)
	}
	if got := clitest.Run(t, "", "read", "cosmosctl-probe", "--pk", "cosmosctl-probe"); got.Code != cmd.ExitOK {
		t.Fatalf("a probe item that was there before the probe was deleted: %+v", got)
	}
}

func TestProbeNeverDeletesAnItemNamedByID(t *testing.T) {
	testkit.Account(t)
	if r := clitest.Run(t, `{"id":"order-1","pk":"tenant-7"}`, "create", "-f", "-"); r.Code != cmd.ExitOK {
		t.Fatalf("create: %+v", r)
	}
	if r := runProbe(t, "--count", "2", "--id", "order-1", "--pk", "tenant-7"); r.Code != cmd.ExitOK || r.ErrOut != "" {
		t.Fatalf("exit %d, stderr %q", r.Code, r.ErrOut)
	}
	if got := clitest.Run(t, "", "read", "order-1", "--pk", "tenant-7"); got.Code != cmd.ExitOK {
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
			srv := testkit.Account(t)
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
			if r.Code != cmd.ExitOK {
				t.Fatalf("a failed cleanup does not fail the probe: exit %d, stderr %q", r.Code, r.ErrOut)
			}
			lines := strings.Split(strings.TrimSpace(r.ErrOut), "\n")
			if len(lines) != 2 || !strings.Contains(lines[1], `could not delete the probe item "cosmosctl-probe" from app/items (`+tc.why+`)`) ||
				!strings.Contains(lines[1], "cosmosctl delete cosmosctl-probe --pk") {
				t.Fatalf("want the created notice and one cleanup notice, stderr %q", r.ErrOut)
			}
		})
	}
}

func TestHedgeTestDeletesItsItems(t *testing.T) {
	testkit.Account(t)
	r := clitest.Run(t, "", "hedge-test", "--count", "20", "--concurrency", "2", "--items", "3", "--strategies", "none")
	if r.Code != cmd.ExitOK || strings.Contains(r.ErrOut, "could not delete") {
		t.Fatalf("exit %d, stderr %q", r.Code, r.ErrOut)
	}
	for _, id := range []string{"cosmosctl-hedge-test-0", "cosmosctl-hedge-test-2"} {
		if got := clitest.Run(t, "", "read", id, "--pk", id); got.Code != cmd.ExitNotFound {
			t.Fatalf("%s outlived the test: %+v", id, got)
		}
	}
}

func TestHedgeTestCleanupFalseKeepsItsItemsWithATTL(t *testing.T) {
	testkit.Account(t)
	r := clitest.Run(t, "", "hedge-test", "--count", "20", "--concurrency", "2", "--items", "3", "--strategies", "none", "--cleanup=false")
	if r.Code != cmd.ExitOK {
		t.Fatalf("exit %d, stderr %q", r.Code, r.ErrOut)
	}
	got := clitest.Run(t, "", "read", "cosmosctl-hedge-test-2", "--pk", "cosmosctl-hedge-test-2")
	if got.Code != cmd.ExitOK || !strings.Contains(got.Out, `"ttl":3600`) || !strings.Contains(got.Out, "cosmosctl hedge-test") {
		t.Fatalf("want the item kept, with an hour's ttl: %+v", got)
	}
	if got := clitest.Run(t, "", "read", "hedge-test-2", "--pk", "hedge-test-2"); got.Code != cmd.ExitNotFound {
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
			srv := testkit.Account(t)
			rule := tc.effect
			rule.Region, rule.Operations = "East US", []string{faults.OpDelete}
			if _, err := srv.AddFault(rule); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			r := clitest.Run(t, "", "hedge-test", "--count", "20", "--concurrency", "2", "--items", "3", "--strategies", "none", "-o", "json")
			if took := time.Since(start); took > 15*time.Second {
				t.Fatalf("hedge-test took %s: the cleanup waited on the sick write region", took)
			}
			if r.Code != cmd.ExitOK {
				t.Fatalf("a failed cleanup does not fail the test: exit %d, stderr %q", r.Code, r.ErrOut)
			}
			if n := strings.Count(r.ErrOut, "could not delete"); n != 1 || !strings.Contains(r.ErrOut, "could not delete 3 of the 3 hedge-test items cosmosctl-hedge-test-0…2 from app/items ("+tc.why+")") {
				t.Fatalf("want one notice, stderr %q", r.ErrOut)
			}
			if !strings.HasPrefix(r.Out, "{") {
				t.Fatalf("stdout is the report only: %q", r.Out)
			}
		})
	}
}
