package hedging

import "time"

// Planner is a strategy that decides afresh for each operation, from what it has learned
// of earlier ones: the adaptive strategy. The engine asks it for a Plan when an
// operation starts and reports back how the first region did.
type Planner interface {
	// Begin returns the schedule of one operation of the given kind ("read", "create"…).
	Begin(op string) Plan
	// String describes the strategy's configuration for diagnostics.
	String() string
}

// Plan is one operation's schedule under a Planner.
type Plan interface {
	Strategy
	// Admit reports whether arm (>= 1) may start now; a budget says no when hedges
	// would amplify load beyond it. An admitted arm is paid for.
	Admit(arm int) bool
	// Done reports the first region's latency when its first attempt answered (answered
	// false: it was cancelled or failed before answering, so the latency is only a
	// lower bound), so that the threshold follows the region.
	Done(firstLatency time.Duration, answered bool)
}
