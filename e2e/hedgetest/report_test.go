package hedgetest_test

import (
	"github.com/cosmosctl/cosmosctl/hedgetest"
	"github.com/cosmosctl/cosmosctl/workload"
)

// hedgeTestReport is what these tests read of `hedge-test -o json`: the fields a script
// relies on, decoded by name, so that a renamed field fails here as it would in a script.
type hedgeTestReport struct {
	Scenario       string              `json:"scenario"`
	Op             string              `json:"op"`
	Strategies     []hedgeTestStrategy `json:"strategies"`
	Recommendation struct {
		Strategy string `json:"strategy"`
		Reason   string `json:"reason"`
	} `json:"recommendation"`
	ReplicaMove *hedgetest.MoveSection   `json:"replica_move"`
	Writes      []hedgetest.WriteSummary `json:"writes"`
}

type hedgeTestStrategy struct {
	Name             string  `json:"name"`
	Reads            int     `json:"reads"`
	Operations       int     `json:"operations"`
	Requests         int     `json:"requests"`
	ExtraRequestsPct float64 `json:"extra_requests_pct"`
	Timeouts         int     `json:"timeouts"`
	Failures         int     `json:"failures"`
	Wins             []struct {
		Region  string  `json:"region"`
		WinsPct float64 `json:"wins_pct"`
	} `json:"wins"`
	ReplicaHealth *bool `json:"replica_health"`
	Regions       []struct {
		Region string `json:"region"`
		workload.Summary
	} `json:"regions"`
}

// region is the strategy's requests on the wire to region; ok false when it sent none.
func (s hedgeTestStrategy) region(region string) (sum workload.Summary, ok bool) {
	for _, r := range s.Regions {
		if r.Region == region {
			return r.Summary, true
		}
	}
	return workload.Summary{}, false
}

// winsPct is the share of the operations region won, 0 when it won none.
func (s hedgeTestStrategy) winsPct(region string) float64 {
	for _, w := range s.Wins {
		if w.Region == region {
			return w.WinsPct
		}
	}
	return 0
}
