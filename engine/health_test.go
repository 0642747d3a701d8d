package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
	"github.com/cosmosctl/cosmosctl/health"
	"github.com/cosmosctl/cosmosctl/hedging"
)

func newHealthClient(t *testing.T, tr Transport, clk clock.Clock) (*Client, *health.Store) {
	t.Helper()
	hs, err := health.New(health.Config{}, clk)
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{Endpoint: "http://global", Transport: tr, Clock: clk, Health: hs})
	if err != nil {
		t.Fatal(err)
	}
	return c, hs
}

func firstRegion(d *Diagnostics) string {
	if len(d.Attempts) == 0 {
		return ""
	}
	return d.Attempts[0].Region
}

func TestRegionHealthAcrossOperations(t *testing.T) {
	t.Run("a refusing region is asked first by three reads, then moved last", func(t *testing.T) {
		clk := clock.NewFake(time.Unix(0, 0))
		tr := newFakeTransport(fakeAccount(false))
		tr.on("http://east", reply{status: 0}) // refused, never sent
		c, _ := newHealthClient(t, tr, clk)
		var firsts []string
		var last *Diagnostics
		for i := 0; i < 6; i++ {
			res, err := c.Execute(context.Background(), readOp())
			if err != nil {
				t.Fatalf("read %d: %v", i+1, err)
			}
			firsts = append(firsts, firstRegion(res.Diagnostics))
			last = res.Diagnostics
		}
		if got := strings.Join(firsts, ","); got != "East US,East US,East US,West US,West US,West US" {
			t.Fatalf("first regions %s", got)
		}
		if strings.Join(last.HealthOrder, ",") != "West US,North Europe,East US" {
			t.Fatalf("health order %v", last.HealthOrder)
		}
		notes := strings.Join(last.Notes, "\n")
		if !strings.Contains(notes, "East US: 3") || !strings.Contains(notes, "unavailable until") || !strings.Contains(notes, "moved last") {
			t.Fatalf("notes %q", notes)
		}
	})
	t.Run("after the period a request of its own probes the region beside a read; success recovers it", func(t *testing.T) {
		clk := clock.NewFake(time.Unix(0, 0))
		tr := newFakeTransport(fakeAccount(false))
		tr.on("http://east", reply{status: 503}, reply{status: 503}, reply{status: 503}, reply{status: 200, body: `{"id":"1"}`})
		c, hs := newHealthClient(t, tr, clk)
		for i := 0; i < 3; i++ {
			if _, err := c.Execute(context.Background(), readOp()); err != nil {
				t.Fatal(err)
			}
		}
		res, _ := c.Execute(context.Background(), readOp())
		if firstRegion(res.Diagnostics) != "West US" {
			t.Fatalf("unavailable East US still first: %s", summary(res.Diagnostics))
		}
		clk.Advance(hs.Config().ProbeAfter)
		res, err := c.Execute(context.Background(), readOp())
		if err != nil || firstRegion(res.Diagnostics) != "West US" || len(res.Diagnostics.Attempts) != 1 {
			t.Fatalf("the read beside the probe: err %v, %s", err, summary(res.Diagnostics))
		}
		if notes := strings.Join(res.Diagnostics.Notes, "\n"); !strings.Contains(notes, "probed now by a request of its own, sent beside this operation") {
			t.Fatalf("notes %q", notes)
		}
		c.beside.wg.Wait()
		res, _ = c.Execute(context.Background(), readOp())
		if firstRegion(res.Diagnostics) != "East US" || len(res.Diagnostics.HealthOrder) != 0 {
			t.Fatalf("after a successful probe East US is first again: %s", summary(res.Diagnostics))
		}
	})
	t.Run("a hung region pays the attempt timeout three times, then no more", func(t *testing.T) {
		clk := clock.NewFake(time.Unix(0, 0))
		tr := newFakeTransport(fakeAccount(false))
		tr.on("http://east", reply{block: true})
		c, _ := newHealthClient(t, tr, clk)
		for i := 0; i < 3; i++ {
			done := execAsync(c, readOp())
			advanceWhenBlocked(t, clk, tr, 1, 6*time.Second)
			if o := <-done; o.err != nil || !o.res.Diagnostics.Attempts[0].TimedOut {
				t.Fatalf("read %d: %v %s", i+1, o.err, summary(o.res.Diagnostics))
			}
		}
		res, err := c.Execute(context.Background(), readOp()) // nothing blocks: no clock needed
		if err != nil || firstRegion(res.Diagnostics) != "West US" || len(res.Diagnostics.Attempts) != 1 {
			t.Fatalf("fourth read: %v %s", err, summary(res.Diagnostics))
		}
		if !strings.Contains(strings.Join(res.Diagnostics.Notes, "\n"), "3 timeouts") {
			t.Fatalf("notes %q", res.Diagnostics.Notes)
		}
	})
	t.Run("five hedge losses in a row move a slow region last", func(t *testing.T) {
		clk := clock.NewFake(time.Unix(0, 0))
		tr := newFakeTransport(fakeAccount(false))
		tr.on("http://east", reply{block: true})
		c, _ := newHealthClient(t, tr, clk)
		op := readOp()
		op.Hedge = hedging.Threshold{Threshold: 100 * time.Millisecond, Step: 100 * time.Millisecond}
		for i := 0; i < 5; i++ {
			done := execAsync(c, op)
			advanceWhenBlocked(t, clk, tr, 1, 100*time.Millisecond)
			o := <-done
			if o.err != nil || o.res.Diagnostics.WinningRegion != "West US" {
				t.Fatalf("hedged read %d: %v %s", i+1, o.err, summary(o.res.Diagnostics))
			}
		}
		res, err := c.Execute(context.Background(), op)
		if err != nil || firstRegion(res.Diagnostics) != "West US" || len(res.Diagnostics.Attempts) != 1 {
			t.Fatalf("sixth read: %v %s", err, summary(res.Diagnostics))
		}
	})
	t.Run("writes and reads are kept apart; throttling is no failure", func(t *testing.T) {
		tr := newFakeTransport(fakeAccount(false))
		tr.on("http://east", reply{status: 429, retryAfter: time.Millisecond})
		c, hs := newHealthClient(t, tr, clock.Real{})
		for i := 0; i < 3; i++ {
			c.Execute(context.Background(), readOp())
		}
		if es := hs.Entries(); len(es) != 0 {
			for _, e := range es {
				if e.Status != health.StatusAvailable {
					t.Fatalf("429s made a region unavailable: %+v", e)
				}
			}
		}
	})
	t.Run("every region unavailable: the usual order stands", func(t *testing.T) {
		tr := newFakeTransport(fakeAccount(false))
		for _, ep := range []string{"http://east", "http://west", "http://north"} {
			tr.on(ep, reply{status: 503})
		}
		c, _ := newHealthClient(t, tr, clock.NewFake(time.Unix(0, 0)))
		var res *Result
		for i := 0; i < 4; i++ {
			res, _ = c.Execute(context.Background(), readOp())
		}
		if firstRegion(res.Diagnostics) != "East US" || len(res.Diagnostics.Attempts) != 3 {
			t.Fatalf("%s", summary(res.Diagnostics))
		}
	})
}

func TestAnEndToEndTimeoutCountsAsTheRegionsTimeout(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	tr := newFakeTransport(fakeAccount(false))
	tr.on("http://east", reply{block: true})
	c, _ := newHealthClient(t, tr, clk)
	op := readOp()
	op.E2ETimeout = time.Second // shorter than the 6 s attempt timeout: it clamps it
	// East US alone: with another region left the attempt would get half of the second
	// and fail over when it expired (e2efit_test.go).
	op.ExcludeRegions = []string{"West US", "North Europe"}
	for i := 0; i < 3; i++ {
		done := execAsync(c, op)
		advanceWhenBlocked(t, clk, tr, 1, time.Second)
		if o := <-done; o.err == nil {
			t.Fatalf("read %d answered from a hung region", i+1)
		}
	}
	res, err := c.Execute(context.Background(), readOp())
	if err != nil || firstRegion(res.Diagnostics) != "West US" {
		t.Fatalf("after three reads that ran out of time in East US it is still first: %v %s", err, summary(res.Diagnostics))
	}
}

// In direct mode the client knows which partition key range holds a key, so region
// health is kept per range, as the SDKs' per-partition circuit breaker keeps it.
func TestDirectModeKeepsRegionHealthPerPartitionKeyRange(t *testing.T) {
	srv, base := directClient(t, false)
	hs, err := health.New(health.Config{}, clock.Real{})
	if err != nil {
		t.Fatal(err)
	}
	c := base.WithHealth(hs)
	if _, err := srv.AddFault(faults.Rule{Region: "East US", Operations: []string{faults.GroupReads}, Effect: faults.EffectStatus, Status: 503}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := c.Execute(context.Background(), directRead()); err != nil {
			t.Fatalf("read %d: %v", i+1, err)
		}
	}
	res, err := c.Execute(context.Background(), directRead())
	if err != nil || firstRegion(res.Diagnostics) == "East US" {
		t.Fatalf("fourth read: %v %s", err, summary(res.Diagnostics))
	}
	es := hs.Entries()
	found := false
	for _, e := range es {
		if e.Region == "East US" && e.Kind == health.Read {
			if e.PartitionKeyRangeID == "" || e.Status != health.StatusUnavailable {
				t.Fatalf("entry %+v: want an unavailable record of the item's range", e)
			}
			found = true
		}
	}
	if !found {
		t.Fatalf("no East US entry in %+v", es)
	}
}
