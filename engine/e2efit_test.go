package engine

import (
	"errors"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/hedging"
	"github.com/cosmosctl/cosmosctl/retries"
)

// An end-to-end timeout shorter than the first rung of the ladder must not let a hung
// first region take the whole operation: the attempts that another region could follow
// are fitted into it (issue 20, item 5).

func TestFitTimeout(t *testing.T) {
	const s = time.Second
	for _, tc := range []struct {
		name             string
		rung, left       time.Duration
		deadline, moveOn bool
		want             time.Duration
		wantClamped      bool
	}{
		{"no end-to-end timeout: the rung", 6 * s, 0, false, true, 6 * s, false},
		{"another region remains: half of what is left", 6 * s, 5 * s, true, true, 2500 * time.Millisecond, false},
		{"another region remains, plenty left: the rung", 6 * s, 20 * s, true, true, 6 * s, false},
		{"the last region: all that is left, the end-to-end timeout's to enforce", 6 * s, 5 * s, true, false, 5 * s, true},
		{"the last region, plenty left: the rung", 6 * s, 20 * s, true, false, 6 * s, false},
		{"nothing left: nothing to send", 6 * s, 0, true, true, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, clamped := fitTimeout(tc.rung, tc.left, tc.deadline, tc.moveOn)
			if got != tc.want || clamped != tc.wantClamped {
				t.Fatalf("fitTimeout(%s, %s, %v, %v) = %s, %v; want %s, %v", tc.rung, tc.left, tc.deadline, tc.moveOn, got, clamped, tc.want, tc.wantClamped)
			}
		})
	}
}

func TestEndToEndTimeoutLeavesAHungRegionInTime(t *testing.T) {
	t.Run("the README's 5s profile: a hung first region gets 2.5s and the read fails over", func(t *testing.T) {
		clk := clock.NewFake(time.Unix(0, 0))
		tr := newFakeTransport(fakeAccount(false))
		tr.on("http://east", reply{block: true})
		c := newTestClient(t, tr, clk)
		op := readOp()
		op.E2ETimeout = 5 * time.Second
		done := execAsync(c, op)
		advanceWhenBlocked(t, clk, tr, 1, 2500*time.Millisecond)
		o := <-done
		if o.err != nil || o.res.StatusCode != 200 || o.res.Diagnostics.WinningRegion != "West US" {
			t.Fatalf("err %v: want West US to answer after East US was left at 2.5s", o.err)
		}
		// West US has 2.5s left and North Europe after it: half of it.
		if got := attemptSummary(o.res.Diagnostics); got != "East US/initial/2.5s/expired West US/failover/1.25s" {
			t.Fatalf("attempts %s", got)
		}
	})
	t.Run("two hung regions: each is left in time for the last", func(t *testing.T) {
		clk := clock.NewFake(time.Unix(0, 0))
		tr := newFakeTransport(fakeAccount(false))
		tr.on("http://east", reply{block: true})
		tr.on("http://west", reply{block: true})
		c := newTestClient(t, tr, clk)
		op := readOp()
		op.E2ETimeout = 4 * time.Second
		done := execAsync(c, op)
		advanceWhenBlocked(t, clk, tr, 1, 2*time.Second)
		advanceWhenBlocked(t, clk, tr, 1, time.Second)
		o := <-done
		if o.err != nil || o.res.Diagnostics.WinningRegion != "North Europe" {
			t.Fatalf("err %v, winner %q", o.err, o.res.Diagnostics.WinningRegion)
		}
		if got := attemptSummary(o.res.Diagnostics); got != "East US/initial/2s/expired West US/failover/1s/expired North Europe/failover/1s" {
			t.Fatalf("attempts %s", got)
		}
	})
	t.Run("the only region gets all that is left, and the end-to-end timeout ends it", func(t *testing.T) {
		clk := clock.NewFake(time.Unix(0, 0))
		tr := newFakeTransport(fakeAccount(false))
		tr.on("http://east", reply{block: true})
		c := newTestClient(t, tr, clk)
		op := readOp()
		op.E2ETimeout = 5 * time.Second
		op.ExcludeRegions = []string{"West US", "North Europe"}
		done := execAsync(c, op)
		advanceWhenBlocked(t, clk, tr, 1, 5*time.Second)
		o := <-done
		var te *TimeoutError
		if !errors.As(o.err, &te) {
			t.Fatalf("err = %v, want the end-to-end timeout", o.err)
		}
		if got := attemptSummary(o.res.Diagnostics); got != "East US/initial/5s" {
			t.Fatalf("attempts %s", got)
		}
	})
	t.Run("a write to a single-write account has nowhere else to go: all that is left", func(t *testing.T) {
		clk := clock.NewFake(time.Unix(0, 0))
		tr := newFakeTransport(fakeAccount(false))
		tr.on("http://east", reply{block: true})
		c := newTestClient(t, tr, clk)
		done := execAsync(c, Operation{Kind: OpUpsert, Database: "db", Container: "c", Body: []byte(`{"id":"1","pk":"a"}`),
			E2ETimeout: 5 * time.Second, WriteRetries: retries.WriteRetries})
		advanceWhenBlocked(t, clk, tr, 1, 5*time.Second)
		o := <-done
		if got := attemptSummary(o.res.Diagnostics); got != "East US/initial/5s" {
			t.Fatalf("attempts %s", got)
		}
	})
	t.Run("a write to a multi-write account with write retries is fitted like a read", func(t *testing.T) {
		clk := clock.NewFake(time.Unix(0, 0))
		tr := newFakeTransport(fakeAccount(true))
		tr.on("http://east", reply{block: true})
		tr.on("http://west", reply{status: 200, body: `{"id":"1"}`})
		c := newTestClient(t, tr, clk)
		done := execAsync(c, Operation{Kind: OpUpsert, Database: "db", Container: "c", Body: []byte(`{"id":"1","pk":"a"}`),
			E2ETimeout: 5 * time.Second, WriteRetries: retries.WriteRetries})
		advanceWhenBlocked(t, clk, tr, 1, 2500*time.Millisecond)
		o := <-done
		if o.err != nil || o.res.Diagnostics.WinningRegion != "West US" {
			t.Fatalf("err %v, attempts %s", o.err, attemptSummary(o.res.Diagnostics))
		}
		if as := o.res.Diagnostics.Attempts; as[0].Timeout != 2500*time.Millisecond || !as[0].TimedOut {
			t.Fatalf("attempts %s", attemptSummary(o.res.Diagnostics))
		}
	})
	t.Run("a hedged read is not fitted: its hedges reach the other regions on their schedule", func(t *testing.T) {
		clk := clock.NewFake(time.Unix(0, 0))
		tr := newFakeTransport(fakeAccount(false))
		tr.on("http://east", reply{block: true})
		tr.on("http://west", reply{block: true})
		c := newTestClient(t, tr, clk)
		op := readOp()
		op.Hedge = hedging.Threshold{Threshold: time.Second}
		op.ExcludeRegions = []string{"North Europe"}
		op.E2ETimeout = 5 * time.Second
		done := execAsync(c, op)
		advanceWhenBlocked(t, clk, tr, 1, time.Second) // the hedge starts in West US, 4s left
		<-tr.blocked
		clk.Advance(4 * time.Second)
		o := <-done
		as := o.res.Diagnostics.Attempts
		if len(as) != 2 || as[0].Timeout != 5*time.Second || as[1].Reason != ReasonHedge || as[1].Timeout != 4*time.Second {
			t.Fatalf("attempts %s: want both clamped to the end-to-end timeout", attemptSummary(o.res.Diagnostics))
		}
	})
}
