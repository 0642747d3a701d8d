package faults

import (
	"slices"
	"sync"
	"testing"
	"time"
)

func delayRule(id string, d time.Duration) Rule {
	return Rule{ID: id, Effect: EffectDelay, Delay: fixed(d)}
}

func TestDecideMatchesRegionOperationAndReplica(t *testing.T) {
	tests := []struct {
		name                string
		rule                Rule
		region, op, replica string
		want                bool
	}{
		{"empty region matches any", Rule{}, "Japan East", "read", "", true},
		{"region ignores case and spaces", Rule{Region: "East US"}, "EASTUS", "read", "", true},
		{"other region", Rule{Region: "East US"}, "West US", "read", "", false},
		{"listed operation", Rule{Operations: []string{"query"}}, "", "query", "", true},
		{"unlisted operation", Rule{Operations: []string{"query"}}, "", "read", "", false},
		{"group operation", Rule{Operations: []string{"writes"}}, "", "patch", "", true},
		{"empty replica matches any", Rule{}, "", "read", "r2", true},
		{"same replica", Rule{Replica: "r2"}, "", "read", "r2", true},
		{"other replica", Rule{Replica: "r2"}, "", "read", "r1", false},
		{"replica rule skips callers without replica", Rule{Replica: "r2"}, "", "read", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.rule
			r.Effect, r.Status = EffectStatus, 503
			in, _ := newTestInjector(t, r)
			if got := in.Decide(tt.region, tt.op, tt.replica).Status == 503; got != tt.want {
				t.Fatalf("fired = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDecideAccumulatesDelayRulesOnTopOfBaseLatency(t *testing.T) {
	in, _ := newTestInjector(t,
		delayRule("slow-a", ms(100)),
		Rule{ID: "other-region", Region: "West US", Effect: EffectDelay, Delay: fixed(ms(1000))},
		delayRule("slow-b", ms(250)),
	)
	mustSetLatency(t, in, "East US", "all", fixed(ms(5)))

	d := in.Decide("East US", "read", "")
	if d.Delay != ms(355) {
		t.Fatalf("Delay = %v, want 355ms", d.Delay)
	}
	if !slices.Equal(d.Rules, []string{"slow-a", "slow-b"}) {
		t.Fatalf("Rules = %v, want [slow-a slow-b]", d.Rules)
	}
	if d.Status != 0 || d.Hang || d.Refuse || d.DropResponse {
		t.Fatalf("delay rules must not end the request: %+v", d)
	}
}

func TestDecideFirstFiringTerminalRuleWins(t *testing.T) {
	in, _ := newTestInjector(t,
		Rule{ID: "never", Effect: EffectHang, Region: "West US"},
		Rule{ID: "throttle", Effect: EffectStatus, Status: 429, SubStatus: 3200},
		Rule{ID: "hang", Effect: EffectHang},
		delayRule("slow", ms(40)),
		Rule{ID: "refuse", Effect: EffectRefuse},
	)
	d := in.Decide("East US", "read", "")
	if d.Status != 429 || d.SubStatus != 3200 || d.Hang || d.Refuse {
		t.Fatalf("want only the 429 from the first terminal rule, got %+v", d)
	}
	if d.Delay != ms(40) {
		t.Fatalf("delay rules after the terminal one still apply: Delay = %v, want 40ms", d.Delay)
	}
	if !slices.Equal(d.Rules, []string{"throttle", "slow"}) {
		t.Fatalf("Rules = %v, want [throttle slow]", d.Rules)
	}
	fired := firedByID(in)
	want := map[string]int{"never": 0, "throttle": 1, "hang": 0, "slow": 1, "refuse": 0}
	for id, n := range want {
		if fired[id] != n {
			t.Errorf("rule %s fired %d times, want %d (later terminal rules must not be counted)", id, fired[id], n)
		}
	}
}

func TestDecideTerminalEffects(t *testing.T) {
	tests := []struct {
		name string
		rule Rule
		want Decision
	}{
		{"status with explicit retry-after", Rule{Effect: EffectStatus, Status: 429, RetryAfter: Duration(ms(750))},
			Decision{Status: 429, RetryAfter: ms(750)}},
		{"429 defaults retry-after", Rule{Effect: EffectStatus, Status: 429},
			Decision{Status: 429, RetryAfter: DefaultRetryAfter}},
		{"503 has no default retry-after", Rule{Effect: EffectStatus, Status: 503, SubStatus: 21008},
			Decision{Status: 503, SubStatus: 21008}},
		{"hang", Rule{Effect: EffectHang}, Decision{Hang: true}},
		{"refuse closes the connection", Rule{Effect: EffectRefuse}, Decision{Refuse: true}},
		{"drop-response", Rule{Effect: EffectDropResponse}, Decision{DropResponse: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.rule.ID = "x"
			in, _ := newTestInjector(t, tt.rule)
			got := in.Decide("East US", "create", "")
			tt.want.Rules = []string{"x"}
			if !equalDecision(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestDropResponseOnlyHitsWrites(t *testing.T) {
	for _, op := range []string{"read", "query", "create", "upsert", "replace", "delete", "patch", "account", "pkranges", "metadata", "addresses"} {
		t.Run(op, func(t *testing.T) {
			in, _ := newTestInjector(t, Rule{Effect: EffectDropResponse})
			got := in.Decide("East US", op, "").DropResponse
			if want := isWrite(op); got != want {
				t.Fatalf("DropResponse = %v, want %v", got, want)
			}
			if n := in.Rules()[0].Fired; !got && n != 0 {
				t.Fatalf("rule counted %d times on a non-write", n)
			}
		})
	}
}

func TestDropResponseOnNonWriteLetsLaterTerminalRuleDecide(t *testing.T) {
	in, _ := newTestInjector(t,
		Rule{ID: "drop", Effect: EffectDropResponse},
		Rule{ID: "throttle", Effect: EffectStatus, Status: 429},
	)
	d := in.Decide("East US", "read", "")
	if d.DropResponse || d.Status != 429 {
		t.Fatalf("got %+v, want 429 without drop-response", d)
	}
}

func TestCountLimitsHowOftenARuleFires(t *testing.T) {
	tests := []struct {
		count, requests, want int
	}{
		{count: 1, requests: 5, want: 1},
		{count: 3, requests: 5, want: 3},
		{count: 0, requests: 5, want: 5},
	}
	for _, tt := range tests {
		t.Run("", func(t *testing.T) {
			in, _ := newTestInjector(t, Rule{ID: "x", Effect: EffectStatus, Status: 503, Count: tt.count})
			got := 0
			for range tt.requests {
				if in.Decide("East US", "read", "").Status == 503 {
					got++
				}
			}
			if got != tt.want {
				t.Fatalf("fired on %d requests, want %d", got, tt.want)
			}
			if n := in.Rules()[0].Fired; n != tt.want {
				t.Fatalf("Fired = %d, want %d", n, tt.want)
			}
		})
	}
}

func TestExhaustedRuleLetsTheNextTerminalRuleDecide(t *testing.T) {
	in, _ := newTestInjector(t,
		Rule{ID: "once", Effect: EffectStatus, Status: 503, Count: 1},
		Rule{ID: "then", Effect: EffectStatus, Status: 429},
	)
	if got := in.Decide("", "read", "").Status; got != 503 {
		t.Fatalf("first request status = %d, want 503", got)
	}
	if got := in.Decide("", "read", "").Status; got != 429 {
		t.Fatalf("second request status = %d, want 429", got)
	}
}

func TestTimeWindowOfARuleAddedAtStart(t *testing.T) {
	rule := Rule{Effect: EffectHang, After: Duration(10 * time.Second), For: Duration(5 * time.Second)}
	forever := Rule{Effect: EffectHang, After: Duration(10 * time.Second)}
	tests := []struct {
		name    string
		rule    Rule
		elapsed time.Duration
		want    bool
	}{
		{"before after", rule, 9*time.Second + 999*time.Millisecond, false},
		{"at after", rule, 10 * time.Second, true},
		{"inside window", rule, 12 * time.Second, true},
		{"at end of window", rule, 15 * time.Second, false},
		{"after window", rule, time.Hour, false},
		{"zero for lasts forever", forever, 1000 * time.Hour, true},
		{"no window is active at start", Rule{Effect: EffectHang}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, clock := newTestInjector(t, tt.rule)
			clock.Advance(tt.elapsed)
			if got := in.Decide("East US", "read", "").Hang; got != tt.want {
				t.Fatalf("at start+%v: hang = %v, want %v", tt.elapsed, got, tt.want)
			}
		})
	}
}

func TestAddedRuleCountsFromWhenItIsAdded(t *testing.T) {
	// The emulator has been up for 30 s when the rule arrives: counted from the start,
	// "after 10s for 30s" would already be half over, and "for 30s" (the help's own
	// refuse example) would have ended before it was added.
	window := Rule{Effect: EffectHang, After: Duration(10 * time.Second), For: Duration(30 * time.Second)}
	forOnly := Rule{Effect: EffectHang, For: Duration(30 * time.Second)}
	tests := []struct {
		name    string
		rule    Rule
		elapsed time.Duration // since the rule was added
		want    bool
	}{
		{"not yet when added", window, 0, false},
		{"just before after", window, 10*time.Second - time.Millisecond, false},
		{"at after", window, 10 * time.Second, true},
		{"inside window", window, 39 * time.Second, true},
		{"at end of window", window, 40 * time.Second, false},
		{"for alone is active when added", forOnly, 0, true},
		{"for alone lasts its length", forOnly, 30*time.Second - time.Millisecond, true},
		{"for alone ends", forOnly, 30 * time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := &fakeClock{now: epoch}
			in := NewInjector(clock, seeded(), epoch)
			clock.Advance(30 * time.Second)
			added, err := in.Add(tt.rule)
			if err != nil {
				t.Fatal(err)
			}
			if !added.Since.Equal(epoch.Add(30 * time.Second)) {
				t.Fatalf("Since = %v, want the time it was added", added.Since)
			}
			clock.Advance(tt.elapsed)
			if got := in.Decide("East US", "read", "").Hang; got != tt.want {
				t.Fatalf("at add+%v: hang = %v, want %v", tt.elapsed, got, tt.want)
			}
		})
	}
}

func TestScenarioRuleCountsFromEmulatorStart(t *testing.T) {
	clock := &fakeClock{now: epoch}
	in := NewInjector(clock, seeded(), epoch)
	clock.Advance(3 * time.Second) // loading took a while
	rule := Rule{Effect: EffectHang, After: Duration(10 * time.Second), For: Duration(5 * time.Second), Since: epoch.Add(time.Hour)}
	if err := in.Load(nil, []Rule{rule}); err != nil {
		t.Fatal(err)
	}
	if got := in.Rules()[0].Since; !got.Equal(epoch) {
		t.Fatalf("Since = %v, want the emulator's start %v (whatever the caller gave)", got, epoch)
	}
	for _, tt := range []struct {
		at   time.Duration // since the emulator started
		want bool
	}{{9 * time.Second, false}, {10 * time.Second, true}, {14 * time.Second, true}, {15 * time.Second, false}} {
		clock.now = epoch.Add(tt.at)
		if got := in.Decide("East US", "read", "").Hang; got != tt.want {
			t.Fatalf("at start+%v: hang = %v, want %v", tt.at, got, tt.want)
		}
	}
}

func TestAddReplacesACallersSince(t *testing.T) {
	in, clock := newTestInjector(t)
	clock.Advance(time.Minute)
	added, err := in.Add(Rule{Effect: EffectHang, After: Duration(time.Second), Since: epoch.Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if !added.Since.Equal(clock.now) {
		t.Fatalf("Since = %v, want now (%v)", added.Since, clock.now)
	}
	if in.Decide("", "read", "").Hang {
		t.Fatal("a caller's Since must not open the window early")
	}
}

func TestProbabilityFiresInRoughProportion(t *testing.T) {
	tests := []struct {
		p      float64
		lo, hi int
	}{
		{p: 0.05, lo: 350, hi: 650},
		{p: 0.25, lo: 2200, hi: 2800},
		{p: 0.9, lo: 8700, hi: 9300},
		{p: 1, lo: 10000, hi: 10000},
		{p: 0, lo: 10000, hi: 10000}, // unset means always
	}
	for _, tt := range tests {
		t.Run("", func(t *testing.T) {
			in, _ := newTestInjector(t, Rule{ID: "x", Effect: EffectStatus, Status: 503, Probability: tt.p})
			got := 0
			for range 10000 {
				if in.Decide("East US", "read", "").Status != 0 {
					got++
				}
			}
			if got < tt.lo || got > tt.hi {
				t.Fatalf("p=%v fired %d/10000, want %d..%d", tt.p, got, tt.lo, tt.hi)
			}
			if n := in.Rules()[0].Fired; n != got {
				t.Fatalf("Fired = %d, want %d", n, got)
			}
		})
	}
}

func TestSameSeedGivesSameDecisions(t *testing.T) {
	run := func() []Decision {
		in, _ := newTestInjector(t,
			Rule{Effect: EffectStatus, Status: 503, Probability: 0.3},
			Rule{Effect: EffectDelay, Probability: 0.5, Delay: Distribution{Kind: KindUniform, Min: Duration(ms(1)), Max: Duration(ms(100))}},
		)
		mustSetLatency(t, in, "", "all", Distribution{Kind: KindLognormal, P50: Duration(ms(5)), P99: Duration(ms(40))})
		out := make([]Decision, 200)
		for i := range out {
			out[i] = in.Decide("East US", "read", "")
		}
		return out
	}
	a, b := run(), run()
	for i := range a {
		if !equalDecision(a[i], b[i]) {
			t.Fatalf("decision %d differs: %+v vs %+v", i, a[i], b[i])
		}
	}
}

func TestRefusingReportsActiveRegionWideRefuseRules(t *testing.T) {
	tests := []struct {
		name    string
		rule    Rule
		region  string
		elapsed time.Duration
		want    bool
	}{
		{"region down", Rule{Region: "East US"}, "eastus", 0, true},
		{"other region up", Rule{Region: "East US"}, "West US", 0, false},
		{"every region down", Rule{}, "West US", 0, true},
		{"explicit all operations", Rule{Operations: []string{"all"}}, "West US", 0, true},
		{"before window", Rule{After: Duration(time.Minute)}, "West US", 0, false},
		{"inside window", Rule{After: Duration(time.Minute)}, "West US", 2 * time.Minute, true},
		{"after window", Rule{For: Duration(time.Minute)}, "West US", 2 * time.Minute, false},
		{"operation-scoped rules wait for the request", Rule{Operations: []string{"writes"}}, "West US", 0, false},
		{"replica-scoped rules wait for the request", Rule{Replica: "r1"}, "West US", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.rule.Effect = EffectRefuse
			in, clock := newTestInjector(t, tt.rule)
			clock.Advance(tt.elapsed)
			if got := in.Refusing(tt.region); got != tt.want {
				t.Fatalf("Refusing(%q) = %v, want %v", tt.region, got, tt.want)
			}
		})
	}
}

func TestRefusingIgnoresOtherEffects(t *testing.T) {
	in, _ := newTestInjector(t,
		Rule{Effect: EffectHang},
		Rule{Effect: EffectStatus, Status: 503},
	)
	if in.Refusing("East US") {
		t.Fatal("only refuse rules refuse connections")
	}
}

func TestRefusingConsumesCountOnlyWhenItFires(t *testing.T) {
	in, clock := newTestInjector(t, Rule{ID: "down", Effect: EffectRefuse, Region: "East US", Count: 2, After: Duration(time.Second)})
	in.Refusing("East US") // not yet active
	in.Refusing("West US") // other region
	clock.Advance(time.Second)
	got := []bool{in.Refusing("East US"), in.Refusing("East US"), in.Refusing("East US")}
	if !slices.Equal(got, []bool{true, true, false}) {
		t.Fatalf("Refusing sequence = %v, want [true true false]", got)
	}
	if n := in.Rules()[0].Fired; n != 2 {
		t.Fatalf("Fired = %d, want 2", n)
	}
}

func TestRefusingRollsProbability(t *testing.T) {
	in, _ := newTestInjector(t, Rule{ID: "flaky", Effect: EffectRefuse, Probability: 0.5})
	got := 0
	for range 10000 {
		if in.Refusing("East US") {
			got++
		}
	}
	if got < 4500 || got > 5500 {
		t.Fatalf("refused %d/10000, want about half", got)
	}
	if n := in.Rules()[0].Fired; n != got {
		t.Fatalf("Fired = %d, want %d", n, got)
	}
}

func TestInjectorIsSafeForConcurrentUse(t *testing.T) {
	in, _ := newTestInjector(t,
		Rule{Effect: EffectStatus, Status: 429, Probability: 0.5, Count: 100},
		Rule{Effect: EffectRefuse, Region: "West US", Probability: 0.5},
	)
	mustSetLatency(t, in, "", "all", Distribution{Kind: KindLognormal, P50: Duration(ms(5)), P99: Duration(ms(40))})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				in.Decide("East US", "read", "")
				in.Refusing("West US")
				_ = in.Rules()
				_ = in.Latency()
			}
		})
	}
	wg.Wait()
	if n := in.Rules()[0].Fired; n != 100 {
		t.Fatalf("count-limited rule fired %d times, want exactly 100", n)
	}
}

func firedByID(in *Injector) map[string]int {
	out := make(map[string]int)
	for _, r := range in.Rules() {
		out[r.ID] = r.Fired
	}
	return out
}

func equalDecision(a, b Decision) bool {
	return slices.Equal(a.Rules, b.Rules) &&
		a.Delay == b.Delay && a.Status == b.Status && a.SubStatus == b.SubStatus &&
		a.RetryAfter == b.RetryAfter && a.Hang == b.Hang && a.Refuse == b.Refuse &&
		a.DropResponse == b.DropResponse
}
