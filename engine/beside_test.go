package engine

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/health"
)

// Re-checking an unavailable region must never delay an operation that another region
// can answer (issue 20, item 7): the region is checked by a request of its own, sent
// beside the operation.

// tripEast makes East US unavailable for reads with three hung reads (6s each on clk),
// then lets its unavailable period run out.
func tripEast(t *testing.T, c *Client, hs *health.Store, clk *clock.Fake, tr *fakeTransport) {
	t.Helper()
	for i := 0; i < 3; i++ {
		done := execAsync(c, readOp())
		advanceWhenBlocked(t, clk, tr, 1, 6*time.Second)
		if o := <-done; o.err != nil {
			t.Fatalf("read %d: %v", i+1, o.err)
		}
	}
	clk.Advance(hs.Config().ProbeAfter)
}

func eastEntry(t *testing.T, hs *health.Store, kind health.Kind) health.Entry {
	t.Helper()
	for _, e := range hs.Entries() {
		if e.Region == "East US" && e.PartitionKeyRangeID == "" && e.Kind == kind {
			return e
		}
	}
	t.Fatalf("no East US %s entry in %+v", kind, hs.Entries())
	return health.Entry{}
}

func TestReCheckingAHungRegionNeverDelaysTheAnswer(t *testing.T) {
	t.Run("the read is answered at once while its probe waits on the hung region", func(t *testing.T) {
		clk := clock.NewFake(time.Unix(0, 0))
		tr := newFakeTransport(fakeAccount(false))
		tr.on("http://east", reply{block: true})
		c, hs := newHealthClient(t, tr, clk)
		tripEast(t, c, hs, clk, tr)

		// Nothing advances the clock: a read that waited on East US would never return.
		res, err := c.Execute(context.Background(), readOp())
		if err != nil || firstRegion(res.Diagnostics) != "West US" || len(res.Diagnostics.Attempts) != 1 {
			t.Fatalf("err %v, %s: want West US to answer at once", err, summary(res.Diagnostics))
		}
		select {
		case ep := <-tr.blocked:
			if ep != "http://east" {
				t.Fatalf("the probe went to %s", ep)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no probe request reached East US")
		}
		if e := eastEntry(t, hs, health.Read); e.Status != health.StatusProbing {
			t.Fatalf("East US %s while its probe is in flight", e.Status)
		}
		// The probe's own attempt timeout (6s) expires: a failed probe, a doubled period.
		clk.Advance(6 * time.Second)
		c.beside.wg.Wait()
		if e := eastEntry(t, hs, health.Read); e.Status != health.StatusUnavailable || e.FailedProbes != 1 || e.ProbeIntervalMs != 10000 {
			t.Fatalf("after the probe timed out: %+v", e)
		}
	})
	t.Run("closing the client cuts a probe still waiting after the grace: a failed probe", func(t *testing.T) {
		clk := clock.NewFake(time.Unix(0, 0))
		tr := newFakeTransport(fakeAccount(false))
		tr.on("http://east", reply{block: true})
		c, hs := newHealthClient(t, tr, clk)
		tripEast(t, c, hs, clk, tr)
		if _, err := c.Execute(context.Background(), readOp()); err != nil {
			t.Fatal(err)
		}
		<-tr.blocked
		closed := make(chan struct{})
		go func() {
			c.Close()
			close(closed)
		}()
		if !clk.WaitForTimerIn(besideGrace, 10*time.Second) {
			t.Fatal("Close does not wait the grace")
		}
		clk.Advance(besideGrace)
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
			t.Fatal("Close did not return after the grace")
		}
		e := eastEntry(t, hs, health.Read)
		if e.Status != health.StatusUnavailable || e.FailedProbes != 1 || e.Failures[health.Timeout] != 3 {
			t.Fatalf("after Close: %+v; want a failed probe, and no timeout of the region's own counted", e)
		}
	})
	t.Run("with no other region available the operation itself probes, in its usual place", func(t *testing.T) {
		clk := clock.NewFake(time.Unix(0, 0))
		tr := newFakeTransport(fakeAccount(false))
		c, hs := newHealthClient(t, tr, clk)
		for _, r := range []string{"East US", "West US", "North Europe"} {
			for i := 0; i < 3; i++ {
				hs.Failure(r, "", health.Read, health.Unavailable)
			}
			clk.Advance(time.Second)
		}
		clk.Advance(3 * time.Second) // East US's period is over, not the others'
		res, err := c.Execute(context.Background(), readOp())
		if err != nil || firstRegion(res.Diagnostics) != "East US" {
			t.Fatalf("err %v, %s", err, summary(res.Diagnostics))
		}
		if notes := strings.Join(res.Diagnostics.Notes, "\n"); !strings.Contains(notes, "in its usual place: no other region is available") {
			t.Fatalf("notes %q", notes)
		}
		if e := eastEntry(t, hs, health.Read); e.Status != health.StatusAvailable {
			t.Fatalf("East US answered its probe: %+v", e)
		}
	})
	t.Run("a write's region is probed with a read of its item, never a second write", func(t *testing.T) {
		clk := clock.NewFake(time.Unix(0, 0))
		tr := newFakeTransport(fakeAccount(true))
		tr.on("http://east", reply{status: 404, body: `{}`})
		c, hs := newHealthClient(t, tr, clk)
		for i := 0; i < 6; i++ {
			hs.Failure("East US", "", health.Write, health.Unavailable)
		}
		clk.Advance(hs.Config().ProbeAfter)
		res, err := c.Execute(context.Background(), Operation{Kind: OpUpsert, Database: "db", Container: "c", Body: []byte(`{"id":"1","pk":"a"}`)})
		if err != nil || firstRegion(res.Diagnostics) != "West US" {
			t.Fatalf("err %v, %s", err, summary(res.Diagnostics))
		}
		c.beside.wg.Wait()
		tr.mu.Lock()
		var toEast []*cosmos.Request
		for i, ep := range tr.calls {
			if ep == "http://east" {
				toEast = append(toEast, tr.reqs[i])
			}
		}
		tr.mu.Unlock()
		if len(toEast) != 1 || toEast[0].Method != http.MethodGet || toEast[0].Path != cosmos.ItemPath("db", "c", "1") ||
			toEast[0].Header.Get(cosmos.HeaderPartitionKey) != `["a"]` {
			t.Fatalf("requests to East US %+v: want one read of the item", toEast)
		}
		if e := eastEntry(t, hs, health.Write); e.Status != health.StatusAvailable {
			t.Fatalf("a 404 is a final answer, the region serves: %+v", e)
		}
	})
}
