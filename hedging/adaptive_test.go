package hedging

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
)

// t0 is when the fake clocks of these tests start.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// sample is one finished operation fed to an Adaptive.
type sample struct {
	op       string
	latency  time.Duration
	answered bool
}

// answered is n operations of kind op whose first region answered in d.
func answered(op string, n int, d time.Duration) []sample {
	s := make([]sample, n)
	for i := range s {
		s[i] = sample{op, d, true}
	}
	return s
}

// cancelled is n operations of kind op whose first arm lost to a hedge after d.
func cancelled(op string, n int, d time.Duration) []sample {
	s := answered(op, n, d)
	for i := range s {
		s[i].answered = false
	}
	return s
}

// shuffled1to is n operations of kind op answered in 1..n ms, in a fixed random order.
func shuffled1to(op string, n int) []sample {
	s := make([]sample, n)
	for i, v := range rand.New(rand.NewPCG(5, 6)).Perm(n) {
		s[i] = sample{op, time.Duration(v+1) * ms, true}
	}
	return s
}

func feed(a *Adaptive, samples ...[]sample) {
	for _, ss := range samples {
		for _, s := range ss {
			a.Begin(s.op).Done(s.latency, s.answered)
		}
	}
}

func newAdaptive(t testing.TB, cfg AdaptiveConfig) *Adaptive {
	t.Helper()
	a, err := NewAdaptive(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestAdaptiveThresholdFollowsTheFirstRegion(t *testing.T) {
	cases := []struct {
		name        string
		cfg         AdaptiveConfig
		feed        [][]sample
		op          string
		want        time.Duration
		wantSamples int
	}{
		{"an operation kind never seen gets the fallback", AdaptiveConfig{}, nil, "read", 500 * ms, 0},
		{"fallback until the kind has MinSamples samples", AdaptiveConfig{},
			[][]sample{answered("read", 19, 10*ms)}, "read", 500 * ms, 19},
		{"learned percentile once the kind has MinSamples samples", AdaptiveConfig{},
			[][]sample{answered("read", 20, 10*ms)}, "read", 10 * ms, 20},
		{"fallback is configurable", AdaptiveConfig{Fallback: 2 * time.Second, MinSamples: 5},
			[][]sample{answered("read", 4, 10*ms)}, "read", 2 * time.Second, 4},
		{"p99 of 200 samples of 1..200ms is the 198th", AdaptiveConfig{},
			[][]sample{shuffled1to("read", 200)}, "read", 198 * ms, 200},
		{"the percentile is configurable", AdaptiveConfig{Percentile: 0.5},
			[][]sample{shuffled1to("read", 200)}, "read", 100 * ms, 200},
		{"floor when the region is faster than it", AdaptiveConfig{},
			[][]sample{answered("read", 200, 1*ms)}, "read", 5 * ms, 200},
		{"a configured floor", AdaptiveConfig{Floor: 50 * ms},
			[][]sample{shuffled1to("read", 40)}, "read", 50 * ms, 40},
		{"the window forgets old samples", AdaptiveConfig{},
			[][]sample{answered("read", 200, 300*ms), answered("read", 200, 10*ms)}, "read", 10 * ms, 200},
		{"three slow samples left of 200 still make the p99", AdaptiveConfig{},
			[][]sample{answered("read", 200, 300*ms), answered("read", 197, 10*ms)}, "read", 300 * ms, 200},
		{"two slow samples left of 200 are above the p99", AdaptiveConfig{},
			[][]sample{answered("read", 200, 300*ms), answered("read", 198, 10*ms)}, "read", 10 * ms, 200},
		{"a small window", AdaptiveConfig{Window: 10, MinSamples: 10},
			[][]sample{answered("read", 50, 300*ms), answered("read", 10, 20*ms)}, "read", 20 * ms, 10},
		{"operation kinds have separate windows", AdaptiveConfig{},
			[][]sample{answered("read", 200, 10*ms), answered("create", 200, 80*ms)}, "read", 10 * ms, 200},
		{"a kind warming up does not borrow another kind's samples", AdaptiveConfig{},
			[][]sample{answered("read", 200, 10*ms), answered("create", 5, 80*ms)}, "create", 500 * ms, 5},
		{"cancelled first arms are not recorded", AdaptiveConfig{},
			[][]sample{answered("read", 200, 10*ms), cancelled("read", 200, 15*ms)}, "read", 10 * ms, 200},
		{"cancelled first arms do not count towards warming up", AdaptiveConfig{},
			[][]sample{answered("read", 10, 10*ms), cancelled("read", 100, 500*ms)}, "read", 500 * ms, 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := newAdaptive(t, c.cfg)
			feed(a, c.feed...)
			th, n, _ := a.Stats(c.op)
			if th != c.want || n != c.wantSamples {
				t.Fatalf("Stats(%q) = %v from %d samples, want %v from %d", c.op, th, n, c.want, c.wantSamples)
			}
			p := a.Begin(c.op).(*AdaptivePlan)
			if p.Threshold() != c.want || p.Offset(1) != c.want {
				t.Fatalf("plan threshold %v, offset(1) %v; want %v", p.Threshold(), p.Offset(1), c.want)
			}
		})
	}
}

func TestAPlanKeepsTheThresholdItBeganWith(t *testing.T) {
	a := newAdaptive(t, AdaptiveConfig{MinSamples: 1, Window: 1})
	feed(a, answered("read", 1, 20*ms))
	p := a.Begin("read").(*AdaptivePlan)
	feed(a, answered("read", 1, 90*ms))
	if p.Threshold() != 20*ms {
		t.Fatalf("threshold changed under a running operation: %v", p.Threshold())
	}
	if th, _, _ := a.Stats("read"); th != 90*ms {
		t.Fatalf("next operation's threshold %v, want 90ms", th)
	}
}

func TestOnlyTheFirstDoneOfAPlanCounts(t *testing.T) {
	a := newAdaptive(t, AdaptiveConfig{})
	p := a.Begin("read")
	p.Done(10*ms, true)
	p.Done(10*ms, true)
	q := a.Begin("read")
	q.Done(10*ms, false)
	q.Done(10*ms, true) // a late "answered" after the cancellation was reported
	if _, n, _ := a.Stats("read"); n != 1 {
		t.Fatalf("%d samples, want 1", n)
	}
}

// A region that turns uniformly slow: without a budget every operation would hedge for
// ever, because the answers the threshold would learn from are the ones the hedges beat.
// The budget refuses most hedges, the refused first arms answer slowly and are learned,
// the threshold rises to the region's new latency, and hedging stops.
func TestAUniformlySlowRegionStopsHedgingOnceTheBudgetRunsOut(t *testing.T) {
	const slow = 100 * ms
	a := newAdaptive(t, AdaptiveConfig{}) // p99, window 200, budget 10%, burst 10
	feed(a, answered("read", 200, 10*ms))
	if th, _, _ := a.Stats("read"); th != 10*ms {
		t.Fatalf("threshold %v before the slowdown", th)
	}
	hedged := make([]bool, 1000)
	extra := 0
	for i := range hedged {
		p := a.Begin("read").(*AdaptivePlan)
		if slow <= p.Threshold() {
			p.Done(slow, true) // answered before the threshold: no hedge wanted
			continue
		}
		if p.Admit(1) {
			hedged[i] = true
			extra++
			p.Done(p.Threshold()+ms, false) // the hedge (at 15ms in its region) won
			continue
		}
		p.Done(slow, true) // the hedge was refused: the first region answered, slowly
	}
	if th, _, _ := a.Stats("read"); th != slow {
		t.Fatalf("threshold %v after the slowdown, want %v", th, slow)
	}
	// The burst (10 tokens) and three refused operations' samples (enough to move the
	// p99 of 200) are all it takes.
	if extra > 11 {
		t.Fatalf("%d hedges sent to escape a uniformly slow region, want at most the burst and one", extra)
	}
	for i := 20; i < len(hedged); i++ {
		if hedged[i] {
			t.Fatalf("operation %d still hedged after the threshold rose", i)
		}
	}
}

func TestAdaptivePlanSchedule(t *testing.T) {
	a := newAdaptive(t, AdaptiveConfig{MinSamples: 1, Step: 30 * ms, MaxRegions: 2})
	feed(a, answered("read", 1, 20*ms))
	p := a.Begin("read")
	cases := []struct {
		arm  int
		want time.Duration
	}{{0, 0}, {1, 20 * ms}, {2, 50 * ms}, {3, 80 * ms}, {-1, 0}}
	for _, c := range cases {
		if got := p.Offset(c.arm); got != c.want {
			t.Errorf("Offset(%d) = %v, want %v", c.arm, got, c.want)
		}
	}
	for regions, want := range map[int]int{0: 0, 1: 1, 2: 2, 5: 2} {
		if got := p.Arms(regions); got != want {
			t.Errorf("Arms(%d) = %d with MaxRegions 2, want %d", regions, got, want)
		}
	}
	if got := newAdaptive(t, AdaptiveConfig{}).Begin("read").Arms(5); got != 5 {
		t.Errorf("Arms(5) = %d without MaxRegions, want every region", got)
	}
	var _ Planner = a
	var _ Plan = p
}

// An Adaptive is carried as an operation's Strategy; run without Begin it can only
// follow its warm-up schedule.
func TestAdaptiveAsAPlainStrategyFollowsTheWarmUpSchedule(t *testing.T) {
	var s Strategy = newAdaptive(t, AdaptiveConfig{Fallback: 300 * ms, Step: 100 * ms, MaxRegions: 2})
	feed(s.(*Adaptive), answered("read", 200, 10*ms))
	if s.Offset(0) != 0 || s.Offset(1) != 300*ms || s.Offset(2) != 400*ms {
		t.Fatalf("offsets %v %v %v", s.Offset(0), s.Offset(1), s.Offset(2))
	}
	if s.Arms(3) != 2 || s.Arms(1) != 1 {
		t.Fatalf("Arms(3) = %d, Arms(1) = %d with MaxRegions 2", s.Arms(3), s.Arms(1))
	}
}

func TestAdaptiveDescribesItselfAndEachDecision(t *testing.T) {
	// Each case feeds its samples in two halves, 2m apart, and begins its operation 3s
	// after the second half.
	cases := []struct {
		name string
		cfg  AdaptiveConfig
		feed []sample
		want string
	}{
		{"learned, with the samples' count and ages", AdaptiveConfig{}, answered("read", 200, 12*ms),
			"adaptive threshold=12ms (p99 of 200 read samples, newest 3s, oldest 2m) step=250ms budget=10%"},
		{"warming up, with how old the oldest sample is", AdaptiveConfig{}, answered("read", 7, 12*ms),
			"adaptive threshold=500ms (fallback: 7 of 20 read samples, oldest 2m) step=250ms budget=10%"},
		{"floor", AdaptiveConfig{}, answered("read", 200, 2*ms),
			"adaptive threshold=5ms (floor: p99 of 200 read samples is 2ms, newest 3s, oldest 2m) step=250ms budget=10%"},
		{"measured latencies are rounded to the microsecond", AdaptiveConfig{MinSamples: 2},
			answered("read", 2, 12345678*time.Nanosecond),
			"adaptive threshold=12.346ms (p99 of 2 read samples, newest 3s, oldest 2m) step=250ms budget=10%"},
		{"other settings", AdaptiveConfig{Percentile: 0.999, Step: 20 * ms, Budget: 0.05, MaxRegions: 2, MinSamples: 1},
			answered("create", 3, 40*ms),
			"adaptive threshold=40ms (p99.9 of 3 create samples, newest 3s, oldest 2m) step=20ms budget=5% max_regions=2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clk := clock.NewFake(t0)
			c.cfg.Clock = clk
			a := newAdaptive(t, c.cfg)
			half := len(c.feed) / 2
			feed(a, c.feed[:half])
			clk.Advance(2 * time.Minute)
			feed(a, c.feed[half:])
			clk.Advance(3 * time.Second)
			if got := a.Begin(c.feed[0].op).String(); got != c.want {
				t.Fatalf("plan String() =\n  %s\nwant\n  %s", got, c.want)
			}
		})
	}
	// Without samples there is nothing to date: the string is the one a first read
	// has always shown.
	if got, want := newAdaptive(t, AdaptiveConfig{}).Begin("read").String(), "adaptive threshold=500ms (fallback: 0 of 20 read samples) step=250ms budget=10%"; got != want {
		t.Fatalf("plan String() = %s, want %s", got, want)
	}
	if got := newAdaptive(t, AdaptiveConfig{}).String(); got != "adaptive p99 floor=5ms fallback=500ms step=250ms budget=10%" {
		t.Fatalf("String() = %s", got)
	}
	a := newAdaptive(t, AdaptiveConfig{Percentile: 0.95, Floor: 2 * ms, Fallback: time.Second, Step: 10 * ms, Budget: 0.25, MaxRegions: 3})
	if got := a.String(); got != "adaptive p95 floor=2ms fallback=1s step=10ms budget=25% max_regions=3" {
		t.Fatalf("String() = %s", got)
	}
}

func TestAdaptiveConfigValidation(t *testing.T) {
	cases := []struct {
		name string
		cfg  AdaptiveConfig
		want string // in the error; "" for valid
	}{
		{"defaults", AdaptiveConfig{}, ""},
		{"a small window set alone warms up when full", AdaptiveConfig{Window: 5}, ""},
		{"a percentage instead of a fraction", AdaptiveConfig{Percentile: 99}, "percentile must be a fraction between 0 and 1, exclusive (got 99): give 0.99 for p99"},
		{"percentile 1", AdaptiveConfig{Percentile: 1}, "percentile"},
		{"negative percentile", AdaptiveConfig{Percentile: -0.5}, "percentile"},
		{"minimum samples below 1", AdaptiveConfig{MinSamples: -1}, "minimum samples must be at least 1 (got -1)"},
		{"window smaller than the minimum", AdaptiveConfig{Window: 10, MinSamples: 20}, "window (10 samples) must hold at least the minimum samples (20): raise the window or lower the minimum"},
		{"negative window", AdaptiveConfig{Window: -1}, "window (-1 samples)"},
		{"negative floor", AdaptiveConfig{Floor: -ms}, "floor must not be negative (got -1ms): give a duration such as 5ms"},
		{"negative fallback", AdaptiveConfig{Fallback: -ms}, "fallback threshold must be greater than 0 (got -1ms)"},
		{"negative step", AdaptiveConfig{Step: -ms}, "step must not be negative (got -1ms)"},
		{"negative max regions", AdaptiveConfig{MaxRegions: -1}, "max regions must be at least 1"},
		{"a percentage budget", AdaptiveConfig{Budget: 10}, "budget must be a fraction in (0, 1] (got 10): give 0.10 for 10% extra requests"},
		{"negative budget", AdaptiveConfig{Budget: -0.1}, "budget"},
		{"budget of 100%", AdaptiveConfig{Budget: 1}, ""},
		{"burst below one hedge", AdaptiveConfig{Burst: 0.5}, "burst must be between 1 and 1000000 tokens (got 0.5)"},
		{"burst too large to count", AdaptiveConfig{Burst: 1e12}, "burst"},
		{"negative max sample age", AdaptiveConfig{MaxSampleAge: -time.Minute}, "max sample age must not be negative (got -1m0s): give a duration such as 10m"},
		{"a max sample age of a day", AdaptiveConfig{MaxSampleAge: 24 * time.Hour}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := NewAdaptive(c.cfg)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("rejected: %v", err)
			case c.want == "" && a == nil:
				t.Fatal("nil strategy")
			case c.want != "" && err == nil:
				t.Fatalf("accepted %+v", c.cfg)
			case c.want != "" && !strings.Contains(err.Error(), c.want):
				t.Fatalf("error %q does not say %q", err, c.want)
			case err != nil && (strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "adaptive hedge ")):
				t.Fatalf("error %q is not one line naming the setting", err)
			}
		})
	}
	nan := math.NaN()
	for _, cfg := range []AdaptiveConfig{{Percentile: nan}, {Budget: nan}, {Burst: nan}} {
		if _, err := NewAdaptive(cfg); err == nil {
			t.Errorf("NaN accepted in %+v", cfg)
		}
	}
}

func TestAdaptiveIsSafeForConcurrentUse(t *testing.T) {
	const goroutines, perGoroutine = 32, 300
	a := newAdaptive(t, AdaptiveConfig{Window: 50, MinSamples: 10})
	ops := []string{"read", "create", "query"}
	var admitted, answeredCount [3]atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for i := 0; i < perGoroutine; i++ {
				k := rng.IntN(len(ops))
				p := a.Begin(ops[k])
				_ = p.String()
				for arm := 1; arm < 3 && rng.IntN(2) == 0; arm++ {
					if p.Admit(arm) {
						admitted[k].Add(1)
					}
				}
				ok := rng.IntN(4) != 0
				if ok {
					answeredCount[k].Add(1)
				}
				p.Done(time.Duration(1+rng.IntN(100))*ms, ok)
				a.Stats(ops[k])
			}
		}()
	}
	wg.Wait()
	total := 0.0
	for k, op := range ops {
		total += float64(admitted[k].Load())
		if _, n, _ := a.Stats(op); n != int(min(50, answeredCount[k].Load())) {
			t.Errorf("%s: %d samples, want min(window, %d answered)", op, n, answeredCount[k].Load())
		}
	}
	if limit := 0.10*goroutines*perGoroutine + 10; total > limit {
		t.Fatalf("admitted %v hedges over %d operations, more than the budget allows (%v)", total, goroutines*perGoroutine, limit)
	}
}

// learnedAdaptive is a strategy whose read threshold has been learned as 20ms.
func learnedAdaptive(t *testing.T, cfg AdaptiveConfig) *Adaptive {
	t.Helper()
	a := newAdaptive(t, cfg)
	feed(a, answered("read", 20, 20*ms))
	if th, _, _ := a.Stats("read"); th != 20*ms {
		t.Fatalf("learned threshold %v, want 20ms", th)
	}
	return a
}

func TestRaceStartsTheHedgeAtTheLearnedThreshold(t *testing.T) {
	h := newHarness(t, 3)
	plan := learnedAdaptive(t, AdaptiveConfig{}).Begin("read")
	res := make(chan Outcome, 1)
	go func() {
		res <- Race{Clock: h.clock, Strategy: plan, Arms: plan.Arms(3), Run: h.arm, Admit: plan.Admit}.Do(context.Background())
	}()
	h.expectStart(0, 0)
	h.advance(19 * ms)
	h.expectNoStart()
	h.advance(1 * ms)
	h.expectStart(1, 20*ms)
	h.cmds[1] <- answerFinal
	out := <-res
	if out.Winner != 1 || out.Started != 2 || out.Denied != 0 {
		t.Fatalf("outcome %+v", out)
	}
	plan.Done(20*ms, false)
}

func TestRaceWithAnEmptyBudgetNeverStartsTheHedge(t *testing.T) {
	h := newHarness(t, 3)
	a := learnedAdaptive(t, AdaptiveConfig{Burst: 1, Budget: 0.01})
	// Drain the bucket: it holds 1 token, which the first hedge spends; the next
	// operation then earns only 0.01.
	if !a.Begin("read").Admit(1) {
		t.Fatal("a full bucket refused a hedge")
	}
	plan := a.Begin("read")
	asked := make(chan bool, 3)
	res := make(chan Outcome, 1)
	go func() {
		res <- Race{Clock: h.clock, Strategy: plan, Arms: plan.Arms(3), Run: h.arm,
			Admit: func(arm int) bool { ok := plan.Admit(arm); asked <- ok; return ok }}.Do(context.Background())
	}()
	h.expectStart(0, 0)
	h.advance(20 * ms)
	if ok := <-asked; ok {
		t.Fatal("the empty budget admitted the hedge")
	}
	h.clock.Advance(time.Second)
	h.expectNoStart()
	h.cmds[0] <- answerFinal
	out := <-res
	if out.Winner != 0 || out.Started != 1 || out.Denied != 1 {
		t.Fatalf("outcome %+v", out)
	}
	plan.Done(1020*ms, true)
	if _, n, _ := a.Stats("read"); n != 21 {
		t.Fatalf("%d samples: the refused operation's slow answer was not learned", n)
	}
}

func BenchmarkAdaptiveBeginDone(b *testing.B) {
	a := newAdaptive(b, AdaptiveConfig{})
	lat := make([]time.Duration, 1024)
	rng := rand.New(rand.NewPCG(8, 9))
	for i := range lat {
		lat[i] = time.Duration(5e6 + rng.IntN(50e6))
	}
	feed(a, answered("read", 200, 20*ms))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		p := a.Begin("read")
		p.Admit(1)
		p.Done(lat[i%len(lat)], true)
	}
}

// BenchmarkAdaptiveBeginDoneWhileSamplesAgeOut is the steady state in which Begin drops
// aged samples as fast as Done adds them: a MaxSampleAge of about 100 operations.
func BenchmarkAdaptiveBeginDoneWhileSamplesAgeOut(b *testing.B) {
	a := newAdaptive(b, AdaptiveConfig{MaxSampleAge: 20 * time.Microsecond})
	lat := make([]time.Duration, 1024)
	rng := rand.New(rand.NewPCG(8, 9))
	for i := range lat {
		lat[i] = time.Duration(rng.IntN(10e3)) // < 10µs: observed before they age out
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p := a.Begin("read")
		p.Admit(1)
		p.Done(lat[i%len(lat)], true)
	}
}

func BenchmarkAdaptiveBeginDoneParallel(b *testing.B) {
	a := newAdaptive(b, AdaptiveConfig{})
	feed(a, answered("read", 200, 20*ms))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			p := a.Begin("read")
			p.Done(time.Duration(5e6+(i*7919)%50e6), true)
			i++
		}
	})
}

func ExampleAdaptive() {
	clk := clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	a, err := NewAdaptive(AdaptiveConfig{MinSamples: 3, Clock: clk})
	if err != nil {
		panic(err)
	}
	for _, d := range []time.Duration{12 * time.Millisecond, 9 * time.Millisecond, 14 * time.Millisecond} {
		a.Begin("read").Done(d, true)
		clk.Advance(40 * time.Second)
	}
	plan := a.Begin("read")
	fmt.Println(a)
	fmt.Println(plan)
	fmt.Println(plan.Offset(1), plan.Offset(2))
	// Output:
	// adaptive p99 floor=5ms fallback=500ms step=250ms budget=10%
	// adaptive threshold=14ms (p99 of 3 read samples, newest 40s, oldest 2m) step=250ms budget=10%
	// 14ms 264ms
}
