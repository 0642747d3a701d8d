package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/retries"
)

// A resumed import sends the write of a line that an earlier, killed process may have
// applied: with the same TrackingID and SentBefore, the first attempt's 409 is checked
// and recognised as that earlier write; an item of someone else's still stands as a 409.
func TestAWriteSentBeforeHasItsFirst409Checked(t *testing.T) {
	for _, tc := range []struct {
		name       string
		stored     string
		sentBefore bool
		wantStatus int
		wantSteps  string
		resolution string
	}{
		{"our earlier write is recognised", `{"id":"1","pk":"a","_trackingId":"run-1:7"}`, true, 201,
			"initial:409:failed verify:200:won", "409 to a write sent before resolved: _trackingId matches"},
		{"someone else's item stands", `{"id":"1","pk":"a","_trackingId":"run-0:7"}`, true, 409,
			"initial:409:won verify:200:failed", ""},
		{"an item without a tracking id stands", `{"id":"1","pk":"a"}`, true, 409,
			"initial:409:won verify:200:failed", ""},
		{"without SentBefore a first 409 is not checked", `{"id":"1","pk":"a","_trackingId":"run-1:7"}`, false, 409,
			"initial:409:won", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newStoreTransport()
			tr.items["1"] = []byte(tc.stored)
			op := createOp(retries.WriteRetriesWithTrackingID)
			op.TrackingID, op.SentBefore = "run-1:7", tc.sentBefore
			res, err := writeClient(t, tr).Execute(context.Background(), op)
			status := res.StatusCode
			if st, _, ok := cosmos.Status(err); ok {
				status = st
			}
			if status != tc.wantStatus || reasons(res.Diagnostics) != tc.wantSteps || res.Diagnostics.Resolution != tc.resolution {
				t.Fatalf("status %d (err %v), attempts %s, resolution %q", status, err, reasons(res.Diagnostics), res.Diagnostics.Resolution)
			}
		})
	}
}

func TestAGivenTrackingIDIsTheOneSent(t *testing.T) {
	tr := newStoreTransport()
	op := createOp(retries.WriteRetriesWithTrackingID)
	op.TrackingID = "run-1:8"
	if _, err := writeClient(t, tr).Execute(context.Background(), op); err != nil {
		t.Fatal(err)
	}
	if got := string(tr.items["1"]); got != `{"id":"1","pk":"a","n":1,"_trackingId":"run-1:8"}` {
		t.Fatalf("stored %s", got)
	}
}

func TestSentBeforeWithoutATrackingIDIsRefused(t *testing.T) {
	for _, op := range []Operation{
		{Kind: OpCreate, Database: "db", Container: "c", Body: []byte(`{"id":"1","pk":"a"}`), WriteRetries: retries.WriteRetriesWithTrackingID, SentBefore: true},
		{Kind: OpCreate, Database: "db", Container: "c", Body: []byte(`{"id":"1","pk":"a"}`), WriteRetries: retries.WriteRetries, TrackingID: "x", SentBefore: true},
	} {
		_, err := writeClient(t, newStoreTransport()).Execute(context.Background(), op)
		if _, ok := err.(*InputError); !ok || !strings.Contains(err.Error(), "SentBefore") {
			t.Fatalf("err %v", err)
		}
	}
}

// Throttled hears of a 429 when it arrives, before the engine waits out its retry-after.
func TestThrottledIsCalledBeforeTheRetryAfterIsWaited(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	tr := newFakeTransport(fakeAccount(false))
	tr.on("http://east", reply{status: 429, retryAfter: 300 * time.Millisecond}, reply{status: 200, charge: 1, body: `{}`})
	c := newTestClient(t, tr, clk)
	heard := make(chan time.Duration, 4)
	op := readOp()
	op.Throttled = func(d time.Duration) { heard <- d }
	done := make(chan error)
	go func() {
		_, err := c.Execute(context.Background(), op)
		done <- err
	}()
	if !clk.WaitForTimerIn(300*time.Millisecond, 5*time.Second) {
		t.Fatal("engine never waited for the retry-after")
	}
	select {
	case d := <-heard:
		if d != 300*time.Millisecond {
			t.Fatalf("retry-after %s", d)
		}
	default:
		t.Fatal("Throttled was not called before the wait")
	}
	clk.Advance(300 * time.Millisecond)
	if err := <-done; err != nil || len(heard) != 0 {
		t.Fatalf("err %v, further calls %d", err, len(heard))
	}
}
