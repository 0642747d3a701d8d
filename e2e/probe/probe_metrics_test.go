package probe_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator/faults"

	"github.com/cosmosctl/cosmosctl/cmd"
	"github.com/cosmosctl/cosmosctl/internal/clitest"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func TestProbeServesPrometheusMetricsIncludingHedges(t *testing.T) {
	srv := testkit.Account(t)
	srv.Faults().SetLatency("East US", "read", faults.Distribution{Kind: "fixed", Value: faults.Duration(60 * time.Millisecond)})
	addr := freeAddr(t)
	io, _, errOut := clitest.IO()
	done := make(chan int, 1)
	go func() {
		done <- cmd.Run(context.Background(), io, []string{"probe", "--duration", "2500ms", "--concurrency", "1", "--metrics-addr", addr,
			"--hedge-threshold", "10ms", "--hedge-step", "0s"})
	}()
	want := []string{
		`cosmosctl_request_duration_seconds_bucket{region="East US",request="read"`,
		`cosmosctl_requests_total{outcome="ok",region="West US",request="read"}`,
		// The emulator reports its own time; East US's 60 ms is the network's.
		`cosmosctl_server_duration_seconds_bucket{region="East US",request="read",le="0.0001"}`,
		`cosmosctl_network_duration_seconds_bucket{region="East US",request="read",le="0.0512"} 0`,
		`cosmosctl_requests_total{outcome="ok",region="(hedged)",request="read"}`,
		`cosmosctl_hedges_sent_total{region="West US"}`,
		`cosmosctl_hedges_won_total{region="West US"}`,
	}
	missing := func(text string) []string {
		var out []string
		for _, w := range want {
			if !strings.Contains(text, w) {
				out = append(out, w)
			}
		}
		return out
	}
	var lacking []string
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err == nil {
			body, _ := readAll(resp.Body)
			resp.Body.Close()
			if lacking = missing(string(body)); len(lacking) == 0 {
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code := <-done; code != 0 {
		t.Fatalf("probe exit %d: %s", code, errOut.String())
	}
	if len(lacking) > 0 {
		t.Errorf("metrics served while probing lack %v", lacking)
	}
	if !strings.Contains(errOut.String(), "serving Prometheus metrics on http://"+addr+"/metrics") {
		t.Errorf("stderr %q", errOut.String())
	}
}

func readAll(r io.Reader) ([]byte, error) { return io.ReadAll(r) }
