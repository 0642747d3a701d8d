package probe

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/workload"
)

func TestReadOutcomeSplitsEveryAnswerThatCarriedAServerTime(t *testing.T) {
	ms := time.Millisecond
	diag := &engine.Diagnostics{Attempts: []engine.Attempt{
		// A hedge's first attempt, slow to reach and cancelled: no answer, no split.
		{Region: "East US", Duration: 300 * ms, Outcome: engine.OutcomeCancelled},
		// The answer used: 40ms, 3ms of it the service's.
		{Region: "West US", Duration: 40 * ms, ServerDuration: 3 * ms, StatusCode: 200, Outcome: engine.OutcomeWon},
		// An answer without the service's time (the Linux vNext emulator's): none.
		{Region: "North Europe", Duration: 20 * ms, StatusCode: 200, Outcome: engine.OutcomeLost},
		// A server time longer than the client measured: no network time, never less.
		{Region: "North Europe", Duration: 2 * ms, ServerDuration: 2500 * time.Microsecond, StatusCode: 200, Outcome: engine.OutcomeLost},
	}}
	out := readOutcome(&engine.Result{StatusCode: 200, Diagnostics: diag}, nil)
	want := []workload.ServerTime{{Server: 3 * ms, Network: 37 * ms}, {Server: 2500 * time.Microsecond}}
	if !reflect.DeepEqual(out.serverTimes, want) {
		t.Fatalf("server times %+v, want %+v", out.serverTimes, want)
	}
	if out := readOutcome(&engine.Result{Diagnostics: &engine.Diagnostics{}}, &engine.TimeoutError{}); out.serverTimes != nil || !out.timedOut {
		t.Fatalf("a timeout with no answer: %+v", out)
	}
}

// TestEachRegionsSummaryHasItsServerAndNetworkTimes runs a probe of two regions on the
// fake clock: West US far away (200ms of network), East US near; North Europe's answers
// carry no server time. The summary has each region's split, null where none was said,
// and the table says the path to West US is slow.
func TestEachRegionsSummaryHasItsServerAndNetworkTimes(t *testing.T) {
	ms := time.Millisecond
	times := map[string]workload.ServerTime{
		"East US": {Server: 2 * ms, Network: 3 * ms},
		"West US": {Server: 2 * ms, Network: 200 * ms},
	}
	send := func(_ context.Context, region string) outcome {
		out := outcome{status: 200, charge: 1}
		if t, ok := times[region]; ok {
			out.serverTimes = []workload.ServerTime{t}
		}
		return out
	}
	clk := clock.NewFake(time.Unix(1000, 0))
	var out lockedBuffer
	p := testRun(clk, send, workload.Schedule{Concurrency: 1, Count: 5}, &out)
	p.regions = []string{"East US", "West US", "North Europe"}
	p.opts.JSON = true
	if awaitEnd(t, start(context.Background(), p)) {
		t.Fatal("interrupted")
	}
	if err := p.report("read", false); err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Regions []struct {
			Region string `json:"region"`
			workload.Summary
		} `json:"regions"`
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil {
		t.Fatal(err)
	}
	want := map[string][4]float64{"East US": {2, 2, 3, 3}, "West US": {2, 2, 200, 200}}
	for _, r := range sum.Regions {
		s := r.Summary
		w, ok := want[r.Region]
		if !ok {
			if s.ServerP50Ms != nil || s.ServerP99Ms != nil || s.NetworkP50Ms != nil || s.NetworkP99Ms != nil {
				t.Errorf("%s said no server time, yet has %+v", r.Region, s)
			}
			continue
		}
		for i, got := range []*float64{s.ServerP50Ms, s.ServerP99Ms, s.NetworkP50Ms, s.NetworkP99Ms} {
			if got == nil || *got != w[i] {
				t.Errorf("%s: server p50, p99, network p50, p99 = %v, %v, %v, %v; want %v", r.Region, s.ServerP50Ms, s.ServerP99Ms, s.NetworkP50Ms, s.NetworkP99Ms, w)
				break
			}
		}
	}
	if !strings.Contains(lines[len(lines)-1], `"server_p50_ms":null`) {
		t.Errorf("North Europe's server time is not null: %s", lines[len(lines)-1])
	}

	var table lockedBuffer
	p.opts.JSON, p.streams.Out = false, &table
	if err := p.report("read", false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "note: the path to West US is slow (network p99 200ms vs server p99 2ms)") ||
		strings.Contains(table.String(), "East US is slow") || strings.Contains(table.String(), "path to East US") {
		t.Fatalf("want the verdict on West US alone:\n%s", table.String())
	}
}

func TestUnderTSVTheNotesGoToStderr(t *testing.T) {
	send := func(context.Context, string) outcome {
		return outcome{status: 200, charge: 1, serverTimes: []workload.ServerTime{{Server: time.Millisecond, Network: 300 * time.Millisecond}}}
	}
	var out, errOut lockedBuffer
	p := testRun(clock.NewFake(time.Unix(1000, 0)), send, workload.Schedule{Concurrency: 1, Count: 2}, &out)
	p.streams.ErrOut = &errOut
	p.opts.Style.TSV = true
	if awaitEnd(t, start(context.Background(), p)) {
		t.Fatal("interrupted")
	}
	if err := p.report("read", false); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "note:") || !strings.Contains(errOut.String(), "note: the path to East US is slow") {
		t.Fatalf("stdout %q, stderr %q: want the table alone on stdout, the note on stderr", out.String(), errOut.String())
	}
}
