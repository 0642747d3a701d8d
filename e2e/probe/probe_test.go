package probe_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
	"github.com/cosmosctl/cosmosctl/workload"

	"github.com/cosmosctl/cosmosctl/cmd"
	"github.com/cosmosctl/cosmosctl/internal/clitest"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

var probeRegions = []string{"East US", "West US", "North Europe"}

// probeLine is any line of `probe -o json`.
type probeLine struct {
	Type      string    `json:"type"`
	Region    string    `json:"region"`
	ElapsedMs float64   `json:"elapsed_ms"`
	Request   string    `json:"request"`
	Probed    string    `json:"probed"`
	EndedBy   string    `json:"ended_by"`
	Regions   regionMap `json:"regions"`
	Breaches  []struct {
		Region, Rule, Metric, Message string
		ObservedMs                    *float64 `json:"observed_ms"`
		LimitMs                       *float64 `json:"limit_ms"`
	} `json:"breaches"`
	workload.Summary
}

// regionMap is the summary's regions, by region for the tests' convenience: in JSON an
// array of objects, each with its "region" (decoding anything else fails the test).
type regionMap map[string]workload.Summary

func (m *regionMap) UnmarshalJSON(b []byte) error {
	var list []struct {
		Region string `json:"region"`
		workload.Summary
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return err
	}
	*m = regionMap{}
	for _, r := range list {
		if r.Region == "" {
			return fmt.Errorf("a region's record without its region: %s", b)
		}
		(*m)[r.Region] = r.Summary
	}
	return nil
}

// replicaRow is one replica of the summary's replicas.
type replicaRow struct {
	Region       string `json:"region"`
	Range        string `json:"partition_key_range"`
	Address      string `json:"address"`
	Role         string `json:"role"`
	Health       string `json:"health"`
	InReplicaSet bool   `json:"in_replica_set"`
	workload.Summary
}

// replicaMap is the summary's replicas by region: in JSON an array of replicas, each
// with its region.
type replicaMap map[string][]replicaRow

func (m *replicaMap) UnmarshalJSON(b []byte) error {
	var list []replicaRow
	if err := json.Unmarshal(b, &list); err != nil {
		return err
	}
	*m = replicaMap{}
	for _, r := range list {
		(*m)[r.Region] = append((*m)[r.Region], r)
	}
	return nil
}

// serial is one request in flight per region. The emulator's Close waits up to 5s for a
// connection that was opened and never used, which Go's HTTP client leaves behind when
// several requests to one endpoint race for connections; tests that are not about
// concurrency avoid the race, and the wait.
var serial = []string{"--concurrency", "1"}

// runProbe runs `probe ARGS` with one request in flight per region.
func runProbe(t *testing.T, args ...string) clitest.Result {
	t.Helper()
	return clitest.Run(t, "", append(append([]string{"probe"}, serial...), args...)...)
}

// probeJSON runs `probe -o json ARGS`, one request in flight per region, and returns its
// interval lines and its summary line.
func probeJSON(t *testing.T, args ...string) (intervals []probeLine, summary probeLine, r clitest.Result) {
	t.Helper()
	r = runProbe(t, append([]string{"-o", "json"}, args...)...)
	lines := strings.Split(strings.TrimSuffix(r.Out, "\n"), "\n")
	for i, l := range lines {
		var pl probeLine
		if err := json.Unmarshal([]byte(l), &pl); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%q\nstderr %q", i+1, err, l, r.ErrOut)
		}
		switch {
		case pl.Type == "interval" && i < len(lines)-1:
			intervals = append(intervals, pl)
		case pl.Type == "summary" && i == len(lines)-1:
			summary = pl
		default:
			t.Fatalf("line %d of %d has type %q: every line is an interval but the last, the summary", i+1, len(lines), pl.Type)
		}
	}
	return intervals, summary, r
}

func TestProbeTableShowsEveryRegionWithItsCounts(t *testing.T) {
	testkit.Account(t)
	r := clitest.Run(t, "", "probe", "--count", "7", "--cleanup=false") // the defaults: 4 in flight per region
	if r.Code != cmd.ExitOK {
		t.Fatalf("exit %d: %s", r.Code, r.ErrOut)
	}
	// The table is the output's first paragraph: notes may follow it (a loaded
	// machine's slow loopback can earn one).
	table, _, _ := strings.Cut(r.Out, "\n\n")
	lines := strings.Split(strings.TrimSpace(table), "\n")
	// The emulator says its own time for each answer, as the service does: the server
	// and network columns are there.
	if len(lines) != 4 || strings.Join(strings.Fields(lines[0]), " ") != "REGION COUNT ERRORS P50 P90 P99 SRV P50 SRV P99 NET P99 P99.9 MAX RU" {
		t.Fatalf("want a header and one row per region:\n%s", r.Out)
	}
	for i, region := range probeRegions {
		row := lines[i+1]
		if !strings.HasPrefix(row, region) || !strings.Contains(row, "  7   0  ") || !strings.HasSuffix(row, "7.00") {
			t.Errorf("row %q: want %s with 7 requests, 0 errors and 7.00 RU", row, region)
		}
	}
	if !strings.Contains(r.ErrOut, `created the probe item "cosmosctl-probe"`) {
		t.Fatalf("the first probe says it created its item: %q", r.ErrOut)
	}
	if r := runProbe(t, "--count", "1"); r.Code != cmd.ExitOK || r.ErrOut != "" {
		t.Fatalf("a second probe reuses the item and prints nothing on stderr: %+v", r)
	}
}

func TestProbeLatencyOfOneRegionShowsInItsPercentilesOnly(t *testing.T) {
	srv := testkit.Account(t)
	// 200 ms: a healthy region's reads stay well below half of it even on a loaded
	// machine (20 ms did not, once, under -race with a CPU load).
	srv.Faults().SetLatency("West US", "read", faults.Distribution{Kind: faults.KindFixed, Value: faults.Duration(200 * time.Millisecond)})
	_, sum, r := probeJSON(t, "--count", "8")
	if r.Code != cmd.ExitOK {
		t.Fatalf("exit %d: %s", r.Code, r.ErrOut)
	}
	west := sum.Regions["West US"]
	if west.P50Ms == nil || *west.P50Ms < 200 {
		t.Fatalf("West US p50 %vms, want at least its 200ms latency", west.P50Ms)
	}
	for _, region := range []string{"East US", "North Europe"} {
		if p50 := sum.Regions[region].P50Ms; p50 == nil || *p50*2 > *west.P50Ms {
			t.Errorf("%s p50 %sms is not well below West US's %vms: the latency leaked across regions", region, msOf(p50), *west.P50Ms)
		}
	}
}

func TestProbeCountsEach503AsAnErrorOfItsOwn(t *testing.T) {
	srv := testkit.Account(t)
	runProbe(t, "--count", "1", "--cleanup=false") // create the probe item before the fault
	rule, err := srv.AddFault(faults.Rule{Region: "North Europe", Operations: []string{"read"}, Effect: faults.EffectStatus, Status: 503})
	if err != nil {
		t.Fatal(err)
	}
	_, sum, r := probeJSON(t, "--count", "6")
	if r.Code != cmd.ExitOK {
		t.Fatalf("errors are data, not a failure of the probe: exit %d: %s", r.Code, r.ErrOut)
	}
	north := sum.Regions["North Europe"]
	if north.Count != 6 || north.Errors != 6 || north.ErrorsByStatus["503/0"] != 6 || north.ErrorRate != 1 {
		t.Fatalf("North Europe %+v: want 6 requests, every one a 503/0", north)
	}
	for _, region := range []string{"East US", "West US"} {
		if s := sum.Regions[region]; s.Count != 6 || s.Errors != 0 {
			t.Errorf("%s %+v: a fault in North Europe must not fail over into it", region, s)
		}
	}
	if fired := firedCount(srv, rule.ID); fired != 6 {
		t.Fatalf("North Europe saw %d requests for 6 probes: a probe is never retried", fired)
	}
	r = runProbe(t, "--count", "4", "--regions", "north europe")
	if r.Code != cmd.ExitOK || !strings.Contains(r.Out, "4 (503/0×4)") || strings.Contains(r.Out, "East US") {
		t.Fatalf("the table shows the error breakdown of the chosen region only:\n%s%s", r.Out, r.ErrOut)
	}
}

func firedCount(srv *emulator.Server, id string) int {
	for _, r := range srv.Faults().Rules() {
		if r.ID == id {
			return r.Fired
		}
	}
	return -1
}

func TestProbeJSONStreamsIntervalsThatAddUpToTheSummary(t *testing.T) {
	testkit.Account(t)
	// 15 requests per region at 10 per second: one interval line per region at 1s, and
	// one for the last 500ms.
	intervals, sum, r := probeJSON(t, "--duration", "1500ms", "--rate", "10")
	if r.Code != cmd.ExitOK {
		t.Fatalf("exit %d: %s", r.Code, r.ErrOut)
	}
	if sum.Request != "read" || len(sum.Regions) != 3 || sum.Breaches == nil || len(sum.Breaches) != 0 || sum.ElapsedMs < 1400 {
		t.Fatalf("summary %+v", sum)
	}
	perRegion := map[string]int{}
	lines := map[string]int{}
	for _, iv := range intervals {
		perRegion[iv.Region] += iv.Count
		lines[iv.Region]++
		if iv.ElapsedMs <= 0 {
			t.Errorf("interval without elapsed_ms: %+v", iv)
		}
	}
	for _, region := range probeRegions {
		if lines[region] < 2 {
			t.Errorf("%s: %d interval lines, want one per second and the last", region, lines[region])
		}
		if got := sum.Regions[region].Count; got != 15 || perRegion[region] != got {
			t.Errorf("%s: intervals add up to %d, summary says %d, want 15", region, perRegion[region], got)
		}
	}
}

func TestProbeFailOnExitCodes(t *testing.T) {
	srv := testkit.Account(t)
	srv.Faults().SetLatency("West US", "read", faults.Distribution{Kind: faults.KindFixed, Value: faults.Duration(50 * time.Millisecond)})
	cases := []struct {
		name   string
		failOn []string
		code   int
		stderr string
	}{
		{"a p99 above its limit exits 10 and names the region", []string{"p99>1ms"}, cmd.ExitThresholdBreach, "West US: p99 "},
		{"an error rate below its limit passes", []string{"errors>50%"}, cmd.ExitOK, ""},
		{"comma-separated rules, one breached", []string{"errors>50%,p50>40ms"}, cmd.ExitThresholdBreach, "West US: p50 "},
		{"repeated rules, none breached", []string{"p99>10s", "max>10s"}, cmd.ExitOK, ""},
		{"a bad expression is a usage error", []string{"p99<200ms"}, cmd.ExitUsage, `"p99<200ms"`},
		{"an unknown metric is a usage error", []string{"p95>1s"}, cmd.ExitUsage, "valid forms"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"--count", "5"}
			for _, f := range tc.failOn {
				args = append(args, "--fail-on", f)
			}
			r := runProbe(t, args...)
			if r.Code != tc.code || !strings.Contains(r.ErrOut, tc.stderr) {
				t.Fatalf("exit %d (want %d), stderr %q (want %q)", r.Code, tc.code, r.ErrOut, tc.stderr)
			}
			if tc.code == cmd.ExitThresholdBreach && !strings.Contains(r.Out, "West US") {
				t.Fatalf("the table is printed even when a threshold is breached: %q", r.Out)
			}
			if tc.code == cmd.ExitUsage && r.Out != "" {
				t.Fatalf("a usage error probes nothing: %q", r.Out)
			}
		})
	}
	t.Run("breaches are in the JSON summary", func(t *testing.T) {
		_, sum, r := probeJSON(t, "--count", "5", "--fail-on", "p99>40ms")
		if r.Code != cmd.ExitThresholdBreach {
			t.Fatalf("exit %d: %s", r.Code, r.ErrOut)
		}
		var west bool
		for _, b := range sum.Breaches {
			if b.Region == "West US" && b.Rule == "p99>40ms" && b.Metric == "p99" && *b.ObservedMs >= 50 && *b.LimitMs == 40 && strings.HasPrefix(b.Message, "West US: p99 ") {
				west = true
			}
		}
		if !west {
			t.Fatalf("breaches %+v lack West US's p99", sum.Breaches)
		}
	})
}

func TestProbeAccountOnlySendsGetToEachRegion(t *testing.T) {
	srv := testkit.Account(t)
	// West US: the global endpoint, which the account is read from, is East US's.
	srv.AddFault(faults.Rule{Region: "West US", Operations: []string{"account"}, Effect: faults.EffectStatus, Status: 503})
	_, sum, r := probeJSON(t, "--account-only", "--count", "5", "--database", "", "--container", "")
	if r.Code != cmd.ExitOK || sum.Request != "account" {
		t.Fatalf("exit %d, request %q: %s", r.Code, sum.Request, r.ErrOut)
	}
	if s := sum.Regions["West US"]; s.Count != 5 || s.ErrorsByStatus["503/0"] != 5 {
		t.Fatalf("West US %+v: want 5 requests, each a 503", s)
	}
	for _, region := range []string{"East US", "North Europe"} {
		if s := sum.Regions[region]; s.Count != 5 || s.Errors != 0 || s.RequestCharge != 0 {
			t.Errorf("%s %+v: want 5 free requests without errors", region, s)
		}
	}
	if strings.Contains(r.ErrOut, "probe item") {
		t.Fatalf("--account-only creates no item: %q", r.ErrOut)
	}
}

func TestProbeOfAMissingItemCountsNotFoundErrors(t *testing.T) {
	testkit.Account(t)
	_, sum, r := probeJSON(t, "--id", "nope", "--pk", "p", "--count", "3")
	if r.Code != cmd.ExitOK {
		t.Fatalf("exit %d: %s", r.Code, r.ErrOut)
	}
	for _, region := range probeRegions {
		if s := sum.Regions[region]; s.Count != 3 || s.ErrorsByStatus["404/0"] != 3 {
			t.Errorf("%s %+v: want 3 requests, each a 404/0", region, s)
		}
	}
	if strings.Contains(r.ErrOut, "probe item") {
		t.Fatalf("--id and --pk write nothing: %q", r.ErrOut)
	}
}

func TestProbeCreatesItsItemUnderAHierarchicalKey(t *testing.T) {
	testkit.Account(t, func(c *emulator.Config) {
		c.Databases = []emulator.DatabaseConfig{{ID: "app", Containers: []emulator.ContainerConfig{{ID: "items", PartitionKey: []string{"/tenant", "/meta/user"}}}}}
	})
	_, sum, r := probeJSON(t, "--count", "2", "--cleanup=false")
	if r.Code != cmd.ExitOK || sum.Regions["East US"].Errors != 0 || sum.Regions["East US"].Count != 2 {
		t.Fatalf("exit %d, %+v: %s", r.Code, sum.Regions, r.ErrOut)
	}
	got := clitest.Run(t, "", "read", "cosmosctl-probe", "--pk", `["cosmosctl-probe","cosmosctl-probe"]`)
	if got.Code != cmd.ExitOK || !strings.Contains(got.Out, `"meta":{"user":"cosmosctl-probe"}`) {
		t.Fatalf("the probe item: %+v", got)
	}
}

func TestProbeUsageErrors(t *testing.T) {
	testkit.Account(t)
	cases := []struct {
		name string
		args []string
		msg  string
	}{
		{"an unknown region lists the account's", []string{"--regions", "Moon Base"}, "East US, West US, North Europe"},
		{"an unknown --region", []string{"--region", "Moon Base"}, "Moon Base"},
		{"--regions and --region", []string{"--regions", "East US", "--region", "West US"}, "not both"},
		{"every region excluded", []string{"--exclude", "East US,West US,North Europe"}, "no region left"},
		{"--id without --pk", []string{"--id", "x"}, "--id and --pk"},
		{"--account-only with an item", []string{"--account-only", "--id", "x", "--pk", "p"}, "--account-only"},
		{"a negative count", []string{"--count", "-1"}, "count must not be negative"},
		{"no workers", []string{"--concurrency", "0"}, "concurrency must be at least 1"},
		{"a negative rate", []string{"--rate", "-2"}, "rate must not be negative"},
		{"neither count nor duration", []string{"--count", "0"}, "give a count or a duration"},
		{"a bad threshold", []string{"--fail-on", "errors>3"}, "percentage"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runProbe(t, tc.args...)
			if r.Code != cmd.ExitUsage || !strings.Contains(r.ErrOut, tc.msg) {
				t.Fatalf("exit %d, stderr %q; want %d mentioning %q", r.Code, r.ErrOut, cmd.ExitUsage, tc.msg)
			}
			if lines := strings.Count(strings.TrimSpace(r.ErrOut), "\n"); lines != 0 {
				t.Fatalf("a usage error is one line: %q", r.ErrOut)
			}
		})
	}
}

func TestProbeRegionsAreChosenCaseAndSpaceInsensitively(t *testing.T) {
	testkit.Account(t)
	_, sum, r := probeJSON(t, "--count", "1", "--regions", "northeurope, WEST US", "--regions", "west us")
	if r.Code != cmd.ExitOK || len(sum.Regions) != 2 || sum.Regions["North Europe"].Count != 1 || sum.Regions["West US"].Count != 1 {
		t.Fatalf("exit %d, regions %+v: %s", r.Code, sum.Regions, r.ErrOut)
	}
	_, sum, _ = probeJSON(t, "--count", "1", "--exclude", "east us")
	if _, ok := sum.Regions["East US"]; ok || len(sum.Regions) != 2 {
		t.Fatalf("--exclude on the command line leaves a region out: %+v", sum.Regions)
	}
	t.Setenv("COSMOSCTL_EXCLUDE_REGIONS", "East US")
	if _, sum, _ = probeJSON(t, "--count", "1"); len(sum.Regions) != 3 {
		t.Fatalf("configured exclusions do not apply to a probe: %+v", sum.Regions)
	}
}

func TestProbeWatch(t *testing.T) {
	testkit.Account(t)
	args := append([]string{"probe", "--watch", "--duration", "1500ms", "--rate", "4"}, serial...)
	t.Run("plain lines when stdout is not a terminal", func(t *testing.T) {
		r := clitest.Run(t, "", args...)
		if r.Code != cmd.ExitOK || strings.Contains(r.Out, "\x1b[") {
			t.Fatalf("exit %d, escapes in %q", r.Code, r.Out)
		}
		if !strings.Contains(r.Out, "probing 3 regions: ") || strings.Count(r.Out, "last 10s:") != 1 || strings.Count(r.Out, "REGION") != 3 {
			t.Fatalf("want a status line, the table and the last 10s each second, then the final table:\n%s", r.Out)
		}
	})
	t.Run("redrawn in place on a terminal", func(t *testing.T) {
		io, out, errOut := clitest.IO()
		io.OutTTY = true
		if code := cmd.Run(context.Background(), io, append(args, "--no-color")); code != cmd.ExitOK {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
		// One frame at 1s (a status line, the header and three regions, a blank line,
		// "last 10s:", its header and three regions), then the cursor goes back up over
		// it and the final table replaces it.
		got := out.String()
		i := strings.Index(got, "\x1b[11A\x1b[J")
		if i < 0 || !strings.Contains(got[:i], "probing 3 regions") || !strings.Contains(got[:i], "last 10s:") ||
			strings.Contains(got[i:], "probing") || strings.Contains(got[i:], "last 10s") || !strings.Contains(got[i:], "North Europe") {
			t.Fatalf("live table not redrawn in place: %q", got)
		}
	})
}

func TestExitCodesHelpListsThresholdBreach(t *testing.T) {
	r := clitest.Run(t, "", "help", "exit-codes")
	if !strings.Contains(r.Out, "10  a --fail-on threshold was breached") {
		t.Fatalf("exit code 10 missing from the help:\n%s", r.Out)
	}
}

// probeReplicasLine is the summary line of `probe --replicas -o json`, with its replicas.
type probeReplicasLine struct {
	Regions  regionMap                                   `json:"regions"`
	Replicas replicaMap                                  `json:"replicas"`
	Breaches []struct{ Region, Replica, Message string } `json:"breaches"`
}

func probeReplicas(t *testing.T, args ...string) (probeReplicasLine, clitest.Result) {
	t.Helper()
	_, _, r := probeJSON(t, append([]string{"--replicas"}, args...)...)
	lines := strings.Split(strings.TrimSuffix(r.Out, "\n"), "\n")
	var sum probeReplicasLine
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil {
		t.Fatal(err)
	}
	return sum, r
}

func TestProbeReplicasListsEveryReplicaOfTheItemsRange(t *testing.T) {
	testkit.Account(t)
	sum, r := probeReplicas(t, "--count", "8")
	if r.Code != cmd.ExitOK {
		t.Fatalf("exit %d: %s", r.Code, r.ErrOut)
	}
	for _, region := range probeRegions {
		reps := sum.Replicas[region]
		if len(reps) != emulator.DefaultReplicas || reps[0].Role != "primary" {
			t.Fatalf("%s: want %d replicas, the primary first: %+v", region, emulator.DefaultReplicas, reps)
		}
		for i, rep := range reps {
			if (rep.Role == "primary") != (i == 0) || rep.Count != 2 || rep.Errors != 0 || rep.Health != "connected" || !rep.InReplicaSet ||
				rep.Range != reps[0].Range || !strings.Contains(rep.Address, "/partitions/"+rep.Range+"/replicas/") {
				t.Errorf("%s replica %d: %+v; want one primary and every replica read twice, connected", region, i, rep)
			}
		}
		if s := sum.Regions[region]; s.Count != 8 {
			t.Errorf("%s: the region row counts every replica's requests: %+v", region, s)
		}
	}

	r = runProbe(t, "--replicas", "--count", "4", "--region", "West US")
	// Notes may follow the tables (a loaded machine's slow loopback can earn one).
	tables, _, _ := strings.Cut(r.Out, "\n\nnote: ")
	lines := strings.Split(strings.TrimSpace(tables), "\n")
	if r.Code != cmd.ExitOK || len(lines) != 2+1+1+4 ||
		strings.Join(strings.Fields(lines[3]), " ") != "REGION RANGE REPLICA ROLE HEALTH COUNT ERRORS P50 P90 P99 SRV P50 SRV P99 NET P99 P99.9 MAX RU" {
		t.Fatalf("want the region table, a blank line and the replica table:\n%s%s", r.Out, r.ErrOut)
	}
	for _, row := range lines[4:] {
		if !strings.HasPrefix(row, "West US") || !strings.Contains(row, "connected") {
			t.Errorf("row %q", row)
		}
	}
}

func TestProbeReplicasShowsAMovedReplicaAsUnhealthy(t *testing.T) {
	srv := testkit.Account(t)
	before, r := probeReplicas(t, "--count", "4", "--region", "East US")
	if r.Code != cmd.ExitOK {
		t.Fatalf("exit %d: %s", r.Code, r.ErrOut)
	}
	move, err := srv.MoveReplica(emulator.ReplicaMove{Region: "East US", Database: "app", Container: "items",
		Range: before.Replicas["East US"][0].Range, Replica: 2, Effect: emulator.MoveGone})
	if err != nil {
		t.Fatal(err)
	}
	sum, r := probeReplicas(t, "--count", "8", "--region", "East US", "--fail-on", "errors>1%")
	if r.Code != cmd.ExitThresholdBreach {
		t.Fatalf("a replica that answers 410 breaches errors>1%%: exit %d: %s", r.Code, r.ErrOut)
	}
	moved := 0
	for _, rep := range sum.Replicas["East US"] {
		if rep.Address == move.OldAddress {
			moved++
			if rep.Count != 2 || rep.ErrorsByStatus["410/0"] != 2 || rep.Health != "unhealthy" || rep.Role != "secondary" {
				t.Errorf("the moved replica %+v: want 2 requests, each a 410/0, and unhealthy", rep)
			}
			continue
		}
		if rep.Count != 2 || rep.Errors != 0 || rep.Health != "connected" {
			t.Errorf("replica %+v: the others serve", rep)
		}
	}
	if moved != 1 {
		t.Fatalf("the moved replica %s is not listed: %+v", move.OldAddress, sum.Replicas)
	}
	var replicaBreach bool
	for _, b := range sum.Breaches {
		if b.Replica == move.OldAddress && b.Region == "East US" {
			replicaBreach = true
		}
	}
	if !replicaBreach || !strings.Contains(r.ErrOut, "East US replica "+move.OldAddress+": errors 100% > 1% (2 of 2 requests)") ||
		!strings.Contains(r.ErrOut, "East US: errors 25% > 1%") {
		t.Fatalf("breaches %+v, stderr %q: --fail-on applies to the region and to each replica", sum.Breaches, r.ErrOut)
	}

	table := runProbe(t, "--replicas", "--count", "8", "--region", "East US")
	for _, row := range strings.Split(table.Out, "\n") {
		if strings.Contains(row, move.OldAddress) && (!strings.Contains(row, " unhealthy ") || !strings.Contains(row, "2 (410/0×2)")) {
			t.Fatalf("the table shows the moved replica unhealthy with its 410s: %q", row)
		}
	}
}

func TestProbeReplicasWithAccountOnlyIsAUsageError(t *testing.T) {
	testkit.Account(t)
	r := runProbe(t, "--replicas", "--account-only")
	if r.Code != cmd.ExitUsage || !strings.Contains(r.ErrOut, "--account-only") || !strings.Contains(r.ErrOut, "--replicas") || r.Out != "" {
		t.Fatalf("exit %d, stderr %q", r.Code, r.ErrOut)
	}
}

// msOf prints a latency that may be null.
func msOf(p *float64) string {
	if p == nil {
		return "null "
	}
	return strconv.FormatFloat(*p, 'f', 3, 64)
}
