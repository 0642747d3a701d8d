package incident_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
	"github.com/cosmosctl/cosmosctl/health"
	"github.com/cosmosctl/cosmosctl/internal/statefile"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// rememberUnavailable saves, as an earlier command would have, that region became
// unavailable for reads (three timeouts) ago before now.
func rememberUnavailable(t *testing.T, srv *emulator.Server, region string, ago time.Duration) {
	t.Helper()
	hs, err := health.New(health.Config{}, clock.NewFake(time.Now().Add(-ago)))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		hs.Failure(region, "", health.Read, health.Timeout)
	}
	dir, err := statefile.Dir()
	if err != nil {
		t.Fatal(err)
	}
	path := statefile.AccountFile(dir, srv.Endpoint(), "health")
	if err := statefile.Update(path, health.StateKind, health.StateVersion, srv.Endpoint(), func(health.State, bool) (health.State, error) {
		return hs.Snapshot(), nil
	}); err != nil {
		t.Fatal(err)
	}
}

type readNotes struct {
	Diagnostics struct {
		Attempts []struct {
			Region string `json:"region"`
		} `json:"attempts"`
		WinningRegion string   `json:"winning_region"`
		Notes         []string `json:"notes"`
	} `json:"diagnostics"`
}

// TestReCheckingAnUnavailableRegionNeverDelaysACommand: East US hangs and an earlier
// command marked it unavailable; its period is over, so the next command re-checks it.
// That re-check goes beside the read, which West US answers at once: the command does
// not pay East US's 6s attempt timeout (it used to, about 7s in all). The probe it could
// not answer while the command ran counts as failed: the next command does not re-check.
func TestReCheckingAnUnavailableRegionNeverDelaysACommand(t *testing.T) {
	srv := testkit.Account(t)
	bin := testkit.Binary(t)
	if code, _, errOut := testkit.RunBinary(t, bin, os.Environ(), `{"id":"o1","pk":"t1"}`, "upsert", "-f", "-"); code != 0 {
		t.Fatalf("seeding: exit %d: %s", code, errOut)
	}
	if _, err := srv.AddFault(faults.Rule{Region: "East US", Operations: []string{faults.GroupReads}, Effect: faults.EffectHang}); err != nil {
		t.Fatal(err)
	}
	rememberUnavailable(t, srv, "East US", 10*time.Second) // unavailable until 5s ago

	read := func() (readNotes, time.Duration) {
		t.Helper()
		start := time.Now()
		code, out, errOut := testkit.RunBinary(t, bin, os.Environ(), "", "read", "o1", "--pk", "t1", "-o", "json")
		took := time.Since(start)
		if code != 0 {
			t.Fatalf("exit %d: %s%s", code, out, errOut)
		}
		var r readNotes
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("read -o json printed %q: %v", out, err)
		}
		return r, took
	}

	r, took := read()
	notes := strings.Join(r.Diagnostics.Notes, "\n")
	if r.Diagnostics.WinningRegion != "West US" || r.Diagnostics.Attempts[0].Region != "West US" || !strings.Contains(notes, "sent beside this operation") {
		t.Fatalf("diagnostics %+v: want West US asked first and East US probed beside the read", r.Diagnostics)
	}
	// 6s would be East US's attempt timeout; a loaded machine gets a generous margin.
	if took > 3*time.Second {
		t.Fatalf("the read took %s: it waited for the re-check", took)
	}

	r, _ = read()
	notes = strings.Join(r.Diagnostics.Notes, "\n")
	if r.Diagnostics.Attempts[0].Region != "West US" || strings.Contains(notes, "probed now") || !strings.Contains(notes, "1 failed probe") {
		t.Fatalf("the next read re-checked East US again: %q", notes)
	}
}
