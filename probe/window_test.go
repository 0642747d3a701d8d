package probe

import (
	"testing"
	"time"
)

func TestRecentWindowKeepsTheLastTenSeconds(t *testing.T) {
	r := newRecent(recentSpan)
	s := time.Second
	// One request per second, in the middle of each second: the first 20 fail (the
	// region was sick), the rest succeed (it recovered). Each check looks at the window
	// as the live view does, at the time it is drawn.
	recorded := 0
	recordUntil := func(at time.Duration) {
		for ; time.Duration(recorded)*s+s/2 <= at; recorded++ {
			r.record(time.Duration(recorded)*s+s/2, time.Millisecond, 503, 0, 0, recorded < 20)
		}
	}
	cases := []struct {
		name          string
		at            time.Duration
		count, errors int
	}{
		{"before ten seconds have passed: the run so far", 4 * s, 4, 4},
		{"at 20s: every request of the last ten seconds failed", 20 * s, 10, 10},
		{"at 25s: five failed, five recovered", 25 * s, 10, 5},
		{"between seconds, the second under way as well", 25*s + 600*time.Millisecond, 11, 5},
		{"at 30s: the last ten seconds, all after the recovery", 30 * s, 10, 0},
	}
	for _, tc := range cases {
		recordUntil(tc.at)
		if sum := r.summary(tc.at); sum.Count != tc.count || sum.Errors != tc.errors {
			t.Errorf("%s: window at %s has %d requests, %d errors; want %d and %d", tc.name, tc.at, sum.Count, sum.Errors, tc.count, tc.errors)
		}
	}
	if sum := r.summary(60 * s); sum.Count != 0 {
		t.Errorf("long after the last request the window is empty: %+v", sum)
	}
}
