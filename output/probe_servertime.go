package output

import (
	"fmt"

	"github.com/cosmosctl/cosmosctl/workload"
)

// The verdicts under the probe's table tell "the region is slow" from "the path to the
// region is slow" by the split of its answers' time (workload.ServerTime). A point read
// takes the service a few milliseconds; what a client waits beyond that is the network
// between them (and the client's own queueing). The thresholds are deliberately coarse:
// a verdict names a region a person should look at, it does not grade them.
const (
	// slowPathRatio and slowPathFloorMs: the path to a region is slow when its network
	// p99 is more than slowPathRatio times its server p99, and above slowPathFloorMs.
	// The floor keeps quiet about a near region's few milliseconds of network, however
	// many times a fast server's time, and about the tens of milliseconds a busy client
	// machine adds to its tail (a loaded test machine's loopback reaches 50ms); a region
	// an ocean away, 100ms and more, earns the verdict: for that client, the path is
	// what is slow.
	slowPathRatio   = 2
	slowPathFloorMs = 100
	// slowServerMs: a region is itself slow when the service's own p99 is above this,
	// tens of times what a healthy region takes to serve a point read.
	slowServerMs = 100
)

// ServerTimeVerdicts are the one-line verdicts on a region's server and network times:
// "West US itself is slow (server p99 180ms)", "the path to West US is slow (network
// p99 212ms vs server p99 0.41ms)"; none when its answers carried no server time, or
// neither is slow.
func ServerTimeVerdicts(region string, s workload.Summary) []string {
	if !s.HasServerTime() || s.ServerP99Ms == nil || s.NetworkP99Ms == nil {
		return nil
	}
	server, network := *s.ServerP99Ms, *s.NetworkP99Ms
	var out []string
	if server > slowServerMs {
		out = append(out, fmt.Sprintf("%s itself is slow (server p99 %s)", region, HumanDuration(msDuration(server))))
	}
	if network > slowPathFloorMs && network > slowPathRatio*server {
		out = append(out, fmt.Sprintf("the path to %s is slow (network p99 %s vs server p99 %s)", region,
			HumanDuration(msDuration(network)), HumanDuration(msDuration(server))))
	}
	return out
}
