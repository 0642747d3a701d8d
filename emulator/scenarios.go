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
//	brownout  5 % of reads answer 0.5–2 s late
//	outage    the region refuses connections
//	throttle  20 % of reads get 429 with a 100 ms retry-after
var BuiltinScenarios = map[string]string{
	"brownout": "the first region answers 5% of reads 0.5–2 s late",
	"outage":   "the first region refuses connections",
	"throttle": "the first region returns 429 (retry after 100ms) for 20% of reads",
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

// BuiltinScenario returns the fault rules of a built-in scenario for region.
func BuiltinScenario(name, region string) ([]faults.Rule, error) {
	reads := []string{faults.GroupReads}
	switch name {
	case "brownout":
		return []faults.Rule{{Region: region, Operations: reads, Probability: 0.05, Effect: faults.EffectDelay,
			Delay: faults.Distribution{Kind: faults.KindUniform, Min: faults.Duration(500 * time.Millisecond), Max: faults.Duration(2 * time.Second)}}}, nil
	case "outage":
		return []faults.Rule{{Region: region, Effect: faults.EffectRefuse}}, nil
	case "throttle":
		return []faults.Rule{{Region: region, Operations: reads, Probability: 0.2, Effect: faults.EffectStatus, Status: 429,
			RetryAfter: faults.Duration(100 * time.Millisecond)}}, nil
	}
	return nil, fmt.Errorf("no built-in scenario %q; built-in scenarios are %v, or give a TOML scenario file", name, BuiltinScenarioNames())
}
