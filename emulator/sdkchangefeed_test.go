package emulator_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// drainChangeFeed calls the SDK's ReadChangeFeed until a call returns no items (the SDK
// has then seen 304 from every range), returning the ids it got, the status of that
// last call and the continuation to resume with.
func drainChangeFeed(t *testing.T, c *sdkClient, opts azcosmos.ChangeFeedOptions) ([]string, int, string) {
	t.Helper()
	var ids []string
	for calls := 0; calls < 50; calls++ {
		resp, err := c.container.ReadChangeFeed(context.Background(), &opts)
		if err != nil {
			t.Fatalf("ReadChangeFeed: %v", err)
		}
		for _, item := range resp.Items {
			var d sdkDoc
			if err := json.Unmarshal(item, &d); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, d.ID)
		}
		if resp.ContinuationToken == "" {
			t.Fatal("ReadChangeFeed gave no continuation token")
		}
		opts.Continuation = &resp.ContinuationToken
		if len(resp.Items) == 0 {
			return ids, resp.RawResponse.StatusCode, resp.ContinuationToken
		}
	}
	t.Fatal("the change feed never ran dry: the SDK would loop forever")
	return nil, 0, ""
}

func TestSDKChangeFeed(t *testing.T) {
	s := startSDKTest(t)
	c := newSDKClient(t, s)
	ctx := context.Background()
	upsert := func(id string, n int) {
		t.Helper()
		pk := fmt.Sprintf("pk-%s", id)
		if _, err := c.container.UpsertItem(ctx, azcosmos.NewPartitionKeyString(pk), mustJSON(t, sdkDoc{ID: id, PK: pk, N: n}), nil); err != nil {
			t.Fatal(err)
		}
	}
	var want []string
	for i := range 12 {
		id := fmt.Sprint("d", i)
		upsert(id, 0)
		want = append(want, id)
	}
	upsert("d3", 1) // an update: d3 comes once, in its latest version

	ranges, err := c.container.ReadFeedRanges(ctx, nil)
	if err != nil || len(ranges) != 4 {
		t.Fatalf("ReadFeedRanges: %v %v, want the emulator's four ranges", ranges, err)
	}
	whole := azcosmos.FeedRange{MinInclusive: "", MaxExclusive: "FF"}

	// From the beginning, in pages of 5: every document once, then 304 everywhere.
	got, status, cont := drainChangeFeed(t, c, azcosmos.ChangeFeedOptions{FeedRange: &whole, MaxItemCount: 5})
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("from the beginning: %v, want %v", got, want)
	}
	if status != http.StatusNotModified {
		t.Errorf("a drained feed answered %d, want 304", status)
	}

	// Resume with the continuation after new writes: only those.
	upsert("d5", 2)
	upsert("new", 0)
	got, _, cont = drainChangeFeed(t, c, azcosmos.ChangeFeedOptions{Continuation: &cont})
	slices.Sort(got)
	if !slices.Equal(got, []string{"d5", "new"}) {
		t.Fatalf("resumed: %v, want d5 and new", got)
	}
	if got, status, _ = drainChangeFeed(t, c, azcosmos.ChangeFeedOptions{Continuation: &cont}); len(got) != 0 || status != http.StatusNotModified {
		t.Errorf("resumed with nothing new: %v (%d), want 304", got, status)
	}

	// One range at a time, as ReadFeedRanges hands them out, adds up to the whole.
	var perRange []string
	for _, r := range ranges {
		ids, _, _ := drainChangeFeed(t, c, azcosmos.ChangeFeedOptions{FeedRange: &r})
		perRange = append(perRange, ids...)
	}
	if len(perRange) != 13 {
		t.Errorf("range by range: %d documents %v, want 13", len(perRange), perRange)
	}

	// A partition key within the whole feed range: that key's document only.
	pk := azcosmos.NewPartitionKeyString("pk-d7")
	if got, _, _ := drainChangeFeed(t, c, azcosmos.ChangeFeedOptions{FeedRange: &whole, PartitionKey: &pk}); !slices.Equal(got, []string{"d7"}) {
		t.Errorf("partition key pk-d7: %v, want d7", got)
	}

	// From now (StartFrom, If-Modified-Since; one-second resolution, so start in the
	// next second): nothing at first, then only what is written later.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
	now := time.Now()
	got, status, cont = drainChangeFeed(t, c, azcosmos.ChangeFeedOptions{FeedRange: &whole, StartFrom: &now})
	if len(got) != 0 || status != http.StatusNotModified {
		t.Fatalf("from now: %v (%d), want nothing (304)", got, status)
	}
	upsert("later", 0)
	if got, _, _ = drainChangeFeed(t, c, azcosmos.ChangeFeedOptions{Continuation: &cont}); !slices.Equal(got, []string{"later"}) {
		t.Errorf("from now, after a write: %v, want later", got)
	}
}
