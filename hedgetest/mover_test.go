package hedgetest

import (
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/workload"
)

func moveReport(reads, after, inFlight int, latency time.Duration) MoveReport {
	st := workload.NewStats()
	for range reads {
		st.Record(latency, 200, 0, 0, false)
	}
	return MoveReport{Reads: reads, Stats: st, AfterFirst410: after, InFlight: inFlight, Gone: after + 1, Window: 2 * time.Second}
}

func TestMoveSectionAddsUpTheRunsOfEachKind(t *testing.T) {
	m := &Mover{region: "East US", ranges: []string{"0", "1"}}
	sec := m.section([]moveRun{
		{Strategy: "none", HealthAware: true, Report: moveReport(40, 0, 1, 5*time.Millisecond), Received: 3},
		{Strategy: "none" + NoReplicaHealthSuffix, Report: moveReport(40, 10, 0, 300*time.Millisecond), Received: 12},
		{Strategy: "fanout", HealthAware: true, Report: moveReport(60, 0, 0, 4*time.Millisecond)},
		{Strategy: "fanout" + NoReplicaHealthSuffix, Report: moveReport(60, 15, 0, 200*time.Millisecond)},
	})
	if sec.Region != "East US" || sec.MovedPerRun != 2 || sec.MoveAtPct != 100*MoveAt || len(sec.Runs) != 4 {
		t.Fatalf("section %+v", sec)
	}
	if r := sec.Runs[1]; r.ReplicaHealth || r.AfterFirst410 != 10 || r.AfterFirst410Pct != 25 || r.GoneAnswers != 11 || r.MovedReplicaRequests != 12 || r.WindowMs != 2000 {
		t.Fatalf("run without health %+v", r)
	}
	on, off := sec.HealthAware, sec.WithoutHealth
	if on.Reads != 100 || on.AfterFirst410 != 0 || on.InFlight != 1 || on.P99Ms > 6 {
		t.Fatalf("health-aware totals %+v", on)
	}
	if off.Reads != 100 || off.AfterFirst410 != 25 || off.AfterFirst410Pct != 25 || off.P99Ms < 200 {
		t.Fatalf("totals without health %+v", off)
	}
}
