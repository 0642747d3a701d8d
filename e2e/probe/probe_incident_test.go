package probe_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"

	"github.com/cosmosctl/cosmosctl/cmd"
	"github.com/cosmosctl/cosmosctl/internal/clitest"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// The probe is the command for "which region is sick right now": these tests make the
// first region sick in each way the emulator can, and check that the probe still runs,
// on time, and shows which region it is. Bounds on time are generous (a loaded machine
// runs these): they tell a probe that ends from one that waits for its timeouts.

// allButAccount is every operation but the account lookup (GET /), which a probe needs
// before anything else: the global endpoint answers as the first region, and how the
// engine finds the account when that region is down is the engine's to test.
var allButAccount = []string{faults.GroupReads, faults.GroupWrites, faults.OpMetadata, faults.OpPKRanges, faults.OpAddresses}

// sickness is one way for a region to be sick, and the error its probe rows count.
type sickness struct {
	name   string
	rule   faults.Rule
	status string // the ErrorsByStatus key, or its prefix ending in "/"
}

var sicknesses = []sickness{
	{"hangs", faults.Rule{Effect: faults.EffectHang}, "408/20008"},
	{"refuses connections", faults.Rule{Effect: faults.EffectRefuse}, "network"},
	{"answers 503", faults.Rule{Effect: faults.EffectStatus, Status: 503}, "503/0"},
	{"throttles", faults.Rule{Effect: faults.EffectStatus, Status: 429, SubStatus: 3200}, "429/3200"},
}

// makeSick adds the sickness's rule to region for the given operations.
func makeSick(t *testing.T, srv *emulator.Server, s sickness, region string, ops []string) {
	t.Helper()
	r := s.rule
	r.Region, r.Operations = region, ops
	if _, err := srv.AddFault(r); err != nil {
		t.Fatal(err)
	}
}

// probeTimed runs `probe -o json ARGS` with a 1 s request timeout (short, so that a hung
// region's requests end soon; long enough that a healthy region's never time out on a
// loaded machine: 300 ms did, once, under -race with a CPU load) and fails the test if
// it takes longer than bound.
func probeTimed(t *testing.T, bound time.Duration, args ...string) (probeLine, clitest.Result) {
	t.Helper()
	start := time.Now()
	_, sum, r := probeJSON(t, append([]string{"--e2e-timeout", "1s"}, args...)...)
	if took := time.Since(start); took > bound {
		t.Fatalf("the probe took %s, more than %s: it waited on the sick region", took.Round(time.Millisecond), bound)
	}
	return sum, r
}

// wantRow checks a region's row: count requests, each an error with status (or none).
func wantRow(t *testing.T, sum probeLine, region string, count int, status string) {
	t.Helper()
	s, ok := sum.Regions[region]
	if !ok {
		t.Fatalf("no row for %s: %+v", region, sum.Regions)
	}
	if status == "" {
		if s.Count != count || s.Errors != 0 {
			t.Errorf("%s: %d requests, errors %v; want %d, all answered", region, s.Count, s.ErrorsByStatus, count)
		}
		return
	}
	n := 0
	for k, v := range s.ErrorsByStatus {
		if k == status || (strings.HasSuffix(status, "/") && strings.HasPrefix(k, status)) {
			n += v
		}
	}
	if s.Count != count || s.Errors != count || n != count {
		t.Errorf("%s: %d requests, errors %v; want %d, each a %s", region, s.Count, s.ErrorsByStatus, count, status)
	}
}

func TestProbeRunsWhileTheFirstRegionIsSick(t *testing.T) {
	for _, s := range sicknesses {
		t.Run("the first region "+s.name+", the probe item exists", func(t *testing.T) {
			srv := testkit.Account(t)
			if r := runProbe(t, "--count", "1", "--cleanup=false"); r.Code != cmd.ExitOK {
				t.Fatalf("creating the probe item: %+v", r)
			}
			makeSick(t, srv, s, "East US", allButAccount)
			sum, r := probeTimed(t, 15*time.Second, "--count", "3")
			if r.Code != cmd.ExitOK {
				t.Fatalf("errors are data: exit %d, stderr %q", r.Code, r.ErrOut)
			}
			wantRow(t, sum, "East US", 3, s.status)
			wantRow(t, sum, "West US", 3, "")
			wantRow(t, sum, "North Europe", 3, "")
			if sum.Probed != "item" {
				t.Errorf("probed %q, want item", sum.Probed)
			}
			if strings.Contains(r.ErrOut, "probe item") {
				t.Errorf("the item was found in a healthy region: no notice, stderr %q", r.ErrOut)
			}
		})
		t.Run("the first region "+s.name+", a fresh container", func(t *testing.T) {
			// The first region is the write region: the item can be neither read there
			// nor created, and is nowhere else. The probe still runs, reads the missing
			// item (the other regions' 404/0 is their answer) and says why.
			srv := testkit.Account(t)
			makeSick(t, srv, s, "East US", allButAccount)
			sum, r := probeTimed(t, 15*time.Second, "--count", "3")
			if r.Code != cmd.ExitOK {
				t.Fatalf("errors are data: exit %d, stderr %q", r.Code, r.ErrOut)
			}
			wantRow(t, sum, "East US", 3, s.status)
			wantRow(t, sum, "West US", 3, "")
			wantRow(t, sum, "North Europe", 3, "")
			if sum.Probed != "missing_item" {
				t.Errorf("probed %q, want missing_item", sum.Probed)
			}
			if n := strings.Count(r.ErrOut, "\n"); n != 1 || !strings.Contains(r.ErrOut, `could not set up the probe item "cosmosctl-probe" in app/items`) ||
				!strings.Contains(r.ErrOut, "probing reads of it anyway") {
				t.Errorf("want one notice saying why the set-up did not complete, stderr %q", r.ErrOut)
			}
		})
	}
	t.Run("the table shows the sick region's errors and the others' answers", func(t *testing.T) {
		srv := testkit.Account(t)
		makeSick(t, srv, sicknesses[0], "East US", allButAccount)
		r := runProbe(t, "--e2e-timeout", "300ms", "--count", "2", "--id", "nope", "--pk", "p")
		if r.Code != cmd.ExitOK {
			t.Fatalf("exit %d: %s", r.Code, r.ErrOut)
		}
		table, notes, _ := strings.Cut(strings.TrimSpace(r.Out), "\n\n")
		lines := strings.Split(table, "\n")
		if len(lines) != 4 || !strings.Contains(notes, "East US: no request got an answer in time") || !strings.Contains(lines[1], "East US") || !strings.Contains(lines[1], "2 (408/20008×2)") ||
			!strings.Contains(lines[2], "2 (404/0×2)") {
			t.Fatalf("table:\n%s", r.Out)
		}
	})
}

func TestProbeCreatesItsItemThroughTheWriteRegionWhenAnotherRegionIsSick(t *testing.T) {
	cases := []struct {
		name    string
		sick    sickness
		region  string
		ops     []string
		healthy []string
	}{
		// The write region takes the upsert; only its reads fail.
		{"the first region's reads hang", sicknesses[0], "East US", []string{faults.OpRead}, []string{"West US", "North Europe"}},
		{"the first region's reads answer 503", sicknesses[2], "East US", []string{faults.OpRead}, []string{"West US", "North Europe"}},
		// A read region that hangs is not waited for: not by the existence read, not by
		// the wait for replication.
		{"a read region hangs", sicknesses[0], "West US", allButAccount, []string{"East US", "North Europe"}},
		{"a read region refuses connections", sicknesses[1], "North Europe", allButAccount, []string{"East US", "West US"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := testkit.Account(t)
			makeSick(t, srv, tc.sick, tc.region, tc.ops)
			sum, r := probeTimed(t, 15*time.Second, "--count", "3")
			if r.Code != cmd.ExitOK {
				t.Fatalf("exit %d: %s", r.Code, r.ErrOut)
			}
			if !strings.Contains(r.ErrOut, `created the probe item "cosmosctl-probe"`) || strings.Contains(r.ErrOut, "could not set up") {
				t.Fatalf("the write region creates the item: stderr %q", r.ErrOut)
			}
			wantRow(t, sum, tc.region, 3, tc.sick.status)
			for _, region := range tc.healthy {
				wantRow(t, sum, region, 3, "")
			}
		})
	}
}

func TestProbeDurationBoundsTheWallClockWhenARegionHangs(t *testing.T) {
	srv := testkit.Account(t)
	if r := runProbe(t, "--count", "1", "--cleanup=false"); r.Code != cmd.ExitOK {
		t.Fatalf("creating the probe item: %+v", r)
	}
	makeSick(t, srv, sicknesses[0], "East US", []string{faults.OpRead})
	// Each request may wait 30s; 20 a second are due for 1s. Before the duration
	// bounded the wall clock this probe ran for 30s at least.
	start := time.Now()
	_, sum, r := probeJSON(t, "--duration", "1s", "--rate", "20", "--e2e-timeout", "30s")
	took := time.Since(start)
	if r.Code != cmd.ExitOK {
		t.Fatalf("exit %d: %s", r.Code, r.ErrOut)
	}
	if took > 8*time.Second || sum.ElapsedMs < 1000 || sum.ElapsedMs > 6000 {
		t.Fatalf("the probe took %s (elapsed_ms %v): want about its 1s and the 1s of grace", took, sum.ElapsedMs)
	}
	// One request in flight per region: East US's hung one is cut after the grace and
	// counted as a timeout; nothing due after the deadline is sent.
	wantRow(t, sum, "East US", 1, "408/20008")
	for _, region := range []string{"West US", "North Europe"} {
		if s := sum.Regions[region]; s.Count < 1 || s.Count > 20 || s.Errors != 0 {
			t.Errorf("%s %+v: want at most the 20 requests due in the second, all answered", region, s)
		}
	}
}

func TestProbeWatchRunsUntilInterrupted(t *testing.T) {
	testkit.Account(t)
	io, out, errOut := clitest.IO()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- cmd.Run(ctx, io, append([]string{"probe", "--watch", "--rate", "10"}, serial...)) }()
	deadline := time.Now().Add(20 * time.Second)
	for strings.Count(out.String(), "last 10s:") < 2 {
		select {
		case code := <-done:
			t.Fatalf("--watch without --count or --duration ended by itself: exit %d, %s", code, errOut.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no two frames within 20s:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	var code int
	select {
	case code = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the probe did not end when interrupted")
	}
	if code != cmd.ExitInterrupted {
		t.Fatalf("exit %d, want the interrupted code %d: %s", code, cmd.ExitInterrupted, errOut.String())
	}
	got := out.String()
	final := got[strings.LastIndex(got, "last 10s:"):]
	final = final[strings.Index(final, "\n\n")+2:]
	if !strings.HasPrefix(final, "REGION") || strings.Count(final, "REGION") != 1 || !strings.Contains(final, "North Europe") {
		t.Fatalf("the final table follows the last frame:\n%s", got)
	}
	if strings.Contains(got, "/100 requests") {
		t.Fatalf("--watch does not count to the default 100:\n%s", got)
	}
}

func TestProbeReplicasWhileTheFirstRegionHangs(t *testing.T) {
	srv := testkit.Account(t)
	if r := runProbe(t, "--count", "1", "--cleanup=false"); r.Code != cmd.ExitOK {
		t.Fatalf("creating the probe item: %+v", r)
	}
	makeSick(t, srv, sicknesses[0], "East US", allButAccount)
	start := time.Now()
	sum, r := probeReplicas(t, "--e2e-timeout", "300ms", "--count", "4")
	if took := time.Since(start); took > 15*time.Second {
		t.Fatalf("the probe took %s: it waited on the sick region", took)
	}
	if r.Code != cmd.ExitOK {
		t.Fatalf("exit %d: %s", r.Code, r.ErrOut)
	}
	if s := sum.Regions["East US"]; s.Count != 4 || s.Errors != 4 {
		t.Errorf("East US %+v: want 4 requests, all failed", s)
	}
	for _, region := range []string{"West US", "North Europe"} {
		if s := sum.Regions[region]; s.Count != 4 || s.Errors != 0 || len(sum.Replicas[region]) != emulator.DefaultReplicas {
			t.Errorf("%s %+v, replicas %+v: want 4 answered reads, one per replica", region, s, sum.Replicas[region])
		}
	}
}

func TestProbeAccountLookupIsBounded(t *testing.T) {
	// The global endpoint answers as the first region: when it hangs, the account
	// lookup either finds another way (the engine's) or fails; it never hangs the probe.
	srv := testkit.Account(t)
	makeSick(t, srv, sicknesses[0], "East US", nil)
	start := time.Now()
	r := runProbe(t, "--e2e-timeout", "300ms", "--count", "1")
	if took := time.Since(start); took > 20*time.Second {
		t.Fatalf("the probe took %s with a hung global endpoint", took)
	}
	if r.Code != cmd.ExitOK && !strings.HasPrefix(r.ErrOut, "Error: ") {
		t.Fatalf("exit %d without saying why: %q", r.Code, r.ErrOut)
	}
}
