package hedgetest

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cosmosctl/cosmosctl/hedging"
)

// Spec is one strategy to test: a name for the table and a constructor, because an
// adaptive strategy learns and each run must start it fresh.
type Spec struct {
	Name string
	// New returns the strategy; nil New means no hedging.
	New func() (hedging.Strategy, error)
}

// fanoutThreshold starts every region at once: the threshold must be positive, and a
// nanosecond is as close to zero as a timer gets.
const fanoutThreshold = time.Nanosecond

// ParseStrategies reads a comma-separated list such as
// "none,threshold=500ms/100ms,threshold=50ms/20ms,fanout,adaptive,adaptive=5%".
// threshold=T/S is a fixed threshold T and step S (S may be omitted: 100ms); fanout asks
// every region at once; adaptive learns its threshold with a budget (default budget).
func ParseStrategies(list string, budget float64) ([]Spec, error) {
	var out []Spec
	seen := map[string]bool{}
	for _, raw := range strings.Split(list, ",") {
		name := strings.TrimSpace(raw)
		if name == "" {
			continue
		}
		if seen[name] {
			return nil, fmt.Errorf("strategy %q is listed twice", name)
		}
		seen[name] = true
		spec, err := parseOne(name, budget)
		if err != nil {
			return nil, err
		}
		out = append(out, spec)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no strategies: give e.g. --strategies none,threshold=500ms/100ms,fanout,adaptive")
	}
	return out, nil
}

func parseOne(name string, budget float64) (Spec, error) {
	bad := func(why string) (Spec, error) {
		return Spec{}, fmt.Errorf("strategy %q: %s (forms: none, threshold=300ms/100ms, fanout, adaptive, adaptive=10%%)", name, why)
	}
	kind, arg, hasArg := strings.Cut(name, "=")
	switch kind {
	case "none":
		if hasArg {
			return bad("none takes no value")
		}
		return Spec{Name: "none"}, nil
	case "fanout":
		if hasArg {
			return bad("fanout takes no value")
		}
		return Spec{Name: "fanout", New: func() (hedging.Strategy, error) {
			return hedging.Threshold{Threshold: fanoutThreshold, Step: 0}, nil
		}}, nil
	case "threshold":
		ts, ss, _ := strings.Cut(arg, "/")
		t, err := time.ParseDuration(ts)
		if err != nil {
			return bad("the threshold is not a duration")
		}
		step := 100 * time.Millisecond
		if ss != "" {
			if step, err = time.ParseDuration(ss); err != nil {
				return bad("the step is not a duration")
			}
		}
		s := hedging.Threshold{Threshold: t, Step: step}
		if err := s.Validate(); err != nil {
			return bad(err.Error())
		}
		return Spec{Name: name, New: func() (hedging.Strategy, error) { return s, nil }}, nil
	case "adaptive":
		b := budget
		if hasArg {
			pct, err := strconv.ParseFloat(strings.TrimSuffix(arg, "%"), 64)
			if err != nil || !strings.HasSuffix(arg, "%") || pct <= 0 || pct > 100 {
				return bad("the budget is a percentage such as 10%")
			}
			b = pct / 100
		}
		return Spec{Name: name, New: func() (hedging.Strategy, error) {
			return hedging.NewAdaptive(hedging.AdaptiveConfig{Budget: b})
		}}, nil
	}
	return bad("unknown strategy")
}
