package engine

import (
	"context"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
	"github.com/cosmosctl/cosmosctl/hedging"
	"github.com/cosmosctl/cosmosctl/retries"
)

func multiWriteClient(t *testing.T) (*emulator.Server, *Client) {
	t.Helper()
	srv, err := emulator.Start(emulator.Config{MultiWrite: true, Databases: []emulator.DatabaseConfig{{ID: "db", Containers: []emulator.ContainerConfig{{ID: "c", PartitionKey: []string{"/pk"}}}}}}, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cred, _ := cosmos.NewMasterKey(srv.Key())
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
	c, err := New(Options{Endpoint: srv.Endpoint(), Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.HTTP.CloseIdleConnections(); srv.Close() })
	return srv, c
}

func hedgedCreate(id string, policy retries.WritePolicy) Operation {
	return Operation{Kind: OpCreate, Database: "db", Container: "c", Body: []byte(`{"id":"` + id + `","pk":"p"}`),
		WriteRetries: policy, Hedge: hedging.Threshold{Threshold: 50 * time.Millisecond, Step: 50 * time.Millisecond}}
}

func TestWritesHedgeOnlyOnMultiWriteAccountsWithWriteRetries(t *testing.T) {
	srv, c := multiWriteClient(t)
	// 2 s: the hedge at 50 ms must win even on a loaded machine (the first attempt is
	// cancelled when it does, so the test does not wait for it).
	srv.Faults().SetLatency("East US", "create", faults.Distribution{Kind: "fixed", Value: faults.Duration(2 * time.Second)})
	res, err := c.Execute(context.Background(), hedgedCreate("slow-east", retries.WriteRetriesWithTrackingID))
	if err != nil {
		t.Fatal(err)
	}
	d := res.Diagnostics
	if d.HedgeConfig != "threshold=50ms step=50ms max_regions=all" || len(d.Attempts) < 2 {
		t.Fatalf("a create on a multi-write account with write retries must be hedged: hedge %q attempts %s", d.HedgeConfig, summary(d))
	}
	// What hedging guarantees: the slow first region is asked first and cancelled once a
	// hedge in another write region answered; which of West US and North Europe answers
	// first is a race (the second hedge starts 50 ms after the first on a loaded machine).
	first := d.Attempts[0]
	if first.Region != "East US" || first.Reason != ReasonInitial || first.Outcome != OutcomeCancelled {
		t.Fatalf("the first attempt must go to East US and be cancelled: %s", summary(d))
	}
	if d.WinningAttempt < 1 || d.WinningAttempt > len(d.Attempts) {
		t.Fatalf("no winning attempt: %s", summary(d))
	}
	won := d.Attempts[d.WinningAttempt-1]
	if d.WinningRegion == "East US" || won.Reason != ReasonHedge || won.Outcome != OutcomeWon || won.StatusCode != 201 {
		t.Fatalf("a hedge in another write region must win with 201: %s", summary(d))
	}
	// Without write retries the same write is not hedged.
	res, err = c.Execute(context.Background(), hedgedCreate("no-retries", retries.NoWriteRetries))
	if err != nil || len(res.Diagnostics.Attempts) != 1 || res.Diagnostics.WinningRegion != "East US" {
		t.Fatalf("err %v attempts %s", err, summary(res.Diagnostics))
	}
}

func TestHedgedCreateWithTrackingIDStaysCorrectWhenAnAnswerIsLost(t *testing.T) {
	srv, c := multiWriteClient(t)
	// East US applies the create and loses the answer; the hedge to West US then finds
	// the item already there (409) and recognises it by its _trackingId.
	srv.AddFault(faults.Rule{Region: "East US", Operations: []string{"create"}, Effect: "drop-response"})
	res, err := c.Execute(context.Background(), hedgedCreate("lost", retries.WriteRetriesWithTrackingID))
	if err != nil {
		t.Fatalf("err %v attempts %s", err, summary(res.Diagnostics))
	}
	if res.StatusCode != 201 || res.Diagnostics.Resolution != "409 on retry resolved: _trackingId matches" {
		t.Fatalf("status %d resolution %q attempts %s", res.StatusCode, res.Diagnostics.Resolution, summary(res.Diagnostics))
	}
	read, err := c.Execute(context.Background(), Operation{Kind: OpRead, Database: "db", Container: "c", ID: "lost", PartitionKey: cosmos.PartitionKey{{Kind: cosmos.KindString, Str: "p"}}})
	if err != nil || read.StatusCode != 200 {
		t.Fatalf("the item must exist once: %v", err)
	}
}
