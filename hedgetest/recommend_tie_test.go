package hedgetest

import (
	"strings"
	"testing"
	"time"
)

func TestRecommendOnATiePicksTheSimplerStrategy(t *testing.T) {
	target := 100 * time.Millisecond
	cases := []struct {
		name    string
		results []Result
		want    string
	}{
		{"at +0% none beats a faster fanout", []Result{
			result("fanout", 10*time.Millisecond, 100, 100),
			result("adaptive", 20*time.Millisecond, 100, 100),
			result("threshold=50ms/100ms", 30*time.Millisecond, 100, 100),
			result("none", 40*time.Millisecond, 100, 100),
		}, "none"},
		{"at +0% without none, threshold beats adaptive and fanout", []Result{
			result("fanout", 10*time.Millisecond, 100, 100),
			result("adaptive=5%", 20*time.Millisecond, 100, 100),
			result("threshold=50ms/100ms", 30*time.Millisecond, 100, 100),
		}, "threshold=50ms/100ms"},
		{"at equal extra load adaptive beats fanout", []Result{
			result("fanout", 10*time.Millisecond, 1000, 1050),
			result("adaptive", 20*time.Millisecond, 1000, 1050),
		}, "adaptive"},
		{"equal as printed (+0.0%) is a tie", []Result{
			result("threshold=50ms/100ms", 10*time.Millisecond, 10000, 10004),
			result("none", 40*time.Millisecond, 10000, 10000),
		}, "none"},
		{"two of a kind: the lower p99", []Result{
			result("threshold=80ms/100ms", 60*time.Millisecond, 100, 105),
			result("threshold=50ms/100ms", 40*time.Millisecond, 100, 105),
		}, "threshold=50ms/100ms"},
		{"less extra load still beats simpler", []Result{
			result("fanout", 10*time.Millisecond, 100, 300),
			result("threshold=50ms/100ms", 30*time.Millisecond, 100, 102),
			result("adaptive", 30*time.Millisecond, 100, 101),
		}, "adaptive"},
		{"the simpler one must meet the target", []Result{
			result("none", time.Second, 100, 100),
			result("adaptive", 20*time.Millisecond, 100, 100),
		}, "adaptive"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := Recommend(c.results, target)
			if rec.Strategy != c.want || !rec.Met {
				t.Errorf("%+v, want %s", rec, c.want)
			}
			if tie := strings.Contains(c.name, "tie") || strings.Contains(c.name, "beats a") || strings.Contains(c.name, "without none") || strings.Contains(c.name, "equal extra"); tie != strings.Contains(rec.Reason, "the simplest") {
				t.Errorf("reason %q: a tie broken by simplicity says so, and only then", rec.Reason)
			}
		})
	}
}
