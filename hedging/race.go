package hedging

import (
	"context"
	"errors"
	"sync"

	"github.com/cosmosctl/cosmosctl/clock"
)

// ErrLostRace is the cancellation cause of arms that another arm beat.
var ErrLostRace = errors.New("another region answered first")

// Arm runs one arm of the race, pinned to its region. It calls transient when one of its
// attempts got a transient result and it goes on (so that the next region can start at
// once) and returns whether it ended with a final result. It must return promptly once
// ctx is cancelled.
type Arm func(ctx context.Context, arm int, transient func()) (final bool)

// Race is one hedged operation.
type Race struct {
	Clock    clock.Clock
	Strategy Strategy
	// Arms is the number of arms that may run (Strategy.Arms of the effective regions).
	Arms int
	Run  Arm
	// Admit, when set, is asked before each hedge arm (i >= 1) starts; when it says no,
	// that arm and every later one stay unstarted (a budget is exhausted).
	Admit func(arm int) bool
}

// Outcome is how a race ended.
type Outcome struct {
	// Winner is the arm whose final result won, or -1 when no arm was final (the
	// caller then uses the first arm's outcome) or the race was cancelled.
	Winner int
	// Started is how many arms were started.
	Started int
	// Denied is the arm that Admit refused, or 0 when none was.
	Denied int
}

// race is the shared state of one Do. The first arm runs on the caller's goroutine and
// later arms on their own; timers, transient results and finishing arms all update this
// state under one lock, so that the common case (the first region answers before the
// threshold) costs one context and one timer, not a goroutine hand-off.
type race struct {
	r       Race
	parent  context.Context
	mu      sync.Mutex
	t0      int64 // clock.Now at start, in UnixNano
	started int
	running int
	winner  int
	denied  int
	aborted bool
	closed  bool
	cancels []context.CancelCauseFunc
	timer   clock.Timer
	done    chan struct{}
}

// Do runs the race: arm 0 at once, arm i at Strategy.Offset(i) unless a final answer came
// first, or as soon as an earlier arm reports a transient result or ends without a final
// one. The first final answer wins and every other arm is cancelled; arms not yet
// started never start. When ctx ends (the end-to-end timeout), every arm is cancelled
// with ctx's cause. Do returns only after every started arm has returned, so no goroutine
// outlives it.
func (r Race) Do(ctx context.Context) Outcome {
	if r.Arms < 1 {
		return Outcome{Winner: -1}
	}
	s := &race{r: r, parent: ctx, winner: -1, done: make(chan struct{}), t0: r.Clock.Now().UnixNano()}
	s.mu.Lock()
	ctx0 := s.newArmLocked()
	s.armTimerLocked()
	s.mu.Unlock()
	stop := context.AfterFunc(ctx, func() { s.abort(context.Cause(ctx)) })
	// The caller's goroutine runs the first arm, and any arm that starts because the one
	// it ran ended without a final result while nothing else runs: the common failover
	// path then needs no goroutine hand-off.
	arm, actx := 0, ctx0
	for actx != nil {
		final := r.Run(actx, arm, s.transient)
		arm, actx = s.finished(arm, final, inlineIfIdle)
	}
	<-s.done
	stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.cancels {
		c(nil)
	}
	return Outcome{Winner: s.winner, Started: s.started, Denied: s.denied}
}

// newArmLocked registers the next arm and returns its context.
func (s *race) newArmLocked() context.Context {
	ctx, cancel := context.WithCancelCause(s.parent)
	s.cancels = append(s.cancels, cancel)
	s.started++
	s.running++
	return ctx
}

// startNextLocked starts the next arm on its own goroutine, if the race is still open.
func (s *race) startNextLocked() {
	s.startNext(spawn)
}

// How startNext hands over the arm it starts.
const (
	spawn        = iota // on a goroutine of its own
	inlineIfIdle        // to the caller, if no other arm runs (Do's own goroutine)
	inline              // to the caller (a timer's goroutine, which has nothing else to do)
)

// startNext starts the next arm, if the race is still open. Depending on how, it runs
// it on a new goroutine, or only registers it and returns its context for the caller
// to run.
func (s *race) startNext(how int) (int, context.Context) {
	// The parent's end is checked directly: the abort callback runs on its own
	// goroutine and may not have run yet when a cancelled arm returns.
	if s.winner >= 0 || s.aborted || s.denied > 0 || s.started >= s.r.Arms || s.parent.Err() != nil {
		return 0, nil
	}
	i := s.started
	if s.r.Admit != nil && !s.r.Admit(i) {
		s.denied = i
		s.stopTimerLocked()
		s.closeIfDoneLocked()
		return 0, nil
	}
	ctx := s.newArmLocked()
	s.armTimerLocked()
	if how == inline || (how == inlineIfIdle && s.running == 1) {
		return i, ctx
	}
	go func() {
		final := s.r.Run(ctx, i, s.transient)
		s.finished(i, final, spawn)
	}()
	return 0, nil
}

// armTimerLocked schedules the next arm at its offset from the start.
func (s *race) armTimerLocked() {
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	if s.started >= s.r.Arms || s.denied > 0 {
		return
	}
	elapsed := s.r.Clock.Now().UnixNano() - s.t0
	wait := s.r.Strategy.Offset(s.started) - durationNanos(elapsed)
	s.timer = s.r.Clock.AfterFunc(wait, s.onTimer)
}

// onTimer starts the arm that is due. The timer fires on a goroutine of its own, which
// then runs the arm itself rather than handing it to yet another goroutine.
func (s *race) onTimer() {
	s.mu.Lock()
	s.timer = nil
	i, ctx := s.startNext(inline)
	s.mu.Unlock()
	for ctx != nil {
		final := s.r.Run(ctx, i, s.transient)
		i, ctx = s.finished(i, final, inline)
	}
}

func (s *race) transient() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.startNextLocked()
}

// finished records an arm's end: a final result wins and cancels the rest; an arm that
// ended without one is a transient result, and the next region starts at once.
//
// how says whether the caller would run the next arm itself (see startNext); if it
// would, finished returns that arm.
func (s *race) finished(i int, final bool, how int) (next int, ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running--
	switch {
	case final && s.winner < 0 && !s.aborted:
		s.winner = i
		s.stopTimerLocked()
		for j, c := range s.cancels {
			if j != i {
				c(ErrLostRace)
			}
		}
	case !final:
		next, ctx = s.startNext(how)
	}
	s.closeIfDoneLocked()
	return next, ctx
}

func (s *race) abort(cause error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.winner >= 0 {
		return
	}
	s.aborted = true
	s.stopTimerLocked()
	for _, c := range s.cancels {
		c(cause)
	}
	s.closeIfDoneLocked()
}

func (s *race) stopTimerLocked() {
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
}

// closeIfDoneLocked ends Do's wait once no arm runs and none may start.
func (s *race) closeIfDoneLocked() {
	if s.closed || s.running > 0 {
		return
	}
	if s.winner >= 0 || s.aborted || s.denied > 0 || s.started >= s.r.Arms || s.parent.Err() != nil {
		s.closed = true
		s.stopTimerLocked()
		close(s.done)
	}
}
