package hedgetest

import (
	"fmt"
	"time"
)

// Recommendation is the strategy to use, and why.
type Recommendation struct {
	Strategy string `json:"strategy"`
	Met      bool   `json:"target_met"`
	Reason   string `json:"reason"`
}

// Recommend picks, among the strategies whose p99 meets the target, the one that sends
// the fewest extra requests (ties: lower p99). If none meets it, it names the one with the
// lowest p99 and says the target was not met.
func Recommend(results []Result, targetP99 time.Duration) Recommendation {
	best := -1
	for i, r := range results {
		if r.Reads == 0 || r.Stats.Quantile(0.99) > targetP99 {
			continue
		}
		if best < 0 || r.ExtraRequestsPct() < results[best].ExtraRequestsPct() ||
			(r.ExtraRequestsPct() == results[best].ExtraRequestsPct() && r.Stats.Quantile(0.99) < results[best].Stats.Quantile(0.99)) {
			best = i
		}
	}
	if best >= 0 {
		r := results[best]
		return Recommendation{Strategy: r.Strategy, Met: true, Reason: fmt.Sprintf("p99 %s meets the %s target at +%.1f%% requests, the least extra load of those that do",
			fmtMs(r.Stats.Quantile(0.99)), fmtMs(targetP99), r.ExtraRequestsPct())}
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

func fmtMs(d time.Duration) string {
	if d >= time.Second {
		return fmt.Sprintf("%.2fs", d.Seconds())
	}
	return fmt.Sprintf("%dms", d.Round(time.Millisecond).Milliseconds())
}
