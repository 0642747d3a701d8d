package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
)

func TestPartitionKeyRangesAreReadToTheEndOfTheFeed(t *testing.T) {
	t.Run("a feed served a range a page reads every page, in the routing cache too", func(t *testing.T) {
		srv, err := emulator.Start(emulator.Config{Ranges: 8, FeedPageSize: 1,
			Databases: []emulator.DatabaseConfig{{ID: "db", Containers: []emulator.ContainerConfig{{ID: "c", PartitionKey: []string{"/pk"}}}}}}, emulator.Options{})
		if err != nil {
			t.Fatal(err)
		}
		cred, _ := cosmos.NewMasterKey(srv.Key())
		tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
		t.Cleanup(func() {
			tr.HTTP.CloseIdleConnections()
			srv.Close()
		})
		c, err := New(Options{Endpoint: srv.Endpoint(), Transport: tr})
		if err != nil {
			t.Fatal(err)
		}
		rs, d, err := c.PartitionKeyRanges(context.Background(), "db", "c", true, 0)
		if err != nil || len(rs) != 8 {
			t.Fatalf("%d ranges (%v), want 8; attempts %s", len(rs), err, summary(d))
		}
		if len(d.Attempts) != 8 || d.Attempts[0].Reason != ReasonInitial || d.Attempts[7].Reason != ReasonPage || d.Attempts[7].Outcome != OutcomeWon {
			t.Errorf("attempts %s, want 8 pages, the first initial and the others page", summary(d))
		}
		c.mu.Lock()
		delete(c.ranges, "db/c")
		c.mu.Unlock()
		cached, err := c.cachedRanges(context.Background(), "db", "c", srv.Endpoint())
		if err != nil || len(cached) != 8 {
			t.Fatalf("direct mode's read of the ranges: %d (%v), want 8", len(cached), err)
		}
	})
	t.Run("a page that fails moves to the next region, which reads from the first page", func(t *testing.T) {
		tr := newFakeTransport(fakeAccount(false))
		tr.on("http://east",
			reply{status: 200, body: `{"PartitionKeyRanges":[{"id":"0","minInclusive":"","maxExclusive":"80"}]}`, header: map[string]string{cosmos.HeaderContinuation: "east-2"}},
			reply{status: 503})
		tr.on("http://west",
			reply{status: 200, body: `{"PartitionKeyRanges":[{"id":"0","minInclusive":"","maxExclusive":"80"}]}`, header: map[string]string{cosmos.HeaderContinuation: "west-2"}},
			reply{status: 200, body: `{"PartitionKeyRanges":[{"id":"1","minInclusive":"80","maxExclusive":"FF"}]}`})
		c := newTestClient(t, tr, nil)
		rs, d, err := c.PartitionKeyRanges(context.Background(), "db", "c", false, 0)
		if err != nil || len(rs) != 2 || rs[1].ID != "1" {
			t.Fatalf("ranges %+v (%v); attempts %s", rs, err, summary(d))
		}
		var conts []string
		for _, r := range tr.reqs {
			if strings.HasSuffix(r.Path, "/pkranges") {
				conts = append(conts, r.Header.Get(cosmos.HeaderContinuation))
			}
		}
		if got := strings.Join(conts, ","); got != ",east-2,,west-2" {
			t.Errorf("continuations sent %q, want the east feed's pages then the west feed's from its start", got)
		}
	})
	t.Run("a feed that ends short of FF is an error, not a smaller container", func(t *testing.T) {
		tr := newFakeTransport(fakeAccount(false))
		tr.on("http://east", reply{status: 200, body: `{"PartitionKeyRanges":[{"id":"0","minInclusive":"","maxExclusive":"40"},{"id":"1","minInclusive":"40","maxExclusive":"80"}]}`})
		c := newTestClient(t, tr, nil)
		if rs, _, err := c.PartitionKeyRanges(context.Background(), "db", "c", false, 0); err == nil || !strings.Contains(err.Error(), "do not cover every partition key") {
			t.Fatalf("ranges %+v, err %v; want an error naming the gap", rs, err)
		}
	})
	t.Run("a continuation that repeats itself ends the read", func(t *testing.T) {
		tr := newFakeTransport(fakeAccount(false))
		tr.on("http://east", reply{status: 200, body: `{"PartitionKeyRanges":[{"id":"0","minInclusive":"","maxExclusive":"80"}]}`, header: map[string]string{cosmos.HeaderContinuation: "same"}})
		c := newTestClient(t, tr, nil)
		if _, _, err := c.PartitionKeyRanges(context.Background(), "db", "c", false, 0); err == nil || !strings.Contains(err.Error(), "never end") {
			t.Fatalf("err %v, want the loop refused", err)
		}
	})
}
