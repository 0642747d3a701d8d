package emulator_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/cosmosctl/cosmosctl/emulator"
)

// The official Go SDK meets the emulator's throttling by provisioned throughput as it
// meets the service's: a 429/3200 whose x-ms-retry-after-ms it waits, then a retry that
// fits in the refilled budget. Real time: one range of 400 RU/s, writes of 295 RU.
func TestSDKWaitsOutAnRUBudgetWhenThroughputIsEnforced(t *testing.T) {
	s, err := emulator.Start(emulator.Config{Ranges: 1, EnforceThroughput: true, Databases: []emulator.DatabaseConfig{{
		ID: "db", Containers: []emulator.ContainerConfig{{ID: "items", PartitionKey: []string{"/pk"}}},
	}}}, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c := newSDKClient(t, s)
	ctx := context.Background()
	pk := azcosmos.NewPartitionKeyString("p1")
	pad := strings.Repeat("x", 60_000) // 59 KB stored: 295 RU

	// The first write leaves 105 of the 400 RU; the next needs 295, so it is refused
	// once with the time until the budget has refilled that far (≈475 ms, less the time
	// between the writes), and the SDK's retry after that wait fits: a retry that did
	// not wait would be refused again. A loaded machine may take so long between writes
	// that one fits at once, so the test writes until one was refused, at most 4.
	throttled := false
	for i := 0; i < 4 && !throttled; i++ {
		id := strconv.Itoa(i)
		mark := c.rec.mark()
		resp, err := c.container.CreateItem(ctx, pk, mustJSON(t, sdkDoc{ID: id, PK: "p1", Name: pad}), nil)
		if err != nil {
			t.Fatalf("create %s: %v%s", id, err, describeAttempts(c.rec.since(mark)))
		}
		if resp.RequestCharge != 295 {
			t.Errorf("create %s charged %v RU, want 295", id, resp.RequestCharge)
		}
		attempts := docAttempts(c.rec.since(mark))
		switch {
		case len(attempts) == 1 && attempts[0].status == http.StatusCreated:
		case len(attempts) == 2 && attempts[0].status == http.StatusTooManyRequests &&
			attempts[0].subStatus == strconv.Itoa(emulator.SubRUBudgetExceeded) && attempts[1].status == http.StatusCreated:
			throttled = true
			if ms, err := strconv.Atoi(attempts[0].retryMs); err != nil || ms <= 0 || ms > 475 {
				t.Errorf("the 429's retry-after %q ms, want 1 to 475", attempts[0].retryMs)
			}
		default:
			t.Fatalf("create %s, attempts:%s\nwant 201, or 429/3200 then 201", id, describeAttempts(attempts))
		}
	}
	if !throttled {
		t.Fatal("no write of 295 RU was throttled at 400 RU/s")
	}
	if got := s.State().Throttled; got != 1 {
		t.Errorf("the emulator throttled %d requests, want 1", got)
	}
}
