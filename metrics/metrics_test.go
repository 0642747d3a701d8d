package metrics

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/engine"
)

func TestProbeMetricsAreServedInTheExpositionFormat(t *testing.T) {
	p := NewProbe()
	p.ObserveRequest("East US", "read", 3*time.Millisecond, 200, 0, false)
	p.ObserveRequest("East US", "read", 40*time.Millisecond, 503, 0, true)
	p.ObserveRequest("West US", "read", time.Second, 0, 0, true)
	p.ObserveServerTime("East US", "read", 300*time.Microsecond, 2700*time.Microsecond)
	p.ObserveOperation(&engine.Diagnostics{
		Attempts: []engine.Attempt{{Region: "East US", Reason: engine.ReasonInitial, Outcome: engine.OutcomeCancelled}, {Region: "West US", Reason: engine.ReasonHedge, Outcome: engine.OutcomeWon}},
		Notes:    []string{"budget exhausted: no hedge to North Europe"},
	})
	ctx, cancel := context.WithCancel(context.Background())
	addr, done, err := Serve(ctx, "127.0.0.1:0", p)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	text := string(body)
	for _, want := range []string{
		`cosmosctl_request_duration_seconds_bucket{region="East US",request="read",le="0.004"} 1`,
		`cosmosctl_requests_total{outcome="503/0",region="East US",request="read"} 1`,
		`cosmosctl_requests_total{outcome="network",region="West US",request="read"} 1`,
		`cosmosctl_requests_total{outcome="ok",region="East US",request="read"} 1`,
		`cosmosctl_server_duration_seconds_bucket{region="East US",request="read",le="0.0004"} 1`,
		`cosmosctl_server_duration_seconds_bucket{region="East US",request="read",le="0.0002"} 0`,
		`cosmosctl_network_duration_seconds_bucket{region="East US",request="read",le="0.0032"} 1`,
		`cosmosctl_network_duration_seconds_bucket{region="East US",request="read",le="0.0016"} 0`,
		`cosmosctl_hedges_sent_total{region="West US"} 1`,
		`cosmosctl_hedges_won_total{region="West US"} 1`,
		`cosmosctl_hedge_budget_exhausted_total 1`,
		`go_goroutines`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
