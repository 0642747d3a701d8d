package addrcache

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// waitFor polls cond (in real time, as a guard against a hang) until it holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func (h *harness) waiters() int {
	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	if e := h.c.entries[key]; e != nil && e.resolving != nil {
		return e.resolving.waiters
	}
	return 0
}

func TestConcurrentGoneStartsOneRefresh(t *testing.T) {
	h := newHarness(t, Options{})
	h.replicas()
	release := h.res.hold()
	var started atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	urls := []string{p, s1, s2, s3}
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if h.c.Gone(key, urls[i%len(urls)]) {
				started.Add(1)
			}
		}()
	}
	close(start)
	wg.Wait()
	release()
	h.c.Wait()
	if got := h.res.count(true); got != 1 {
		t.Errorf("Resolve(forceRefresh) called %d times, want 1", got)
	}
	if got := started.Load(); got != 1 {
		t.Errorf("%d Gone calls report starting the refresh, want 1", got)
	}
	if got := h.c.Refreshes(); got != 1 {
		t.Errorf("Refreshes() = %d, want 1", got)
	}
}

func TestForegroundResolve(t *testing.T) {
	t.Run("concurrent callers share one gateway call", func(t *testing.T) {
		h := newHarness(t, Options{})
		release := h.res.hold()
		var wg sync.WaitGroup
		errs := make(chan error, 50)
		for i := 0; i < 50; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rs, err := h.c.Replicas(context.Background(), key, false)
				if err == nil && len(rs) != 4 {
					err = errors.New("short set")
				}
				errs <- err
			}()
		}
		waitFor(t, "50 callers on one resolve", func() bool { return h.waiters() == 50 })
		release()
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("Replicas: %v", err)
			}
		}
		if got, forced := h.res.count(false), h.res.count(true); got != 1 || forced != 0 {
			t.Errorf("resolves = %d plain, %d forced; want 1 plain", got, forced)
		}
		if got := h.c.Refreshes(); got != 0 {
			t.Errorf("Refreshes() = %d, want 0: a first resolve is not a background refresh", got)
		}
	})
	t.Run("one caller giving up does not fail the others", func(t *testing.T) {
		h := newHarness(t, Options{})
		release := h.res.hold()
		ctx, cancel := context.WithCancel(context.Background())
		quitter := make(chan error, 1)
		go func() { _, err := h.c.Replicas(ctx, key, false); quitter <- err }()
		stayer := make(chan error, 1)
		go func() { _, err := h.c.Replicas(context.Background(), key, false); stayer <- err }()
		waitFor(t, "two callers on one resolve", func() bool { return h.waiters() == 2 })
		cancel()
		if err := <-quitter; !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled caller: err = %v, want context.Canceled", err)
		}
		release()
		if err := <-stayer; err != nil {
			t.Errorf("remaining caller: %v", err)
		}
		if got := h.res.count(false); got != 1 || h.res.cancels() != 0 {
			t.Errorf("resolves = %d (%d cancelled), want 1 not cancelled", got, h.res.cancels())
		}
	})
	t.Run("the last caller giving up cancels the gateway call; the next caller starts afresh", func(t *testing.T) {
		h := newHarness(t, Options{})
		release := h.res.hold()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		if _, err := h.c.Replicas(ctx, key, false); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want context.DeadlineExceeded", err)
		}
		h.c.Wait()
		if h.res.cancels() != 1 {
			t.Errorf("the abandoned resolve was not cancelled")
		}
		release()
		if n := len(h.replicas()); n != 4 {
			t.Errorf("set has %d replicas, want 4", n)
		}
		if got := h.res.count(false); got != 2 {
			t.Errorf("resolves = %d, want 2", got)
		}
	})
	t.Run("a failed resolve is returned and not cached", func(t *testing.T) {
		h := newHarness(t, Options{})
		h.res.fails(errGateway)
		if _, err := h.c.Replicas(t.Context(), key, false); !errors.Is(err, errGateway) {
			t.Fatalf("err = %v, want the gateway's error", err)
		}
		h.res.returns(p, s1, s2, s3)
		if n := len(h.replicas()); n != 4 {
			t.Errorf("set has %d replicas, want 4", n)
		}
		if got := h.res.count(false); got != 2 {
			t.Errorf("resolves = %d, want 2", got)
		}
	})
	t.Run("an empty answer is an error", func(t *testing.T) {
		h := newHarness(t, Options{})
		h.res.returns()
		if _, err := h.c.Replicas(t.Context(), key, false); !errors.Is(err, ErrNoAddresses) {
			t.Fatalf("err = %v, want ErrNoAddresses", err)
		}
	})
	t.Run("a cached set is served without a gateway call", func(t *testing.T) {
		h := newHarness(t, Options{})
		for i := 0; i < 20; i++ {
			h.replicas()
		}
		if got := h.res.count(false); got != 1 {
			t.Errorf("resolves = %d, want 1", got)
		}
	})
}

func TestCloseAndWait(t *testing.T) {
	t.Run("Wait returns at once when nothing runs", func(t *testing.T) {
		h := newHarness(t, Options{})
		h.c.Wait()
	})
	t.Run("Close cancels the refresh and the resolve in flight and waits for them", func(t *testing.T) {
		h := newHarness(t, Options{})
		h.replicas()
		h.res.hold() // never released: only Close ends these
		h.c.Gone(key, s1)
		other := Key{Region: "East US", Collection: key.Collection, Range: "1"}
		foreground := make(chan error, 1)
		go func() { _, err := h.c.Replicas(context.Background(), other, false); foreground <- err }()
		h.res.awaitEntered(t, 3)
		h.c.Close()
		if got := h.res.cancels(); got != 2 {
			t.Errorf("%d resolves cancelled by Close, want 2", got)
		}
		if err := <-foreground; !errors.Is(err, ErrClosed) {
			t.Errorf("waiting caller: err = %v, want ErrClosed", err)
		}
		if h.c.Gone(key, s2) {
			t.Error("Gone started a refresh after Close")
		}
		if _, err := h.c.Replicas(t.Context(), other, false); !errors.Is(err, ErrClosed) {
			t.Errorf("uncached key after Close: err = %v, want ErrClosed", err)
		}
		if n := len(h.replicas()); n != 4 {
			t.Errorf("cached key after Close: %d replicas, want 4", n)
		}
		h.c.Close() // twice is harmless
	})
}
