package emulator_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// The official Go SDK as the judge of the query metrics under an indexing policy: with
// the filter's path excluded the page reports every document of the partition
// retrieved, and after the SDK replaces the container with that path indexed (read,
// change the policy, replace, as cosmosctl's set-indexing-policy does, which also sends If-Match) only the
// matching ones ("Troubleshoot query performance", "Include necessary paths in the
// indexing policy").
func TestSDKQueryMetricsFollowTheIndexingPolicy(t *testing.T) {
	s := startSDKTest(t)
	c := newSDKClient(t, s)
	ctx := context.Background()
	db, err := c.client.NewDatabase("db")
	if err != nil {
		t.Fatal(err)
	}
	props := azcosmos.ContainerProperties{ID: "shipments", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}},
		IndexingPolicy: &azcosmos.IndexingPolicy{Automatic: true, IndexingMode: azcosmos.IndexingModeConsistent,
			IncludedPaths: []azcosmos.IncludedPath{{Path: "/*"}}, ExcludedPaths: []azcosmos.ExcludedPath{{Path: "/carrier/?"}}}}
	if _, err := db.CreateContainer(ctx, props, nil); err != nil {
		t.Fatal(err)
	}
	ship, err := db.NewContainer("shipments")
	if err != nil {
		t.Fatal(err)
	}
	pk := azcosmos.NewPartitionKeyString("t1")
	for i := range 12 {
		doc := fmt.Sprintf(`{"id":"s%d","pk":"t1","carrier":"c%d"}`, i, i%4)
		if _, err := ship.CreateItem(ctx, pk, []byte(doc), nil); err != nil {
			t.Fatal(err)
		}
	}
	metrics := func() map[string]string {
		t.Helper()
		page, err := ship.NewQueryItemsPager("SELECT * FROM c WHERE c.carrier = 'c1'", pk, nil).NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if page.QueryMetrics == nil || len(page.Items) != 3 {
			t.Fatalf("%d items, metrics %v", len(page.Items), page.QueryMetrics)
		}
		out := map[string]string{}
		for _, p := range strings.Split(*page.QueryMetrics, ";") {
			k, v, _ := strings.Cut(p, "=")
			out[k] = v
		}
		return out
	}
	if m := metrics(); m["retrievedDocumentCount"] != "12" || m["outputDocumentCount"] != "3" {
		t.Fatalf("/carrier/? excluded: retrieved %s, output %s; want a scan, 12 and 3", m["retrievedDocumentCount"], m["outputDocumentCount"])
	}
	read, err := ship.Read(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := *read.ContainerProperties
	p.IndexingPolicy.ExcludedPaths = nil
	if _, err := ship.Replace(ctx, p, nil); err != nil {
		t.Fatal(err)
	}
	if m := metrics(); m["retrievedDocumentCount"] != "3" || m["outputDocumentCount"] != "3" {
		t.Fatalf("/carrier/? indexed: retrieved %s, output %s; want 3 and 3", m["retrievedDocumentCount"], m["outputDocumentCount"])
	}
}
