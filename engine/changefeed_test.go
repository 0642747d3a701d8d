package engine

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/hedging"
)

func changeFeedPoll(rangeID, etag string) Operation {
	return Operation{Kind: OpChangeFeed, Database: "db", Container: "c", RangeID: rangeID, Continuation: etag, MaxItemCount: 50}
}

func TestChangeFeedPollRequest(t *testing.T) {
	pk, _ := cosmos.PK("tenant")
	since := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	cases := []struct {
		name   string
		edit   func(*Operation)
		header map[string]string // expected request headers ("" = absent)
	}{
		{"a range from its etag", func(op *Operation) {}, map[string]string{
			cosmos.HeaderAIM: "Incremental Feed", cosmos.HeaderPartitionKeyRangeID: "3", cosmos.HeaderIfNoneMatch: `"42"`,
			cosmos.HeaderMaxItemCount: "50", "If-Modified-Since": "", cosmos.HeaderPartitionKey: "", cosmos.HeaderIsQuery: ""}},
		{"a range from now", func(op *Operation) { op.Continuation = ChangeFeedFromNow }, map[string]string{cosmos.HeaderIfNoneMatch: "*"}},
		{"a range from a time", func(op *Operation) { op.Continuation, op.ModifiedSince = "", since }, map[string]string{
			cosmos.HeaderIfNoneMatch: "", "If-Modified-Since": "Tue, 01 Dec 2026 09:30:00 GMT"}},
		{"an etag wins over a time", func(op *Operation) { op.ModifiedSince = since }, map[string]string{
			cosmos.HeaderIfNoneMatch: `"42"`, "If-Modified-Since": ""}},
		{"a partition key from the beginning", func(op *Operation) { op.RangeID, op.PartitionKey, op.Continuation, op.MaxItemCount = "", pk, "", 0 }, map[string]string{
			cosmos.HeaderPartitionKey: `["tenant"]`, cosmos.HeaderPartitionKeyRangeID: "", cosmos.HeaderIfNoneMatch: "", cosmos.HeaderMaxItemCount: ""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := newFakeTransport(fakeAccount(false))
			tr.on("http://east", reply{status: 200, body: feedBody})
			c := newTestClient(t, tr, nil)
			op := changeFeedPoll("3", `"42"`)
			tc.edit(&op)
			res, err := c.Execute(context.Background(), op)
			if err != nil {
				t.Fatal(err)
			}
			req := tr.reqs[0]
			if req.Method != http.MethodGet || req.Path != "/dbs/db/colls/c/docs" || len(req.Body) != 0 {
				t.Fatalf("%s %s %q", req.Method, req.Path, req.Body)
			}
			for k, want := range tc.header {
				if got := req.Header.Get(k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
			if string(res.Body) != feedBody || res.Diagnostics.Operation != OpChangeFeed {
				t.Fatalf("result %+v", res)
			}
		})
	}
}

func TestChangeFeedPollsAreChecked(t *testing.T) {
	pk, _ := cosmos.PK("a")
	for name, edit := range map[string]func(*Operation){
		"no target":       func(op *Operation) { op.RangeID = "" },
		"two targets":     func(op *Operation) { op.PartitionKey = pk },
		"a bad page size": func(op *Operation) { op.MaxItemCount = -5 },
	} {
		tr := newFakeTransport(fakeAccount(false))
		c := newTestClient(t, tr, nil)
		op := changeFeedPoll("0", "")
		edit(&op)
		_, err := c.Execute(context.Background(), op)
		var ie *InputError
		if !errors.As(err, &ie) || len(tr.callLog()) != 0 {
			t.Errorf("%s: err = %v, %d requests; want an input error and nothing sent", name, err, len(tr.callLog()))
		}
	}
}

// A 304 is the range's answer "nothing new": final and successful, the same in every
// region, so nothing is retried, failed over or hedged after it.
func TestChangeFeed304IsAFinalSuccess(t *testing.T) {
	tr := newFakeTransport(fakeAccount(false))
	tr.on("http://east", reply{status: 304})
	c := newTestClient(t, tr, clock.NewFake(time.Unix(0, 0)))
	op := changeFeedPoll("1", `"7"`)
	op.Hedge = hedging.Threshold{Threshold: time.Hour}
	res, err := c.Execute(context.Background(), op)
	if err != nil || res.StatusCode != 304 || len(res.Body) != 0 {
		t.Fatalf("res %+v, err %v", res, err)
	}
	if got := summary(res.Diagnostics); got != "East US/initial/0s/won" || len(tr.callLog()) != 1 {
		t.Fatalf("attempts %s", got)
	}
}

func TestHedgedChangeFeedPollTakesA304FromTheHedge(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	tr := newFakeTransport(fakeAccount(false))
	tr.on("http://east", reply{block: true})
	tr.on("http://west", reply{status: 304})
	c := newTestClient(t, tr, clk)
	op := changeFeedPoll("1", `"7"`)
	op.Hedge = hedging.Threshold{Threshold: 200 * msec, Step: 100 * msec}
	done := execAsync(c, op)
	<-tr.blocked
	if !clk.WaitForTimerIn(200*msec, time.Second) {
		t.Fatal("no hedge timer at the threshold")
	}
	clk.Advance(200 * msec)
	out := <-done
	if out.err != nil || out.res.StatusCode != 304 {
		t.Fatalf("res %+v, err %v", out.res, out.err)
	}
	if got := summary(out.res.Diagnostics); got != "East US/initial/0s/cancelled West US/hedge/200ms/won" {
		t.Fatalf("attempts %s: the hedge's 304 wins, no third region asked", got)
	}
}

func TestAChangeFeedPollToASplitRangeEndsAtOnce(t *testing.T) {
	tr := newFakeTransport(fakeAccount(false))
	tr.on("http://east", reply{status: 410, sub: 1002})
	c := newTestClient(t, tr, nil)
	op := changeFeedPoll("2", `"9"`)
	op.Hedge = hedging.Threshold{Threshold: time.Hour}
	res, err := c.Execute(context.Background(), op)
	var ce *cosmos.Error
	if !errors.As(err, &ce) || ce.StatusCode != 410 || ce.SubStatus != 1002 || len(tr.callLog()) != 1 {
		t.Fatalf("err = %v, %d requests; want the 410/1002, not retried", err, len(tr.callLog()))
	}
	if note := res.Diagnostics.Attempts[0].Note; !strings.Contains(note, "the change feed goes on from its children") {
		t.Fatalf("note %q", note)
	}
}

func TestChangeFeedPollsUseTheQueryAttemptTimeoutsAndFailOver(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	tr := newFakeTransport(fakeAccount(false))
	tr.on("http://east", reply{block: true})
	tr.on("http://west", reply{status: 200, body: feedBody})
	c := newTestClient(t, tr, clk)
	done := execAsync(c, changeFeedPoll("0", ""))
	advanceWhenBlocked(t, clk, tr, 1, 10*time.Second)
	out := <-done
	if out.err != nil {
		t.Fatal(out.err)
	}
	if got := attemptSummary(out.res.Diagnostics); got != "East US/initial/10s/expired West US/failover/10s" {
		t.Fatalf("attempts %s", got)
	}
}

func TestAdaptiveHedgingLearnsChangeFeedPollsApart(t *testing.T) {
	a, err := hedging.NewAdaptive(hedging.AdaptiveConfig{})
	if err != nil {
		t.Fatal(err)
	}
	tr := newFakeTransport(fakeAccount(false))
	tr.on("http://east", reply{status: 304})
	c := newTestClient(t, tr, nil)
	for i := 0; i < 3; i++ {
		op := changeFeedPoll("0", `"1"`)
		op.Hedge = a
		if _, err := c.Execute(context.Background(), op); err != nil {
			t.Fatal(err)
		}
	}
	if _, n, _ := a.Stats("changefeed"); n != 3 {
		t.Fatalf("changefeed samples %d, want 3", n)
	}
	for _, other := range []string{"read", "query"} {
		if _, n, _ := a.Stats(other); n != 0 {
			t.Fatalf("%s samples %d: polls must not teach it", other, n)
		}
	}
}
