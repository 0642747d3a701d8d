package engine

import (
	"context"
	"net/http"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// The partition delete is sent as the SDKs send it: POST to the container's
// operations/partitionkeydelete, the key in its header, signed for "partitionkey"
// and the container's link (the emulator refuses any other signature with 401).
func TestDeletePartitionIsTheServicesRequest(t *testing.T) {
	op := &Operation{Kind: OpDeletePartition, Database: "db", Container: "c 1", PartitionKey: cosmos.PartitionKey{{Kind: cosmos.KindString, Str: "a"}}}
	req := buildRequest(op, false)
	if req.Method != http.MethodPost || req.Path != "/dbs/db/colls/c%201/operations/partitionkeydelete" ||
		req.ResourceType != "partitionkey" || req.ResourceLink != "dbs/db/colls/c 1" || req.Header.Get(cosmos.HeaderPartitionKey) != `["a"]` {
		t.Fatalf("request %s %s signed %q %q, key %q", req.Method, req.Path, req.ResourceType, req.ResourceLink, req.Header.Get(cosmos.HeaderPartitionKey))
	}

	_, c := emulatorClient(t)
	res, err := c.Execute(context.Background(), Operation{Kind: OpDeletePartition, Database: "db", Container: "c", PartitionKey: cosmos.PartitionKey{{Kind: cosmos.KindString, Str: "a"}}})
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("partition delete: %v %v", res, err)
	}
	if _, err := c.Execute(context.Background(), Operation{Kind: OpRead, Database: "db", Container: "c", ID: "1", PartitionKey: cosmos.PartitionKey{{Kind: cosmos.KindString, Str: "a"}}}); err == nil {
		t.Fatal("the partition's item is still there")
	}
	if _, err := c.Execute(context.Background(), Operation{Kind: OpDeletePartition, Database: "db", Container: "c"}); err == nil {
		t.Fatal("a partition delete without a key was sent")
	}
}
