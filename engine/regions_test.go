package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/health"
)

func TestRegionsAsksTheAccountEveryTime(t *testing.T) {
	t.Run("a fresh saved topology is not used: the account says where writes go now", func(t *testing.T) {
		saved := fakeAccount(false) // East US writes
		now := fakeAccount(false)
		now.WritableLocations = []cosmos.Location{now.ReadableLocations[1]} // failed over to West US
		tr := newFakeTransport(now)
		c, err := New(Options{Endpoint: "http://global", Transport: tr, KnownAccount: &saved, KnownAccountFresh: true})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := c.Regions(context.Background(), RegionsOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(rep.EffectiveWrites, ",") != "West US" || rep.Topology.Source != "account" {
			t.Fatalf("writes go to %v, topology %+v", rep.EffectiveWrites, rep.Topology)
		}
		// The rest of the process follows the new topology too.
		if acct, _ := c.Account(context.Background()); acct.WritableLocations[0].Name != "West US" {
			t.Fatalf("the client still has %s as the write region", acct.WritableLocations[0].Name)
		}
	})
	t.Run("a hung global endpoint does not hold it up: every endpoint is asked at once", func(t *testing.T) {
		acct := fakeAccount(false)
		tr := newFakeTransport(acct)
		tr.accountReplies = map[string]reply{"http://global": {block: true}, "http://east": {block: true}}
		c, err := New(Options{Endpoint: "http://global", Transport: tr, Clock: clock.NewFake(time.Unix(0, 0)), KnownAccount: &acct})
		if err != nil {
			t.Fatal(err)
		}
		// The fake clock never moves: an answer that waited on the hung ones would never come.
		rep, err := c.Regions(context.Background(), RegionsOptions{})
		if err != nil || rep.Topology.Source != "account" || (rep.Topology.Endpoint != "http://west" && rep.Topology.Endpoint != "http://north") {
			t.Fatalf("err %v, topology %+v", err, rep.Topology)
		}
	})
	t.Run("no endpoint answers: the saved topology, and when it was read", func(t *testing.T) {
		acct := fakeAccount(false)
		at := time.Date(2025, 3, 4, 12, 0, 0, 0, time.UTC)
		tr := newFakeTransport(acct)
		tr.accountReplies = map[string]reply{"http://global": {status: 503}, "http://east": {status: 503}, "http://west": {status: 0}, "http://north": {status: 503}}
		c, err := New(Options{Endpoint: "http://global", Transport: tr, KnownAccount: &acct, KnownAccountAt: at})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := c.Regions(context.Background(), RegionsOptions{})
		if err != nil || rep.Topology.Source != "saved" || !rep.Topology.FetchedAt.Equal(at) || !strings.Contains(rep.Topology.Error, "http://east: answered 503") {
			t.Fatalf("err %v, topology %+v", err, rep.Topology)
		}
	})
	t.Run("no endpoint answers and nothing was saved: the lookup's error", func(t *testing.T) {
		tr := newFakeTransport(fakeAccount(false))
		tr.accountReplies = map[string]reply{"http://global": {status: 503}}
		c := newTestClient(t, tr, nil)
		if _, err := c.Regions(context.Background(), RegionsOptions{}); err == nil {
			t.Fatal("no error")
		}
	})
}

func TestRegionsMeasuresAReadAndCountsASlowOne(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	tr := newFakeTransport(fakeAccount(false))
	tr.on("http://east", reply{block: true})
	tr.on("http://west", reply{status: 404})
	tr.on("http://north", reply{status: 503})
	hs, _ := health.New(health.Config{}, clk)
	c, err := New(Options{Endpoint: "http://global", Transport: tr, Clock: clk, Health: hs})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *RegionsReport, 1)
	go func() {
		rep, err := c.Regions(context.Background(), RegionsOptions{Measure: true, Timeout: time.Second,
			Read: &Operation{Kind: OpRead, Database: "db", Container: "c", ID: "cosmosctl-probe"}})
		if err != nil {
			t.Error(err)
		}
		done <- rep
	}()
	<-tr.blocked // East US's read hangs
	// West US and North Europe answer at once; the time runs out only after they have:
	// two timers are then left, the report's bound and East US's end-to-end timeout.
	deadline := time.Now().Add(10 * time.Second)
	for {
		calls := strings.Join(tr.callLog(), " ")
		if strings.Contains(calls, "http://west") && strings.Contains(calls, "http://north") && clk.Pending() == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("West US and North Europe did not answer: calls %s, %d timers", calls, clk.Pending())
		}
		time.Sleep(time.Millisecond)
	}
	clk.Advance(time.Second)
	var rep *RegionsReport
	select {
	case rep = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("regions did not end once its 2 s had passed")
	}
	if rep.Measurement.Request != "read" || rep.Measurement.TimeoutMs != 1000 {
		t.Fatalf("measurement %+v", rep.Measurement)
	}
	got := map[string]RegionInfo{}
	for _, r := range rep.Regions {
		got[r.Name] = r
	}
	if e := got["East US"]; !e.TimedOut || e.Answered || e.Error != "no answer within 1s" {
		t.Errorf("East US %+v: want a timeout", e)
	}
	if w := got["West US"]; !w.Answered || w.Status != 404 {
		t.Errorf("West US %+v: a 404 is an answer", w)
	}
	if n := got["North Europe"]; !n.Answered || n.Status != 503 {
		t.Errorf("North Europe %+v", n)
	}
	tr.mu.Lock()
	for i, ep := range tr.calls {
		if req := tr.reqs[i]; req.Path != cosmos.ItemPath("db", "c", "cosmosctl-probe") || req.Header.Get(cosmos.HeaderPartitionKey) != `["cosmosctl-probe"]` {
			t.Errorf("%s got %s %s: want the probe item's read", ep, req.Method, req.Path)
		}
	}
	tr.mu.Unlock()
	failures := map[string]map[health.Cause]int{}
	for _, e := range hs.Entries() {
		failures[e.Region] = e.Failures
	}
	if failures["East US"][health.Timeout] != 1 || failures["North Europe"][health.Unavailable] != 1 || len(failures["West US"]) != 0 {
		t.Fatalf("region health %v: the slow read is East US's timeout, the 503 North Europe's failure", failures)
	}
}

// With the write region hung, regions reads the container's definition (for the probe
// item's key) from the next region once half of its time is gone, and still measures
// every region: the healthy ones answer, the hung one is its timeout. (The definition's
// read to the hung region used to take the whole end-to-end timeout, and every region
// then showed as timed out.)
func TestRegionsReadsTheContainerAroundAHungWriteRegion(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	tr := newFakeTransport(fakeAccount(false))
	tr.containerBlock = map[string]bool{"http://east": true}
	tr.on("http://east", reply{block: true})
	tr.on("http://west", reply{status: 404})
	tr.on("http://north", reply{status: 404})
	c := newTestClient(t, tr, clk)
	done := make(chan *RegionsReport, 1)
	go func() {
		rep, err := c.Regions(context.Background(), RegionsOptions{Measure: true, Timeout: 2 * time.Second,
			Read: &Operation{Kind: OpRead, Database: "db", Container: "c", ID: "cosmosctl-probe"}})
		if err != nil {
			t.Error(err)
		}
		done <- rep
	}()
	if ep := blockedWithin(t, tr); ep != "http://east" {
		t.Fatalf("the first container read went to %s", ep)
	}
	// The attempt to the hung region gets half of the 2 s: its timer goes at 1 s.
	waitFor(t, func() bool { return clk.Pending() >= 3 })
	clk.Advance(time.Second)
	if ep := blockedWithin(t, tr); ep != "http://east" {
		t.Fatalf("the measuring read to East US did not start: %s", ep)
	}
	waitFor(t, func() bool {
		calls := strings.Join(tr.callLog(), " ")
		return strings.Contains(calls, "http://west") && strings.Contains(calls, "http://north")
	})
	clk.Advance(time.Second)
	var rep *RegionsReport
	select {
	case rep = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("regions did not end once its 2 s had passed")
	}
	if rep.Measurement.Request != "read" {
		t.Fatalf("measurement %+v: the container's definition was not read from another region", rep.Measurement)
	}
	for _, r := range rep.Regions {
		switch {
		case r.Name == "East US" && !r.TimedOut:
			t.Errorf("East US %+v: want its timeout", r)
		case r.Name != "East US" && (!r.Answered || r.Status != 404):
			t.Errorf("%s %+v: want its answer", r.Name, r)
		}
	}
}

// waitFor waits, in real time and at most 10 s, until cond holds: for goroutines of the
// engine to reach a point a fake clock's test then advances from.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}

// blockedWithin returns the endpoint of the next request the fake transport holds, or
// fails the test if none arrives within 10 s of real time.
func blockedWithin(t *testing.T, tr *fakeTransport) string {
	t.Helper()
	select {
	case ep := <-tr.blocked:
		return ep
	case <-time.After(10 * time.Second):
		t.Fatal("no request reached the hung region within 10 s")
		return ""
	}
}

// PartitionKeyPaths within a time bound reads the container's definition from the next
// region once the hung write region has had half of it, instead of spending all of it
// there (probe's set-up: its item's key then has the container's levels).
func TestPartitionKeyPathsWithinABoundAsksTheNextRegionAfterAHungWriteRegion(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	tr := newFakeTransport(fakeAccount(false))
	tr.pkPaths = []string{"/tenant", "/user"}
	tr.containerBlock = map[string]bool{"http://east": true}
	c := newTestClient(t, tr, clk)
	type result struct {
		paths []string
		err   error
	}
	done := make(chan result, 1)
	go func() {
		paths, err := c.PartitionKeyPaths(context.Background(), "db", "c", 2*time.Second)
		done <- result{paths, err}
	}()
	if ep := blockedWithin(t, tr); ep != "http://east" {
		t.Fatalf("the first container read went to %s", ep)
	}
	waitFor(t, func() bool { return clk.Pending() >= 2 })
	clk.Advance(time.Second)
	select {
	case r := <-done:
		if r.err != nil || strings.Join(r.paths, ",") != "/tenant,/user" {
			t.Fatalf("paths %v, %v: want the definition from the next region", r.paths, r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("PartitionKeyPaths did not ask the next region once half of its 2 s had passed")
	}
}
