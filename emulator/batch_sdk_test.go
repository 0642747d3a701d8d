package emulator_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// The official Go SDK's TransactionalBatch against the emulator: the SDK builds the
// request and parses the per-operation results itself, so the wire shape is its judge.

func TestSDKTransactionalBatchCommitsEveryOperation(t *testing.T) {
	s := startSDKTest(t)
	c := newSDKClient(t, s)
	ctx := context.Background()
	pk := azcosmos.NewPartitionKeyString("p1")
	created, err := c.container.CreateItem(ctx, pk, mustJSON(t, sdkDoc{ID: "existing", PK: "p1", N: 1}), nil)
	if err != nil {
		t.Fatal(err)
	}

	b := c.container.NewTransactionalBatch(pk)
	b.CreateItem(mustJSON(t, sdkDoc{ID: "a", PK: "p1", N: 1}), nil)
	b.UpsertItem(mustJSON(t, sdkDoc{ID: "b", PK: "p1", N: 2}), nil)
	b.ReplaceItem("existing", mustJSON(t, sdkDoc{ID: "existing", PK: "p1", N: 3}), &azcosmos.TransactionalBatchItemOptions{IfMatchETag: &created.ETag})
	b.PatchItem("a", func() azcosmos.PatchOperations {
		var p azcosmos.PatchOperations
		p.AppendIncrement("/n", 10)
		return p
	}(), nil)
	b.ReadItem("a", nil)
	resp, err := c.container.ExecuteTransactionalBatch(ctx, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Success {
		t.Fatalf("batch not committed: %+v", resp.OperationResults)
	}
	want := []int32{http.StatusCreated, http.StatusCreated, http.StatusOK, http.StatusOK, http.StatusOK}
	if len(resp.OperationResults) != len(want) {
		t.Fatalf("%d results, want %d", len(resp.OperationResults), len(want))
	}
	for i, r := range resp.OperationResults {
		if r.StatusCode != want[i] {
			t.Errorf("operation %d: status %d, want %d", i, r.StatusCode, want[i])
		}
		if r.ETag == "" || r.RequestCharge <= 0 {
			t.Errorf("operation %d: etag %q, charge %v", i, r.ETag, r.RequestCharge)
		}
	}
	// The read sees the batch's own create and patch.
	if got := decodeDoc(t, resp.OperationResults[4].ResourceBody); got.N != 11 {
		t.Errorf("the read in the batch saw n=%d, want 11 (create then incr 10)", got.N)
	}
	if resp.SessionToken == "" {
		t.Error("the batch response has no session token")
	}
	for id, n := range map[string]int{"a": 11, "b": 2, "existing": 3} {
		item, err := c.container.ReadItem(ctx, pk, id, nil)
		if err != nil {
			t.Fatalf("reading %s after the batch: %v", id, err)
		}
		if got := decodeDoc(t, item.Value); got.N != n {
			t.Errorf("%s: n=%d, want %d", id, got.N, n)
		}
	}
}

func TestSDKTransactionalBatchWithAFailingOperationAppliesNothing(t *testing.T) {
	s := startSDKTest(t)
	c := newSDKClient(t, s)
	ctx := context.Background()
	pk := azcosmos.NewPartitionKeyString("p1")
	if _, err := c.container.CreateItem(ctx, pk, mustJSON(t, sdkDoc{ID: "dup", PK: "p1", N: 1}), nil); err != nil {
		t.Fatal(err)
	}

	b := c.container.NewTransactionalBatch(pk)
	b.CreateItem(mustJSON(t, sdkDoc{ID: "new", PK: "p1"}), nil)
	b.UpsertItem(mustJSON(t, sdkDoc{ID: "dup", PK: "p1", N: 99}), nil)
	b.CreateItem(mustJSON(t, sdkDoc{ID: "dup", PK: "p1"}), nil) // 409: fails the batch
	b.DeleteItem("dup", nil)
	resp, err := c.container.ExecuteTransactionalBatch(ctx, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Success {
		t.Fatal("a batch with a conflicting create reported success")
	}
	if resp.RawResponse.StatusCode != http.StatusMultiStatus {
		t.Errorf("status %d, want 207", resp.RawResponse.StatusCode)
	}
	want := []int32{http.StatusFailedDependency, http.StatusFailedDependency, http.StatusConflict, http.StatusFailedDependency}
	for i, r := range resp.OperationResults {
		if r.StatusCode != want[i] {
			t.Errorf("operation %d: status %d, want %d", i, r.StatusCode, want[i])
		}
	}
	if _, err := c.container.ReadItem(ctx, pk, "new", nil); err == nil {
		t.Error("the create before the failing operation was applied")
	} else {
		wantStatus(t, err, http.StatusNotFound, "reading the rolled-back create")
	}
	item, err := c.container.ReadItem(ctx, pk, "dup", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := decodeDoc(t, item.Value); got.N != 1 {
		t.Errorf("the upsert before the failing operation was applied: n=%d, want 1", got.N)
	}
}

func TestSDKTransactionalBatchReplaceWithStaleETagIs412(t *testing.T) {
	s := startSDKTest(t)
	c := newSDKClient(t, s)
	ctx := context.Background()
	pk := azcosmos.NewPartitionKeyString("p1")
	if _, err := c.container.CreateItem(ctx, pk, mustJSON(t, sdkDoc{ID: "x", PK: "p1"}), nil); err != nil {
		t.Fatal(err)
	}
	stale := azcosmosETag(`"stale"`)
	b := c.container.NewTransactionalBatch(pk)
	b.ReplaceItem("x", mustJSON(t, sdkDoc{ID: "x", PK: "p1", N: 5}), &azcosmos.TransactionalBatchItemOptions{IfMatchETag: &stale})
	resp, err := c.container.ExecuteTransactionalBatch(ctx, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Success || len(resp.OperationResults) != 1 || resp.OperationResults[0].StatusCode != http.StatusPreconditionFailed {
		t.Fatalf("success=%v results=%+v, want one 412", resp.Success, resp.OperationResults)
	}
}

func azcosmosETag(s string) azcore.ETag { return azcore.ETag(s) }

// The SDK's own expectations (its emulator tests): without content on write, results
// carry no body; a read in the batch makes the SDK ask for bodies; a delete never has one.
func TestSDKTransactionalBatchSendsBodiesOnlyWhenAsked(t *testing.T) {
	s := startSDKTest(t)
	c := newSDKClient(t, s)
	ctx := context.Background()
	pk := azcosmos.NewPartitionKeyString("p1")

	b := c.container.NewTransactionalBatch(pk)
	b.CreateItem(mustJSON(t, sdkDoc{ID: "one", PK: "p1"}), nil)
	b.CreateItem(mustJSON(t, sdkDoc{ID: "two", PK: "p1"}), nil)
	resp, err := c.container.ExecuteTransactionalBatch(ctx, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range resp.OperationResults {
		if r.StatusCode != http.StatusCreated || r.ETag == "" || r.ResourceBody != nil {
			t.Errorf("default batch, operation %d: status %d, etag %q, body %s; want 201, an etag, no body", i, r.StatusCode, r.ETag, r.ResourceBody)
		}
	}

	b = c.container.NewTransactionalBatch(pk)
	b.CreateItem(mustJSON(t, sdkDoc{ID: "three", PK: "p1"}), nil)
	b.ReadItem("two", nil)
	b.DeleteItem("one", nil)
	resp, err = c.container.ExecuteTransactionalBatch(ctx, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []int32{http.StatusCreated, http.StatusOK, http.StatusNoContent}
	for i, r := range resp.OperationResults {
		if r.StatusCode != want[i] || r.RequestCharge <= 0 {
			t.Errorf("operation %d: status %d, charge %v; want %d and a charge", i, r.StatusCode, r.RequestCharge, want[i])
		}
		if hasBody := r.ResourceBody != nil; hasBody != (i < 2) {
			t.Errorf("operation %d: body %s; want a body for the create and the read only", i, r.ResourceBody)
		}
	}
}
