package faults

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// Clock supplies the current time. It is injected so that time windows can
// be rehearsed in tests and replays without waiting for them.
type Clock interface{ Now() time.Time }

// ClockFunc adapts a function such as time.Now to Clock.
type ClockFunc func() time.Time

func (f ClockFunc) Now() time.Time { return f() }

// Injector holds the latency table and the fault rules and decides the fate
// of each request. It is safe for concurrent use; the mutex also guards the
// random source, which math/rand/v2 does not make safe by itself.
type Injector struct {
	mu      sync.Mutex
	clock   Clock
	rng     *rand.Rand
	start   time.Time
	latency latencyTable
	rules   []Rule
	// lastID is the highest number handed out as "fN"; it only grows until
	// Clear or Load so that log lines mentioning a removed rule stay
	// unambiguous.
	lastID int
}

// NewInjector returns an empty injector. start is the emulator's start time,
// the anchor of the After/For window of the rules that Load gives it; a rule
// given to Add counts from the time it is added.
func NewInjector(clock Clock, rng *rand.Rand, start time.Time) *Injector {
	if clock == nil || rng == nil {
		panic("faults: NewInjector needs a clock and a random source")
	}
	return &Injector{clock: clock, rng: rng, start: start}
}

// Add validates r, gives it the next free "fN" id when it has none, and
// appends it, so it is evaluated after every rule already present. Its
// After/For window counts from now: someone adding "after 10s" to a running
// emulator means ten seconds from now, not from whenever it started.
func (in *Injector) Add(r Rule) (Rule, error) {
	in.mu.Lock()
	defer in.mu.Unlock()

	r = r.clone()
	r.Fired = 0
	r.Since = in.clock.Now()
	last := in.lastID
	if r.ID == "" {
		r.ID, last = nextFreeID(last, func(id string) bool { return in.index(id) >= 0 })
	}
	if err := r.Validate(); err != nil {
		return Rule{}, err
	}
	if in.index(r.ID) >= 0 {
		return Rule{}, fmt.Errorf("fault %q: id is already in use; choose another id or remove the existing fault first", r.ID)
	}
	in.lastID = last
	in.rules = append(in.rules, r)
	return r.clone(), nil
}

// Remove deletes the rule with the given id and reports whether it existed.
func (in *Injector) Remove(id string) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	i := in.index(id)
	if i < 0 {
		return false
	}
	in.rules = append(in.rules[:i], in.rules[i+1:]...)
	return true
}

// Clear removes every rule and restarts id numbering at f1, leaving the
// latency table alone: clearing faults ends an incident, it does not move the
// regions.
func (in *Injector) Clear() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.rules = nil
	in.lastID = 0
}

// Rules returns copies of the rules in evaluation order, with Fired counts.
func (in *Injector) Rules() []Rule {
	in.mu.Lock()
	defer in.mu.Unlock()
	out := make([]Rule, len(in.rules))
	for i, r := range in.rules {
		out[i] = r.clone()
	}
	return out
}

// SetLatency sets the base latency for a region ("" for the default of every
// region) and an operation or group ("" means "all"). A "none" distribution
// is kept as an explicit zero, so it can exempt an operation from a broader
// entry.
func (in *Injector) SetLatency(region, op string, d Distribution) error {
	if err := validateLatency(region, op, d); err != nil {
		return err
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.latency = in.latency.set(region, op, d)
	return nil
}

// Latency returns the latency table in the order entries were first set.
func (in *Injector) Latency() []LatencyEntry {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.latency.entries()
}

// Load replaces the latency table and all rules at once, as a scenario file
// does. Everything is validated first and nothing changes on error, so a
// broken scenario never leaves the emulator half-configured. Ids are
// assigned from f1, skipping ids the scenario names explicitly. The rules'
// After/For windows count from the emulator's start, so that a scenario plays
// out the same way each run.
func (in *Injector) Load(lat []LatencySpec, rules []Rule) error {
	var table latencyTable
	for _, s := range lat {
		if err := s.Validate(); err != nil {
			return err
		}
		if table.index(regionKey(s.Region), operationOrAll(s.Operation)) >= 0 {
			return fmt.Errorf("latency for %s, operation %q is given twice; keep one entry", regionLabel(s.Region), operationOrAll(s.Operation))
		}
		table = table.set(s.Region, s.Operation, s.Distribution)
	}

	explicit := make(map[string]bool)
	for _, r := range rules {
		if r.ID == "" {
			continue
		}
		if explicit[r.ID] {
			return fmt.Errorf("fault %q: id is used by more than one fault; make the ids unique", r.ID)
		}
		explicit[r.ID] = true
	}
	built := make([]Rule, 0, len(rules))
	last := 0
	for _, r := range rules {
		r = r.clone()
		r.Fired = 0
		r.Since = in.start
		if r.ID == "" {
			r.ID, last = nextFreeID(last, func(id string) bool { return explicit[id] })
		}
		if err := r.Validate(); err != nil {
			return err
		}
		built = append(built, r)
	}

	in.mu.Lock()
	defer in.mu.Unlock()
	in.latency = table
	in.rules = built
	in.lastID = last
	return nil
}

func (in *Injector) index(id string) int {
	for i := range in.rules {
		if in.rules[i].ID == id {
			return i
		}
	}
	return -1
}

// nextFreeID returns the first "fN" after last that is not taken, and its N.
func nextFreeID(last int, taken func(string) bool) (string, int) {
	for {
		last++
		id := fmt.Sprintf("f%d", last)
		if !taken(id) {
			return id, last
		}
	}
}
