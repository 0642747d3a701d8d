package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHedgeTestOnTheEmbeddedEmulator(t *testing.T) {
	isolate(t)
	plot := filepath.Join(t.TempDir(), "chart.svg")
	r := cosmosctl(t, "", "hedge-test", "--count", "60", "--concurrency", "6", "--items", "5",
		"--strategies", "none,threshold=20ms/10ms,fanout,adaptive", "--scenario", "throttle", "--plot", plot)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	for _, want := range []string{"STRATEGY", "none", "threshold=20ms/10ms", "fanout", "adaptive", "EXTRA REQ", "recommendation:"} {
		if !strings.Contains(r.out, want) {
			t.Fatalf("table lacks %q:\n%s", want, r.out)
		}
	}
	if !strings.Contains(r.errOut, "scenario: throttle") {
		t.Fatalf("stderr %q", r.errOut)
	}
	if svg, err := os.ReadFile(plot); err != nil || !strings.Contains(string(svg), "<polyline") {
		t.Fatalf("plot: %v", err)
	}
}

func TestHedgeTestJSONShowsWhatHedgingCosts(t *testing.T) {
	isolate(t)
	r := cosmosctl(t, "", "hedge-test", "--count", "40", "--items", "4", "--strategies", "none,fanout", "--scenario", "outage", "-o", "json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	var rep hedgeTestReport
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Strategies) != 2 || rep.Scenario != "outage" || rep.Recommendation.Reason == "" {
		t.Fatalf("report %+v", rep)
	}
	none, fanout := rep.Strategies[0], rep.Strategies[1]
	// With the first region down, "none" fails over on every read; fan-out asks every
	// region at once, so it sends about three requests per read.
	if none.Reads != 40 || fanout.ExtraRequestsPct < 150 || fanout.WinsPct["East US"] != 0 {
		t.Fatalf("none %+v fanout %+v", none, fanout)
	}
}

func TestHedgeTestBadInput(t *testing.T) {
	isolate(t)
	for _, args := range [][]string{
		{"--strategies", "bogus"},
		{"--count", "0"},
		{"--budget", "ten"},
		{"--scenario", "earthquake"},
		{"--plot", "chart.png"},
		{"--target-p99", "-1s"},
	} {
		r := cosmosctl(t, "", append([]string{"hedge-test"}, args...)...)
		if r.code != ExitUsage {
			t.Fatalf("%v: exit %d %s", args, r.code, r.errOut)
		}
	}
	srv := testAccount(t)
	_ = srv
	if r := cosmosctl(t, "", "hedge-test", "--scenario", "brownout"); r.code != ExitUsage || !strings.Contains(r.errOut, "embedded emulator only") {
		t.Fatalf("scenario against an account: %+v", r)
	}
}

func TestHedgeTestReplicaMoveComparesReplicaHealth(t *testing.T) {
	isolate(t)
	r := cosmosctl(t, "", "hedge-test", "--scenario", "replica-move", "--count", "80", "--concurrency", "4", "--items", "8",
		"--strategies", "none", "-o", "json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	var rep hedgeTestReport
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
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

	r = cosmosctl(t, "", "hedge-test", "--scenario", "replica-move", "--count", "20", "--concurrency", "2", "--items", "4", "--strategies", "none")
	if r.code != 0 || !strings.Contains(r.out, "none (no replica health)") || !strings.Contains(r.out, "REPLICA HEALTH") ||
		!strings.Contains(r.out, "reads sent to the moved replica after its first 410: health-aware 0 of ") {
		t.Fatalf("exit %d:\n%s%s", r.code, r.out, r.errOut)
	}
}
