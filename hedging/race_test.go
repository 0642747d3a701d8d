package hedging

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cosmosctl/cosmosctl/clock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const ms = time.Millisecond

type command int

const (
	answerFinal command = iota
	answerTransient
	endWithoutFinal
)

// harness scripts arms: each started arm reports its start offset, then obeys commands
// until it ends or its context is cancelled.
type harness struct {
	t       *testing.T
	clock   *clock.Fake
	t0      time.Time
	started chan int
	mu      sync.Mutex
	startAt map[int]time.Duration
	causes  map[int]error
	cmds    []chan command
}

func newHarness(t *testing.T, arms int) *harness {
	h := &harness{t: t, clock: clock.NewFake(time.Unix(0, 0)), started: make(chan int, arms),
		startAt: map[int]time.Duration{}, causes: map[int]error{}}
	h.t0 = h.clock.Now()
	for i := 0; i < arms; i++ {
		h.cmds = append(h.cmds, make(chan command, 4))
	}
	return h
}

func (h *harness) arm(ctx context.Context, i int, transient func()) bool {
	h.mu.Lock()
	h.startAt[i] = h.clock.Now().Sub(h.t0)
	h.mu.Unlock()
	h.started <- i
	for {
		select {
		case c := <-h.cmds[i]:
			switch c {
			case answerFinal:
				return true
			case answerTransient:
				transient()
			case endWithoutFinal:
				return false
			}
		case <-ctx.Done():
			h.mu.Lock()
			h.causes[i] = context.Cause(ctx)
			h.mu.Unlock()
			return false
		}
	}
}

// expectStart waits for arm i to start and checks its offset.
func (h *harness) expectStart(i int, at time.Duration) {
	h.t.Helper()
	select {
	case got := <-h.started:
		h.mu.Lock()
		off := h.startAt[got]
		h.mu.Unlock()
		if got != i || off != at {
			h.t.Fatalf("arm %d started at %v; want arm %d at %v", got, off, i, at)
		}
	case <-time.After(5 * time.Second):
		h.t.Fatalf("arm %d never started", i)
	}
}

func (h *harness) expectNoStart() {
	h.t.Helper()
	select {
	case got := <-h.started:
		h.t.Fatalf("arm %d started, want none", got)
	default:
	}
}

// advance moves the clock once the race has armed its next timer.
func (h *harness) advance(d time.Duration) {
	h.t.Helper()
	h.clock.WaitForTimers(1, time.Second)
	h.clock.Advance(d)
}

func (h *harness) race(ctx context.Context, s Strategy, arms int) chan Outcome {
	out := make(chan Outcome, 1)
	go func() { out <- Race{Clock: h.clock, Strategy: s, Arms: arms, Run: h.arm}.Do(ctx) }()
	return out
}

func TestThresholdScheduleStartsArmsAtThresholdThenEveryStep(t *testing.T) {
	h := newHarness(t, 3)
	res := h.race(context.Background(), Threshold{Threshold: 300 * ms, Step: 100 * ms}, 3)
	h.expectStart(0, 0)
	h.advance(299 * ms)
	h.expectNoStart()
	h.advance(1 * ms)
	h.expectStart(1, 300*ms)
	h.advance(100 * ms)
	h.expectStart(2, 400*ms)
	h.cmds[2] <- answerFinal
	out := <-res
	if out.Winner != 2 || out.Started != 3 {
		t.Fatalf("outcome %+v", out)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, i := range []int{0, 1} {
		if !errors.Is(h.causes[i], ErrLostRace) {
			t.Fatalf("arm %d cancelled with %v, want ErrLostRace", i, h.causes[i])
		}
	}
}

func TestStepZeroStartsEveryRemainingRegionAtTheThreshold(t *testing.T) {
	h := newHarness(t, 4)
	res := h.race(context.Background(), Threshold{Threshold: 300 * ms, Step: 0}, 4)
	h.expectStart(0, 0)
	h.advance(300 * ms)
	got := map[int]bool{}
	for i := 0; i < 3; i++ {
		select {
		case a := <-h.started:
			got[a] = true
			h.mu.Lock()
			at := h.startAt[a]
			h.mu.Unlock()
			if at != 300*ms {
				t.Fatalf("arm %d at %v", a, at)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("arms did not all start at the threshold")
		}
	}
	h.cmds[0] <- answerFinal
	if out := <-res; out.Winner != 0 || out.Started != 4 {
		t.Fatalf("outcome %+v", out)
	}
}

func TestTransientResultStartsTheNextRegionAtOnce(t *testing.T) {
	h := newHarness(t, 3)
	res := h.race(context.Background(), Threshold{Threshold: 300 * ms, Step: 100 * ms}, 3)
	h.expectStart(0, 0)
	h.advance(50 * ms)
	h.cmds[0] <- answerTransient
	h.expectStart(1, 50*ms)
	// The schedule of the remaining arms is unchanged: the third starts at 400 ms.
	h.advance(349 * ms)
	h.expectNoStart()
	h.advance(1 * ms)
	h.expectStart(2, 400*ms)
	h.cmds[1] <- answerFinal
	if out := <-res; out.Winner != 1 {
		t.Fatalf("outcome %+v", out)
	}
}

func TestAnArmEndingWithoutAFinalResultStartsTheNext(t *testing.T) {
	h := newHarness(t, 2)
	res := h.race(context.Background(), Threshold{Threshold: time.Second, Step: 100 * ms}, 2)
	h.expectStart(0, 0)
	h.cmds[0] <- endWithoutFinal
	h.expectStart(1, 0)
	h.cmds[1] <- endWithoutFinal
	if out := <-res; out.Winner != -1 || out.Started != 2 {
		t.Fatalf("with no final result the race has no winner: %+v", out)
	}
}

func TestFinalResultStopsTheRaceAndLaterArmsNeverStart(t *testing.T) {
	h := newHarness(t, 3)
	res := h.race(context.Background(), Threshold{Threshold: 300 * ms, Step: 100 * ms}, 3)
	h.expectStart(0, 0)
	h.advance(100 * ms)
	h.cmds[0] <- answerFinal // e.g. a 404/0: final, so it wins
	out := <-res
	if out.Winner != 0 || out.Started != 1 {
		t.Fatalf("outcome %+v", out)
	}
	h.clock.Advance(time.Second)
	h.expectNoStart()
	if h.clock.Pending() != 0 {
		t.Fatalf("%d timers left armed after the race", h.clock.Pending())
	}
}

func TestTimeoutCancelsEveryArm(t *testing.T) {
	h := newHarness(t, 3)
	ctx, cancel := context.WithCancelCause(context.Background())
	timeout := errors.New("end-to-end timeout expired")
	res := h.race(ctx, Threshold{Threshold: 300 * ms, Step: 100 * ms}, 3)
	h.expectStart(0, 0)
	h.advance(300 * ms)
	h.expectStart(1, 300*ms)
	cancel(timeout)
	out := <-res
	if out.Winner != -1 || out.Started != 2 {
		t.Fatalf("outcome %+v", out)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, i := range []int{0, 1} {
		if !errors.Is(h.causes[i], timeout) {
			t.Fatalf("arm %d cancelled with %v, want the timeout", i, h.causes[i])
		}
	}
	h.clock.Advance(time.Second)
	h.expectNoStart()
}

func TestMaxRegionsCapsTheArms(t *testing.T) {
	s := Threshold{Threshold: 300 * ms, Step: 100 * ms, MaxRegions: 2}
	if s.Arms(3) != 2 || s.Arms(1) != 1 || (Threshold{Threshold: ms}).Arms(5) != 5 {
		t.Fatal("Arms")
	}
	if got := s.String(); got != "threshold=300ms step=100ms max_regions=2" {
		t.Fatalf("String() = %s", got)
	}
	if got := (Threshold{Threshold: 500 * ms, Step: 100 * ms}).String(); got != "threshold=500ms step=100ms max_regions=all" {
		t.Fatalf("String() = %s", got)
	}
}

func TestThresholdValidation(t *testing.T) {
	for _, bad := range []Threshold{{}, {Threshold: -ms}, {Threshold: ms, Step: -ms}, {Threshold: ms, MaxRegions: -1}} {
		if bad.Validate() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if err := (Threshold{Threshold: 300 * ms}).Validate(); err != nil {
		t.Error(err)
	}
}

func TestAdmitRefusalLeavesLaterArmsUnstarted(t *testing.T) {
	h := newHarness(t, 3)
	asked := make(chan int, 4)
	res := make(chan Outcome, 1)
	go func() {
		res <- Race{Clock: h.clock, Strategy: Threshold{Threshold: 300 * ms, Step: 100 * ms}, Arms: 3, Run: h.arm,
			Admit: func(arm int) bool { asked <- arm; return false }}.Do(context.Background())
	}()
	h.expectStart(0, 0)
	h.advance(300 * ms)
	if a := <-asked; a != 1 {
		t.Fatalf("admit asked for arm %d", a)
	}
	h.clock.Advance(time.Second)
	h.expectNoStart()
	h.cmds[0] <- answerFinal
	out := <-res
	if out.Winner != 0 || out.Started != 1 || out.Denied != 1 || len(asked) != 0 {
		t.Fatalf("outcome %+v", out)
	}
}
