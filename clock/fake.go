package clock

import (
	"sort"
	"sync"
	"time"
)

// Fake is a manual clock for tests: time moves only when Advance is called, and timers
// due by then fire in order of their deadlines.
type Fake struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
	seq    int
	// waiters are woken whenever a timer is added, so a test can wait until the code
	// under test has armed the timer it expects before advancing.
	cond *sync.Cond
}

// NewFake starts a fake clock at t.
func NewFake(t time.Time) *Fake {
	f := &Fake{now: t}
	f.cond = sync.NewCond(&f.mu)
	return f
}

type fakeTimer struct {
	clock    *Fake
	deadline time.Time
	seq      int
	fn       func()
	ch       chan time.Time
	stopped  bool
	fired    bool
}

func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *Fake) AfterFunc(d time.Duration, fn func()) Timer { return f.add(d, fn) }

func (f *Fake) NewTimer(d time.Duration) Timer { return f.add(d, nil) }

func (f *Fake) add(d time.Duration, fn func()) *fakeTimer {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	t := &fakeTimer{clock: f, deadline: f.now.Add(d), seq: f.seq, fn: fn, ch: make(chan time.Time, 1)}
	if d <= 0 {
		f.fire(t)
	} else {
		f.timers = append(f.timers, t)
	}
	f.cond.Broadcast()
	return t
}

// fire runs with f.mu held.
func (f *Fake) fire(t *fakeTimer) {
	t.fired = true
	if t.fn != nil {
		go t.fn()
		return
	}
	t.ch <- f.now
}

func (t *fakeTimer) C() <-chan time.Time { return t.ch }

func (t *fakeTimer) Stop() bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	if t.fired || t.stopped {
		return false
	}
	t.stopped = true
	return true
}

// Advance moves time forward by d, firing every timer that falls due, in deadline order,
// each at its own deadline.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	end := f.now.Add(d)
	for {
		sort.SliceStable(f.timers, func(i, j int) bool {
			if f.timers[i].deadline.Equal(f.timers[j].deadline) {
				return f.timers[i].seq < f.timers[j].seq
			}
			return f.timers[i].deadline.Before(f.timers[j].deadline)
		})
		if len(f.timers) == 0 || f.timers[0].deadline.After(end) {
			break
		}
		t := f.timers[0]
		f.timers = f.timers[1:]
		if t.stopped {
			continue
		}
		f.now = t.deadline
		f.fire(t)
	}
	f.now = end
}

// Pending is the number of armed timers that have neither fired nor been stopped.
func (f *Fake) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pendingLocked()
}

func (f *Fake) pendingLocked() int {
	n := 0
	for _, t := range f.timers {
		if !t.stopped {
			n++
		}
	}
	return n
}

// WaitForTimerIn blocks until a timer due d from now is armed (and neither fired nor
// stopped), or the timeout passes in real time; it reports whether it appeared. Where code
// under test arms several timers (an attempt timeout beside a retry wait, say), waiting
// for the one a test is about is what keeps it from advancing too early.
func (f *Fake) WaitForTimerIn(d, timeout time.Duration) bool {
	return f.waitFor(func() bool {
		due := f.now.Add(d)
		for _, t := range f.timers {
			if !t.stopped && !t.fired && t.deadline.Equal(due) {
				return true
			}
		}
		return false
	}, timeout)
}

// WaitForTimers blocks until at least n timers are armed, or the timeout passes (in
// real time, as a guard against a test that would otherwise hang). It reports whether
// the timers appeared.
func (f *Fake) WaitForTimers(n int, timeout time.Duration) bool {
	return f.waitFor(func() bool { return f.pendingLocked() >= n }, timeout)
}

// waitFor waits, with f.mu held while it checks, until done reports true or the timeout
// passes in real time.
func (f *Fake) waitFor(done func() bool, timeout time.Duration) bool {
	expired := make(chan struct{})
	finished := make(chan struct{})
	defer close(finished)
	guard := time.NewTimer(timeout)
	defer guard.Stop()
	go func() {
		select {
		case <-guard.C:
			close(expired)
			f.mu.Lock()
			f.cond.Broadcast()
			f.mu.Unlock()
		case <-finished:
		}
	}()
	f.mu.Lock()
	defer f.mu.Unlock()
	for !done() {
		select {
		case <-expired:
			return false
		default:
		}
		f.cond.Wait()
	}
	return true
}
