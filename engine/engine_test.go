package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
)

func TestPlanRegions(t *testing.T) {
	single, multi := fakeAccount(false), fakeAccount(true)
	cases := []struct {
		name      string
		acct      cosmos.Account
		preferred []string
		excluded  []string
		write     bool
		want      string
		fallback  string
		err       string
	}{
		{name: "account order by default", acct: single, want: "East US,West US,North Europe"},
		{name: "preferred order", acct: single, preferred: []string{"north europe", "West US"}, want: "North Europe,West US"},
		{name: "exclude is case and space insensitive", acct: single, excluded: []string{"EASTUS"}, want: "West US,North Europe"},
		{name: "exclude applies to preferred", acct: single, preferred: []string{"West US", "East US"}, excluded: []string{"west us"}, want: "East US"},
		{name: "every region excluded falls back to the write region", acct: single, excluded: []string{"East US", "West US", "North Europe"}, want: "East US", fallback: "every region is excluded"},
		{name: "unknown excluded region lists the valid ones", acct: single, excluded: []string{"Mars"}, err: `"East US", "West US", "North Europe"`},
		{name: "unknown preferred region", acct: single, preferred: []string{"Atlantis"}, err: "Atlantis"},
		{name: "single-write writes go to the write region", acct: single, excluded: []string{"East US"}, write: true, want: "East US", fallback: "single-write account"},
		{name: "multi-write writes follow preferred minus excluded", acct: multi, preferred: []string{"West US", "North Europe"}, excluded: []string{"West US"}, write: true, want: "North Europe"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := planRegions(&tc.acct, tc.preferred, tc.excluded, tc.write)
			if tc.err != "" {
				var ie *InputError
				if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error = %v, want an InputError mentioning %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range plan.targets {
				got = append(got, l.Name)
			}
			if strings.Join(got, ",") != tc.want || !strings.Contains(plan.fallback, tc.fallback) {
				t.Fatalf("targets %v fallback %q; want %s, %q", got, plan.fallback, tc.want, tc.fallback)
			}
			if len(plan.notes) != 3 {
				t.Fatalf("every region needs a note: %+v", plan.notes)
			}
		})
	}
}

func TestReadGoesToTheFirstEffectiveRegion(t *testing.T) {
	tr := newFakeTransport(fakeAccount(false))
	tr.on("http://west", reply{status: 200, charge: 1, body: `{"id":"1","pk":"a"}`})
	c := newTestClient(t, tr, nil, "West US", "East US")
	res, err := c.Execute(context.Background(), readOp())
	if err != nil {
		t.Fatal(err)
	}
	d := res.Diagnostics
	if res.StatusCode != 200 || string(res.Body) != `{"id":"1","pk":"a"}` {
		t.Fatalf("result %d %s", res.StatusCode, res.Body)
	}
	if len(d.Attempts) != 1 || d.Attempts[0].Region != "West US" || d.Attempts[0].Reason != ReasonInitial || d.Attempts[0].Outcome != OutcomeWon {
		t.Fatalf("attempts %+v", d.Attempts)
	}
	if d.WinningRegion != "West US" || d.RequestCharge != 1 || strings.Join(d.ContactedRegions, ",") != "West US" {
		t.Fatalf("diagnostics %+v", d)
	}
}

func TestReadFailsOverOnTransientErrors(t *testing.T) {
	for _, r := range []reply{{status: 503}, {status: 408}, {status: 404, sub: 1002}, {status: 0, sent: true}} {
		tr := newFakeTransport(fakeAccount(false))
		tr.on("http://east", r)
		c := newTestClient(t, tr, nil)
		res, err := c.Execute(context.Background(), readOp())
		if err != nil {
			t.Fatalf("%+v: %v", r, err)
		}
		d := res.Diagnostics
		if len(d.Attempts) != 2 || d.Attempts[0].Outcome != OutcomeFailed || d.Attempts[1].Reason != ReasonFailover || d.WinningRegion != "West US" {
			t.Fatalf("%+v: attempts %+v", r, d.Attempts)
		}
		if d.Attempts[0].Note == "" {
			t.Fatalf("the failover needs a note: %+v", d.Attempts[0])
		}
	}
}

func TestNotFoundIsFinalAndDoesNotFailOver(t *testing.T) {
	tr := newFakeTransport(fakeAccount(false))
	tr.on("http://east", reply{status: 404, charge: 1})
	c := newTestClient(t, tr, nil)
	res, err := c.Execute(context.Background(), readOp())
	if st, _, _ := cosmos.Status(err); st != 404 {
		t.Fatalf("err = %v", err)
	}
	if len(res.Diagnostics.Attempts) != 1 || res.StatusCode != 404 || res.Body != nil {
		t.Fatalf("attempts %+v", res.Diagnostics.Attempts)
	}
}

func TestThrottledReadWaitsTheRetryAfterOnTheClock(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	tr := newFakeTransport(fakeAccount(false))
	tr.on("http://east", reply{status: 429, retryAfter: 200 * time.Millisecond}, reply{status: 200, charge: 1, body: `{}`})
	c := newTestClient(t, tr, clk)
	done := make(chan *Result)
	go func() {
		res, _ := c.Execute(context.Background(), readOp())
		done <- res
	}()
	if !clk.WaitForTimerIn(200*time.Millisecond, 5*time.Second) {
		t.Fatal("engine never waited for the retry-after")
	}
	select {
	case <-done:
		t.Fatal("the retry must wait for the retry-after")
	default:
	}
	clk.Advance(200 * time.Millisecond)
	res := <-done
	a := res.Diagnostics.Attempts
	if len(a) != 2 || a[1].Reason != ReasonRetry || a[1].Region != "East US" || a[1].Start != 200*time.Millisecond {
		t.Fatalf("attempts %+v", a)
	}
}

func TestWriteFollowsTheWriteRegionAfter403_3(t *testing.T) {
	acct := fakeAccount(false)
	tr := newFakeTransport(acct)
	tr.on("http://east", reply{status: 403, sub: 3})
	tr.on("http://west", reply{status: 201, charge: 5, body: `{"id":"1","pk":"a"}`})
	c := newTestClient(t, tr, nil)
	if _, err := c.Account(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The account fails over: West US is now the write region.
	tr.mu.Lock()
	tr.account.WritableLocations = []cosmos.Location{acct.ReadableLocations[1]}
	tr.mu.Unlock()
	res, err := c.Execute(context.Background(), Operation{Kind: OpCreate, Database: "db", Container: "c", Body: []byte(`{"id":"1","pk":"a"}`)})
	if err != nil {
		t.Fatal(err)
	}
	a := res.Diagnostics.Attempts
	if len(a) != 2 || a[0].Region != "East US" || a[1].Region != "West US" || res.StatusCode != 201 {
		t.Fatalf("attempts %+v", a)
	}
	if !strings.Contains(a[0].Note, "write region moved") {
		t.Fatalf("note %q", a[0].Note)
	}
}

func TestAmbiguousWriteFailuresAreNotRetried(t *testing.T) {
	for _, r := range []reply{{status: 503}, {status: 408}, {status: 0, sent: true}} {
		tr := newFakeTransport(fakeAccount(false))
		tr.on("http://east", r)
		c := newTestClient(t, tr, nil)
		res, err := c.Execute(context.Background(), Operation{Kind: OpCreate, Database: "db", Container: "c", Body: []byte(`{"id":"1","pk":"a"}`)})
		if err == nil || len(res.Diagnostics.Attempts) != 1 {
			t.Fatalf("%+v: err %v, %d attempts; an ambiguous write must surface", r, err, len(res.Diagnostics.Attempts))
		}
	}
	// A request that never reached the wire is safe to send again.
	tr := newFakeTransport(fakeAccount(false))
	tr.on("http://east", reply{status: 0, sent: false}, reply{status: 201, body: `{}`})
	c := newTestClient(t, tr, nil)
	res, err := c.Execute(context.Background(), Operation{Kind: OpCreate, Database: "db", Container: "c", Body: []byte(`{"id":"1","pk":"a"}`)})
	if err != nil || len(res.Diagnostics.Attempts) != 2 {
		t.Fatalf("unsent write: err %v, attempts %+v", err, res.Diagnostics.Attempts)
	}
}

func TestEndToEndTimeoutCancelsTheAttempt(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	tr := newFakeTransport(fakeAccount(false))
	tr.on("http://east", reply{block: true})
	c := newTestClient(t, tr, clk)
	op := readOp()
	op.E2ETimeout = 500 * time.Millisecond
	// The only region: it gets all that is left (with another region left it would get
	// half, and fail over when that expired: e2efit_test.go).
	op.ExcludeRegions = []string{"West US", "North Europe"}
	type out struct {
		res *Result
		err error
	}
	done := make(chan out)
	go func() {
		res, err := c.Execute(context.Background(), op)
		done <- out{res, err}
	}()
	<-tr.blocked
	clk.Advance(500 * time.Millisecond)
	o := <-done
	var te *TimeoutError
	if !errors.As(o.err, &te) || !errors.Is(o.err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a TimeoutError", o.err)
	}
	d := o.res.Diagnostics
	if !d.TimedOut || len(d.Attempts) != 1 || d.Attempts[0].Outcome != OutcomeCancelled || d.Attempts[0].Duration != 500*time.Millisecond {
		t.Fatalf("diagnostics %+v", d)
	}
	if !strings.Contains(d.Attempts[0].Error, "end-to-end timeout") {
		t.Fatalf("attempt error %q", d.Attempts[0].Error)
	}
}

func TestWritesTakeTheirPartitionKeyFromTheDocument(t *testing.T) {
	tr := newFakeTransport(fakeAccount(false))
	tr.pkPaths = []string{"/tenant", "/user"}
	c := newTestClient(t, tr, nil)
	res, err := c.Execute(context.Background(), Operation{Kind: OpUpsert, Database: "db", Container: "c", Body: []byte(`{"id":"1","tenant":"t","user":7}`)})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Diagnostics.PartitionKey) != `["t",7]` || res.Diagnostics.ID != "1" {
		t.Fatalf("partition key %s id %s", res.Diagnostics.PartitionKey, res.Diagnostics.ID)
	}
}

func TestBadOperationsAreInputErrors(t *testing.T) {
	pk, _ := cosmos.PK("a")
	cases := []struct {
		name string
		op   Operation
		msg  string
	}{
		{"malformed JSON", Operation{Kind: OpCreate, Body: []byte(`{"id":`)}, "not a JSON object"},
		{"array document", Operation{Kind: OpCreate, Body: []byte(`[1]`)}, "not a JSON object"},
		{"no id", Operation{Kind: OpCreate, Body: []byte(`{"pk":"a"}`)}, `no "id"`},
		{"numeric id", Operation{Kind: OpCreate, Body: []byte(`{"id":1}`)}, "must be a string"},
		{"two documents", Operation{Kind: OpCreate, Body: []byte(`{"id":"1"}{"id":"2"}`)}, "after the JSON object"},
		{"id mismatch", Operation{Kind: OpReplace, ID: "2", Body: []byte(`{"id":"1","pk":"a"}`)}, "does not match"},
		{"read without a key", Operation{Kind: OpRead, ID: "1"}, "--pk"},
		{"object partition key", Operation{Kind: OpCreate, Body: []byte(`{"id":"1","pk":{"x":1}}`)}, "object or array"},
		{"negative timeout", Operation{Kind: OpRead, ID: "1", PartitionKey: pk, E2ETimeout: -time.Second}, "negative"},
		{"unknown excluded region", Operation{Kind: OpRead, ID: "1", PartitionKey: pk, ExcludeRegions: []string{"Moon"}}, "Moon"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := newFakeTransport(fakeAccount(false))
			c := newTestClient(t, tr, nil)
			tc.op.Database, tc.op.Container = "db", "c"
			res, err := c.Execute(context.Background(), tc.op)
			var ie *InputError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err = %v, want an InputError mentioning %q", err, tc.msg)
			}
			if res == nil || res.Diagnostics == nil || len(tr.callLog()) != 0 {
				t.Fatal("a refused operation must send nothing and still return diagnostics")
			}
		})
	}
}
