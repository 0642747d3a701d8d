package hedging

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
)

// AdaptiveConfig configures the adaptive strategy. A zero field takes its default, so
// Floor and Step cannot be set to exactly 0: give 1ns for "no floor" or "every remaining
// region at the threshold at once".
type AdaptiveConfig struct {
	// Percentile is the quantile of the first region's recent latency used as the
	// threshold, as a fraction: 0.99 for p99 (the default).
	Percentile float64
	// Window is how many samples are kept per operation kind, newest replacing oldest
	// (default 200).
	Window int
	// MaxSampleAge is how long a sample counts, towards the threshold and towards
	// warming up (default 10 minutes). Samples outlive the process that observed them
	// (Export, Import), and a latency from last week says little about the region
	// today: a kind whose samples have all aged out warms up again from Fallback.
	MaxSampleAge time.Duration
	// MinSamples is how many samples an operation kind needs before its threshold is
	// learned; until then it is Fallback (default 20, or Window if that is smaller).
	MinSamples int
	// Floor is the least threshold, so that a very fast region does not hedge on
	// every hiccup (default 5ms).
	Floor time.Duration
	// Fallback is the threshold while an operation kind warms up (default 500ms, the
	// SDKs' default threshold).
	Fallback time.Duration
	// Step is the time between later arms after the threshold (default 250ms). A step
	// shorter than the round trip to another region mostly buys requests that lose:
	// the second region has rarely answered yet when the third is asked.
	Step time.Duration
	// MaxRegions caps the arms (0: every effective region).
	MaxRegions int
	// Budget is the extra requests allowed, as a fraction of operations: 0.10 (the
	// default) for 10%. It must be in (0, 1].
	Budget float64
	// Burst is the token bucket's capacity in hedge arms (default 10).
	Burst float64
	// Clock tells when a sample was observed and which samples have aged out (default:
	// the wall clock).
	Clock clock.Clock
}

// defaultMaxSampleAge is AdaptiveConfig.MaxSampleAge's default: long enough that the
// operations of an operator's session (a read now, another in a few minutes) keep what
// earlier ones learned, short enough that a brownout that has passed stops counting
// soon after.
const defaultMaxSampleAge = 10 * time.Minute

func (c AdaptiveConfig) withDefaults() AdaptiveConfig {
	if c.Percentile == 0 {
		c.Percentile = 0.99
	}
	if c.Window == 0 {
		c.Window = 200
	}
	if c.MinSamples == 0 {
		c.MinSamples = 20
		if c.Window > 0 {
			c.MinSamples = min(20, c.Window) // a small window set alone warms up when full
		}
	}
	if c.Floor == 0 {
		c.Floor = 5 * time.Millisecond
	}
	if c.Fallback == 0 {
		c.Fallback = 500 * time.Millisecond
	}
	if c.Step == 0 {
		c.Step = 250 * time.Millisecond
	}
	if c.Budget == 0 {
		c.Budget = 0.10
	}
	if c.Burst == 0 {
		c.Burst = 10
	}
	if c.MaxSampleAge == 0 {
		c.MaxSampleAge = defaultMaxSampleAge
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	return c
}

// validate checks a configuration with its defaults applied. The comparisons are
// written so that NaN fails them.
func (c AdaptiveConfig) validate() error {
	switch {
	case !(c.Percentile > 0 && c.Percentile < 1):
		return fmt.Errorf("adaptive hedge percentile must be a fraction between 0 and 1, exclusive (got %v): give 0.99 for p99", c.Percentile)
	case c.MinSamples < 1:
		return fmt.Errorf("adaptive hedge minimum samples must be at least 1 (got %d)", c.MinSamples)
	case c.Window < c.MinSamples:
		return fmt.Errorf("adaptive hedge window (%d samples) must hold at least the minimum samples (%d): raise the window or lower the minimum", c.Window, c.MinSamples)
	case c.MaxSampleAge < 0:
		return fmt.Errorf("adaptive hedge max sample age must not be negative (got %s): give a duration such as 10m", c.MaxSampleAge)
	case c.Floor < 0:
		return fmt.Errorf("adaptive hedge floor must not be negative (got %s): give a duration such as 5ms", c.Floor)
	case c.Fallback <= 0:
		return fmt.Errorf("adaptive hedge fallback threshold must be greater than 0 (got %s): give a duration such as 500ms", c.Fallback)
	case c.Step < 0:
		return fmt.Errorf("adaptive hedge step must not be negative (got %s): give a duration such as 50ms", c.Step)
	case c.MaxRegions < 0:
		return errors.New("adaptive hedge max regions must be at least 1 (or 0 for every effective region)")
	case !(c.Budget > 0 && c.Budget <= 1):
		return fmt.Errorf("adaptive hedge budget must be a fraction in (0, 1] (got %v): give 0.10 for 10%% extra requests", c.Budget)
	case !(c.Burst >= 1 && c.Burst <= maxBurst):
		return fmt.Errorf("adaptive hedge burst must be between 1 and %d tokens (got %v): one hedge arm costs one token; give 10", maxBurst, c.Burst)
	}
	return nil
}

// Adaptive is the adaptive strategy, beyond every Cosmos SDK (which all hedge at a fixed
// threshold): the threshold of each operation is a learned percentile of the first
// region's recent latency for that kind of operation, and the extra requests are capped
// by a budget, a token bucket filled by traffic.
//
// The two halves need each other. A fixed threshold either hedges too late for a fast
// region or, when the region slows down as a whole, hedges almost every request and
// doubles the load on an account that is already struggling. A learned threshold alone
// would hedge every request of a region that turns uniformly slow, because the answers
// it learns from are the ones the hedges beat (see AdaptivePlan.Done); the budget
// refuses most of those hedges, the first arms then answer, slowly, and the threshold
// rises to the region's new latency, so hedging stops amplifying load.
//
// What it learns outlives the process through Export and Import (a CLI process often
// runs one operation), and samples older than MaxSampleAge stop counting.
//
// It is safe for concurrent use: one Adaptive serves every operation of a client.
type Adaptive struct {
	cfg    AdaptiveConfig
	maxAge int64      // cfg.MaxSampleAge in nanoseconds
	wall   *wallClock // cfg.Clock when it is the wall clock; nil otherwise

	mu     sync.Mutex
	ops    map[string]*window // per operation kind; a handful of kinds, never evicted
	bucket bucket
}

// NewAdaptive returns an adaptive strategy, with defaults for the zero fields of cfg.
func NewAdaptive(cfg AdaptiveConfig) (*Adaptive, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Adaptive{cfg: cfg, maxAge: int64(cfg.MaxSampleAge), wall: newWallClock(cfg.Clock),
		ops: map[string]*window{}, bucket: newBucket(cfg.Budget, cfg.Burst)}, nil
}

// now is the strategy's clock, in Unix nanoseconds.
func (a *Adaptive) now() int64 {
	if a.wall != nil {
		return a.wall.now()
	}
	return a.cfg.Clock.Now().UnixNano()
}

// Config is the strategy's configuration with the defaults applied, e.g. for
// MergeAdaptiveState.
func (a *Adaptive) Config() AdaptiveConfig { return a.cfg }

// cutoff is the observation time before which a sample has aged out, at now (both in
// Unix nanoseconds).
func (a *Adaptive) cutoff(now int64) int64 { return addSaturating(now, -a.maxAge) }

// Begin starts an operation of kind op ("read", "create"…): it credits the budget with
// the operation's share and fixes the operation's threshold from what the kind's window
// holds now.
//
// Samples that have aged out are dropped here, lazily, from the oldest end: when none
// has, that is one comparison with the oldest sample's time. The one clock read it
// needs also dates the operation's own sample (see Done).
func (a *Adaptive) Begin(op string) Plan {
	now := a.now()
	a.mu.Lock()
	a.bucket.operation()
	w := a.ops[op]
	if w == nil {
		w = newWindow(a.cfg.Window)
		w.op = op
		a.ops[op] = w
	}
	w.expire(a.cutoff(now))
	p := &AdaptivePlan{a: a, w: w, begun: now}
	var samples int
	p.threshold, p.learned, samples = a.thresholdLocked(w)
	p.samples = int32(samples)
	if samples > 0 {
		p.oldest, p.newest = w.oldest(), w.newest()
	}
	a.mu.Unlock()
	return p
}

// thresholdLocked is the threshold of a new operation whose kind has window w, with
// the learned percentile (0 while warming up) and the samples it came from.
func (a *Adaptive) thresholdLocked(w *window) (threshold, learned time.Duration, samples int) {
	if w == nil {
		return a.cfg.Fallback, 0, 0
	}
	samples = w.len()
	if samples < a.cfg.MinSamples {
		return a.cfg.Fallback, 0, samples
	}
	learned = w.quantile(a.cfg.Percentile)
	return max(a.cfg.Floor, learned), learned, samples
}

// Stats reports, for operations of kind op, the threshold the next one would get, the
// samples in its window and the tokens in the budget (shared by every kind).
func (a *Adaptive) Stats(op string) (threshold time.Duration, samples int, tokens float64) {
	now := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	w := a.ops[op]
	if w != nil {
		w.expire(a.cutoff(now))
	}
	threshold, _, samples = a.thresholdLocked(w)
	return threshold, samples, a.bucket.tokens()
}

// Offset makes an Adaptive a Strategy too, so that it can be carried wherever a
// strategy is (an operation's Hedge setting). Without an operation kind there is nothing
// learned to go by, so it is the warm-up schedule: Fallback, then every Step. Callers
// that run operations should ask for a Plan through Begin (the engine checks for a
// Planner first).
func (a *Adaptive) Offset(arm int) time.Duration {
	if arm <= 0 {
		return 0
	}
	return a.cfg.Fallback + time.Duration(arm-1)*a.cfg.Step
}

// Arms honours MaxRegions.
func (a *Adaptive) Arms(regions int) int {
	if m := a.cfg.MaxRegions; m > 0 && m < regions {
		return m
	}
	return regions
}

// String describes the configuration, e.g.
// "adaptive p99 floor=5ms fallback=500ms step=50ms budget=10%".
func (a *Adaptive) String() string {
	c := a.cfg
	s := fmt.Sprintf("adaptive p%s floor=%s fallback=%s step=%s budget=%s%%",
		percent(c.Percentile), c.Floor, c.Fallback, c.Step, percent(c.Budget))
	return s + maxRegionsSuffix(c.MaxRegions)
}

// AdaptivePlan is one operation's schedule under an Adaptive strategy: its threshold is
// fixed when the operation begins.
//
// Begin allocates one per operation: its fields are packed to stay in the 64-byte size
// class (the kind's name is the window's).
type AdaptivePlan struct {
	a         *Adaptive
	w         *window // its op is the operation's kind
	threshold time.Duration
	learned   time.Duration // the percentile before the floor; 0 while warming up
	// Unix nanoseconds: when the operation began, and when the oldest and newest of its
	// samples were observed (0 without samples).
	begun, oldest, newest int64
	samples               int32 // in the window when the operation began (at most Window)
	done                  bool  // guarded by a.mu
}

// Threshold is the time after the first arm at which this operation's second arm starts.
func (p *AdaptivePlan) Threshold() time.Duration { return p.threshold }

// Offset is 0 for the first arm, the threshold for the second, then one Step more for
// each later arm.
func (p *AdaptivePlan) Offset(arm int) time.Duration {
	if arm <= 0 {
		return 0
	}
	return p.threshold + time.Duration(arm-1)*p.a.cfg.Step
}

// Arms honours MaxRegions.
func (p *AdaptivePlan) Arms(regions int) int { return p.a.Arms(regions) }

// Admit pays one token from the shared budget for a hedge arm (arm >= 1), or refuses
// when less than a whole token is left. The first arm is never refused.
func (p *AdaptivePlan) Admit(arm int) bool {
	if arm < 1 {
		return true
	}
	p.a.mu.Lock()
	defer p.a.mu.Unlock()
	return p.a.bucket.take()
}

// Done reports how the first region did; only the first call counts.
//
// Only answered first arms are learned from. A first arm that was cancelled because a
// hedge won (or that failed) has a latency that is only a lower bound: the region would
// have taken longer, by an unknown amount. Recording the bound would drag the window
// down towards the threshold itself (every cancelled arm lasted exactly about the
// threshold), and recording nothing in its place is the lesser bias: those arms are
// exactly the slow tail that the threshold is meant to cut off, not to chase. A
// threshold that chased it would rise with every hedge and stop hedging when hedging
// helps most. The cost of leaving them out is that a region turning uniformly slow
// would keep every operation hedging; the budget is what breaks that loop (see
// Adaptive).
func (p *AdaptivePlan) Done(firstLatency time.Duration, answered bool) {
	p.a.mu.Lock()
	defer p.a.mu.Unlock()
	if p.done {
		return
	}
	p.done = true
	if answered {
		// The first region answered firstLatency after the first arm started, which is
		// when the operation began, give or take the microseconds between Begin and the
		// first request: that is when the sample was observed, and it costs no second
		// clock read.
		d := max(firstLatency, 0)
		p.w.add(d, addSaturating(p.begun, int64(d)))
	}
}

// String describes this operation's decision, with how many samples it came from and
// how old they were when the operation began, e.g.
//
//	adaptive threshold=12ms (p99 of 200 read samples, newest 3s, oldest 9m) step=50ms budget=10%
//	adaptive threshold=5ms (floor: p99 of 200 read samples is 2ms, newest 3s, oldest 9m) step=50ms budget=10%
//	adaptive threshold=500ms (fallback: 7 of 20 read samples, oldest 2m) step=50ms budget=10%
//	adaptive threshold=500ms (fallback: 0 of 20 read samples) step=50ms budget=10%
func (p *AdaptivePlan) String() string {
	c := p.a.cfg
	var why string
	op, n := p.w.op, int(p.samples)
	switch {
	case n == 0:
		why = fmt.Sprintf("fallback: 0 of %d %s samples", c.MinSamples, op)
	case n < c.MinSamples:
		why = fmt.Sprintf("fallback: %d of %d %s samples, oldest %s", n, c.MinSamples, op, sampleAge(p.begun, p.oldest))
	case p.learned < c.Floor:
		why = fmt.Sprintf("floor: p%s of %d %s samples is %s, %s", percent(c.Percentile), n, op, shortDuration(p.learned), p.ages())
	default:
		why = fmt.Sprintf("p%s of %d %s samples, %s", percent(c.Percentile), n, op, p.ages())
	}
	s := fmt.Sprintf("adaptive threshold=%s (%s) step=%s budget=%s%%", shortDuration(p.threshold), why, c.Step, percent(c.Budget))
	return s + maxRegionsSuffix(c.MaxRegions)
}

func (p *AdaptivePlan) ages() string {
	return "newest " + sampleAge(p.begun, p.newest) + ", oldest " + sampleAge(p.begun, p.oldest)
}

// sampleAge is how long before now (Unix nanoseconds) a sample was observed, rounded to
// whole seconds, minutes or hours: "0s", "42s", "9m", "3h". The ages are for a person
// judging whether the threshold is current, not for arithmetic. A sample observed after
// now (a first arm that answered after the next operation began) is 0s old.
func sampleAge(now, at int64) string {
	d := time.Duration(max(now-at, 0))
	switch {
	case d.Round(time.Second) < time.Minute:
		return strconv.FormatInt(int64(d.Round(time.Second)/time.Second), 10) + "s"
	case d.Round(time.Minute) < time.Hour:
		return strconv.FormatInt(int64(d.Round(time.Minute)/time.Minute), 10) + "m"
	default:
		return strconv.FormatInt(int64(d.Round(time.Hour)/time.Hour), 10) + "h"
	}
}

// percent writes a fraction as a percentage without float noise: 0.99 → "99",
// 0.999 → "99.9", 0.1 → "10".
func percent(f float64) string {
	return strconv.FormatFloat(math.Round(f*1e6)/1e4, 'f', -1, 64)
}

// shortDuration rounds a measured latency to the microsecond for reading: 12.345ms, not
// 12.345678ms.
func shortDuration(d time.Duration) string {
	if d > time.Millisecond {
		d = d.Round(time.Microsecond)
	}
	return d.String()
}

func maxRegionsSuffix(n int) string {
	if n <= 0 {
		return ""
	}
	return " max_regions=" + strconv.Itoa(n)
}
