package hedgetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/retries"
)

// A hedge-test against a real account writes its items into a container that may be
// production's: their ids say what wrote them, their ttl removes them where the
// container has time to live on (elsewhere it is ignored), and Cleanup deletes them when
// the test ends.

// ItemPrefix names the items the read workload reads: cosmosctl-hedge-test-0, -1, …
// (the partition key is the id).
const ItemPrefix = "cosmosctl-hedge-test-"

// ItemTTL is the "ttl" of every item hedge-test writes, in seconds: an hour, longer than
// any hedge-test runs.
const ItemTTL = 3600

// ItemID is the id of the read workload's i-th item.
func ItemID(i int) string { return fmt.Sprintf("%s%d", ItemPrefix, i) }

// ItemDocument is the item with this id (its partition key /pk is the id too).
func ItemDocument(id string) []byte {
	return itemDocument(id, itemPurpose)
}

// itemPurpose is the "purpose" of the read workload's items, which the cross-partition
// query workload filters on.
const itemPurpose = "cosmosctl hedge-test: safe to delete"

func itemDocument(id, purpose string) []byte {
	return fmt.Appendf(nil, `{"id":%q,"pk":%q,"purpose":%q,"ttl":%d}`, id, id, purpose, ItemTTL)
}

// Cleanup bounds: each delete is one request through the write region, bounded by
// cleanupAttempt, at most cleanupConcurrency at once, all of them by cleanupBound, so
// that a sick write region delays the end of a test by seconds, not minutes.
const (
	cleanupAttempt     = 2 * time.Second
	cleanupBound       = 10 * time.Second
	cleanupConcurrency = 8
)

// CleanupError says which items Cleanup could not delete.
type CleanupError struct {
	Failed, Of int
	First      error // the first failure, as an example
}

func (e *CleanupError) Error() string {
	return fmt.Sprintf("could not delete %d of %d items (%s)", e.Failed, e.Of, e.Reason())
}

// Reason is the first failure in a few words: its status, "timed out" or "no answer".
func (e *CleanupError) Reason() string { return describe(e.First) }

// describe is an error in a few words: its status, "timed out" or "no answer".
func describe(err error) string {
	var te *engine.TimeoutError
	var ne *cosmos.NetworkError
	switch status, sub, ok := cosmos.Status(err); {
	case ok:
		return fmt.Sprintf("%d/%d", status, sub)
	case errors.As(err, &te), errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	case errors.As(err, &ne):
		return "no answer"
	case err == nil:
		return "unknown"
	}
	return err.Error()
}

// Cleanup deletes items, even when ctx has ended (an interrupted test still removes
// what it wrote), within its bounds. An item already gone counts as deleted.
func Cleanup(ctx context.Context, client *engine.Client, database, container string, items []Item) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupBound)
	defer cancel()
	once := client.Derive(nil, retries.Policy{})
	var (
		mu     sync.Mutex
		failed int
		first  error
		wg     sync.WaitGroup
	)
	sem := make(chan struct{}, cleanupConcurrency)
	for _, it := range items {
		wg.Go(func() {
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-ctx.Done():
				mu.Lock()
				failed++
				first = cmpOr(first, ctx.Err())
				mu.Unlock()
				return
			}
			_, err := once.Execute(ctx, engine.Operation{Kind: engine.OpDelete, Database: database, Container: container,
				ID: it.ID, PartitionKey: it.PartitionKey, E2ETimeout: cleanupAttempt})
			if status, sub, _ := cosmos.Status(err); err == nil || (status == 404 && sub == 0) {
				return
			}
			mu.Lock()
			failed++
			first = cmpOr(first, err)
			mu.Unlock()
		})
	}
	wg.Wait()
	if failed > 0 {
		return &CleanupError{Failed: failed, Of: len(items), First: first}
	}
	return nil
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
