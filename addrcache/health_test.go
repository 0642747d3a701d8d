package addrcache

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"
)

func TestHealthString(t *testing.T) {
	for h, want := range map[Health]string{Unknown: "unknown", Connected: "connected",
		UnhealthyPending: "unhealthy-pending", Unhealthy: "unhealthy", Health(9): "health(9)"} {
		if got := h.String(); got != want {
			t.Errorf("Health(%d).String() = %q, want %q", int(h), got, want)
		}
	}
}

var errGateway = errors.New("gateway: 503")

// The state model of the .NET and Java SDKs, one behaviour per case.
func TestStateModel(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, h *harness)
	}{
		{"new addresses start unknown", func(t *testing.T, h *harness) {
			for _, r := range h.replicas() {
				if r.Health != Unknown || !r.Since.Equal(t0) {
					t.Errorf("%s: %v since %v, want unknown since %v", r.URL, r.Health, r.Since, t0)
				}
			}
		}},
		{"a success makes a replica connected, since the first success", func(t *testing.T, h *harness) {
			h.replicas()
			h.clk.Advance(time.Second)
			h.c.Succeeded(key, s2)
			h.clk.Advance(time.Second)
			h.c.Succeeded(key, s2)
			if r := h.replica(s2); r.Health != Connected || !r.Since.Equal(t0.Add(time.Second)) {
				t.Errorf("s2 = %v since %v, want connected since t0+1s", r.Health, r.Since)
			}
		}},
		{"a 410 marks the replica unhealthy and orders it last", func(t *testing.T, h *harness) {
			h.replicas()
			release := h.res.hold()
			defer release()
			if !h.c.Gone(key, s1) {
				t.Fatal("Gone did not start the refresh")
			}
			h.expectHealth(s1, Unhealthy)
			h.expectSlot(s1, -1)
		}},
		{"a refresh returning the same set clears the mark to unhealthy-pending, after connected and before unhealthy", func(t *testing.T, h *harness) {
			h.replicas()
			h.c.Succeeded(key, p)
			h.c.Gone(key, s1) // the gateway answers at once with the same set
			h.c.Wait()
			h.expectHealth(s1, UnhealthyPending)
			h.expectSlot(s1, -1)

			release := h.res.hold()
			defer release()
			h.c.Gone(key, s2)
			h.expectSlot(s1, 2)
			h.expectSlot(s2, 3)
			h.expectHealth(p, Connected)
			h.expectHealth(s3, Unknown)
		}},
		{"a refresh returning a replacement drops the moved replica; the replacement is unknown", func(t *testing.T, h *harness) {
			h.replicas()
			for _, u := range []string{p, s1, s2, s3} {
				h.c.Succeeded(key, u)
			}
			h.res.returns(p, s2, s3, s4)
			h.clk.Advance(time.Second)
			h.c.Gone(key, s1)
			h.c.Wait()
			rs := h.replicas()
			if len(rs) != 4 {
				t.Fatalf("set = %v, want 4 replicas", rs)
			}
			for _, r := range rs {
				if r.URL == s1 {
					t.Errorf("moved replica s1 still in the set")
				}
			}
			h.expectHealth(p, Connected)
			h.expectHealth(s2, Connected)
			h.expectHealth(s3, Connected)
			if r := h.replica(s4); r.Health != Unknown || !r.Since.Equal(t0.Add(time.Second)) {
				t.Errorf("s4 = %v since %v, want unknown since the refresh", r.Health, r.Since)
			}
		}},
		{"a mark lapses after UnhealthyFor without a refresh", func(t *testing.T, h *harness) {
			h.replicas()
			h.res.fails(errGateway)
			h.c.Gone(key, s1)
			h.c.Wait()
			h.expectHealth(s1, Unhealthy)
			h.clk.Advance(time.Minute - time.Millisecond)
			h.expectSlot(s1, -1)
			h.clk.Advance(time.Millisecond)
			if share := h.firstShares(2000)[s1]; share < 0.15 || share > 0.35 {
				t.Errorf("s1 first in %.0f%% of orders after a minute, want about 25%%", share*100)
			}
		}},
		{"a failed refresh keeps the mark; the next 410 tries again", func(t *testing.T, h *harness) {
			h.replicas()
			h.res.fails(errGateway)
			h.c.Gone(key, s1)
			h.c.Wait()
			h.expectSlot(s1, -1)
			h.res.returns(p, s1, s2, s3)
			if !h.c.Gone(key, s1) {
				t.Fatal("the second Gone did not retry the refresh")
			}
			h.c.Wait()
			if got := h.res.count(true); got != 2 {
				t.Errorf("forced resolves = %d, want 2", got)
			}
			h.expectHealth(s1, UnhealthyPending)
		}},
		{"a refresh that hangs is abandoned after RefreshTimeout and the mark stays", func(t *testing.T, h *harness) {
			h.replicas()
			release := h.res.hold()
			defer release()
			h.c.Gone(key, s1)
			h.res.awaitEntered(t, 2) // the foreground resolve, then the refresh
			h.clk.Advance(10 * time.Second)
			h.c.Wait()
			if h.res.cancels() != 1 {
				t.Errorf("the hung refresh was not cancelled")
			}
			h.expectSlot(s1, -1)
		}},
		{"an unhealthy mark that outlives UnhealthyFor triggers a refresh when next seen", func(t *testing.T, h *harness) {
			h.replicas()
			h.res.fails(errGateway)
			h.c.Gone(key, s1)
			h.c.Wait()
			h.clk.Advance(time.Minute)
			h.res.returns(p, s1, s2, s3)
			h.replicas()
			h.c.Wait()
			if got := h.c.Refreshes(); got != 2 {
				t.Fatalf("refreshes = %d, want 2", got)
			}
			h.expectHealth(s1, UnhealthyPending)
		}},
		{"expired marks ask a failing gateway once per UnhealthyFor, not on every request", func(t *testing.T, h *harness) {
			h.replicas()
			h.res.fails(errGateway)
			h.c.Gone(key, s1)
			h.c.Wait()
			for minute := 1; minute <= 3; minute++ {
				h.clk.Advance(time.Minute)
				for i := 0; i < 10; i++ {
					h.replicas()
					h.c.Wait()
				}
				if got := h.c.Refreshes(); got != minute+1 {
					t.Fatalf("after %d minutes: refreshes = %d, want %d", minute, got, minute+1)
				}
			}
		}},
		{"a success right after a 410 does not clear the mark", func(t *testing.T, h *harness) {
			h.replicas()
			release := h.res.hold()
			defer release()
			h.c.Gone(key, s1)
			h.c.Succeeded(key, s1) // a request sent before the replica moved
			h.expectHealth(s1, Unhealthy)
			h.expectSlot(s1, -1)
		}},
		{"a success once the mark has lapsed makes the replica connected", func(t *testing.T, h *harness) {
			h.replicas()
			h.res.fails(errGateway)
			h.c.Gone(key, s1)
			h.c.Wait()
			h.clk.Advance(time.Minute)
			h.c.Succeeded(key, s1)
			h.expectHealth(s1, Connected)
		}},
		{"a 410 renews the mark", func(t *testing.T, h *harness) {
			h.replicas()
			h.res.fails(errGateway)
			h.c.Gone(key, s1)
			h.c.Wait()
			h.clk.Advance(50 * time.Second)
			h.c.Gone(key, s1)
			h.c.Wait()
			h.clk.Advance(50 * time.Second)
			h.expectSlot(s1, -1)
		}},
		{"a 410 from an address a refresh already dropped changes nothing", func(t *testing.T, h *harness) {
			h.replicas()
			h.res.returns(p, s2, s3, s4)
			h.c.Gone(key, s1)
			h.c.Wait()
			if h.c.Gone(key, s1) {
				t.Error("Gone for a dropped address started a refresh")
			}
			if got := h.c.Refreshes(); got != 1 {
				t.Errorf("refreshes = %d, want 1", got)
			}
		}},
		{"a 410 for a key never resolved changes nothing", func(t *testing.T, h *harness) {
			if h.c.Gone(key, s1) {
				t.Error("Gone for an unknown key started a refresh")
			}
		}},
		{"a refresh returning no addresses keeps the set", func(t *testing.T, h *harness) {
			h.replicas()
			h.res.returns()
			h.c.Gone(key, s1)
			h.c.Wait()
			h.expectHealth(s1, Unhealthy)
			if n := len(h.replicas()); n != 4 {
				t.Errorf("set has %d replicas, want 4", n)
			}
		}},
		{"the primary follows the gateway", func(t *testing.T, h *harness) {
			h.replicas()
			h.res.returns(s1, s2, s3, "rntbd://127.0.0.1:10253/apps/a/services/s/partitions/0/replicas/6p/")
			h.c.Gone(key, p)
			h.c.Wait()
			rs, err := h.c.Replicas(t.Context(), key, true)
			if err != nil || len(rs) != 1 || !rs[0].Primary || rs[0].URL[len(rs[0].URL)-3:] != "6p/" {
				t.Errorf("primary = %v, %v; want the new primary", rs, err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newHarness(t, Options{})) })
	}
}

func TestForWrite(t *testing.T) {
	t.Run("returns the primary only", func(t *testing.T) {
		h := newHarness(t, Options{})
		for i := 0; i < 50; i++ {
			rs, err := h.c.Replicas(t.Context(), key, true)
			if err != nil || len(rs) != 1 || rs[0].URL != p || !rs[0].Primary {
				t.Fatalf("Replicas(forWrite) = %v, %v; want [%s]", rs, err, p)
			}
		}
	})
	t.Run("returns the primary even when it is marked", func(t *testing.T) {
		h := newHarness(t, Options{})
		h.replicas()
		release := h.res.hold()
		defer release()
		h.c.Gone(key, p)
		rs, err := h.c.Replicas(t.Context(), key, true)
		if err != nil || len(rs) != 1 || rs[0].URL != p || rs[0].Health != Unhealthy {
			t.Fatalf("Replicas(forWrite) = %v, %v; want the unhealthy primary", rs, err)
		}
	})
	t.Run("fails when the set has no primary", func(t *testing.T) {
		h := newHarness(t, Options{})
		h.res.returns(s1, s2, s3)
		if _, err := h.c.Replicas(t.Context(), key, true); !errors.Is(err, ErrNoPrimary) {
			t.Fatalf("err = %v, want ErrNoPrimary", err)
		}
	})
}

// Whatever the states and their ages, a replica is never ordered before a healthier one,
// and every order is a permutation of the whole set.
func TestNeverBeforeAHealthierReplica(t *testing.T) {
	h := newHarness(t, Options{})
	const unhealthyFor = time.Minute
	// effective is the SDKs' rule restated: an avoiding state counts for unhealthyFor only.
	effective := func(r Replica) int {
		fresh := h.clk.Now().Sub(r.Since) < unhealthyFor
		switch {
		case r.Health == UnhealthyPending && fresh:
			return 1
		case r.Health == Unhealthy && fresh:
			return 2
		}
		return 0
	}
	urls := []string{p, s1, s2, s3, s4, "rntbd://x/6s/", "rntbd://x/7s/", "rntbd://x/8s/"}
	h.res.returns(urls...)
	h.replicas()
	states := rand.New(rand.NewPCG(7, 7))
	e := h.c.entries[key]
	for trial := 0; trial < 1000; trial++ {
		h.c.mu.Lock()
		// Mixed states, some marks fresh and some past UnhealthyFor; the refresh
		// trigger is kept out of the way, this is about order only.
		e.lastRefresh = h.clk.Now()
		for _, r := range e.replicas {
			r.health = Health(states.IntN(4))
			r.since = h.clk.Now().Add(-time.Duration(states.Int64N(int64(2 * unhealthyFor))))
		}
		h.c.mu.Unlock()
		rs := h.replicas()
		seen := map[string]bool{}
		for i, r := range rs {
			seen[r.URL] = true
			if i > 0 && effective(rs[i-1]) > effective(r) {
				t.Fatalf("trial %d: %s (%v since -%v) before the healthier %s (%v since -%v)", trial,
					rs[i-1].URL, rs[i-1].Health, h.clk.Now().Sub(rs[i-1].Since),
					r.URL, r.Health, h.clk.Now().Sub(r.Since))
			}
		}
		if len(rs) != len(urls) || len(seen) != len(urls) {
			t.Fatalf("trial %d: order %v is not a permutation of the set", trial, rs)
		}
	}
}

// Within a health bucket the order stays random, so reads still spread over the
// replicas that are equally good.
func TestOrderWithinABucketIsRandom(t *testing.T) {
	h := newHarness(t, Options{})
	h.replicas()
	release := h.res.hold()
	defer release()
	h.c.Gone(key, s1)
	shares := h.firstShares(3000)
	for _, u := range []string{p, s2, s3} {
		if shares[u] < 0.25 || shares[u] > 0.42 {
			t.Errorf("%s first in %.0f%% of orders, want about a third", u, shares[u]*100)
		}
	}
}

// The baseline for comparison: no health awareness at all.
func TestDisableHealth(t *testing.T) {
	t.Run("order is a uniform random permutation", func(t *testing.T) {
		h := newHarness(t, Options{DisableHealth: true})
		shares := h.firstShares(4000)
		for _, u := range []string{p, s1, s2, s3} {
			if shares[u] < 0.15 || shares[u] > 0.35 {
				t.Errorf("%s first in %.1f%% of 4000 orders, want 15-35%%", u, shares[u]*100)
			}
		}
	})
	t.Run("a 410 neither marks nor reorders, but still refreshes", func(t *testing.T) {
		h := newHarness(t, Options{DisableHealth: true})
		h.replicas()
		release := h.res.hold()
		if !h.c.Gone(key, s1) {
			t.Fatal("Gone did not start the refresh")
		}
		h.c.Succeeded(key, p)
		h.expectHealth(s1, Unknown)
		h.expectHealth(p, Unknown)
		shares := h.firstShares(4000)
		for _, u := range []string{p, s1, s2, s3} {
			if shares[u] < 0.15 || shares[u] > 0.35 {
				t.Errorf("%s first in %.1f%% of 4000 orders, want 15-35%%", u, shares[u]*100)
			}
		}
		h.res.returns(p, s2, s3, s4)
		release()
		h.c.Wait()
		got := map[string]bool{}
		for _, u := range h.order() {
			got[u] = true
		}
		if got[s1] || !got[s4] {
			t.Errorf("after the refresh the set is %v, want s1 replaced by s4", h.order())
		}
	})
}
