package hedgetest

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Recommendation is the strategy to use, and why.
type Recommendation struct {
	// Strategy is the one to use: the cheapest that met the target, else the one with
	// the lowest p99.
	Strategy string `json:"strategy"`
	Met      bool   `json:"target_met"`
	Reason   string `json:"reason"`
}

// Recommend picks, among the strategies whose p99 meets the target, the one that sends
// the fewest extra requests. On a tie (the same extra load as the table prints it, to
// 0.1 %) the simpler strategy wins, then the lower p99. If none meets it, it names the
// one with the lowest p99 and says the target was not met.
func Recommend(results []Result, targetP99 time.Duration) Recommendation {
	best := -1
	for i, r := range results {
		if r.Reads == 0 || r.Stats.Quantile(0.99) > targetP99 {
			continue
		}
		if best < 0 || better(r, results[best]) {
			best = i
		}
	}
	if best >= 0 {
		r := results[best]
		why := "the least extra load of those that do"
		for i, o := range results {
			if i != best && o.Reads > 0 && o.Stats.Quantile(0.99) <= targetP99 && sameLoad(r, o) && complexity(o.Strategy) > complexity(r.Strategy) {
				why = "the simplest of those that do with the least extra load"
			}
		}
		return Recommendation{Strategy: r.Strategy, Met: true, Reason: fmt.Sprintf("p99 %s meets the %s target at +%.1f%% requests, %s",
			fmtMs(r.Stats.Quantile(0.99)), fmtMs(targetP99), r.ExtraRequestsPct(), why)}
	}
	low := -1
	for i, r := range results {
		if r.Reads > 0 && (low < 0 || r.Stats.Quantile(0.99) < results[low].Stats.Quantile(0.99)) {
			low = i
		}
	}
	if low < 0 {
		return Recommendation{Reason: "no strategy completed any read"}
	}
	r := results[low]
	return Recommendation{Strategy: r.Strategy, Met: false, Reason: fmt.Sprintf("no strategy meets the %s p99 target; %s comes closest with p99 %s at +%.1f%% requests",
		fmtMs(targetP99), r.Strategy, fmtMs(r.Stats.Quantile(0.99)), r.ExtraRequestsPct())}
}

// better reports whether a beats b, both meeting the target. At the same extra load the
// strategies sent the same requests, so a p99 difference between them is the run's noise;
// what differs is what each does when the traffic changes: none never adds load; a fixed
// threshold adds a bounded, predictable amount; adaptive moves its threshold with what it
// learns (harder to reason about during an incident); fanout asks every region at once,
// multiplying the load as soon as there is more than one. So the simpler one wins.
func better(a, b Result) bool {
	if !sameLoad(a, b) {
		return a.ExtraRequestsPct() < b.ExtraRequestsPct()
	}
	if ca, cb := complexity(a.Strategy), complexity(b.Strategy); ca != cb {
		return ca < cb
	}
	return a.Stats.Quantile(0.99) < b.Stats.Quantile(0.99)
}

// sameLoad reports whether a and b sent the same extra requests as the table prints them.
func sameLoad(a, b Result) bool {
	return math.Round(a.ExtraRequestsPct()*10) == math.Round(b.ExtraRequestsPct()*10)
}

// complexity orders the strategy kinds from the simplest: none < threshold < adaptive <
// fanout; a name this version does not know comes last.
func complexity(strategy string) int {
	kind, _, _ := strings.Cut(strategy, "=")
	switch kind {
	case "none":
		return 0
	case "threshold":
		return 1
	case "adaptive":
		return 2
	case "fanout":
		return 3
	}
	return 4
}

func fmtMs(d time.Duration) string {
	if d >= time.Second {
		return fmt.Sprintf("%.2fs", d.Seconds())
	}
	return fmt.Sprintf("%dms", d.Round(time.Millisecond).Milliseconds())
}
