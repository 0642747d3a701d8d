package retries

import (
	"strings"
	"testing"
	"time"
)

func TestIsFinalMatchesTheSDKs(t *testing.T) {
	final := [][2]int{{200, 0}, {201, 0}, {204, 0}, {304, 0}, {400, 0}, {400, 1001}, {401, 0}, {404, 0}, {405, 0}, {409, 0}, {412, 0}, {413, 0}}
	transient := [][2]int{{404, 1002}, {408, 0}, {410, 1002}, {429, 0}, {449, 0}, {500, 0}, {503, 0}, {403, 3}, {0, 0}}
	for _, c := range final {
		if !IsFinal(c[0], c[1]) {
			t.Errorf("%d/%d must be final", c[0], c[1])
		}
	}
	for _, c := range transient {
		if IsFinal(c[0], c[1]) {
			t.Errorf("%d/%d must be transient", c[0], c[1])
		}
	}
}

func TestDecide(t *testing.T) {
	read := Request{Region: "East US", CanFailOver: true}
	lastRead := Request{Region: "East US"}
	write := Request{Write: true, Region: "East US"}
	cases := []struct {
		name string
		req  Request
		o    Outcome
		want Action
		wait time.Duration
	}{
		{"success stops", read, Outcome{StatusCode: 200}, Stop, 0},
		{"not found stops", read, Outcome{StatusCode: 404}, Stop, 0},
		{"conflict stops a write", write, Outcome{StatusCode: 409}, Stop, 0},
		{"429 waits the retry-after in the same region", read, Outcome{StatusCode: 429, RetryAfter: 250}, RetrySameRegion, 250 * time.Millisecond},
		{"429 without retry-after waits the default", write, Outcome{StatusCode: 429}, RetrySameRegion, 100 * time.Millisecond},
		{"403/3 re-reads the account", write, Outcome{StatusCode: 403, SubStatus: 3}, RefreshAccount, 0},
		{"403/1008 re-reads the account", read, Outcome{StatusCode: 403, SubStatus: 1008}, RefreshAccount, 0},
		{"503 read fails over", read, Outcome{StatusCode: 503}, NextRegion, 0},
		{"408 read fails over", read, Outcome{StatusCode: 408}, NextRegion, 0},
		{"session not available fails over", read, Outcome{StatusCode: 404, SubStatus: 1002}, NextRegion, 0},
		{"sent read with no answer fails over", read, Outcome{Sent: true}, NextRegion, 0},
		{"unsent read fails over", read, Outcome{}, NextRegion, 0},
		{"503 read with no region left stops", lastRead, Outcome{StatusCode: 503}, Stop, 0},
		{"410 read with no region left retries once", lastRead, Outcome{StatusCode: 410}, RetrySameRegion, 50 * time.Millisecond},
		{"503 write stops: ambiguous", write, Outcome{StatusCode: 503}, Stop, 0},
		{"sent write with no answer stops: ambiguous", write, Outcome{Sent: true}, Stop, 0},
		{"unsent write is retried", write, Outcome{}, RetrySameRegion, 50 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var st State
			d := DefaultPolicy().Decide(&st, tc.req, tc.o)
			if d.Action != tc.want || d.Wait != tc.wait {
				t.Fatalf("decision = %v wait %v (%s), want %v wait %v", d.Action, d.Wait, d.Note, tc.want, tc.wait)
			}
			if d.Action != Stop && d.Note == "" {
				t.Fatal("every retry or failover needs a note for the diagnostics")
			}
		})
	}
}

func TestThrottlingStopsAfterNineRetriesOrThirtySeconds(t *testing.T) {
	p := DefaultPolicy()
	var st State
	req := Request{Region: "East US"}
	for i := 0; i < 9; i++ {
		if d := p.Decide(&st, req, Outcome{StatusCode: 429, RetryAfter: 10}); d.Action != RetrySameRegion {
			t.Fatalf("retry %d: %v", i+1, d.Action)
		}
	}
	if d := p.Decide(&st, req, Outcome{StatusCode: 429, RetryAfter: 10}); d.Action != Stop {
		t.Fatalf("tenth 429 must stop, got %v", d.Action)
	}
	st = State{}
	if d := p.Decide(&st, req, Outcome{StatusCode: 429, RetryAfter: 29000}); d.Action != RetrySameRegion {
		t.Fatal("a 29 s wait fits in 30 s")
	}
	if d := p.Decide(&st, req, Outcome{StatusCode: 429, RetryAfter: 2000}); d.Action != Stop {
		t.Fatal("waiting past 30 s in total must stop")
	}
}

func TestAccountRefreshesAreBounded(t *testing.T) {
	p := DefaultPolicy()
	var st State
	req := Request{Write: true, Region: "East US"}
	for i := 0; i < p.MaxAccountRefreshes; i++ {
		if d := p.Decide(&st, req, Outcome{StatusCode: 403, SubStatus: 3}); d.Action != RefreshAccount {
			t.Fatalf("refresh %d: %v", i+1, d.Action)
		}
	}
	if d := p.Decide(&st, req, Outcome{StatusCode: 403, SubStatus: 3}); d.Action != Stop {
		t.Fatal("403/3 after every refresh must stop")
	}
}

func TestAmbiguousWritesAreRetriedOnlyUnderThePolicy(t *testing.T) {
	p := DefaultPolicy()
	ambiguous := []Outcome{{StatusCode: 408}, {StatusCode: 503}, {StatusCode: 449}, {StatusCode: 410}, {Sent: true}, {Sent: true, TimedOut: true, Timeout: 6 * time.Second}}
	for _, o := range ambiguous {
		var st State
		if d := p.Decide(&st, Request{Write: true, Region: "East US"}, o); d.Action != Stop || !strings.Contains(d.Note, "may or may not have been applied") {
			t.Errorf("%+v without write retries: %v %q", o, d.Action, d.Note)
		}
		st = State{}
		var waits []time.Duration
		for {
			d := p.Decide(&st, Request{Write: true, WriteRetries: true, Region: "East US"}, o)
			if d.Action == Stop {
				if !strings.Contains(d.Note, "exhausted") {
					t.Errorf("%+v: stop note %q", o, d.Note)
				}
				break
			}
			if d.Action != RetrySameRegion || !strings.Contains(d.Note, "ambiguous") {
				t.Fatalf("%+v with write retries: %v %q", o, d.Action, d.Note)
			}
			waits = append(waits, d.Wait)
		}
		if len(waits) != p.MaxWriteRetries || waits[0] != 100*time.Millisecond || waits[1] != 200*time.Millisecond || waits[2] != 400*time.Millisecond {
			t.Errorf("%+v: back-off %v", o, waits)
		}
	}
	// A 500 is not one of the ambiguous outcomes the policy retries.
	var st State
	if d := p.Decide(&st, Request{Write: true, WriteRetries: true}, Outcome{StatusCode: 500}); d.Action != Stop {
		t.Errorf("500: %v", d.Action)
	}
}

func TestWritePolicyNames(t *testing.T) {
	if NoWriteRetries.String() != "off" || WriteRetries.String() != "retries" || WriteRetriesWithTrackingID.String() != "tracking-id" || NoWriteRetries.Enabled() || !WriteRetries.Enabled() {
		t.Fatal("names")
	}
}

func TestRoutingGoneIsRetriedAfterARefreshNotAmbiguous(t *testing.T) {
	p := DefaultPolicy()
	for _, sub := range []int{1000, 1002, 1007, 1008} {
		for _, write := range []bool{true, false} {
			var st State
			req := Request{Write: write, Region: "East US"} // write retries off: it still retries
			for i := 0; i < p.MaxRoutingRetries; i++ {
				d := p.Decide(&st, req, Outcome{StatusCode: 410, SubStatus: sub})
				if d.Action != RetrySameRegion || !d.RefreshRouting || !strings.Contains(d.Note, "not applied") {
					t.Fatalf("410/%d write=%v retry %d: %+v", sub, write, i+1, d)
				}
			}
			if d := p.Decide(&st, req, Outcome{StatusCode: 410, SubStatus: sub}); d.Action != Stop {
				t.Fatalf("410/%d write=%v after %d refreshes: %+v, want stop", sub, write, p.MaxRoutingRetries, d)
			}
		}
	}
	var st State
	for i := 0; i < p.MaxRoutingRetries; i++ {
		p.Decide(&st, Request{Region: "East US", CanFailOver: true}, Outcome{StatusCode: 410, SubStatus: 1002})
	}
	if d := p.Decide(&st, Request{Region: "East US", CanFailOver: true}, Outcome{StatusCode: 410, SubStatus: 1002}); d.Action != NextRegion {
		t.Fatalf("a read still gone after the refreshes fails over: %+v", d)
	}
}

func TestForbiddenOtherThanWriteRegionMovedIsFinal(t *testing.T) {
	p := DefaultPolicy()
	for _, sub := range []int{0, 5301, 5300} {
		var st State
		if !IsFinal(403, sub) {
			t.Errorf("403/%d must be final (an authorization failure is the same in every region)", sub)
		}
		if d := p.Decide(&st, Request{Region: "East US", CanFailOver: true}, Outcome{StatusCode: 403, SubStatus: sub}); d.Action != Stop {
			t.Errorf("403/%d read: %+v, want stop without failover", sub, d)
		}
	}
	for _, sub := range []int{3, 1008} {
		if IsFinal(403, sub) {
			t.Errorf("403/%d is the write region moving, not final", sub)
		}
	}
}

func TestTimedOutAttempts(t *testing.T) {
	p := DefaultPolicy()
	timedOut := Outcome{Sent: true, TimedOut: true, Timeout: 6 * time.Second}
	var st State
	d := p.Decide(&st, Request{Region: "East US", CanFailOver: true}, timedOut)
	if d.Action != NextRegion || !strings.Contains(d.Note, "attempt timeout of 6s expired") {
		t.Fatalf("a timed-out read fails over like a 408: %+v", d)
	}
	st = State{}
	if d := p.Decide(&st, Request{Region: "West US"}, timedOut); d.Action != RetrySameRegion {
		t.Fatalf("a timed-out read with no region left is retried once (with the next rung): %+v", d)
	}
	if d := p.Decide(&st, Request{Region: "West US"}, timedOut); d.Action != Stop {
		t.Fatalf("then it stops: %+v", d)
	}
	st = State{}
	if d := p.Decide(&st, Request{Write: true, Region: "East US"}, timedOut); d.Action != Stop || !strings.Contains(d.Note, "may or may not have been applied") {
		t.Fatalf("a timed-out write without write retries is ambiguous: %+v", d)
	}
	st = State{}
	if d := p.Decide(&st, Request{Write: true, Region: "East US"}, Outcome{TimedOut: true, Timeout: time.Second}); d.Action != RetrySameRegion {
		t.Fatalf("a write that timed out before it was sent is always retried: %+v", d)
	}
}

func TestAmbiguousWritesOnMultiWriteFailOverWithWriteRetries(t *testing.T) {
	p := DefaultPolicy()
	var st State
	o := Outcome{Sent: true}
	if d := p.Decide(&st, Request{Write: true, WriteRetries: true, Region: "East US", CanFailOver: true}, o); d.Action != NextRegion || !strings.Contains(d.Note, "next write region") {
		t.Fatalf("with write retries on a multi-write account: %+v", d)
	}
	st = State{}
	if d := p.Decide(&st, Request{Write: true, Region: "East US", CanFailOver: true}, o); d.Action != Stop {
		t.Fatalf("without write retries an ambiguous write never moves: %+v", d)
	}
}
