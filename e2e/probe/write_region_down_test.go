package probe_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator/faults"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// A probe of an account whose write region (East US) is sick, in a fresh container: the
// probe item can be found nowhere and created nowhere. The other regions still answer
// reads, and the probe must say so: it reads the missing item and counts a 404/0 (not
// found) as each region's answer, says on stderr and in its output what it probed, and
// --fail-on judges each region by its reads. These run the real binary, with the
// defaults but for --count (and --fail-on): a hung region's requests wait out their
// attempt timeout (6s), 4 at a time.

// probeBinary runs `cosmosctl probe ARGS` and returns its exit code, output, stderr and
// wall time.
func probeBinary(t *testing.T, args ...string) (code int, out, errOut string, took time.Duration) {
	t.Helper()
	bin := testkit.Binary(t)
	start := time.Now()
	code, out, errOut = testkit.RunBinary(t, bin, os.Environ(), "", append([]string{"probe"}, args...)...)
	took = time.Since(start)
	t.Logf("probe %s: exit %d in %s; stderr:\n%s", strings.Join(args, " "), code, took.Round(time.Millisecond), errOut)
	return code, out, errOut, took
}

// summaryOf is the summary line of a probe's NDJSON, its last.
func summaryOf(t *testing.T, out string) probeLine {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var sum probeLine
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil || sum.Type != "summary" {
		t.Fatalf("the last line is not the summary (%v):\n%s", err, out)
	}
	return sum
}

// wantMissingItemNotice checks stderr's one notice on the set-up.
func wantMissingItemNotice(t *testing.T, errOut string) {
	t.Helper()
	notices := strings.Count(errOut, "cosmosctl: ")
	if notices != 1 || !strings.Contains(errOut, `could not set up the probe item "cosmosctl-probe" in app/items`) ||
		!strings.Contains(errOut, "a 404/0 (not found) counts as the region's answer, not as an error") {
		t.Errorf("want one notice saying the missing item is probed and why, stderr %q", errOut)
	}
}

func TestProbeWithTheWriteRegionDownMeasuresTheOtherRegions(t *testing.T) {
	const count = 10
	cases := []struct {
		name string
		rule faults.Rule
		ops  []string
		// eastDown: East US answers no reads either: its requests are errors, and it
		// alone breaches --fail-on.
		eastDown bool
		status   string // East US's errors when eastDown
	}{
		{"the write region refuses writes", faults.Rule{Effect: faults.EffectRefuse}, []string{faults.GroupWrites}, false, ""},
		{"the write region hangs writes", faults.Rule{Effect: faults.EffectHang}, []string{faults.GroupWrites}, false, ""},
		{"the write region hangs", faults.Rule{Effect: faults.EffectHang}, allButAccount, true, "408/20008"},
		{"the write region refuses connections", faults.Rule{Effect: faults.EffectRefuse}, allButAccount, true, "network"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := testkit.Account(t)
			makeSick(t, srv, sickness{rule: tc.rule}, "East US", tc.ops)
			code, out, errOut, took := probeBinary(t, "--count", "10", "--fail-on", "errors>10%", "-o", "json")
			// A hung region: the set-up's reads and upsert take 2s each at most, its
			// probe requests 6s each, 4 at a time; generous for a loaded machine.
			if took > 60*time.Second {
				t.Fatalf("the probe took %s", took)
			}
			sum := summaryOf(t, out)
			if sum.Probed != "missing_item" {
				t.Errorf("probed %q, want missing_item", sum.Probed)
			}
			for _, region := range []string{"West US", "North Europe"} {
				s := sum.Regions[region]
				if s.Count != count || s.Errors != 0 || s.P50Ms == nil || *s.P50Ms <= 0 {
					t.Errorf("%s %+v: want %d answered reads with their latency", region, s, count)
				}
			}
			east := sum.Regions["East US"]
			var breached []string
			for _, b := range sum.Breaches {
				breached = append(breached, b.Region)
			}
			if !tc.eastDown {
				if east.Count != count || east.Errors != 0 || code != 0 || len(breached) != 0 {
					t.Errorf("East US serves reads: %+v, exit %d, breaches %v; want %d answered reads, exit 0", east, code, breached, count)
				}
			} else {
				if east.Errors != east.Count || east.Count == 0 || east.ErrorsByStatus[tc.status] != east.Count {
					t.Errorf("East US %+v: want every request a %s", east, tc.status)
				}
				if code != 10 || strings.Join(breached, ",") != "East US" {
					t.Errorf("exit %d, breaches %v: want 10, East US's alone", code, breached)
				}
			}
			wantMissingItemNotice(t, errOut)
		})
	}
	t.Run("the table says what was probed", func(t *testing.T) {
		srv := testkit.Account(t)
		makeSick(t, srv, sickness{rule: faults.Rule{Effect: faults.EffectStatus, Status: 503}}, "East US", []string{faults.GroupWrites})
		code, out, errOut, _ := probeBinary(t, "--count", "3")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		table, notes, _ := strings.Cut(strings.TrimSpace(out), "\n\n")
		if rows := strings.Split(table, "\n"); len(rows) != 4 || strings.Contains(table, "404") {
			t.Errorf("a row per region, no errors:\n%s", out)
		}
		if !strings.Contains(notes, `note: probed the missing item "cosmosctl-probe" (it could be neither found nor created): a 404/0 (not found) is a region's answer`) {
			t.Errorf("the note under the table says what was probed:\n%s", out)
		}
		wantMissingItemNotice(t, errOut)
	})
	t.Run("an existing item is read as before", func(t *testing.T) {
		srv := testkit.Account(t)
		if code, _, errOut, _ := probeBinary(t, "--count", "1", "--cleanup=false"); code != 0 {
			t.Fatalf("creating the probe item: %s", errOut)
		}
		makeSick(t, srv, sickness{rule: faults.Rule{Effect: faults.EffectHang}}, "East US", allButAccount)
		code, out, errOut, _ := probeBinary(t, "--count", "4", "--fail-on", "errors>10%", "-o", "json")
		sum := summaryOf(t, out)
		if code != 10 || sum.Probed != "item" || strings.Contains(errOut, "could not set up") {
			t.Errorf("exit %d, probed %q: want the item read, East US breaching", code, sum.Probed)
		}
		for _, region := range []string{"West US", "North Europe"} {
			if s := sum.Regions[region]; s.Count != 4 || s.Errors != 0 {
				t.Errorf("%s %+v: want 4 answered reads", region, s)
			}
		}
	})
}
