// Package rulimit paces the requests of a long-running job (import, export) by the
// request units they cost, so that the job neither exceeds the RU/s its user allows
// (--max-ru-per-second) nor keeps taking the whole of a container's throughput once the
// service says it is over (429).
//
// It is a token bucket in request units with debt: a request may go while the balance
// holds at least one request unit. Its charge is known only from the answer, so when it
// goes it takes what requests have been costing (nothing known yet: one request unit),
// and when its answer comes (Spent) the difference. The bucket holds at most a second's
// worth, and starts with one request's: a job has no unused second before its start, so
// its first second, like every other, spends no more than the cap (with many senders
// the takings at send time keep them from all going on the same balance). A 429 pauses every sender for the service's retry-after and
// lowers the rate to a fraction of what was measured; without throttling the rate climbs
// back, 10 % a second compounded, up to the user's cap. The package reads time only
// through a clock.Clock, so tests drive it deterministically.
package rulimit

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
)

const (
	// decrease is the share of the measured RU/s kept after a 429: the service said the
	// container is over, so the job gives back a fifth of what it was taking.
	decrease = 0.8
	// increasePerSecond is how fast the rate climbs back without 429s: 10 % a second,
	// compounded, so that a rate cut low by an early burst of 429s (little measured
	// yet) is back to ten times that in 25 s, not in minutes.
	increasePerSecond = 0.10
	// quiet is how long after a 429 before the rate starts climbing again, and the
	// shortest time between two decreases: the 429s of requests that were already in
	// flight when the first came back are the same overload, not a new one.
	quiet = time.Second
	// window is how far back the measured RU/s looks, in slots of slot.
	window = 2 * time.Second
	slot   = 100 * time.Millisecond
	// warmUp is how long a job runs before a 429 lowers its rate: what it spent
	// before then says little about what the container gives.
	warmUp = time.Second
	// minCharge is the least a request costs, and so the balance one needs to go.
	minCharge = 1.0
	// minRate is the lowest rate a decrease goes to, so that a job keeps moving; and
	// floorShare of the highest rate the job was measured at when a 429 came: 429s that
	// keep coming whatever the rate (a fault rule, another client's burst) must not take
	// a job down to nothing. Below that, the retry-after pauses do the slowing.
	minRate    = 1.0
	floorShare = 0.10
	// unlimitedAbove: with no user cap, a rate climbed back to this many times what the
	// job now spends no longer limits anything, and the limiter stops limiting.
	unlimitedAbove = 4.0
)

// Limiter paces requests by their request charge. Its methods are safe for concurrent
// use by every sender of a job.
type Limiter struct {
	clk clock.Clock
	// limit is the user's cap in RU/s (0: none).
	limit float64

	mu sync.Mutex
	// rate is the RU/s allowed now (0: unlimited); balance the request units that may
	// still be spent, refilled at rate up to one second's worth, negative while a
	// charge larger than the balance is being paid off.
	rate, balance float64
	last          time.Time
	// base is the rate right after the last decrease, what the climb adds to; peak the
	// highest RU/s measured when a 429 came, which sets the floor of a decrease.
	base, peak float64
	throttled  time.Time // the last decrease
	pauseUntil time.Time
	throttles  int64
	// slots hold the request units spent per slot over the last window, for the
	// measured rate; slotStart is the start of slots[cur].
	slots     [int(window / slot)]float64
	cur       int
	slotStart time.Time
	started   time.Time
	// expected is what a request is expected to cost: the average of recent charges,
	// 0 before the first (expectedCharge). owed counts the requests sent whose charge is not
	// known yet, owedRU what was taken for them when they went.
	expected float64
	owed     int
	owedRU   float64
}

// expectedWeight is the weight of the latest charge in expected, an exponentially
// weighted average: a job's charges change with its items, not from one to the next.
const expectedWeight = 0.2

// New returns a limiter that allows at most maxPerSecond RU/s (0: no cap of the
// user's; the limiter still slows down after 429s). A nil clock is the wall clock.
func New(maxPerSecond float64, clk clock.Clock) *Limiter {
	if clk == nil {
		clk = clock.Real{}
	}
	if maxPerSecond < 0 || math.IsNaN(maxPerSecond) || math.IsInf(maxPerSecond, 0) {
		maxPerSecond = 0
	}
	now := clk.Now()
	l := &Limiter{clk: clk, limit: maxPerSecond, rate: maxPerSecond, base: maxPerSecond,
		last: now, slotStart: now, started: now}
	l.balance = l.need() // one request's worth: see the package doc
	return l
}

// Wait blocks until the next request may be sent: no retry-after pause is in force and
// the balance holds one request unit. It returns the context's error if the context
// ends first.
func (l *Limiter) Wait(ctx context.Context) error {
	for {
		l.mu.Lock()
		now := l.clk.Now()
		l.refill(now)
		var d time.Duration
		switch {
		case now.Before(l.pauseUntil):
			d = l.pauseUntil.Sub(now)
		case l.rate > 0 && l.balance < l.need():
			d = time.Duration((l.need() - l.balance) / l.rate * float64(time.Second))
			if d < time.Millisecond {
				d = time.Millisecond
			}
		}
		if d <= 0 {
			if err := ctx.Err(); err != nil {
				l.mu.Unlock()
				return err
			}
			l.take()
			l.mu.Unlock()
			return nil
		}
		l.mu.Unlock()
		t := l.clk.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C():
		}
	}
}

// need is the balance a request needs to go: one request unit, the least any request
// costs (or the whole bucket when the rate is below 1 RU/s).
func (l *Limiter) need() float64 { return min(minCharge, l.rate) }

// take takes what a request is expected to cost from the balance as it goes.
func (l *Limiter) take() {
	if l.rate <= 0 {
		return
	}
	e := l.expectedCharge()
	l.balance -= e
	l.owed++
	l.owedRU += e
}

// Spent takes a request's charge, once its answer has arrived: the difference between
// the charge and what was taken when it went (a charge of 0 gives that back).
func (l *Limiter) Spent(ru float64) {
	if ru < 0 || math.IsNaN(ru) || math.IsInf(ru, 0) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clk.Now()
	l.refill(now)
	l.advanceSlots(now)
	l.slots[l.cur] += ru
	taken := 0.0
	if l.owed > 0 {
		taken = l.owedRU / float64(l.owed)
		l.owed--
		l.owedRU -= taken
		if l.owed == 0 {
			l.owedRU = 0 // no rounding left behind
		}
	}
	if l.rate > 0 {
		l.balance = min(l.balance-(ru-taken), l.rate)
	}
	switch {
	case ru == 0:
	case l.expected == 0:
		l.expected = ru
	default:
		l.expected += expectedWeight * (ru - l.expected)
	}
}

// expectedCharge is what the next request is expected to cost.
func (l *Limiter) expectedCharge() float64 {
	if l.expected == 0 {
		return minCharge
	}
	return l.expected
}

// Throttled records a 429: every sender pauses for retryAfter, and, unless a decrease
// happened within the last second, the rate drops to 0.8× the RU/s measured over the
// last two seconds (never below a tenth of the highest rate measured at a 429, nor
// 1 RU/s; never above the user's cap).
func (l *Limiter) Throttled(retryAfter time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clk.Now()
	l.refill(now)
	l.throttles++
	if retryAfter > 0 && now.Add(retryAfter).After(l.pauseUntil) {
		l.pauseUntil = now.Add(retryAfter)
	}
	if !l.throttled.IsZero() && now.Sub(l.throttled) < quiet {
		return
	}
	if now.Sub(l.started) < warmUp {
		// Too little has been spent to say what the container gives: a rate cut from
		// a first burst's few successes would hold the job far below it for long.
		// The pause is the answer until then.
		return
	}
	measured := l.measured(now)
	l.peak = max(l.peak, measured)
	next := decrease * measured
	if l.rate > 0 && (measured == 0 || next > decrease*l.rate) {
		next = decrease * l.rate
	}
	if next == 0 {
		return // nothing measured and no rate to lower: the pause is all there is to do
	}
	next = max(next, minRate, floorShare*l.peak)
	if l.limit > 0 {
		next = min(next, l.limit)
	}
	l.rate, l.base, l.throttled = next, next, now
	l.balance = min(l.balance, next)
}

// Rate is the RU/s allowed now; 0 means unlimited.
func (l *Limiter) Rate() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refill(l.clk.Now())
	return l.rate
}

// Throttles is how many 429s Throttled was told of.
func (l *Limiter) Throttles() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.throttles
}

// Measured is the RU/s spent over the last two seconds (or since the start, if less).
func (l *Limiter) Measured() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.measured(l.clk.Now())
}

// refill adds what the rate earned since the last call, climbs the rate back after a
// decrease, and lets an uncapped limiter stop limiting once its rate is far above what
// the job spends.
func (l *Limiter) refill(now time.Time) {
	dt := now.Sub(l.last)
	if dt <= 0 {
		return
	}
	l.last = now
	if !l.throttled.IsZero() && l.rate > 0 {
		since := now.Sub(l.throttled) - quiet
		if since > 0 {
			climbed := l.base * math.Pow(1+increasePerSecond, since.Seconds())
			switch {
			case l.limit > 0 && climbed >= l.limit:
				l.rate, l.throttled = l.limit, time.Time{}
			case l.limit == 0 && climbed > unlimitedAbove*max(l.measured(now), minRate):
				l.rate, l.balance, l.throttled = 0, 0, time.Time{}
				return
			default:
				l.rate = climbed
			}
		}
	}
	if l.rate > 0 {
		l.balance = min(l.balance+l.rate*dt.Seconds(), l.rate)
	}
}

// advanceSlots moves the measuring window up to now, emptying the slots it passes.
func (l *Limiter) advanceSlots(now time.Time) {
	n := int(now.Sub(l.slotStart) / slot)
	if n <= 0 {
		return
	}
	if n > len(l.slots) {
		n = len(l.slots)
	}
	for i := 0; i < n; i++ {
		l.cur = (l.cur + 1) % len(l.slots)
		l.slots[l.cur] = 0
	}
	l.slotStart = l.slotStart.Add(now.Sub(l.slotStart).Truncate(slot))
}

func (l *Limiter) measured(now time.Time) float64 {
	l.advanceSlots(now)
	sum := 0.0
	for _, v := range l.slots {
		sum += v
	}
	// The current slot is only partly over: the window is the full slots before it and
	// the part of it that has passed.
	span := min(now.Sub(l.started), window-slot+now.Sub(l.slotStart))
	if span < slot {
		span = slot
	}
	return sum / span.Seconds()
}
