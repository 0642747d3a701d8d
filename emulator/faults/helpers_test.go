package faults

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

var epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time          { return c.now }
func (c *fakeClock) Advance(d time.Duration) { c.now = c.now.Add(d) }

func seeded() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }

// newTestInjector starts the emulator at epoch with the clock sitting there.
func newTestInjector(t *testing.T, rules ...Rule) (*Injector, *fakeClock) {
	t.Helper()
	clock := &fakeClock{now: epoch}
	in := NewInjector(clock, seeded(), epoch)
	for _, r := range rules {
		if _, err := in.Add(r); err != nil {
			t.Fatalf("Add(%+v): %v", r, err)
		}
	}
	return in, clock
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func fixed(d time.Duration) Distribution { return Distribution{Kind: KindFixed, Value: Duration(d)} }

func wantErrContaining(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("expected error containing %q, got nil", want)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not contain %q", err, want)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Fatalf("error should be one line: %q", err)
	}
}
