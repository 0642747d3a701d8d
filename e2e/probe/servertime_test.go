package probe_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cmd"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// TestProbeTellsASlowPathFromASlowRegion: the emulator's latency model stands for the
// network between the client and a region, and its x-ms-request-duration-ms leaves it
// out, as the service's does. A region 200ms away has a network time of about that,
// far above the others', while every region's server time stays small; the table says
// the path to it is slow. The figures are compared with generous ratios: a loaded
// machine's loopback adds tens of milliseconds to anything.
func TestProbeTellsASlowPathFromASlowRegion(t *testing.T) {
	srv := testkit.Account(t)
	srv.Faults().SetLatency("West US", "read", faults.Distribution{Kind: faults.KindFixed, Value: faults.Duration(200 * time.Millisecond)})
	_, sum, r := probeJSON(t, "--count", "8", "--cleanup=false")
	if r.Code != cmd.ExitOK {
		t.Fatalf("exit %d: %s", r.Code, r.ErrOut)
	}
	west := sum.Regions["West US"]
	if west.NetworkP50Ms == nil || *west.NetworkP50Ms < 150 {
		t.Fatalf("West US network p50 %sms, want about its 200ms latency", msOf(west.NetworkP50Ms))
	}
	for _, region := range probeRegions {
		s := sum.Regions[region]
		if s.ServerP50Ms == nil || s.ServerP99Ms == nil || s.NetworkP99Ms == nil {
			t.Fatalf("%s: the emulator says its time for every answer, yet server p50 %v, p99 %v, network p99 %v", region, s.ServerP50Ms, s.ServerP99Ms, s.NetworkP99Ms)
		}
		// The injected latency is the network's: never the server's.
		if *s.ServerP50Ms*4 > *west.NetworkP50Ms {
			t.Errorf("%s server p50 %vms is not well below West US's network p50 %vms: the latency counted as the server's", region, *s.ServerP50Ms, *west.NetworkP50Ms)
		}
		if region == "West US" {
			continue
		}
		if p50 := s.NetworkP50Ms; p50 == nil || *p50*2 > *west.NetworkP50Ms {
			t.Errorf("%s network p50 %sms is not well below West US's %vms", region, msOf(p50), *west.NetworkP50Ms)
		}
	}

	table := runProbe(t, "--count", "8")
	if table.Code != cmd.ExitOK || !strings.Contains(table.Out, "SRV P99") || !strings.Contains(table.Out, "note: the path to West US is slow (network p99 ") {
		t.Fatalf("want the server columns and the verdict on West US: exit %d\n%s%s", table.Code, table.Out, table.ErrOut)
	}
}
