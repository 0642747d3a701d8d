package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// seedPartitions creates n items in partition "gone" and two in partition "kept".
func seedPartitions(t *testing.T, n int) {
	t.Helper()
	docs := []string{`{"id":"k1","pk":"kept"}`, `{"id":"k2","pk":"kept"}`}
	for i := range n {
		docs = append(docs, fmt.Sprintf(`{"id":"g%d","pk":"gone"}`, i))
	}
	for _, d := range docs {
		if r := cosmosctl(t, d, "upsert", "-f", "-"); r.code != 0 {
			t.Fatalf("seeding %s: %+v", d, r)
		}
	}
}

// countIn is the number of items in partition pk, by the command's own dry run.
func countIn(t *testing.T, pk string) int64 {
	t.Helper()
	var sum partitionDeleteSummary
	r := cosmosctl(t, "", "delete", "--partition-key-value", pk, "--dry-run", "-o", "json")
	if r.code != 0 {
		t.Fatalf("dry run: %+v", r)
	}
	if err := json.Unmarshal([]byte(r.out), &sum); err != nil || sum.Items == nil {
		t.Fatalf("dry run printed %q: %v", r.out, err)
	}
	return *sum.Items
}

func TestDeletePartition(t *testing.T) {
	for _, tc := range []struct {
		name       string
		args       []string
		fault      *faults.Rule
		wantMethod string
		wantDelete int64 // by the query-and-delete; -1 for the service operation
	}{
		{"the service operation by default", nil, nil, "service", -1},
		{"the query-and-delete when asked for", []string{"--mode", "query"}, nil, "query", 5},
		{"the query-and-delete when the service refuses the operation",
			nil, &faults.Rule{Operations: []string{faults.OpDelete}, Count: 1, Effect: faults.EffectStatus, Status: 501}, "query", 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := testAccount(t)
			seedPartitions(t, 5)
			if tc.fault != nil {
				if _, err := srv.AddFault(*tc.fault); err != nil {
					t.Fatal(err)
				}
			}
			r := cosmosctl(t, "", append([]string{"delete", "--partition-key-value", "gone", "--yes", "-o", "json"}, tc.args...)...)
			var sum partitionDeleteSummary
			if err := json.Unmarshal([]byte(r.out), &sum); r.code != ExitOK || err != nil {
				t.Fatalf("exit %d: %s %s", r.code, r.out, r.errOut)
			}
			if sum.Method != tc.wantMethod {
				t.Errorf("method %q, want %q (%+v)", sum.Method, tc.wantMethod, sum)
			}
			if tc.wantDelete >= 0 && (sum.Deleted == nil || *sum.Deleted != tc.wantDelete) {
				t.Errorf("deleted %v, want %d", sum.Deleted, tc.wantDelete)
			}
			if tc.fault != nil && sum.Fallback == "" {
				t.Errorf("a fallback must say why: %+v", sum)
			}
			if r := cosmosctl(t, "", "read", "g0", "--pk", "gone"); r.code != ExitNotFound {
				t.Errorf("read of a deleted item: exit %d", r.code)
			}
			if n := countIn(t, "gone"); n != 0 {
				t.Errorf("%d items left in the partition", n)
			}
			if n := countIn(t, "kept"); n != 2 {
				t.Errorf("the other partition has %d items, want 2", n)
			}
		})
	}
}

func TestDeletePartitionDryRunCountsAndDeletesNothing(t *testing.T) {
	testAccount(t)
	seedPartitions(t, 3)
	r := cosmosctl(t, "", "delete", "--partition-key-value", "gone", "--dry-run")
	if r.code != ExitOK || strings.TrimSpace(r.out) != `3 items in partition ["gone"]; nothing deleted (dry run)` {
		t.Fatalf("dry run: %+v", r)
	}
	if n := countIn(t, "gone"); n != 3 {
		t.Fatalf("after a dry run %d items, want 3", n)
	}
}

func TestDeletePartitionNeedsConfirmation(t *testing.T) {
	testAccount(t)
	seedPartitions(t, 2)
	r := cosmosctl(t, "", "delete", "--partition-key-value", "gone")
	if r.code != ExitUsage || !strings.Contains(r.errOut, "add --yes") || r.out != "" {
		t.Fatalf("without --yes and no terminal: %+v", r)
	}
	if r := cosmosctlTTY(t, "nope\n", "delete", "--partition-key-value", "gone"); r.code != ExitUsage {
		t.Fatalf("a wrong answer on a terminal: %+v", r)
	}
	if n := countIn(t, "gone"); n != 2 {
		t.Fatalf("refused deletes deleted: %d left, want 2", n)
	}
	if r := cosmosctlTTY(t, "gone\n", "delete", "--partition-key-value", "gone"); r.code != ExitOK {
		t.Fatalf("the value typed back on a terminal: %+v", r)
	}
	if n := countIn(t, "gone"); n != 0 {
		t.Fatalf("%d left after a confirmed delete", n)
	}
}

func TestDeletePartitionFlagsAreChecked(t *testing.T) {
	testAccount(t)
	for _, args := range [][]string{
		{"delete", "x", "--partition-key-value", "gone", "--yes"},
		{"delete", "--partition-key-value", "gone", "--pk", "gone", "--yes"},
		{"delete", "--partition-key-value", "gone", "--mode", "fast", "--yes"},
		{"delete", "--partition-key-value", "gone", "--mode", "service", "--state", "f", "--yes"},
		{"delete", "x", "--pk", "gone", "--dry-run"},
	} {
		if r := cosmosctl(t, "", args...); r.code != ExitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, r.code, ExitUsage, r.errOut)
		}
	}
}

func TestDeletePartitionResumesFromItsState(t *testing.T) {
	testAccount(t)
	seedPartitions(t, 5)
	state := filepath.Join(t.TempDir(), "gone.state")
	page, hook := partitionDeletePage, partitionDeleteAfterPage
	t.Cleanup(func() { partitionDeletePage, partitionDeleteAfterPage = page, hook })
	partitionDeletePage = 2
	partitionDeleteAfterPage = func() error { return errors.New("interrupted after the first page") }
	r := cosmosctl(t, "", "delete", "--partition-key-value", "gone", "--mode", "query", "--state", state, "--yes")
	if r.code == ExitOK {
		t.Fatalf("the interrupted run succeeded: %+v", r)
	}
	if n := countIn(t, "gone"); n != 3 {
		t.Fatalf("after one page of 2: %d left, want 3", n)
	}
	partitionDeleteAfterPage = nil
	r = cosmosctl(t, "", "delete", "--partition-key-value", "gone", "--mode", "query", "--state", state, "--yes", "-o", "json")
	var sum partitionDeleteSummary
	if err := json.Unmarshal([]byte(r.out), &sum); r.code != ExitOK || err != nil {
		t.Fatalf("resumed run: %+v", r)
	}
	if !strings.Contains(r.errOut, "resuming from") || sum.Deleted == nil || *sum.Deleted+sum.AlreadyGone != 5 {
		t.Fatalf("the resumed run must count the first run's deletes: %+v %s", sum, r.errOut)
	}
	if n := countIn(t, "gone"); n != 0 {
		t.Fatalf("%d left after the resumed run", n)
	}
	// The state is for this partition only.
	r = cosmosctl(t, "", "delete", "--partition-key-value", "kept", "--mode", "query", "--state", state, "--yes")
	if r.code != ExitUsage {
		t.Fatalf("another partition's state: %+v", r)
	}
}

// TestDeletePartitionIsBoundedWhenTheWriteRegionHangs: the service operation is a
// write; with the write region hung, the command ends within its end-to-end timeout.
func TestDeletePartitionIsBoundedWhenTheWriteRegionHangs(t *testing.T) {
	srv := testAccount(t)
	seedPartitions(t, 2)
	if _, err := srv.AddFault(faults.Rule{Region: "East US", Operations: []string{faults.GroupWrites}, Effect: faults.EffectHang}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	r := cosmosctl(t, "", "delete", "--partition-key-value", "gone", "--yes", "--e2e-timeout", "2s", "-o", "json")
	if elapsed := time.Since(start); elapsed > 30*time.Second {
		t.Fatalf("took %s", elapsed)
	}
	if r.code != ExitTimeout {
		t.Fatalf("exit %d, want %d (timeout): %s %s", r.code, ExitTimeout, r.out, r.errOut)
	}
}

// TestDeletePartitionQueryModeKeepsToItsRUCap: the query-and-delete spends no more than
// --max-ru-per-second. What it spent, less the first second's allowance and one
// request's overshoot, takes at least that many seconds: a lower bound that a loaded
// machine cannot break (it only makes the run slower).
func TestDeletePartitionQueryModeKeepsToItsRUCap(t *testing.T) {
	testAccount(t)
	seedPartitions(t, 8)
	const maxRU = 20.0
	start := time.Now()
	r := cosmosctl(t, "", "delete", "--partition-key-value", "gone", "--mode", "query", "--max-ru-per-second", fmt.Sprint(maxRU), "--yes", "-o", "json")
	took := time.Since(start)
	var sum partitionDeleteSummary
	if err := json.Unmarshal([]byte(r.out), &sum); r.code != ExitOK || err != nil {
		t.Fatalf("exit %d: %s %s", r.code, r.out, r.errOut)
	}
	if sum.Deleted == nil || *sum.Deleted != 8 {
		t.Fatalf("deleted %v, want 8", sum.Deleted)
	}
	perRequest := sum.RequestCharge / 9 // eight deletes and at least one id query
	floor := time.Duration((sum.RequestCharge - maxRU - perRequest) / maxRU * float64(time.Second))
	if floor < 800*time.Millisecond {
		t.Fatalf("the test is too small to show a cap: %.2f RU spent at %g RU/s", sum.RequestCharge, maxRU)
	}
	if took < floor {
		t.Fatalf("%.2f RU spent in %v: faster than %g RU/s allows (at least %v)", sum.RequestCharge, took, maxRU, floor)
	}
	t.Logf("%.2f RU in %v (floor %v)", sum.RequestCharge, took, floor)
}

// TestDeletePartitionRefusesAStateFileItCannotUse: a corrupt or unwritable --state is
// an error before any item is deleted, never a silent start from nothing.
func TestDeletePartitionRefusesAStateFileItCannotUse(t *testing.T) {
	testAccount(t)
	seedPartitions(t, 2)
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.state")
	if err := os.WriteFile(corrupt, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, state, want string
	}{
		{"corrupt", corrupt, "not valid JSON"},
		{"in a missing directory under a file", filepath.Join(corrupt, "x.state"), "cannot be written"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := cosmosctl(t, "", "delete", "--partition-key-value", "gone", "--mode", "query", "--state", tc.state, "--yes")
			if r.code != ExitUsage || !strings.Contains(r.errOut, tc.want) || strings.Count(strings.TrimSpace(r.errOut), "\n") > 1 {
				t.Fatalf("exit %d, stderr %q: want exit %d naming %q", r.code, r.errOut, ExitUsage, tc.want)
			}
			if n := countIn(t, "gone"); n != 2 {
				t.Fatalf("%d items left, want 2: nothing may be deleted", n)
			}
		})
	}
}
