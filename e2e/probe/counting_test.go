package probe_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cmd"
	"github.com/cosmosctl/cosmosctl/internal/clitest"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// rawLines are the lines of `probe -o json` as generic objects, to see nulls as nulls.
func rawLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		lines = append(lines, m)
	}
	return lines
}

func summaryRegion(t *testing.T, sum map[string]any, region string) map[string]any {
	t.Helper()
	list, ok := sum["regions"].([]any)
	if !ok {
		t.Fatalf("the summary's regions are not an array: %v", sum["regions"])
	}
	for _, r := range list {
		if m := r.(map[string]any); m["region"] == region {
			return m
		}
	}
	t.Fatalf("no %s in the summary's regions: %v", region, list)
	return nil
}

// TestAHungRegionNeverLooksFastestInTheJSONStream: its seconds used to say count 0,
// errors 0, p99 0, the best figures of all; its timed-out requests were network errors.
func TestAHungRegionNeverLooksFastestInTheJSONStream(t *testing.T) {
	srv := testkit.Account(t)
	if r := runProbe(t, "--count", "1", "--cleanup=false"); r.Code != cmd.ExitOK {
		t.Fatalf("creating the probe item: %+v", r)
	}
	makeSick(t, srv, sicknesses[0], "East US", allButAccount) // hangs
	r := runProbe(t, "-o", "json", "--count", "3", "--e2e-timeout", "700ms")
	if r.Code != cmd.ExitOK {
		t.Fatalf("exit %d: %s", r.Code, r.ErrOut)
	}
	lines := rawLines(t, r.Out)
	east := 0
	for _, l := range lines[:len(lines)-1] {
		if l["region"] != "East US" {
			continue
		}
		east++
		ended, _ := l["count"].(float64)
		inFlight, ok := l["in_flight"].(float64)
		if !ok {
			t.Fatalf("an interval line without in_flight: %v", l)
		}
		if ended == 0 && inFlight == 0 {
			t.Errorf("a second of East US with nothing ended and nothing in flight: %v", l)
		}
		if l["p99_ms"] != nil {
			t.Errorf("East US answered nothing, yet has a p99: %v", l)
		}
		if oldest, ok := l["oldest_in_flight_ms"].(float64); inFlight > 0 && (!ok || oldest <= 0) {
			t.Errorf("requests in flight without how long: %v", l)
		}
	}
	if east == 0 {
		t.Fatalf("no interval line of East US:\n%s", r.Out)
	}
	sum := summaryRegion(t, lines[len(lines)-1], "East US")
	byStatus, _ := sum["errors_by_status"].(map[string]any)
	if sum["count"] != 3.0 || sum["timeouts"] != 3.0 || byStatus["408/20008"] != 3.0 || byStatus["network"] != nil {
		t.Fatalf("East US %v: want 3 timeouts, none a network error", sum)
	}
	for _, k := range []string{"p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms"} {
		if v, ok := sum[k]; !ok || v != nil {
			t.Errorf("East US %s = %v, want null: no request got an answer", k, v)
		}
	}
	if west := summaryRegion(t, lines[len(lines)-1], "West US"); west["p99_ms"] == nil || west["not_sent"] != nil {
		t.Errorf("West US %v: a p99, and no not_sent in a closed loop", west)
	}

	table := runProbe(t, "--count", "2", "--e2e-timeout", "300ms")
	if !strings.Contains(table.Out, "note: East US: no request got an answer in time (2 timeouts): no latency figure") {
		t.Fatalf("the table does not say East US has no latency figure:\n%s", table.Out)
	}
}

// TestAnOpenLoopReportsTheRequestsItCouldNotSend: at --rate 20 with one worker, a hung
// region sends one request in the second; the other 19 due were never sent.
func TestAnOpenLoopReportsTheRequestsItCouldNotSend(t *testing.T) {
	srv := testkit.Account(t)
	if r := runProbe(t, "--count", "1", "--cleanup=false"); r.Code != cmd.ExitOK {
		t.Fatalf("creating the probe item: %+v", r)
	}
	makeSick(t, srv, sicknesses[0], "East US", allButAccount)
	r := runProbe(t, "-o", "json", "--duration", "1s", "--rate", "20", "--e2e-timeout", "30s")
	if r.Code != cmd.ExitOK {
		t.Fatalf("exit %d: %s", r.Code, r.ErrOut)
	}
	lines := rawLines(t, r.Out)
	sum := lines[len(lines)-1]
	east := summaryRegion(t, sum, "East US")
	if east["not_sent"] != 19.0 || east["timeouts"] != 1.0 || sum["ended_by"] != "duration" || sum["time_limit_ms"] != 1000.0 {
		t.Fatalf("summary %v, East US %v: want 19 requests due and never sent, the one sent a timeout", sum, east)
	}
	for _, l := range lines[:len(lines)-1] {
		if at, _ := l["elapsed_ms"].(float64); l["region"] == "East US" && at >= 1000 && at < 1100 {
			if b, ok := l["behind"].(float64); !ok || b < 15 {
				t.Errorf("East US at 1s: behind %v, want the requests due and not sent", l["behind"])
			}
		}
	}
	if west := summaryRegion(t, sum, "West US"); west["not_sent"] != 0.0 {
		t.Errorf("West US kept up: %v", west)
	}
}

// TestACountProbeHasATimeLimit: a --count probe runs within 30s (it used to wait out every
// timeout of a hung region: 100 requests, 4 at a time, 6s each, 150s); the summary says
// under which limit it ran and how it ended. The limit's end is tested on a fake clock
// (probe.TestTheDefaultTimeLimitEndsAProbeOfAHungRegionAndSaysSo).
func TestACountProbeHasATimeLimit(t *testing.T) {
	testkit.Account(t)
	start := time.Now()
	r := clitest.Run(t, "", "probe", "-o", "json", "--count", "2", "--concurrency", "1")
	if r.Code != cmd.ExitOK || time.Since(start) > time.Minute {
		t.Fatalf("exit %d: %s", r.Code, r.ErrOut)
	}
	lines := rawLines(t, r.Out)
	sum := lines[len(lines)-1]
	if sum["time_limit_ms"] != 30000.0 || sum["ended_by"] != "count" {
		t.Fatalf("summary %v: want the count's 30s time limit, ended by the count", sum)
	}
	r = clitest.Run(t, "", "probe", "-o", "json", "--count", "2", "--rate", "1", "--concurrency", "1")
	lines = rawLines(t, r.Out)
	if sum := lines[len(lines)-1]; sum["time_limit_ms"] != 30000.0 {
		t.Fatalf("2 at 1 a second take 2s: the limit stays 30s: %v", sum)
	}
	help := clitest.Run(t, "", "probe", "--help")
	if !strings.Contains(help.Out, "a --count probe has a time limit of 30s") || !strings.Contains(help.Out, "no coordinated") {
		t.Fatalf("probe --help does not say how its time is bounded, or how latency is measured:\n%s", help.Out)
	}
}
