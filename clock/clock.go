// Package clock is the time source of the engine and its policies. Hedging schedules,
// retry back-off and end-to-end timeouts read time only through a Clock, so tests drive
// a 300 ms schedule with a Fake clock in microseconds, deterministically.
package clock

import "time"

// Clock tells the time and fires timers.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has passed.
	AfterFunc(d time.Duration, f func()) Timer
	// NewTimer returns a timer whose channel receives once d has passed.
	NewTimer(d time.Duration) Timer
}

// Timer is a pending timer; Stop reports whether it stopped it before it fired.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
}

// Real is the wall clock.
type Real struct{}

func (Real) Now() time.Time { return time.Now() }

func (Real) AfterFunc(d time.Duration, f func()) Timer { return realTimer{t: time.AfterFunc(d, f)} }

func (Real) NewTimer(d time.Duration) Timer { return realTimer{t: time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time { return r.t.C }
func (r realTimer) Stop() bool          { return r.t.Stop() }
