package rulimit

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
)

var epoch = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// waitReturns runs l.Wait in a goroutine and reports whether it returned before the
// fake clock was advanced by d, then after.
func waitAfter(t *testing.T, l *Limiter, clk *clock.Fake, d time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- l.Wait(context.Background()) }()
	if !clk.WaitForTimerIn(d, 5*time.Second) {
		t.Fatalf("Wait armed no timer due in %v", d)
	}
	select {
	case <-done:
		t.Fatalf("Wait returned before %v had passed", d)
	default:
	}
	clk.Advance(d)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Wait: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("Wait did not return once %v had passed", d)
	}
}

func TestAnUnlimitedLimiterNeverWaits(t *testing.T) {
	clk := clock.NewFake(epoch)
	l := New(0, clk)
	for range 1000 {
		if err := l.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		l.Spent(10)
	}
	if l.Rate() != 0 || clk.Pending() != 0 {
		t.Fatalf("rate %v, %d timers: an unlimited limiter should neither limit nor wait", l.Rate(), clk.Pending())
	}
}

func TestARequestTakesWhatRequestsCostAndItsAnswerTheDifference(t *testing.T) {
	clk := clock.NewFake(epoch)
	l := New(100, clk)
	// The bucket starts with one request's worth: the first goes at once, taking the
	// one request unit a request is assumed to cost before any answer says otherwise.
	if err := l.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	// It cost 10: the balance is -9, and 10 RU are needed before the next goes (100 ms).
	l.Spent(10)
	waitAfter(t, l, clk, 100*time.Millisecond)
	// That one took 10 as it went; costing 50, it leaves the balance at -49: half a
	// second until 1 RU is there again.
	l.Spent(50)
	waitAfter(t, l, clk, 500*time.Millisecond)
}

func TestSpendingAtTheCapForTenSecondsSpendsTheCap(t *testing.T) {
	clk := clock.NewFake(epoch)
	l := New(200, clk)
	spent := 0.0
	end := epoch.Add(10 * time.Second)
	for clk.Now().Before(end) {
		done := make(chan struct{})
		go func() { _ = l.Wait(context.Background()); close(done) }()
		for {
			select {
			case <-done:
			default:
				if clk.Pending() > 0 {
					clk.Advance(time.Millisecond)
				}
				continue
			}
			break
		}
		l.Spent(5)
		spent += 5
	}
	// 10 s at 200 RU/s, give or take one request: no burst at the start.
	if want := 200 * 10.0; math.Abs(spent-want) > 10 {
		t.Fatalf("spent %.0f RU in 10 s at a cap of 200 RU/s, want ≈%.0f", spent, want)
	}
}

func TestA429PausesEverySenderForTheRetryAfter(t *testing.T) {
	clk := clock.NewFake(epoch)
	l := New(0, clk)
	l.Spent(100)
	l.Throttled(300 * time.Millisecond)
	waitAfter(t, l, clk, 300*time.Millisecond)
	if l.Throttles() != 1 {
		t.Fatalf("Throttles() = %d, want 1", l.Throttles())
	}
}

func TestA429LowersTheRateToFourFifthsOfWhatWasMeasured(t *testing.T) {
	clk := clock.NewFake(epoch)
	l := New(0, clk)
	// 1,000 RU/s for two seconds.
	for range 20 {
		l.Spent(100)
		clk.Advance(100 * time.Millisecond)
	}
	if m := l.Measured(); math.Abs(m-1000) > 1 {
		t.Fatalf("measured %.1f RU/s, want 1000", m)
	}
	l.Throttled(0)
	if r := l.Rate(); math.Abs(r-800) > 1 {
		t.Fatalf("rate after a 429 = %.1f RU/s, want 800 (0.8 × 1000 measured)", r)
	}
	// The 429s of requests already in flight are the same overload: no second cut.
	clk.Advance(200 * time.Millisecond)
	l.Throttled(0)
	l.Throttled(0)
	if r := l.Rate(); math.Abs(r-800) > 1 {
		t.Fatalf("rate after more 429s within a second = %.1f RU/s, want still 800", r)
	}
}

func TestTheRateClimbsBackTenPercentASecondCompoundedUpToTheCap(t *testing.T) {
	clk := clock.NewFake(epoch)
	l := New(1000, clk)
	for range 20 {
		l.Spent(50) // 500 RU/s measured
		clk.Advance(100 * time.Millisecond)
	}
	l.Throttled(0)
	if r := l.Rate(); math.Abs(r-400) > 1 {
		t.Fatalf("rate after a 429 = %.1f, want 400", r)
	}
	clk.Advance(quiet) // no climb during the quiet second
	if r := l.Rate(); math.Abs(r-400) > 1 {
		t.Fatalf("rate a second after the 429 = %.1f, want 400", r)
	}
	clk.Advance(5 * time.Second)
	if want := 400 * math.Pow(1.1, 5); math.Abs(l.Rate()-want) > 1 {
		t.Fatalf("rate 5 s into the climb = %.1f, want %.1f (400 × 1.1⁵)", l.Rate(), want)
	}
	clk.Advance(time.Minute)
	if r := l.Rate(); r != 1000 {
		t.Fatalf("rate long after = %.1f, want the cap 1000", r)
	}
}

func TestAnUncappedLimiterStopsLimitingOnceFarAboveWhatTheJobSpends(t *testing.T) {
	clk := clock.NewFake(epoch)
	l := New(0, clk)
	for range 20 {
		l.Spent(100)
		clk.Advance(100 * time.Millisecond)
	}
	l.Throttled(0)
	if l.Rate() == 0 {
		t.Fatal("a 429 should have set a rate")
	}
	// The job keeps spending 10 RU/s; the rate climbs from 800 past 4 × 10 at once.
	for range 50 {
		l.Spent(1)
		clk.Advance(100 * time.Millisecond)
	}
	if r := l.Rate(); r != 0 {
		t.Fatalf("rate = %.1f, want 0 (unlimited again)", r)
	}
}

func TestWaitEndsWithTheContext(t *testing.T) {
	clk := clock.NewFake(epoch)
	l := New(0, clk)
	l.Throttled(time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Wait(ctx) }()
	if !clk.WaitForTimerIn(time.Hour, 5*time.Second) {
		t.Fatal("Wait armed no timer for the pause")
	}
	cancel()
	select {
	case err := <-done:
		if err != context.Canceled {
			t.Fatalf("Wait = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Wait did not return when its context ended")
	}
}

func TestBadChargesAndCapsAreIgnored(t *testing.T) {
	clk := clock.NewFake(epoch)
	l := New(-5, clk)
	l.Spent(math.NaN())
	l.Spent(-3)
	l.Spent(math.Inf(1))
	if l.Rate() != 0 || l.Measured() != 0 {
		t.Fatalf("rate %v measured %v, want 0 and 0", l.Rate(), l.Measured())
	}
}

func TestA429ThatKeepsComingDoesNotTakeTheRateBelowATenthOfThePeak(t *testing.T) {
	clk := clock.NewFake(epoch)
	l := New(0, clk)
	for range 20 {
		l.Spent(100) // 1,000 RU/s
		clk.Advance(100 * time.Millisecond)
	}
	// A 429 every second for a minute, whatever the job spends: each one cuts.
	for range 60 {
		l.Throttled(0)
		for range 10 {
			l.Spent(l.Rate() / 10)
			clk.Advance(100 * time.Millisecond)
		}
	}
	if r := l.Rate(); math.Abs(r-100) > 1 {
		t.Fatalf("rate after a minute of 429s = %.1f RU/s, want the floor 100 (a tenth of the 1,000 measured at the first)", r)
	}
}

func TestA429InTheFirstSecondPausesWithoutCuttingTheRate(t *testing.T) {
	clk := clock.NewFake(epoch)
	l := New(0, clk)
	// One 5 RU success in the first 100 ms, then a burst of 429s: 50 RU/s measured,
	// which says nothing of what the container gives.
	l.Spent(5)
	clk.Advance(100 * time.Millisecond)
	l.Throttled(200 * time.Millisecond)
	if r := l.Rate(); r != 0 {
		t.Fatalf("rate after a burst in the first second = %.1f, want still unlimited", r)
	}
	waitAfter(t, l, clk, 200*time.Millisecond)
}

func TestARateCutLowClimbsBackInSeconds(t *testing.T) {
	clk := clock.NewFake(epoch)
	l := New(0, clk)
	// 50 RU/s for two seconds, then a 429: cut to 40.
	for range 20 {
		l.Spent(5)
		clk.Advance(100 * time.Millisecond)
	}
	l.Throttled(0)
	if r := l.Rate(); math.Abs(r-40) > 1 {
		t.Fatalf("rate after the 429 = %.1f, want 40", r)
	}
	// The job could spend 1,000 RU/s: it spends all it is allowed.
	for range 260 {
		if r := l.Rate(); r > 0 {
			l.Spent(r / 10)
		} else {
			l.Spent(100)
		}
		clk.Advance(100 * time.Millisecond)
	}
	if r := l.Rate(); r != 0 && r < 400 {
		t.Fatalf("rate 26 s after the cut = %.1f RU/s, want ten times the 40 it was cut to (or unlimited)", r)
	}
}
