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
