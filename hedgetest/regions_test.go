package hedgetest

import (
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/workload"
)

func TestRecordAttemptsKeepsEachRegionsServerAndNetworkTimes(t *testing.T) {
	ms := time.Millisecond
	by := map[string]*workload.Stats{}
	RecordAttempts(by, []engine.Attempt{
		// Slow to reach, cancelled when the hedge answered: it measured nothing.
		{Region: "East US", Duration: 300 * ms, Outcome: engine.OutcomeCancelled},
		{Region: "West US", Duration: 80 * ms, ServerDuration: 2 * ms, StatusCode: 200, Outcome: engine.OutcomeWon},
		{Region: "North Europe", Duration: 90 * ms, StatusCode: 200, Outcome: engine.OutcomeLost}, // no server time said
		{Region: "East US", Duration: time.Second, TimedOut: true, Outcome: engine.OutcomeFailed},
		{Region: "West US", Duration: 5 * ms, Outcome: engine.OutcomeInFlight},
	})
	east, west, north := by["East US"].Summary(), by["West US"].Summary(), by["North Europe"].Summary()
	if east.Count != 1 || east.Timeouts != 1 || east.HasServerTime() {
		t.Errorf("East US: %+v; want its timeout alone, no server time", east)
	}
	if west.Count != 1 || *west.P99Ms != 80 || *west.ServerP99Ms != 2 || *west.NetworkP99Ms != 78 || *west.NetworkP50Ms != 78 {
		t.Errorf("West US: %+v; want the answer of 80ms, 2ms of it the service's", west)
	}
	if north.Count != 1 || *north.P50Ms != 90 || north.ServerP50Ms != nil || north.NetworkP99Ms != nil {
		t.Errorf("North Europe: %+v; want the answer, and no server or network time", north)
	}
}
