package emulator

import (
	"fmt"
	"sort"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// BuiltinScenarios are the rehearsals cosmosctl ships, each aimed at the first region of
// the account (where reads go first):
//
//	brownout           5 % of reads answer 0.5–2 s late
//	outage             the region refuses connections
//	hang               the region accepts requests and never answers them
//	write-region-down  the write region refuses connections (the global endpoint, its
//	                   alias, drops every data request)
//	throttle      20 % of reads get 429 with a 100 ms retry-after
//	replica-move  a secondary replica of each partition key range moves (410)
//
// replica-move is no set of fault rules but replica moves, which hedge-test makes at
// each run's start (see ScenarioReplicaMoves); BuiltinScenario returns no rules for it.
var BuiltinScenarios = map[string]string{
	"brownout":              "the first region answers 5% of reads 0.5–2 s late",
	"outage":                "the first region refuses connections",
	"hang":                  "the first region accepts requests and never answers them",
	ScenarioWriteRegionDown: "the write region refuses connections and the global endpoint, its alias, drops every data request; reads go on in the read regions, writes are tried too",
	"throttle":              "the first region returns 429 (retry after 100ms) for 20% of reads",
	ScenarioReplicaMove:     "a secondary replica of each partition key range in the first region moves (answers 410); reads go direct, with and without replica health",
}

// ScenarioWriteRegionDown is the built-in scenario of a write region outage.
const ScenarioWriteRegionDown = "write-region-down"

// ScenarioReplicaMove is the built-in scenario of replica moves.
const ScenarioReplicaMove = "replica-move"

// ScenarioReplicaMoves returns the moves of the replica-move scenario: in region, for each
// of a container's partition key ranges, the secondary at index secondary (1 to
// Replicas-1; a run moves the next one, so that each run meets a replica that has just
// moved) answers 410 from now on, and the gateway hands out the old set for
// DefaultMoveRefreshDelay. Give them to Server.MoveReplica.
func ScenarioReplicaMoves(region, database, container string, ranges []string, secondary int) []ReplicaMove {
	moves := make([]ReplicaMove, 0, len(ranges))
	for _, r := range ranges {
		moves = append(moves, ReplicaMove{Region: region, Database: database, Container: container, Range: r, Replica: secondary,
			Effect: MoveGone, RefreshDelay: faults.Duration(DefaultMoveRefreshDelay)})
	}
	return moves
}

// BuiltinScenarioNames lists the built-in scenarios in a stable order.
func BuiltinScenarioNames() []string {
	names := make([]string, 0, len(BuiltinScenarios))
	for n := range BuiltinScenarios {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// BuiltinScenario returns the fault rules of a built-in scenario for region (none for
// replica-move).
func BuiltinScenario(name, region string) ([]faults.Rule, error) {
	reads := []string{faults.GroupReads}
	switch name {
	case ScenarioReplicaMove:
		return nil, nil
	case "brownout":
		return []faults.Rule{{Region: region, Operations: reads, Probability: 0.05, Effect: faults.EffectDelay,
			Delay: faults.Distribution{Kind: faults.KindUniform, Min: faults.Duration(500 * time.Millisecond), Max: faults.Duration(2 * time.Second)}}}, nil
	case "outage", ScenarioWriteRegionDown:
		// The first region is the write region of the embedded account: an outage of
		// it is also one of the write region, but only write-region-down writes.
		return []faults.Rule{{Region: region, Effect: faults.EffectRefuse}}, nil
	case "hang":
		return []faults.Rule{{Region: region, Effect: faults.EffectHang}}, nil
	case "throttle":
		return []faults.Rule{{Region: region, Operations: reads, Probability: 0.2, Effect: faults.EffectStatus, Status: 429,
			RetryAfter: faults.Duration(100 * time.Millisecond)}}, nil
	}
	return nil, fmt.Errorf("no built-in scenario %q; built-in scenarios are %v, or give a TOML scenario file", name, BuiltinScenarioNames())
}
