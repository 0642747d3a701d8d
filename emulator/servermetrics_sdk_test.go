package emulator_test

import (
	"context"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// The official Go SDK reads the service's per-request figures: it sends
// x-ms-documentdb-populatequerymetrics on every query and hands the answer back as
// QueryItemsResponse.QueryMetrics; it logs x-ms-request-duration-ms as the backend
// latency of each request (trace_data.go BELatencyInMs).
func TestSDKReadsQueryMetricsAndServerDuration(t *testing.T) {
	s := startSDKTest(t)
	c := newSDKClient(t, s)
	ctx := context.Background()
	pk := azcosmos.NewPartitionKeyString("p1")
	for _, d := range []sdkDoc{{ID: "m1", PK: "p1", N: 1}, {ID: "m2", PK: "p1", N: 2}, {ID: "m3", PK: "p1", N: 2}} {
		if _, err := c.container.CreateItem(ctx, pk, mustJSON(t, d), nil); err != nil {
			t.Fatalf("create %s: %v", d.ID, err)
		}
	}
	read, err := c.container.ReadItem(ctx, pk, "m1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := cosmos.ParseRequestDuration(read.RawResponse.Header.Get(cosmos.HeaderRequestDuration)); d <= 0 {
		t.Errorf("the SDK's read response has no server-side duration: %q", read.RawResponse.Header.Get(cosmos.HeaderRequestDuration))
	}

	pager := c.container.NewQueryItemsPager("SELECT * FROM c WHERE c.n = 2", pk, nil)
	page, err := pager.NextPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if page.QueryMetrics == nil {
		t.Fatal("QueryItemsResponse.QueryMetrics is nil: the emulator ignored x-ms-documentdb-populatequerymetrics")
	}
	fields := map[string]string{}
	for _, p := range strings.Split(*page.QueryMetrics, ";") {
		k, v, _ := strings.Cut(p, "=")
		fields[k] = v
	}
	// The default policy indexes /n: the index serves the filter, and the service loads
	// only the two documents it matches.
	if fields["retrievedDocumentCount"] != "2" || fields["outputDocumentCount"] != "2" {
		t.Errorf("query metrics %q: want 2 documents retrieved and 2 output", *page.QueryMetrics)
	}
}
