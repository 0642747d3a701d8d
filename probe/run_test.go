package probe

import (
	"context"
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

func TestAMissingItemsNotFoundIsAnAnswer(t *testing.T) {
	for _, tc := range []struct {
		name     string
		got      outcome
		answered bool
	}{
		{"404/0: not found, the region answered", outcome{status: 404, failed: true}, true},
		{"200: the item is there after all", outcome{status: 200}, true},
		{"404/1002: the replica is behind", outcome{status: 404, substatus: 1002, failed: true}, false},
		{"404/1003: the owner resource is gone", outcome{status: 404, substatus: 1003, failed: true}, false},
		{"503", outcome{status: 503, failed: true}, false},
		{"a timeout", timeoutOutcome, false},
		{"no answer", outcome{failed: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			send := notFoundAnswers(func(context.Context, string) outcome { return tc.got })
			out := send(context.Background(), "West US")
			if out.failed == tc.answered || out.status != tc.got.status || out.substatus != tc.got.substatus {
				t.Fatalf("%+v: answered %v, want %v with its status kept", out, !out.failed, tc.answered)
			}
		})
	}
}
