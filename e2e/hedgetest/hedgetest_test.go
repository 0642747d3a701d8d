package hedgetest_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cmd"
	"github.com/cosmosctl/cosmosctl/internal/clitest"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

func TestHedgeTestOnTheEmbeddedEmulator(t *testing.T) {
	testkit.Isolate(t)
	plot := filepath.Join(t.TempDir(), "chart.svg")
	r := clitest.Run(t, "", "hedge-test", "--count", "60", "--concurrency", "6", "--items", "5",
		"--strategies", "none,threshold=20ms/10ms,fanout,adaptive", "--scenario", "throttle", "--plot", plot)
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.ErrOut)
	}
	for _, want := range []string{"STRATEGY", "none", "threshold=20ms/10ms", "fanout", "adaptive", "EXTRA REQ", "recommendation:",
		"requests on the wire by region", "SRV P50", "SRV P99", "NET P99"} {
		if !strings.Contains(r.Out, want) {
			t.Fatalf("table lacks %q:\n%s", want, r.Out)
		}
	}
	if !strings.Contains(r.ErrOut, "scenario: throttle") {
		t.Fatalf("stderr %q", r.ErrOut)
	}
	if svg, err := os.ReadFile(plot); err != nil || !strings.Contains(string(svg), "<polyline") {
		t.Fatalf("plot: %v", err)
	}
}

func TestHedgeTestJSONShowsWhatHedgingCosts(t *testing.T) {
	testkit.Isolate(t)
	r := clitest.Run(t, "", "hedge-test", "--count", "40", "--items", "4", "--strategies", "none,fanout", "--scenario", "outage", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.ErrOut)
	}
	var rep hedgeTestReport
	if err := json.Unmarshal([]byte(r.Out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Strategies) != 2 || rep.Scenario != "outage" || rep.Recommendation.Reason == "" {
		t.Fatalf("report %+v", rep)
	}
	none, fanout := rep.Strategies[0], rep.Strategies[1]
	// With the first region down, "none" fails over on every read; fan-out asks every
	// region at once, so it sends about three requests per read.
	if none.Reads != 40 || fanout.ExtraRequestsPct < 150 || fanout.winsPct("East US") != 0 {
		t.Fatalf("none %+v fanout %+v", none, fanout)
	}
	// Fan-out's requests reach every region. The scenario's latency model stands for
	// the network, so the far regions' time is mostly network, and the service's own
	// time (x-ms-request-duration-ms) is small beside it.
	for _, region := range []string{"West US", "North Europe"} {
		s, ok := fanout.region(region)
		if !ok || s.Count == 0 || s.ServerP50Ms == nil || s.ServerP99Ms == nil || s.NetworkP50Ms == nil || s.NetworkP99Ms == nil {
			t.Fatalf("fanout's requests to %s: %+v; want their server and network times", region, s)
		}
		if *s.NetworkP50Ms < 2**s.ServerP50Ms || *s.NetworkP50Ms < 10 {
			t.Errorf("%s: network p50 %vms, server p50 %vms; want the network's latency model in the network's time", region, *s.NetworkP50Ms, *s.ServerP50Ms)
		}
	}
}

func TestHedgeTestBadInput(t *testing.T) {
	testkit.Isolate(t)
	for _, args := range [][]string{
		{"--strategies", "bogus"},
		{"--count", "0"},
		{"--budget", "ten"},
		{"--scenario", "earthquake"},
		{"--plot", "chart.png"},
		{"--target-p99", "-1s"},
	} {
		r := clitest.Run(t, "", append([]string{"hedge-test"}, args...)...)
		if r.Code != cmd.ExitUsage {
			t.Fatalf("%v: exit %d %s", args, r.Code, r.ErrOut)
		}
	}
	srv := testkit.Account(t)
	_ = srv
	if r := clitest.Run(t, "", "hedge-test", "--scenario", "brownout"); r.Code != cmd.ExitUsage || !strings.Contains(r.ErrOut, "embedded emulator only") {
		t.Fatalf("scenario against an account: %+v", r)
	}
}

func TestHedgeTestReplicaMoveComparesReplicaHealth(t *testing.T) {
	testkit.Isolate(t)
	r := clitest.Run(t, "", "hedge-test", "--scenario", "replica-move", "--count", "80", "--concurrency", "4", "--items", "8",
		"--strategies", "none", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.ErrOut)
	}
	var rep hedgeTestReport
	if err := json.Unmarshal([]byte(r.Out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Strategies) != 2 || rep.Strategies[0].Name != "none" || rep.Strategies[1].Name != "none (no replica health)" ||
		!*rep.Strategies[0].ReplicaHealth || *rep.Strategies[1].ReplicaHealth || rep.Recommendation.Strategy != "none" {
		t.Fatalf("each strategy runs with and without replica health; the recommendation is health-aware: %+v %+v", rep.Strategies, rep.Recommendation)
	}
	move := rep.ReplicaMove
	if move == nil || move.Region != "East US" || move.MovedPerRun < 1 || len(move.Runs) != 2 {
		t.Fatalf("replica_move %+v", move)
	}
	on, off := move.Runs[0], move.Runs[1]
	t.Logf("health-aware %+v", on)
	t.Logf("without health %+v", off)
	if !on.ReplicaHealth || on.ReadsInWindow < 50 || on.GoneAnswers < 1 || on.AfterFirst410 != 0 || move.HealthAware.AfterFirst410 != 0 {
		t.Fatalf("with replica health no request goes to a moved replica once it answered 410: %+v", on)
	}
	// Without health a read picks the moved replica of its range about one time in four.
	if off.ReplicaHealth || off.ReadsInWindow < 50 || off.AfterFirst410Pct < 5 || off.AfterFirst410Pct > 50 {
		t.Fatalf("without replica health about a quarter of the reads hit a moved replica: %+v", off)
	}
	for _, run := range move.Runs {
		// The emulator saw every request the client sent to a moved replica.
		if run.MovedReplicaRequests < int64(run.GoneAnswers) || run.GoneAnswers < run.AfterFirst410 || run.P99Ms <= 0 {
			t.Fatalf("run %+v", run)
		}
	}

	r = clitest.Run(t, "", "hedge-test", "--scenario", "replica-move", "--count", "20", "--concurrency", "2", "--items", "4", "--strategies", "none")
	if r.Code != 0 || !strings.Contains(r.Out, "none (no replica health)") || !strings.Contains(r.Out, "REPLICA HEALTH") ||
		!strings.Contains(r.Out, "reads sent to the moved replica after its first 410: health-aware 0 of ") {
		t.Fatalf("exit %d:\n%s%s", r.Code, r.Out, r.ErrOut)
	}
}

func TestHedgeTestWriteRegionDownReadsOnAndShowsWhereWritesGo(t *testing.T) {
	testkit.Isolate(t)
	const count, concurrency = 30, 4
	r := clitest.Run(t, "", "hedge-test", "--scenario", "write-region-down", "--count", "30", "--concurrency", "4", "--items", "4",
		"--strategies", "none,fanout", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.ErrOut)
	}
	if !strings.Contains(r.ErrOut, "scenario: write-region-down") || !strings.Contains(r.ErrOut, "write phase: 30 upserts of cosmosctl-hedge-test-write-0…29") {
		t.Fatalf("stderr %q", r.ErrOut)
	}
	var rep hedgeTestReport
	if err := json.Unmarshal([]byte(r.Out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Scenario != "write-region-down" || len(rep.Strategies) != 2 {
		t.Fatalf("report %+v", rep)
	}
	for _, s := range rep.Strategies {
		if s.Reads != count || s.Timeouts != 0 || s.Failures != 0 || s.winsPct("East US") != 0 {
			t.Fatalf("reads go on from the read regions: %+v", s)
		}
	}
	// Region health moves East US last after its third read failure: only the reads
	// already on their way there pay an extra request (and a probe of the region, should
	// the run last longer than the 5 s before one, on a very slow machine).
	if none := rep.Strategies[0]; none.Requests-none.Reads > 3+concurrency-1+2 {
		t.Fatalf("none sent %d requests for %d reads", none.Requests, none.Reads)
	}
	if len(rep.Writes) != 2 {
		t.Fatalf("writes %+v", rep.Writes)
	}
	single, multi := rep.Writes[0], rep.Writes[1]
	t.Logf("single-write %+v", single)
	t.Logf("multi-write %+v", multi)
	if single.Account != "single-write" || strings.Join(single.WriteRegions, ",") != "East US" ||
		single.Attempted != count || single.Written != 0 || single.Failed != count || len(single.WrittenByRegion) != 0 || len(single.Errors) == 0 {
		t.Fatalf("a single-write account takes no write: %+v", single)
	}
	for _, e := range single.Errors {
		if !strings.Contains(e.Message, "the write region East US did not take the write") || !strings.Contains(e.Message, "reads still work from West US, North Europe") {
			t.Fatalf("unclear message %q", e.Message)
		}
	}
	// A write the emulator's reset cut off after it was sent may have been applied: with
	// write retries off it fails, until region health moves East US last (after its sixth
	// write failure, with at most three more in flight; and a probe or two of the region
	// on a very slow machine).
	if multi.Account != "multi-write" || len(multi.WriteRegions) != 3 || multi.Attempted != count ||
		multi.Written+multi.Failed != count || multi.Failed > 6+concurrency-1+2 || multi.Timeouts != 0 {
		t.Fatalf("a multi-write account takes the writes elsewhere: %+v", multi)
	}
	total := 0
	for region, n := range multi.WrittenByRegion {
		if region == "East US" {
			t.Fatalf("%d writes credited to the region that is down", n)
		}
		total += n
	}
	if total != multi.Written || multi.P99Ms <= 0 || multi.MaxMs < multi.P99Ms {
		t.Fatalf("multi-write %+v", multi)
	}

	// The JSON field names are an API, units in the names.
	var raw struct {
		Writes []map[string]any `json:"writes"`
	}
	if err := json.Unmarshal([]byte(r.Out), &raw); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"account", "write_regions", "attempted", "written", "failed", "timeouts", "written_by_region",
		"p50_ms", "p99_ms", "max_ms", "failed_max_ms", "errors"} {
		if _, ok := raw.Writes[0][key]; !ok {
			t.Fatalf("writes[0] lacks %q: %v", key, raw.Writes[0])
		}
	}
	if e := raw.Writes[0]["errors"].([]any)[0].(map[string]any); e["message"] == nil || e["count"] == nil {
		t.Fatalf("errors[0] %v", e)
	}
}

func TestHedgeTestWriteRegionDownTable(t *testing.T) {
	testkit.Isolate(t)
	r := clitest.Run(t, "", "hedge-test", "--scenario", "write-region-down", "--count", "12", "--concurrency", "3", "--items", "3", "--strategies", "none")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.ErrOut)
	}
	for _, want := range []string{"STRATEGY", "\nwrites while the write region is down:\n", "\n  single-write account: 0 of 12 written; each failed in at most ",
		"the write region East US did not take the write", "\n  multi-write account:  ", " written (West US ", "recommendation:"} {
		if !strings.Contains(r.Out, want) {
			t.Fatalf("output lacks %q:\n%s", want, r.Out)
		}
	}
	if strings.Index(r.Out, "writes while") < strings.Index(r.Out, "STRATEGY") {
		t.Fatalf("the writes follow the table:\n%s", r.Out)
	}
}

func TestHedgeTestHangAnswersEveryRead(t *testing.T) {
	testkit.Isolate(t)
	// The first region never answers: each read there waits out its attempt timeout
	// (capped here, with room for a loaded machine: the other regions take up to 90 ms,
	// but under the race detector on a 2-core machine with other jobs running, reads
	// there were seen to take more than 400 ms) and goes on, until region health moves
	// the region last.
	r := clitest.Run(t, "", "hedge-test", "--scenario", "hang", "--attempt-timeout", "1500ms", "--count", "30", "--concurrency", "4", "--items", "4",
		"--strategies", "none,threshold=50ms/20ms,fanout,adaptive", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.ErrOut)
	}
	var rep hedgeTestReport
	if err := json.Unmarshal([]byte(r.Out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Scenario != "hang" || len(rep.Strategies) != 4 || rep.Writes != nil {
		t.Fatalf("report %+v", rep)
	}
	for _, s := range rep.Strategies {
		t.Logf("%+v", s)
		if s.Reads != 30 || s.Timeouts != 0 || s.Failures != 0 || s.winsPct("East US") != 0 {
			t.Fatalf("every read is answered, by another region: %+v", s)
		}
	}
}

// TestHedgeTestQueryWorkloads: --op query hedges query pages within a partition key,
// --op query-cross whole cross-partition queries (a plan and a page per range each);
// with the first region down, fan-out's extra requests count against the requests the
// workload needs, and every operation is answered elsewhere.
func TestHedgeTestQueryWorkloads(t *testing.T) {
	testkit.Isolate(t)
	for _, tc := range []struct {
		op string
		// perOp is the fewest engine operations one workload operation takes.
		perOp int
	}{
		{"query", 1},
		{"query-cross", 5},
	} {
		t.Run(tc.op, func(t *testing.T) {
			r := clitest.Run(t, "", "hedge-test", "--op", tc.op, "--count", "30", "--concurrency", "4", "--items", "5",
				"--strategies", "none,fanout,adaptive", "--scenario", "outage", "-o", "json")
			if r.Code != 0 {
				t.Fatalf("exit %d: %s", r.Code, r.ErrOut)
			}
			var rep hedgeTestReport
			if err := json.Unmarshal([]byte(r.Out), &rep); err != nil {
				t.Fatal(err)
			}
			if rep.Op != tc.op || len(rep.Strategies) != 3 {
				t.Fatalf("report %+v", rep)
			}
			for _, s := range rep.Strategies {
				if s.Reads != 30 || s.Operations < 30*tc.perOp || s.Failures != 0 || s.Timeouts != 0 || s.winsPct("East US") != 0 {
					t.Fatalf("every %s answered, by another region: %+v", tc.op, s)
				}
			}
			// About +200 % (more where the refused first region's attempt fails over too),
			// counted against the requests the workload needs: against the queries it
			// would be +1,700 %.
			if fanout := rep.Strategies[1]; fanout.ExtraRequestsPct < 150 || fanout.ExtraRequestsPct > 400 {
				t.Fatalf("fan-out asks every region for every request of the workload: %+v", fanout)
			}
		})
	}
	for _, args := range [][]string{{"--op", "scan"}, {"--op", "query", "--scenario", "replica-move"}} {
		if r := clitest.Run(t, "", append([]string{"hedge-test"}, args...)...); r.Code != cmd.ExitUsage || strings.Count(strings.TrimSpace(r.ErrOut), "\n") != 0 {
			t.Fatalf("%v: exit %d %q", args, r.Code, r.ErrOut)
		}
	}
}
