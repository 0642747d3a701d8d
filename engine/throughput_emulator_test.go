package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
)

// With the emulator enforcing provisioned throughput, the engine's answer to a spent
// RU budget is the one it gives any 429: wait the service's retry-after on its clock,
// then retry in the same region. Emulator and engine share a fake clock, so the
// budget refills exactly when the engine retries.
func TestEngineWaitsOutAnRUBudgetThe429Names(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	srv, err := emulator.Start(emulator.Config{Ranges: 1, EnforceThroughput: true,
		Databases: []emulator.DatabaseConfig{{ID: "db", Containers: []emulator.ContainerConfig{{ID: "c", PartitionKey: []string{"/pk"}}}}}},
		emulator.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	cred, _ := cosmos.NewMasterKey(srv.Key())
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred, Now: clk.Now}
	t.Cleanup(func() {
		tr.HTTP.CloseIdleConnections()
		srv.Close()
	})
	c, err := New(Options{Endpoint: srv.Endpoint(), Transport: tr, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	// 20 KB stored (with the system properties): 100 RU, a quarter of the one range's
	// 400 RU/s.
	create := func(id string) Operation {
		body := fmt.Sprintf(`{"id":%q,"pk":"a","pad":%q}`, id, strings.Repeat("x", 19800))
		return Operation{Kind: OpCreate, Database: "db", Container: "c", PartitionKey: cosmos.PartitionKey{{Kind: cosmos.KindString, Str: "a"}}, Body: []byte(body)}
	}
	ctx := context.Background()
	for i := range 4 {
		res, err := c.Execute(ctx, create(fmt.Sprint(i)))
		if err != nil || res.RequestCharge != 100 || len(res.Diagnostics.Attempts) != 1 {
			t.Fatalf("create %d: %v, charge %v, %d attempts; want 100 RU at once", i, err, res.RequestCharge, len(res.Diagnostics.Attempts))
		}
	}

	done := make(chan *Result, 1)
	go func() {
		res, err := c.Execute(ctx, create("over"))
		if err != nil {
			t.Errorf("the throttled create failed: %v", err)
		}
		done <- res
	}()
	// 100 RU more at 400 RU/s: 250 ms.
	if !clk.WaitForTimerIn(250*time.Millisecond, 10*time.Second) {
		t.Fatal("the engine never waited the 250 ms retry-after")
	}
	clk.Advance(250 * time.Millisecond)
	res := <-done
	a := res.Diagnostics.Attempts
	if len(a) != 2 || a[0].StatusCode != 429 || a[0].SubStatus != emulator.SubRUBudgetExceeded || a[0].RequestCharge != 0 ||
		a[1].StatusCode != 201 || a[1].Reason != ReasonRetry || a[1].Region != a[0].Region || a[1].Start != 250*time.Millisecond {
		t.Fatalf("attempts %+v, want 429/3200 (0 RU), then 201 in the same region after 250 ms", a)
	}
	if !strings.Contains(a[0].Note, "retrying after 250ms") {
		t.Errorf("the 429's note %q does not name the retry-after", a[0].Note)
	}
	if res.RequestCharge != 100 {
		t.Errorf("charge %v, want 100 (the 429 costs nothing)", res.RequestCharge)
	}
	// The anatomy of both attempts: what the 429 asked and what was waited, and where
	// the service says it served each (the emulator's one range, "0").
	if a[0].RetryAfter != 250*time.Millisecond || a[0].Waited != 250*time.Millisecond || a[1].Waited != 0 {
		t.Errorf("retry-after asked %v, waited %v then %v; want 250ms, 250ms, 0", a[0].RetryAfter, a[0].Waited, a[1].Waited)
	}
	if a[1].PartitionKeyRangeID != "0" || !a[1].HasLSN || a[1].LSN < 5 || !strings.HasPrefix(a[1].SessionToken, "0:") {
		t.Errorf("the create's placement: range %q, lsn %v/%d, session token %q; want range 0, the LSN of the fifth write or later, 0:…",
			a[1].PartitionKeyRangeID, a[1].HasLSN, a[1].LSN, a[1].SessionToken)
	}
	j, err := json.Marshal(a[0])
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		StatusText   *string  `json:"status_text"`
		RetryAfterMs *float64 `json:"retry_after_ms"`
		WaitedMs     *float64 `json:"waited_ms"`
		RangeID      *string  `json:"partition_key_range_id"`
	}
	if err := json.Unmarshal(j, &got); err != nil {
		t.Fatal(err)
	}
	if got.StatusText == nil || !strings.Contains(*got.StatusText, "RU/s budget") || got.RetryAfterMs == nil || *got.RetryAfterMs != 250 ||
		got.WaitedMs == nil || *got.WaitedMs != 250 || got.RangeID == nil || *got.RangeID != "0" {
		t.Errorf("the 429's JSON %s lacks its words, retry-after, wait or range", j)
	}
	if got := srv.State().Throttled; got != 1 {
		t.Errorf("the emulator throttled %d requests, want 1", got)
	}
}
