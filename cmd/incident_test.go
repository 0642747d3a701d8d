package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
	"github.com/cosmosctl/cosmosctl/internal/statefile"
)

// incidentRead is what the incident tests look at in `read -o json`.
type incidentRead struct {
	StatusCode  int `json:"status_code"`
	Diagnostics struct {
		Attempts []struct {
			Region   string  `json:"region"`
			Outcome  string  `json:"outcome"`
			TimedOut bool    `json:"timed_out"`
			Timeout  float64 `json:"timeout_ms"`
		} `json:"attempts"`
		WinningRegion string   `json:"winning_region"`
		Notes         []string `json:"notes"`
	} `json:"diagnostics"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func parseRead(t *testing.T, out string) incidentRead {
	t.Helper()
	var r incidentRead
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("read -o json printed %q: %v", out, err)
	}
	return r
}

// seed creates the item the incident tests read, before any fault.
func seed(t *testing.T) {
	t.Helper()
	if r := cosmosctl(t, `{"id":"o1","pk":"t1"}`, "upsert", "-f", "-"); r.code != 0 {
		t.Fatalf("seeding: %+v", r)
	}
}

// TestReadSurvivesASickFirstRegion: whatever is wrong with the first region, a read with
// nothing configured but a short attempt timeout answers from the next one, in time.
func TestReadSurvivesASickFirstRegion(t *testing.T) {
	for _, tc := range []struct {
		name string
		rule faults.Rule
	}{
		{"hang", faults.Rule{Region: "East US", Operations: []string{faults.GroupReads}, Effect: faults.EffectHang}},
		{"refuse", faults.Rule{Region: "East US", Effect: faults.EffectRefuse}},
		{"503", faults.Rule{Region: "East US", Operations: []string{faults.GroupReads}, Effect: faults.EffectStatus, Status: 503}},
		{"429", faults.Rule{Region: "East US", Operations: []string{faults.GroupReads}, Effect: faults.EffectStatus, Status: 429,
			RetryAfter: faults.Duration(10 * time.Millisecond)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := testAccount(t)
			seed(t)
			if _, err := srv.AddFault(tc.rule); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			r := cosmosctl(t, "", "read", "o1", "--pk", "t1", "--attempt-timeout", "300ms", "-o", "json")
			elapsed := time.Since(start)
			if r.code != 0 {
				t.Fatalf("exit %d: %s %s", r.code, r.out, r.errOut)
			}
			got := parseRead(t, r.out)
			if got.Diagnostics.WinningRegion == "East US" || got.Diagnostics.WinningRegion == "" {
				t.Fatalf("won in %q: %+v", got.Diagnostics.WinningRegion, got.Diagnostics)
			}
			if tc.name == "hang" && (!got.Diagnostics.Attempts[0].TimedOut || got.Diagnostics.Attempts[0].Timeout != 300) {
				t.Fatalf("the hung attempt: %+v", got.Diagnostics.Attempts[0])
			}
			// Generous: 300 ms of attempt timeout (or ~100 ms of throttling) plus a
			// cross-region read, on a loaded machine.
			if elapsed > 20*time.Second {
				t.Fatalf("took %s", elapsed)
			}
		})
	}
}

// ageTopology makes the saved topology of srv old enough that it is not used as it is,
// only as the list of regional endpoints to fall back to.
func ageTopology(t *testing.T, srv *emulator.Server) {
	t.Helper()
	dir, err := statefile.Dir()
	if err != nil {
		t.Fatal(err)
	}
	path := statefile.AccountFile(dir, srv.Endpoint(), "topology")
	err = statefile.Update(path, topologyKind, topologyVersion, srv.Endpoint(), func(cur savedTopology, loaded bool) (savedTopology, error) {
		if !loaded || cur.Account == nil {
			return cur, fmt.Errorf("no saved topology at %s", path)
		}
		cur.FetchedAt = time.Now().Add(-time.Hour)
		return cur, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCommandsWorkWithTheWriteRegionDown: with the write region, and so the global
// endpoint, refusing connections, everything that does not write keeps working, and a
// write says clearly why it cannot.
func TestCommandsWorkWithTheWriteRegionDown(t *testing.T) {
	srv := testAccount(t)
	seed(t) // this command also saves the account topology
	ageTopology(t, srv)
	if _, err := srv.AddFault(faults.Rule{Region: "East US", Effect: faults.EffectRefuse}); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"read", "o1", "--pk", "t1", "--region", "West US"},
		{"read", "o1", "--pk", "t1", "--exclude", "East US"},
		{"read", "o1", "--pk", "t1", "--hedge-threshold", "50ms"},
		{"read", "o1", "--pk", "t1"},
	} {
		ageTopology(t, srv) // each command looks the account up again
		r := cosmosctl(t, "", append(args, "-o", "json", "--no-health-memory")...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s %s", args, r.code, r.out, r.errOut)
		}
		got := parseRead(t, r.out)
		if got.Diagnostics.WinningRegion == "East US" {
			t.Fatalf("%v: won in the down region", args)
		}
		if !strings.Contains(strings.Join(got.Diagnostics.Notes, "\n"), "account lookup: ") {
			t.Fatalf("%v: the diagnostics do not say how the account was found: %v", args, got.Diagnostics.Notes)
		}
	}
	r := cosmosctl(t, "", "regions", "-o", "json")
	if r.code != 0 || !strings.Contains(r.out, `"West US"`) {
		t.Fatalf("regions: exit %d: %s %s", r.code, r.out, r.errOut)
	}
	r = cosmosctl(t, `{"id":"o2","pk":"t1"}`, "create", "-f", "-")
	if r.code != ExitUnavailable || !strings.Contains(r.errOut, "the write region East US did not take the write") || !strings.Contains(r.errOut, "reads still work from West US") {
		t.Fatalf("create: exit %d, stderr %q", r.code, r.errOut)
	}
}

// TestConsecutiveReadProcessesRememberAHungRegion is the runbook loop: `cosmosctl read`
// ten times in a row, each its own process, while the first region hangs. Only the
// first reads pay the attempt timeout; the rest go straight to the healthy region
// (bar a probe request, at most one per period, that checks whether it recovered).
func TestConsecutiveReadProcessesRememberAHungRegion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := cosmosctlBinary(t)
	srv := testAccount(t)
	seed(t)
	state := filepath.Join(t.TempDir(), "state")
	env := append(os.Environ(), "COSMOSCTL_ENDPOINT="+srv.Endpoint(), "COSMOSCTL_KEY="+srv.Key(),
		"COSMOSCTL_DATABASE=app", "COSMOSCTL_CONTAINER=items", "COSMOSCTL_STATE_DIR="+state,
		"COSMOSCTL_CONFIG="+filepath.Join(t.TempDir(), "none.toml"))
	if _, err := srv.AddFault(faults.Rule{Region: "East US", Operations: []string{faults.GroupReads}, Effect: faults.EffectHang}); err != nil {
		t.Fatal(err)
	}
	const n = 10
	var timedOut, straight, probes []int
	start := time.Now()
	for i := 1; i <= n; i++ {
		cmd := exec.Command(bin, "read", "o1", "--pk", "t1", "--attempt-timeout", "500ms", "-o", "json")
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("read %d: %v: %s", i, err, out)
		}
		got := parseRead(t, string(out))
		first := got.Diagnostics.Attempts[0]
		notes := strings.Join(got.Diagnostics.Notes, "\n")
		switch {
		case first.Region == "East US" && first.TimedOut && strings.Contains(notes, "probe"):
			probes = append(probes, i)
		case first.Region == "East US" && first.TimedOut:
			timedOut = append(timedOut, i)
		case first.Region != "East US" && strings.Contains(notes, "East US: "):
			straight = append(straight, i)
		default:
			t.Fatalf("read %d: first attempt %+v, notes %q", i, first, notes)
		}
		if got.Diagnostics.WinningRegion == "East US" {
			t.Fatalf("read %d won in the hung region", i)
		}
	}
	elapsed := time.Since(start)
	// More than 2 read failures make a region unavailable: reads 1–3 pay, read 4 on
	// does not; a probe is allowed once per 5 s (doubling after each failed probe).
	if fmt.Sprint(timedOut) != "[1 2 3]" {
		t.Fatalf("reads that paid the attempt timeout: %v (probes %v, straight %v)", timedOut, probes, straight)
	}
	if maxProbes := int(elapsed/(5*time.Second)) + 1; len(probes) > maxProbes {
		t.Fatalf("%d probes in %s: %v", len(probes), elapsed, probes)
	}
	if len(straight) < n-3-len(probes) {
		t.Fatalf("straight to the healthy region: %v", straight)
	}
}

// TestAdaptiveThresholdsOutliveTheProcess: one-shot reads with adaptive hedging learn
// from the reads before them, each its own invocation; with health memory off they
// start from the fallback every time.
func TestAdaptiveThresholdsOutliveTheProcess(t *testing.T) {
	testAccount(t)
	seed(t)
	if err := os.WriteFile(os.Getenv("COSMOSCTL_CONFIG"), []byte("default_profile = \"p\"\n[profiles.p.hedging]\nmode = \"adaptive\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hedgeConfig := func(extra ...string) string {
		t.Helper()
		r := cosmosctl(t, "", append([]string{"read", "o1", "--pk", "t1", "-o", "json"}, extra...)...)
		if r.code != 0 {
			t.Fatalf("exit %d: %s %s", r.code, r.out, r.errOut)
		}
		var got struct {
			Diagnostics struct {
				HedgeConfig string `json:"hedge_config"`
			} `json:"diagnostics"`
		}
		if err := json.Unmarshal([]byte(r.out), &got); err != nil {
			t.Fatal(err)
		}
		return got.Diagnostics.HedgeConfig
	}
	if got := hedgeConfig(); !strings.Contains(got, "fallback: 0 of 20 read samples") {
		t.Fatalf("first read: %q", got)
	}
	for i := 1; i < 25; i++ {
		hedgeConfig()
	}
	// Each earlier read taught one sample, unless a hedge beat its first attempt (a
	// cancelled attempt's latency is only a lower bound and is not learned): on a loaded
	// machine a few may be, so the count is not pinned, only that it was learned.
	if got := hedgeConfig(); strings.Contains(got, "fallback") || !strings.Contains(got, "read samples") {
		t.Fatalf("the 26th read does not use what the 25 before it learned: %q", got)
	}
	if got := hedgeConfig("--no-health-memory"); !strings.Contains(got, "fallback: 0 of 20") {
		t.Fatalf("--no-health-memory still learned: %q", got)
	}
}
