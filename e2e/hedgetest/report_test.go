package hedgetest_test

import "github.com/cosmosctl/cosmosctl/hedgetest"

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
