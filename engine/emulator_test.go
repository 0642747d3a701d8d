package engine

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
	"github.com/cosmosctl/cosmosctl/hedging"
)

// Every engine test, hedged or not, must leave no goroutine behind: cancelled hedge
// arms, timers and HTTP requests all end with the operation.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// emulatorClient starts an emulator and an engine client over real HTTP.
func emulatorClient(t *testing.T) (*emulator.Server, *Client) {
	t.Helper()
	srv, err := emulator.Start(emulator.Config{Databases: []emulator.DatabaseConfig{{ID: "db", Containers: []emulator.ContainerConfig{{ID: "c", PartitionKey: []string{"/pk"}}}}}}, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cred, _ := cosmos.NewMasterKey(srv.Key())
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
	c, err := New(Options{Endpoint: srv.Endpoint(), Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		tr.HTTP.CloseIdleConnections()
		srv.Close()
	})
	if _, err := c.Execute(context.Background(), Operation{Kind: OpCreate, Database: "db", Container: "c", Body: []byte(`{"id":"1","pk":"a"}`)}); err != nil {
		t.Fatal(err)
	}
	return srv, c
}

func TestHedgedReadAgainstTheEmulatorAnswersFromTheSecondRegion(t *testing.T) {
	srv, c := emulatorClient(t)
	const slow = time.Second
	if err := srv.Faults().SetLatency("East US", "read", faults.Distribution{Kind: "fixed", Value: faults.Duration(slow)}); err != nil {
		t.Fatal(err)
	}
	op := readOp()
	op.Database, op.Container = "db", "c"
	op.Hedge = hedging.Threshold{Threshold: 100 * time.Millisecond, Step: 100 * time.Millisecond}
	start := time.Now()
	res, err := c.Execute(context.Background(), op)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	d := res.Diagnostics
	if d.WinningRegion != "West US" || d.Attempts[0].Region != "East US" || d.Attempts[0].Outcome != OutcomeCancelled {
		t.Fatalf("attempts %s", summary(d))
	}
	// Threshold 100 ms plus West US's (zero) latency, with a generous margin for a busy
	// machine: well under the slow region's second.
	if elapsed > slow*8/10 {
		t.Fatalf("hedged read took %v; the slow region takes %v", elapsed, slow)
	}
	if len(d.Attempts) != 2 {
		t.Fatalf("North Europe must not be asked once West US answered: %s", summary(d))
	}
}

func TestHedgeArmsStayWithinTheEffectiveRegions(t *testing.T) {
	srv, c := emulatorClient(t)
	for _, r := range []string{"East US", "West US"} {
		srv.Faults().SetLatency(r, "read", faults.Distribution{Kind: "fixed", Value: faults.Duration(300 * time.Millisecond)})
	}
	op := readOp()
	op.Database, op.Container = "db", "c"
	op.ExcludeRegions = []string{"East US"}
	op.Hedge = hedging.Threshold{Threshold: 50 * time.Millisecond, Step: 0}
	res, err := c.Execute(context.Background(), op)
	if err != nil {
		t.Fatal(err)
	}
	d := res.Diagnostics
	for _, a := range d.Attempts {
		if a.Region == "East US" {
			t.Fatalf("an excluded region was contacted: %s", summary(d))
		}
	}
	if d.Attempts[0].Region != "West US" || d.WinningRegion != "North Europe" {
		t.Fatalf("attempts %s", summary(d))
	}
}
