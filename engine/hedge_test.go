package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/hedging"
)

const msec = time.Millisecond

type execOut struct {
	res *Result
	err error
}

func execAsync(c *Client, op Operation) chan execOut {
	done := make(chan execOut, 1)
	go func() {
		res, err := c.Execute(context.Background(), op)
		done <- execOut{res, err}
	}()
	return done
}

func hedgedRead(threshold, step time.Duration, max int) Operation {
	op := readOp()
	op.Hedge = hedging.Threshold{Threshold: threshold, Step: step, MaxRegions: max}
	return op
}

func summary(d *Diagnostics) string {
	var parts []string
	for _, a := range d.Attempts {
		parts = append(parts, a.Region+"/"+string(a.Reason)+"/"+a.Start.String()+"/"+string(a.Outcome))
	}
	return strings.Join(parts, " ")
}

func TestHedgeAnswersFromTheSecondRegionWhenTheFirstIsSlow(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	tr := newFakeTransport(fakeAccount(false))
	tr.on("http://east", reply{block: true})
	tr.on("http://west", reply{status: 200, charge: 1, body: `{"id":"1"}`})
	c := newTestClient(t, tr, clk)
	done := execAsync(c, hedgedRead(300*msec, 100*msec, 0))
	<-tr.blocked
	clk.WaitForTimers(1, time.Second)
	clk.Advance(300 * msec)
	out := <-done
	if out.err != nil {
		t.Fatal(out.err)
	}
	d := out.res.Diagnostics
	if got := summary(d); got != "East US/initial/0s/cancelled West US/hedge/300ms/won" {
		t.Fatalf("attempts: %s", got)
	}
	if d.WinningRegion != "West US" || d.HedgeConfig != "threshold=300ms step=100ms max_regions=all" {
		t.Fatalf("winner %s, hedge config %q", d.WinningRegion, d.HedgeConfig)
	}
	if !strings.Contains(d.Attempts[0].Error, "answered first") {
		t.Fatalf("the loser says why it was cancelled: %q", d.Attempts[0].Error)
	}
	if strings.Join(d.ContactedRegions, ",") != "East US,West US" || strings.Join(d.RespondedRegions, ",") != "West US" {
		t.Fatalf("contacted %v responded %v", d.ContactedRegions, d.RespondedRegions)
	}
	if n := len(tr.callLog()); n != 2 {
		t.Fatalf("the third region must never be asked: %d calls", n)
	}
}

func TestHedgeScheduleWithStepAndTimeout(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	tr := newFakeTransport(fakeAccount(false))
	for _, ep := range []string{"http://east", "http://west", "http://north"} {
		tr.on(ep, reply{block: true})
	}
	c := newTestClient(t, tr, clk)
	op := hedgedRead(300*msec, 100*msec, 0)
	op.E2ETimeout = time.Second
	done := execAsync(c, op)
	<-tr.blocked
	clk.WaitForTimers(2, time.Second)
	clk.Advance(300 * msec)
	<-tr.blocked
	clk.WaitForTimers(2, time.Second)
	clk.Advance(100 * msec)
	<-tr.blocked
	clk.Advance(600 * msec)
	out := <-done
	var te *TimeoutError
	if !errors.As(out.err, &te) {
		t.Fatalf("err = %v, want a timeout", out.err)
	}
	d := out.res.Diagnostics
	if got := summary(d); got != "East US/initial/0s/cancelled West US/hedge/300ms/cancelled North Europe/hedge/400ms/cancelled" {
		t.Fatalf("attempts: %s", got)
	}
	for _, a := range d.Attempts {
		if a.Start+a.Duration != time.Second || !strings.Contains(a.Error, "end-to-end timeout") {
			t.Fatalf("each attempt ends at the timeout, saying so: %+v", a)
		}
	}
	if !d.TimedOut {
		t.Fatal("TimedOut")
	}
}

func TestHedgeStepZeroSendsEveryRegionAtTheThreshold(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	tr := newFakeTransport(fakeAccount(false))
	tr.on("http://east", reply{block: true})
	tr.on("http://west", reply{block: true})
	tr.on("http://north", reply{status: 200, body: `{}`})
	c := newTestClient(t, tr, clk)
	done := execAsync(c, hedgedRead(200*msec, 0, 0))
	<-tr.blocked
	clk.WaitForTimers(1, time.Second)
	clk.Advance(200 * msec)
	out := <-done
	d := out.res.Diagnostics
	if d.WinningRegion != "North Europe" || len(d.Attempts) != 3 {
		t.Fatalf("attempts: %s", summary(d))
	}
	for _, a := range d.Attempts[1:] {
		if a.Start != 200*msec || a.Reason != ReasonHedge {
			t.Fatalf("hedge arms start together at the threshold: %s", summary(d))
		}
	}
}

func TestTransientResultStartsTheHedgeAtOnce(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	tr := newFakeTransport(fakeAccount(false))
	tr.on("http://east", reply{status: 503})
	tr.on("http://west", reply{status: 200, body: `{}`})
	c := newTestClient(t, tr, clk)
	out := <-execAsync(c, hedgedRead(300*msec, 100*msec, 0))
	d := out.res.Diagnostics
	if got := summary(d); got != "East US/initial/0s/failed West US/failover/0s/won" {
		t.Fatalf("attempts: %s", got)
	}
}

func TestThrottledFirstRegionStartsTheHedgeAtOnce(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	tr := newFakeTransport(fakeAccount(false))
	tr.on("http://east", reply{status: 429, retryAfter: time.Second}, reply{block: true})
	tr.on("http://west", reply{status: 200, body: `{}`})
	c := newTestClient(t, tr, clk)
	out := <-execAsync(c, hedgedRead(300*msec, 100*msec, 0))
	d := out.res.Diagnostics
	// The 429 makes the first arm wait a second in East US; the hedge does not wait for
	// the threshold.
	if d.WinningRegion != "West US" || d.Attempts[1].Reason != ReasonHedge || d.Attempts[1].Start != 0 {
		t.Fatalf("attempts: %s", summary(d))
	}
}

func TestFinalNotFoundStopsTheRace(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	tr := newFakeTransport(fakeAccount(false))
	tr.on("http://east", reply{status: 404, charge: 1})
	c := newTestClient(t, tr, clk)
	out := <-execAsync(c, hedgedRead(300*msec, 100*msec, 0))
	clk.Advance(time.Second)
	if got := summary(out.res.Diagnostics); got != "East US/initial/0s/won" || out.res.StatusCode != 404 {
		t.Fatalf("attempts: %s", got)
	}
	if clk.Pending() != 0 {
		t.Fatal("no hedge timer may outlive the operation")
	}
}

func TestWithoutAFinalResultTheFirstArmsOutcomeIsReturned(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	tr := newFakeTransport(fakeAccount(false))
	tr.on("http://east", reply{status: 503})
	tr.on("http://west", reply{status: 500})
	tr.on("http://north", reply{status: 408})
	c := newTestClient(t, tr, clk)
	out := <-execAsync(c, hedgedRead(300*msec, 100*msec, 0))
	// The first arm fails over East → West → North; nothing is final, so its outcome,
	// the 408, is the operation's.
	if out.res.StatusCode != 408 {
		t.Fatalf("result %d: %s", out.res.StatusCode, summary(out.res.Diagnostics))
	}
	regions := map[string]int{}
	for _, a := range out.res.Diagnostics.Attempts {
		regions[a.Region]++
	}
	if len(regions) != 3 || regions["East US"] != 1 || regions["West US"] != 1 || regions["North Europe"] != 1 {
		t.Fatalf("each region is asked once: %s", summary(out.res.Diagnostics))
	}
}

func TestMaxRegionsCapsTheHedges(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	tr := newFakeTransport(fakeAccount(false))
	for _, ep := range []string{"http://east", "http://west", "http://north"} {
		tr.on(ep, reply{block: true})
	}
	c := newTestClient(t, tr, clk)
	op := hedgedRead(300*msec, 100*msec, 2)
	op.E2ETimeout = time.Second
	done := execAsync(c, op)
	<-tr.blocked
	clk.WaitForTimers(2, time.Second)
	clk.Advance(300 * msec)
	<-tr.blocked
	clk.Advance(700 * msec)
	out := <-done
	if got := summary(out.res.Diagnostics); got != "East US/initial/0s/cancelled West US/hedge/300ms/cancelled" {
		t.Fatalf("max_regions=2 allows one hedge: %s", got)
	}
}

func TestWritesAreNeverHedged(t *testing.T) {
	tr := newFakeTransport(fakeAccount(true))
	c := newTestClient(t, tr, nil)
	op := Operation{Kind: OpCreate, Database: "db", Container: "c", Body: []byte(`{"id":"1","pk":"a"}`),
		Hedge: hedging.Threshold{Threshold: msec}}
	res, err := c.Execute(context.Background(), op)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Diagnostics.Attempts) != 1 || !strings.HasPrefix(res.Diagnostics.HedgeConfig, "off: writes") {
		t.Fatalf("hedge config %q attempts %s", res.Diagnostics.HedgeConfig, summary(res.Diagnostics))
	}
}

func TestHedgeWithOneEffectiveRegionIsAPlainRead(t *testing.T) {
	tr := newFakeTransport(fakeAccount(false))
	c := newTestClient(t, tr, nil)
	op := hedgedRead(300*msec, 100*msec, 0)
	op.ExcludeRegions = []string{"East US", "North Europe"}
	res, err := c.Execute(context.Background(), op)
	if err != nil || res.Diagnostics.WinningRegion != "West US" || !strings.Contains(res.Diagnostics.HedgeConfig, "nothing to hedge to") {
		t.Fatalf("err %v diagnostics %+v", err, res.Diagnostics)
	}
}

// refusingPlan is a plan whose budget refuses every hedge.
type refusingPlan struct{ hedging.Threshold }

func (refusingPlan) Admit(int) bool              { return false }
func (refusingPlan) Done(time.Duration, bool)    {}
func (p refusingPlan) Begin(string) hedging.Plan { return p }

func TestARefusedHedgeLeavesTheFirstArmFreeToFailOver(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	tr := newFakeTransport(fakeAccount(false))
	tr.on("http://east", reply{status: 503})
	tr.on("http://west", reply{status: 200, body: `{}`})
	c := newTestClient(t, tr, clk)
	op := readOp()
	op.Hedge = refusingPlan{hedging.Threshold{Threshold: 300 * msec, Step: 100 * msec}}
	out := <-execAsync(c, op)
	if out.err != nil || out.res.Diagnostics.WinningRegion != "West US" {
		t.Fatalf("err %v attempts %s notes %v", out.err, summary(out.res.Diagnostics), out.res.Diagnostics.Notes)
	}
	if a := out.res.Diagnostics.Attempts; a[len(a)-1].Reason != ReasonFailover {
		t.Fatalf("West US is reached by the first arm's failover: %s", summary(out.res.Diagnostics))
	}
}
