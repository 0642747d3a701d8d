package hedging

import (
	"context"
	"errors"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
)

// ErrLostRace is the cancellation cause of arms that another arm beat.
var ErrLostRace = errors.New("another region answered first")

// Arm runs one arm of the race, pinned to its region. It calls transient each time one
// of its attempts gets a transient result (so that the next region can start at once)
// and returns whether it ended with a final result. It must return promptly once ctx is
// cancelled.
type Arm func(ctx context.Context, arm int, transient func()) (final bool)

// Race is one hedged operation.
type Race struct {
	Clock    clock.Clock
	Strategy Strategy
	// Arms is the number of arms that may run (Strategy.Arms of the effective regions).
	Arms int
	Run  Arm
}

// Outcome is how a race ended.
type Outcome struct {
	// Winner is the arm whose final result won, or -1 when no arm was final (the
	// caller then uses the first arm's outcome) or the race was cancelled.
	Winner int
	// Started is how many arms were started.
	Started int
}

type armDone struct {
	arm   int
	final bool
}

// Do runs the race: arm 0 at once, arm i at Strategy.Offset(i) unless a final answer came
// first, or as soon as an earlier arm reports a transient result. The first final
// answer wins and every other arm is cancelled; arms not yet started never start. When
// ctx ends (the end-to-end timeout), every arm is cancelled. Do returns only after every
// started arm has returned, so no goroutine outlives it.
func (r Race) Do(ctx context.Context) Outcome {
	out := Outcome{Winner: -1}
	if r.Arms < 1 {
		return out
	}
	done := make(chan armDone, r.Arms)
	transient := make(chan struct{}, r.Arms*4)
	cancels := make([]context.CancelCauseFunc, 0, r.Arms)
	running := 0
	start := func() {
		i := out.Started
		out.Started++
		running++
		actx, cancel := context.WithCancelCause(ctx)
		cancels = append(cancels, cancel)
		notify := func() {
			select {
			case transient <- struct{}{}:
			default:
			}
		}
		go func() {
			final := r.Run(actx, i, notify)
			done <- armDone{arm: i, final: final}
		}()
	}
	cancelAll := func(cause error) {
		for _, c := range cancels {
			c(cause)
		}
	}
	drain := func() {
		for running > 0 {
			<-done
			running--
		}
	}
	defer func() {
		for _, c := range cancels {
			c(nil)
		}
	}()

	t0 := r.Clock.Now()
	var timer clock.Timer
	armTimer := func() {
		if timer != nil {
			timer.Stop()
			timer = nil
		}
		if out.Started >= r.Arms {
			return
		}
		wait := r.Strategy.Offset(out.Started) - r.Clock.Now().Sub(t0)
		timer = r.Clock.NewTimer(wait)
	}
	start()
	armTimer()
	for {
		var tc <-chan time.Time
		if timer != nil {
			tc = timer.C()
		}
		select {
		case d := <-done:
			running--
			if d.final {
				out.Winner = d.arm
				if timer != nil {
					timer.Stop()
				}
				cancelAll(ErrLostRace)
				drain()
				return out
			}
			// An arm that ended without a final result is a transient result too.
			if out.Started < r.Arms {
				start()
				armTimer()
			} else if running == 0 {
				return out
			}
		case <-transient:
			if out.Started < r.Arms {
				start()
				armTimer()
			}
		case <-tc:
			timer = nil
			start()
			armTimer()
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			cancelAll(context.Cause(ctx))
			drain()
			return out
		}
	}
}
