package probe

import (
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/workload"
)

var threeRegions = []string{"East US", "West US", "North Europe"}

func TestStatusLine(t *testing.T) {
	cases := []struct {
		name     string
		schedule workload.Schedule
		elapsed  time.Duration
		want     string
	}{
		{"a count", workload.Schedule{Count: 100}, 8200 * time.Millisecond, "probing 3 regions: 2/300 requests, 8s"},
		{"a duration", workload.Schedule{Duration: 30 * time.Second}, 12 * time.Second, "probing 3 regions: 2 requests, 12s of 30s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := &run{opts: Options{Schedule: tc.schedule}, regions: threeRegions}
			for range threeRegions {
				p.recorders = append(p.recorders, workload.NewRecorder())
			}
			p.recorders[0].Record(time.Millisecond, 200, 0, 1, false)
			p.recorders[2].Record(time.Millisecond, 503, 0, 0, true)
			if got := p.status(tc.elapsed); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}
