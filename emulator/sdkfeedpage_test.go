package emulator_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/cosmosctl/cosmosctl/emulator"
)

// TestSDKReadsEveryRangeOfAPagedRangesFeed: the official Go SDK, against an emulator that
// lists a container's eight ranges one per page, sees all eight (ReadFeedRanges), and
// its range-routed reads — the change feed over the whole container and ReadManyItems —
// and a cross-partition query return every item. azcosmos drains the ranges as an
// incremental feed until 304 (PR 26777).
func TestSDKReadsEveryRangeOfAPagedRangesFeed(t *testing.T) {
	s, err := emulator.Start(emulator.Config{Ranges: 8, FeedPageSize: 1, Databases: []emulator.DatabaseConfig{{
		ID: "db", Containers: []emulator.ContainerConfig{{ID: "items", PartitionKey: []string{"/pk"}}},
	}}}, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c := newSDKClient(t, s)
	ctx := context.Background()
	var want []string
	var ids []azcosmos.ItemIdentity
	for i := range 64 {
		d := sdkDoc{ID: fmt.Sprintf("d%02d", i), PK: fmt.Sprintf("pk-%02d", i), N: i}
		pk := azcosmos.NewPartitionKeyString(d.PK)
		if _, err := c.container.CreateItem(ctx, pk, mustJSON(t, d), nil); err != nil {
			t.Fatal(err)
		}
		want = append(want, d.ID)
		ids = append(ids, azcosmos.ItemIdentity{ID: d.ID, PartitionKey: pk})
	}

	ranges, err := c.container.ReadFeedRanges(ctx, nil)
	if err != nil || len(ranges) != 8 {
		t.Fatalf("ReadFeedRanges: %d ranges (%v), want 8", len(ranges), err)
	}
	whole := azcosmos.FeedRange{MinInclusive: "", MaxExclusive: "FF"}
	got, _, _ := drainChangeFeed(t, c, azcosmos.ChangeFeedOptions{FeedRange: &whole})
	if slices.Sort(got); !slices.Equal(got, want) {
		t.Errorf("change feed over the whole container: %d items, want %d", len(got), len(want))
	}

	many, err := c.container.ReadManyItems(ctx, ids, nil)
	if err != nil || len(many.Items) != len(want) {
		t.Errorf("ReadManyItems: %d items (%v), want %d", len(many.Items), err, len(want))
	}

	pager := c.container.NewQueryItemsPager("SELECT VALUE c.id FROM c", azcosmos.NewPartitionKey(), nil)
	got = got[:0]
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			var id string
			_ = json.Unmarshal(it, &id)
			got = append(got, id)
		}
	}
	if slices.Sort(got); !slices.Equal(got, want) {
		t.Errorf("cross-partition query: %d items, want %d", len(got), len(want))
	}
}
