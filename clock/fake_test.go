package clock

import (
	"testing"
	"time"
)

func TestFakeFiresTimersInDeadlineOrderAtTheirDeadlines(t *testing.T) {
	start := time.Unix(0, 0)
	f := NewFake(start)
	got := make(chan time.Duration, 3)
	f.AfterFunc(300*time.Millisecond, func() { got <- 300 })
	t1 := f.NewTimer(100 * time.Millisecond)
	stopped := f.NewTimer(200 * time.Millisecond)
	if !stopped.Stop() {
		t.Fatal("Stop of a pending timer must report true")
	}
	f.Advance(150 * time.Millisecond)
	select {
	case at := <-t1.C():
		if at.Sub(start) != 100*time.Millisecond {
			t.Fatalf("timer fired at %v, want its deadline 100ms", at.Sub(start))
		}
	default:
		t.Fatal("100ms timer did not fire by 150ms")
	}
	if f.Pending() != 1 {
		t.Fatalf("pending = %d, want 1 (the 300ms func)", f.Pending())
	}
	f.Advance(150 * time.Millisecond)
	if v := <-got; v != 300 {
		t.Fatal("300ms func did not run")
	}
	if t1.Stop() {
		t.Fatal("Stop of a fired timer must report false")
	}
	if !f.Now().Equal(start.Add(300 * time.Millisecond)) {
		t.Fatalf("now = %v", f.Now())
	}
}

func TestWaitForTimersSeesTimersArmedByAnotherGoroutine(t *testing.T) {
	f := NewFake(time.Unix(0, 0))
	go f.NewTimer(time.Second)
	if !f.WaitForTimers(1, 5*time.Second) {
		t.Fatal("timer armed elsewhere was not seen")
	}
	if f.WaitForTimers(2, 10*time.Millisecond) {
		t.Fatal("WaitForTimers must give up when the timers never come")
	}
}
