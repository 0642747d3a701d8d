package engine

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/hedging"
)

func queryPage(rangeID string) Operation {
	return Operation{Kind: OpQuery, Database: "db", Container: "c", RangeID: rangeID, MaxItemCount: 10,
		Query: &cosmos.QuerySpec{Query: "SELECT * FROM c WHERE c.n > @n", Parameters: []cosmos.QueryParameter{{Name: "@n", Value: json.RawMessage("3")}}}}
}

const feedBody = `{"_rid":"x","Documents":[{"id":"1"},{"id":"2"}],"_count":2}`

func TestQueryPageRequest(t *testing.T) {
	pk, _ := cosmos.PK("tenant")
	cases := []struct {
		name   string
		edit   func(*Operation)
		header map[string]string // expected request headers ("" = absent)
	}{
		{"to one partition key range", func(op *Operation) { op.Continuation = "tok" }, map[string]string{
			cosmos.HeaderPartitionKeyRangeID: "3", cosmos.HeaderIsQuery: "True", "Content-Type": "application/query+json",
			cosmos.HeaderMaxItemCount: "10", cosmos.HeaderContinuation: "tok", cosmos.HeaderPartitionKey: "", cosmos.HeaderEnableCrossPartition: "True"}},
		{"to part of one partition key range", func(op *Operation) { op.StartEPK, op.EndEPK = "05C1", "0A" }, map[string]string{
			cosmos.HeaderPartitionKeyRangeID: "3", cosmos.HeaderStartEPK: "05C1", cosmos.HeaderEndEPK: "0A",
			cosmos.HeaderReadKeyType: "EffectivePartitionKeyRange", cosmos.HeaderEnableCrossPartition: "True"}},
		{"from the lowest key of one partition key range", func(op *Operation) { op.EndEPK = "0A" }, map[string]string{
			cosmos.HeaderStartEPK: "", cosmos.HeaderEndEPK: "0A", cosmos.HeaderReadKeyType: "EffectivePartitionKeyRange"}},
		{"a whole range is not narrowed", func(op *Operation) {}, map[string]string{
			cosmos.HeaderStartEPK: "", cosmos.HeaderEndEPK: "", cosmos.HeaderReadKeyType: ""}},
		{"to one partition key", func(op *Operation) { op.RangeID, op.PartitionKey = "", pk }, map[string]string{
			cosmos.HeaderPartitionKey: `["tenant"]`, cosmos.HeaderPartitionKeyRangeID: "", cosmos.HeaderContinuation: ""}},
		{"across partitions", func(op *Operation) { op.RangeID, op.CrossPartition, op.MaxItemCount = "", true, 0 }, map[string]string{
			cosmos.HeaderEnableCrossPartition: "True", cosmos.HeaderMaxItemCount: "", cosmos.HeaderPartitionKey: ""}},
		{"the query plan", func(op *Operation) { op.Kind, op.RangeID, op.QueryFeatures = OpQueryPlan, "", "OrderBy, Top" }, map[string]string{
			cosmos.HeaderQueryPlanRequest: "True", cosmos.HeaderSupportedQueryFeatures: "OrderBy, Top", cosmos.HeaderQueryVersion: "1.4",
			cosmos.HeaderIsQuery: "True", cosmos.HeaderPartitionKeyRangeID: "", cosmos.HeaderMaxItemCount: ""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := newFakeTransport(fakeAccount(false))
			tr.on("http://east", reply{status: 200, body: feedBody, header: map[string]string{cosmos.HeaderContinuation: "next"}})
			c := newTestClient(t, tr, nil)
			op := queryPage("3")
			tc.edit(&op)
			res, err := c.Execute(context.Background(), op)
			if err != nil {
				t.Fatal(err)
			}
			req := tr.reqs[0]
			if req.Method != http.MethodPost || req.Path != "/dbs/db/colls/c/docs" {
				t.Fatalf("%s %s", req.Method, req.Path)
			}
			for k, want := range tc.header {
				if got := req.Header.Get(k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
			var spec cosmos.QuerySpec
			if err := json.Unmarshal(req.Body, &spec); err != nil || spec.Query != op.Query.Query || len(spec.Parameters) != 1 || string(spec.Parameters[0].Value) != "3" {
				t.Fatalf("body %s", req.Body)
			}
			if res.Continuation != "next" || string(res.Body) != feedBody || res.Diagnostics.Operation != op.Kind {
				t.Fatalf("result %+v", res)
			}
		})
	}
}

func TestQueryPageOperationsAreChecked(t *testing.T) {
	pk, _ := cosmos.PK("a")
	cases := []struct {
		name string
		edit func(*Operation)
		want string
	}{
		{"no query", func(op *Operation) { op.Query = nil }, "no query"},
		{"a parameter without @", func(op *Operation) { op.Query.Parameters[0].Name = "n" }, "@"},
		{"a parameter that is not JSON", func(op *Operation) { op.Query.Parameters[0].Value = json.RawMessage("{") }, "JSON"},
		{"no target", func(op *Operation) { op.RangeID = "" }, "cross-partition"},
		{"two targets", func(op *Operation) { op.PartitionKey = pk }, "not several"},
		{"a bad page size", func(op *Operation) { op.MaxItemCount = -2 }, "page size"},
		{"an EPK range without a partition key range", func(op *Operation) { op.RangeID, op.CrossPartition, op.StartEPK, op.EndEPK = "", true, "", "0A" }, "name the range"},
		{"an EPK range without its end", func(op *Operation) { op.StartEPK = "05" }, "its end"},
		{"an empty EPK range", func(op *Operation) { op.StartEPK, op.EndEPK = "0A", "05" }, "is empty"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := newFakeTransport(fakeAccount(false))
			c := newTestClient(t, tr, nil)
			op := queryPage("0")
			tc.edit(&op)
			_, err := c.Execute(context.Background(), op)
			var ie *InputError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want an input error mentioning %q", err, tc.want)
			}
			if len(tr.callLog()) != 0 {
				t.Fatal("nothing is sent")
			}
		})
	}
}

func TestHedgedQueryPageAnswersFromTheFasterRegion(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	tr := newFakeTransport(fakeAccount(false))
	tr.on("http://east", reply{block: true})
	tr.on("http://west", reply{status: 200, charge: 2.5, body: feedBody, header: map[string]string{cosmos.HeaderContinuation: "after-2"}})
	c := newTestClient(t, tr, clk)
	op := queryPage("1")
	op.Hedge = hedging.Threshold{Threshold: 200 * msec, Step: 100 * msec}
	done := execAsync(c, op)
	<-tr.blocked
	if !clk.WaitForTimerIn(200*msec, time.Second) {
		t.Fatal("no hedge timer at the threshold")
	}
	clk.Advance(200 * msec)
	out := <-done
	if out.err != nil {
		t.Fatal(out.err)
	}
	d := out.res.Diagnostics
	if got := summary(d); got != "East US/initial/0s/cancelled West US/hedge/200ms/won" {
		t.Fatalf("attempts %s", got)
	}
	if out.res.Continuation != "after-2" || d.RangeID != "1" || d.Operation != OpQuery || string(d.PartitionKey) != "null" {
		t.Fatalf("continuation %q, diagnostics %+v", out.res.Continuation, d)
	}
}

func TestQueryPageFailsOverOn503(t *testing.T) {
	tr := newFakeTransport(fakeAccount(false))
	tr.on("http://east", reply{status: 503})
	tr.on("http://west", reply{status: 200, body: feedBody})
	c := newTestClient(t, tr, nil)
	res, err := c.Execute(context.Background(), queryPage("0"))
	if err != nil {
		t.Fatal(err)
	}
	d := res.Diagnostics
	if len(d.Attempts) != 2 || d.Attempts[1].Reason != ReasonFailover || d.WinningRegion != "West US" || !strings.Contains(d.Attempts[0].Note, "failing over") {
		t.Fatalf("attempts %s, note %q", summary(d), d.Attempts[0].Note)
	}
}

func TestQueryPageEndToEndTimeoutBoundsAHungRegion(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	tr := newFakeTransport(fakeAccount(false))
	tr.on("http://east", reply{block: true})
	c := newTestClient(t, tr, clk)
	op := queryPage("0")
	op.E2ETimeout = 2 * time.Second
	op.ExcludeRegions = []string{"West US", "North Europe"} // the only region: all that is left
	done := execAsync(c, op)
	advanceWhenBlocked(t, clk, tr, 1, 2*time.Second)
	out := <-done
	var te *TimeoutError
	if !errors.As(out.err, &te) || !out.res.Diagnostics.TimedOut {
		t.Fatalf("err = %v, want the end-to-end timeout", out.err)
	}
	if got := attemptSummary(out.res.Diagnostics); got != "East US/initial/2s" {
		t.Fatalf("attempts %s", got)
	}
}

func TestQueryPagesHaveTheirOwnAttemptTimeouts(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	tr := newFakeTransport(fakeAccount(false))
	tr.on("http://east", reply{block: true})
	tr.on("http://west", reply{status: 200, body: feedBody})
	c := newTestClient(t, tr, clk)
	done := execAsync(c, queryPage("0"))
	advanceWhenBlocked(t, clk, tr, 1, 10*time.Second)
	out := <-done
	if out.err != nil {
		t.Fatal(out.err)
	}
	if got := attemptSummary(out.res.Diagnostics); got != "East US/initial/10s/expired West US/failover/10s" {
		t.Fatalf("attempts %s: a query page waits 10s, not a point read's 6s", got)
	}
}

// A range that split answers 410/1002 the same in every region: the page ends at once
// for the pipeline to go on from the children, with no retry and no failover.
func TestAPageToASplitRangeEndsAtOnce(t *testing.T) {
	tr := newFakeTransport(fakeAccount(false))
	tr.on("http://east", reply{status: 410, sub: 1002})
	c := newTestClient(t, tr, nil)
	op := queryPage("2")
	op.Hedge = hedging.Threshold{Threshold: time.Hour}
	res, err := c.Execute(context.Background(), op)
	var ce *cosmos.Error
	if !errors.As(err, &ce) || ce.StatusCode != 410 || ce.SubStatus != 1002 {
		t.Fatalf("err = %v, want the 410/1002", err)
	}
	if n := len(tr.callLog()); n != 1 {
		t.Fatalf("%d requests: a gone range is not retried", n)
	}
	if note := res.Diagnostics.Attempts[0].Note; !strings.Contains(note, "range 2 is gone") {
		t.Fatalf("note %q", note)
	}
}

func TestAdaptiveHedgingLearnsQueryPagesApartFromReads(t *testing.T) {
	a, err := hedging.NewAdaptive(hedging.AdaptiveConfig{})
	if err != nil {
		t.Fatal(err)
	}
	tr := newFakeTransport(fakeAccount(false))
	tr.on("http://east", reply{status: 200, body: feedBody})
	c := newTestClient(t, tr, nil)
	for i := 0; i < 3; i++ {
		op := queryPage("0")
		op.Hedge = a
		res, err := c.Execute(context.Background(), op)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(res.Diagnostics.HedgeConfig, "adaptive") {
			t.Fatalf("hedge config %q", res.Diagnostics.HedgeConfig)
		}
	}
	if _, n, _ := a.Stats("query"); n != 3 {
		t.Fatalf("query samples %d, want 3", n)
	}
	if _, n, _ := a.Stats("read"); n != 0 {
		t.Fatalf("read samples %d: query pages must not teach the read threshold", n)
	}
}

func rangesBody(ids ...string) string {
	var rs []cosmos.PartitionKeyRange
	bounds := cosmos.EvenRangeBoundaries(len(ids))
	for i, id := range ids {
		rs = append(rs, cosmos.PartitionKeyRange{ID: id, MinInclusive: bounds[i], MaxExclusive: bounds[i+1]})
	}
	b, _ := json.Marshal(cosmos.PartitionKeyRangeFeed{Ranges: rs, Count: len(rs)})
	return string(b)
}

func TestPartitionKeyRanges(t *testing.T) {
	t.Run("fail over to the next region, then served from the routing cache", func(t *testing.T) {
		tr := newFakeTransport(fakeAccount(false))
		tr.on("http://east", reply{status: 503})
		tr.on("http://west", reply{status: 200, body: rangesBody("0", "1", "2", "3")})
		c := newTestClient(t, tr, clock.NewFake(time.Unix(0, 0)))
		rs, d, err := c.PartitionKeyRanges(context.Background(), "db", "c", false, 0)
		if err != nil || len(rs) != 4 {
			t.Fatalf("ranges %v, err %v", rs, err)
		}
		if got := summary(d); got != "East US/initial/0s/failed West US/failover/0s/won" || d.WinningRegion != "West US" || d.Operation != OpPartitionKeyRanges {
			t.Fatalf("attempts %s", got)
		}
		calls := len(tr.callLog())
		if _, d, _ := c.PartitionKeyRanges(context.Background(), "db", "c", false, 0); len(d.Attempts) != 0 || len(tr.callLog()) != calls {
			t.Fatalf("the second read is served from the cache: %s", summary(d))
		}
	})
	t.Run("a refresh re-reads them, and direct routing sees the new ranges", func(t *testing.T) {
		tr := newFakeTransport(fakeAccount(false))
		tr.on("http://east", reply{status: 200, body: rangesBody("0", "1")}, reply{status: 200, body: rangesBody("2", "3", "4")})
		c := newTestClient(t, tr, nil)
		if rs, _, err := c.PartitionKeyRanges(context.Background(), "db", "c", false, 0); err != nil || len(rs) != 2 {
			t.Fatalf("ranges %v, err %v", rs, err)
		}
		rs, _, err := c.PartitionKeyRanges(context.Background(), "db", "c", true, 0)
		if err != nil || len(rs) != 3 || rs[0].ID != "2" {
			t.Fatalf("refreshed ranges %v, err %v", rs, err)
		}
		cached, err := c.cachedRanges(context.Background(), "db", "c", "http://east")
		if err != nil || len(cached) != 3 {
			t.Fatalf("the routing cache direct mode reads holds %v (%v)", cached, err)
		}
	})
	t.Run("a split's parent listed beside its children is left out", func(t *testing.T) {
		tr := newFakeTransport(fakeAccount(false))
		feed := `{"PartitionKeyRanges":[{"id":"0","minInclusive":"","maxExclusive":"FF"},{"id":"1","minInclusive":"","maxExclusive":"80","parents":["0"]},{"id":"2","minInclusive":"80","maxExclusive":"FF","parents":["0"]}]}`
		tr.on("http://east", reply{status: 200, body: feed})
		c := newTestClient(t, tr, nil)
		rs, _, err := c.PartitionKeyRanges(context.Background(), "db", "c", false, 0)
		if err != nil || len(rs) != 2 || rs[0].ID != "1" || rs[1].ID != "2" {
			t.Fatalf("ranges %+v, err %v", rs, err)
		}
	})
	t.Run("a 404 is the same everywhere: no failover", func(t *testing.T) {
		tr := newFakeTransport(fakeAccount(false))
		tr.on("http://east", reply{status: 404})
		c := newTestClient(t, tr, nil)
		_, d, err := c.PartitionKeyRanges(context.Background(), "db", "c", false, 0)
		if err == nil || len(d.Attempts) != 1 {
			t.Fatalf("err %v, attempts %s", err, summary(d))
		}
	})
	t.Run("the end-to-end timeout bounds a hung region", func(t *testing.T) {
		clk := clock.NewFake(time.Unix(0, 0))
		tr := newFakeTransport(fakeAccount(false))
		tr.on("http://east", reply{block: true})
		c := newTestClient(t, tr, clk)
		type out struct {
			d   *Diagnostics
			err error
		}
		done := make(chan out, 1)
		go func() {
			_, d, err := c.PartitionKeyRanges(context.Background(), "db", "c", false, time.Second)
			done <- out{d, err}
		}()
		advanceWhenBlocked(t, clk, tr, 1, time.Second)
		o := <-done
		var te *TimeoutError
		if !errors.As(o.err, &te) || !o.d.TimedOut {
			t.Fatalf("err = %v", o.err)
		}
	})
}

func TestDirectModeSendsQueriesThroughTheGateway(t *testing.T) {
	tr := newFakeTransport(fakeAccount(false))
	tr.on("http://east", reply{status: 200, body: feedBody})
	c, err := New(Options{Endpoint: "http://global", Transport: tr, Direct: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.Execute(context.Background(), queryPage("0"))
	if err != nil {
		t.Fatal(err)
	}
	d := res.Diagnostics
	if d.ConnectionMode != "direct" || d.Attempts[0].Replica != "" || d.Attempts[0].Endpoint != "http://east" {
		t.Fatalf("attempt %+v", d.Attempts[0])
	}
	if !strings.Contains(strings.Join(d.Notes, "\n"), "queries go through the gateway") {
		t.Fatalf("notes %q", d.Notes)
	}
}
