package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/hedging"
	"github.com/cosmosctl/cosmosctl/retries"
)

// advanceWhenBlocked advances the clock by d each time a request starts hanging, n times.
func advanceWhenBlocked(t *testing.T, clk *clock.Fake, tr *fakeTransport, n int, d time.Duration) {
	t.Helper()
	for i := 0; i < n; i++ {
		select {
		case <-tr.blocked:
		case <-time.After(10 * time.Second):
			t.Fatalf("request %d never started", i+1)
		}
		clk.Advance(d)
	}
}

func attemptSummary(d *Diagnostics) string {
	var parts []string
	for _, a := range d.Attempts {
		s := a.Region + "/" + string(a.Reason) + "/" + a.Timeout.String()
		if a.TimedOut {
			s += "/expired"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

func TestAttemptTimeouts(t *testing.T) {
	t.Run("a hung first region times out at 6s and the read fails over", func(t *testing.T) {
		clk := clock.NewFake(time.Unix(0, 0))
		tr := newFakeTransport(fakeAccount(false))
		tr.on("http://east", reply{block: true})
		c := newTestClient(t, tr, clk)
		done := execAsync(c, readOp())
		advanceWhenBlocked(t, clk, tr, 1, 6*time.Second)
		o := <-done
		if o.err != nil || o.res.StatusCode != 200 {
			t.Fatalf("err %v", o.err)
		}
		d := o.res.Diagnostics
		if got := attemptSummary(d); got != "East US/initial/6s/expired West US/failover/6s" {
			t.Fatalf("attempts %s", got)
		}
		if !strings.Contains(d.Attempts[0].Note, "attempt timeout of 6s expired") || !strings.Contains(d.Attempts[0].Note, "failing over") {
			t.Fatalf("note %q", d.Attempts[0].Note)
		}
		if d.WinningRegion != "West US" {
			t.Fatalf("winner %s", d.WinningRegion)
		}
	})
	t.Run("a retry in the same region climbs the ladder: 6s then 10s", func(t *testing.T) {
		clk := clock.NewFake(time.Unix(0, 0))
		tr := newFakeTransport(fakeAccount(false))
		tr.on("http://east", reply{block: true})
		c := newTestClient(t, tr, clk)
		op := readOp()
		op.ExcludeRegions = []string{"West US", "North Europe"}
		done := execAsync(c, op)
		advanceWhenBlocked(t, clk, tr, 1, 6*time.Second)
		if !clk.WaitForTimerIn(50*time.Millisecond, 10*time.Second) {
			t.Fatal("no retry wait")
		}
		clk.Advance(50 * time.Millisecond) // the same-region retry's wait
		advanceWhenBlocked(t, clk, tr, 1, 10*time.Second)
		o := <-done
		var ne *cosmos.NetworkError
		if !errors.As(o.err, &ne) || !IsAttemptTimeout(o.err) {
			t.Fatalf("err = %v, want the attempt timeout as a network error", o.err)
		}
		if got := attemptSummary(o.res.Diagnostics); got != "East US/initial/6s/expired East US/retry/10s/expired" {
			t.Fatalf("attempts %s", got)
		}
	})
	t.Run("an attempt timeout is clamped to what is left of the end-to-end timeout", func(t *testing.T) {
		clk := clock.NewFake(time.Unix(0, 0))
		tr := newFakeTransport(fakeAccount(false))
		tr.on("http://east", reply{block: true})
		c := newTestClient(t, tr, clk)
		op := readOp()
		op.E2ETimeout = 4 * time.Second
		// The only region: with another one left, the attempt would get half of it
		// (e2efit_test.go).
		op.ExcludeRegions = []string{"West US", "North Europe"}
		done := execAsync(c, op)
		advanceWhenBlocked(t, clk, tr, 1, 4*time.Second)
		o := <-done
		var te *TimeoutError
		if !errors.As(o.err, &te) {
			t.Fatalf("err = %v, want the end-to-end timeout", o.err)
		}
		if got := attemptSummary(o.res.Diagnostics); got != "East US/initial/4s" {
			t.Fatalf("attempts %s", got)
		}
	})
	t.Run("a hedge starts at the first rung", func(t *testing.T) {
		clk := clock.NewFake(time.Unix(0, 0))
		tr := newFakeTransport(fakeAccount(false))
		tr.on("http://east", reply{block: true})
		tr.on("http://west", reply{block: true})
		c := newTestClient(t, tr, clk)
		op := readOp()
		op.Hedge = hedging.Threshold{Threshold: 300 * time.Millisecond}
		op.ExcludeRegions = []string{"North Europe"}
		op.E2ETimeout = 7 * time.Second
		done := execAsync(c, op)
		advanceWhenBlocked(t, clk, tr, 1, 300*time.Millisecond)
		<-tr.blocked
		clk.Advance(6 * time.Second) // East US expires at 6 s, West US at 6.3 s
		clk.Advance(time.Second)     // the end-to-end timeout ends the retries
		o := <-done
		as := o.res.Diagnostics.Attempts
		if len(as) < 2 || as[1].Reason != ReasonHedge || as[1].Timeout != 6*time.Second || as[0].Timeout != 6*time.Second {
			t.Fatalf("attempts %s", attemptSummary(o.res.Diagnostics))
		}
	})
	t.Run("--attempt-timeout caps every rung", func(t *testing.T) {
		clk := clock.NewFake(time.Unix(0, 0))
		tr := newFakeTransport(fakeAccount(false))
		tr.on("http://east", reply{block: true})
		capped := DefaultAttemptTimeouts().Capped(time.Second)
		c, err := New(Options{Endpoint: "http://global", Transport: tr, Clock: clk, AttemptTimeouts: &capped})
		if err != nil {
			t.Fatal(err)
		}
		done := execAsync(c, readOp())
		advanceWhenBlocked(t, clk, tr, 1, time.Second)
		o := <-done
		if got := attemptSummary(o.res.Diagnostics); got != "East US/initial/1s/expired West US/failover/1s" || o.err != nil {
			t.Fatalf("attempts %s, err %v", got, o.err)
		}
		if capped.Account[1] != time.Second || capped.Connect[0] != time.Second {
			t.Fatalf("capped %v", capped)
		}
	})
	t.Run("a timed-out write is ambiguous without write retries", func(t *testing.T) {
		clk := clock.NewFake(time.Unix(0, 0))
		tr := newFakeTransport(fakeAccount(false))
		tr.on("http://east", reply{block: true})
		c := newTestClient(t, tr, clk)
		done := execAsync(c, Operation{Kind: OpUpsert, Database: "db", Container: "c", Body: []byte(`{"id":"1","pk":"a"}`)})
		advanceWhenBlocked(t, clk, tr, 1, 6*time.Second)
		o := <-done
		if o.err == nil || len(o.res.Diagnostics.Attempts) != 1 || !strings.Contains(o.res.Diagnostics.Attempts[0].Note, "may or may not have been applied") {
			t.Fatalf("err %v, attempts %+v", o.err, o.res.Diagnostics.Attempts)
		}
	})
	t.Run("a timed-out write is retried with the next rung under the policy", func(t *testing.T) {
		clk := clock.NewFake(time.Unix(0, 0))
		tr := newFakeTransport(fakeAccount(false))
		tr.on("http://east", reply{block: true}, reply{status: 200, body: `{"id":"1"}`})
		c := newTestClient(t, tr, clk)
		done := execAsync(c, Operation{Kind: OpUpsert, Database: "db", Container: "c", Body: []byte(`{"id":"1","pk":"a"}`), WriteRetries: retries.WriteRetries})
		advanceWhenBlocked(t, clk, tr, 1, 6*time.Second)
		if !clk.WaitForTimerIn(100*time.Millisecond, 10*time.Second) {
			t.Fatal("no back-off timer")
		}
		clk.Advance(100 * time.Millisecond) // the write back-off
		o := <-done
		if o.err != nil {
			t.Fatal(o.err)
		}
		if got := attemptSummary(o.res.Diagnostics); got != "East US/initial/6s/expired East US/retry/10s" {
			t.Fatalf("attempts %s", got)
		}
	})
}

func TestStatusRulesOfTheSDKs(t *testing.T) {
	t.Run("403 other than 3/1008 is final: one attempt", func(t *testing.T) {
		tr := newFakeTransport(fakeAccount(false))
		tr.on("http://east", reply{status: 403, sub: 5301})
		c := newTestClient(t, tr, nil)
		res, err := c.Execute(context.Background(), readOp())
		if status, sub, _ := cosmos.Status(err); status != 403 || sub != 5301 || len(res.Diagnostics.Attempts) != 1 {
			t.Fatalf("err %v, %d attempts", err, len(res.Diagnostics.Attempts))
		}
	})
	t.Run("410/1002 on a write is retried after a routing refresh, write retries off", func(t *testing.T) {
		tr := newFakeTransport(fakeAccount(false))
		tr.on("http://east", reply{status: 410, sub: 1002}, reply{status: 201, body: `{"id":"1"}`})
		c := newTestClient(t, tr, nil)
		res, err := c.Execute(context.Background(), Operation{Kind: OpCreate, Database: "db", Container: "c", Body: []byte(`{"id":"1","pk":"a"}`)})
		if err != nil || res.StatusCode != 201 || len(res.Diagnostics.Attempts) != 2 {
			t.Fatalf("err %v, attempts %+v", err, res.Diagnostics.Attempts)
		}
		if !strings.Contains(res.Diagnostics.Attempts[0].Note, "not applied") {
			t.Fatalf("note %q", res.Diagnostics.Attempts[0].Note)
		}
	})
	t.Run("500 fails a read over", func(t *testing.T) {
		tr := newFakeTransport(fakeAccount(false))
		tr.on("http://east", reply{status: 500})
		c := newTestClient(t, tr, nil)
		res, err := c.Execute(context.Background(), readOp())
		if err != nil || res.Diagnostics.WinningRegion != "West US" {
			t.Fatalf("err %v, winner %s", err, res.Diagnostics.WinningRegion)
		}
	})
}

func TestAccountLookupSurvivesADeadGlobalEndpoint(t *testing.T) {
	acct := fakeAccount(false)
	for _, tc := range []struct {
		name   string
		global reply
	}{
		{"refused", reply{status: 0}},
		{"503", reply{status: 503}},
		{"hung", reply{block: true}},
	} {
		t.Run(tc.name+": the regional endpoints known from an earlier process answer", func(t *testing.T) {
			clk := clock.NewFake(time.Unix(0, 0))
			tr := newFakeTransport(acct)
			tr.accountReplies = map[string]reply{"http://global": tc.global, "http://east": tc.global}
			c, err := New(Options{Endpoint: "http://global", Transport: tr, Clock: clk, KnownAccount: &acct, PreferredRegions: []string{"West US"}})
			if err != nil {
				t.Fatal(err)
			}
			op := readOp()
			done := execAsync(c, op)
			if tc.global.block {
				advanceWhenBlocked(t, clk, tr, 1, 2*time.Second) // GET / has a 2 s timeout
			}
			o := <-done
			if o.err != nil {
				t.Fatal(o.err)
			}
			tr.mu.Lock()
			calls := append([]string(nil), tr.accountCalls...)
			tr.mu.Unlock()
			if len(calls) != 2 || calls[0] != "http://global" || calls[1] != "http://west" {
				t.Fatalf("GET / went to %v; want the global endpoint, then the preferred region's", calls)
			}
			if !strings.Contains(strings.Join(o.res.Diagnostics.Notes, "\n"), "account read from http://west") {
				t.Fatalf("notes %v", o.res.Diagnostics.Notes)
			}
		})
	}
	t.Run("a fresh saved topology is used without asking", func(t *testing.T) {
		tr := newFakeTransport(acct)
		var saved []*cosmos.Account
		c, err := New(Options{Endpoint: "http://global", Transport: tr, KnownAccount: &acct, KnownAccountFresh: true, OnAccount: func(a *cosmos.Account) { saved = append(saved, a) }})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Execute(context.Background(), readOp()); err != nil {
			t.Fatal(err)
		}
		if len(tr.accountCalls) != 0 || len(saved) != 0 {
			t.Fatalf("GET / sent to %v", tr.accountCalls)
		}
	})
	t.Run("nothing answers: one error naming every endpoint tried", func(t *testing.T) {
		tr := newFakeTransport(acct)
		tr.accountReplies = map[string]reply{"http://global": {status: 0}, "http://east": {status: 503}, "http://west": {status: 0}, "http://north": {status: 0}}
		c, _ := New(Options{Endpoint: "http://global", Transport: tr, KnownAccount: &acct})
		_, err := c.Execute(context.Background(), readOp())
		var le *AccountLookupError
		if !errors.As(err, &le) || len(le.Tried) != 4 || !strings.Contains(err.Error(), "http://east: answered 503") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestRegionalEndpointOfARealAccount(t *testing.T) {
	for _, tc := range []struct{ global, region, want string }{
		{"https://acct.documents.azure.com:443/", "West US", "https://acct-westus.documents.azure.com:443"},
		{"https://acct.documents.azure.com", "North Europe", "https://acct-northeurope.documents.azure.com"},
		{"http://127.0.0.1:8081", "West US", ""},
		{"https://acct-westus.documents.azure.com", "West US", ""},
	} {
		if got := cosmos.RegionalEndpoint(tc.global, tc.region); got != tc.want {
			t.Errorf("RegionalEndpoint(%q, %q) = %q, want %q", tc.global, tc.region, got, tc.want)
		}
	}
}
