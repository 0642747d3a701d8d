package emulator

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

const pkDeletePath = "/dbs/db/colls/items/operations/partitionkeydelete"

// pkDelete sends the operation signed as the SDKs sign it: resource type signType,
// link the container's.
func pkDelete(t *testing.T, c *testClient, ep, signType, pk string) *cosmos.Response {
	t.Helper()
	req := &cosmos.Request{Method: http.MethodPost, Path: pkDeletePath, ResourceType: signType, ResourceLink: "dbs/db/colls/items", Header: http.Header{}}
	req.Header.Set(cosmos.HeaderPartitionKey, pk)
	resp, err := c.tr.Do(context.Background(), ep, req)
	if resp == nil {
		t.Fatalf("no response: %v", err)
	}
	return resp
}

func TestPartitionKeyDeleteRemovesOneLogicalPartitionAtOnce(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	ep := s.Endpoint()
	for _, d := range []struct{ id, pk string }{{"1", "a"}, {"2", "a"}, {"3", "a"}, {"1", "b"}, {"4", "b"}} {
		resp, err := c.do(ep, "POST", itemsPath(), pkHeader(`["`+d.pk+`"]`), `{"id":"`+d.id+`","pk":"`+d.pk+`"}`)
		if st, _ := statusOf(t, resp, err); st != 201 {
			t.Fatalf("create %s/%s: %d", d.pk, d.id, st)
		}
	}
	for _, signType := range []string{"partitionkey", "colls"} {
		// Python and .NET sign it as "partitionkey", JS as "colls": both are accepted.
		if resp := pkDelete(t, c, ep, signType, `["a"]`); resp.StatusCode != 200 {
			t.Fatalf("signed as %s: status %d, want 200", signType, resp.StatusCode)
		}
	}
	for _, id := range []string{"1", "2", "3"} {
		resp, err := c.do(ep, "GET", itemPath(id), pkHeader(`["a"]`), nil)
		if st, _ := statusOf(t, resp, err); st != 404 {
			t.Errorf("read a/%s after the delete: %d, want 404", id, st)
		}
	}
	for _, id := range []string{"1", "4"} {
		resp, err := c.do(ep, "GET", itemPath(id), pkHeader(`["b"]`), nil)
		if st, _ := statusOf(t, resp, err); st != 200 {
			t.Errorf("read b/%s (another partition): %d, want 200", id, st)
		}
	}
	resp, err := c.do(ep, "POST", itemsPath(), merge(queryHeaders(), map[string]string{cosmos.HeaderEnableCrossPartition: "true"}), `{"query":"SELECT VALUE c.pk FROM c"}`)
	if st, _ := statusOf(t, resp, err); st != 200 {
		t.Fatalf("query: %d %s", st, resp.Body)
	}
	var page struct{ Documents []string }
	_ = json.Unmarshal(resp.Body, &page)
	if len(page.Documents) != 2 || page.Documents[0] != "b" || page.Documents[1] != "b" {
		t.Errorf("query after the delete = %v, want only partition b's two items", page.Documents)
	}
}

func TestPartitionKeyDeleteIsRefusedWithoutAValidRequest(t *testing.T) {
	s := startTest(t, func(cfg *Config) {
		cfg.Databases[0].Containers = append(cfg.Databases[0].Containers, ContainerConfig{ID: "tree", PartitionKey: []string{"/a", "/b"}})
	})
	c := newTestClient(t, s.Key())
	ep := s.Endpoint()
	if resp, err := c.do(ep, "POST", itemsPath(), pkHeader(`["a"]`), `{"id":"1","pk":"a"}`); resp == nil || resp.StatusCode != 201 {
		t.Fatalf("create: %v", err)
	}

	// Signed for the path's own derivation (type "operations"): the service's SDKs
	// never sign it so, and the emulator refuses it as any wrong signature.
	req := &cosmos.Request{Method: http.MethodPost, Path: pkDeletePath, Header: http.Header{cosmos.HeaderPartitionKey: {`["a"]`}}}
	resp, _ := c.tr.Do(context.Background(), ep, req)
	if resp == nil || resp.StatusCode != 401 {
		t.Errorf("wrongly signed: %v, want 401", resp)
	}
	wrong := newTestClient(t, "dGhpcyBpcyBub3QgdGhlIGtleQ==")
	if resp := pkDelete(t, wrong, ep, "partitionkey", `["a"]`); resp.StatusCode != 401 {
		t.Errorf("wrong key: %d, want 401", resp.StatusCode)
	}
	if resp := pkDelete(t, c, ep, "partitionkey", ""); resp.StatusCode != 400 {
		t.Errorf("no partition key: %d, want 400", resp.StatusCode)
	}
	if resp, err := c.do(ep, "GET", itemPath("1"), pkHeader(`["a"]`), nil); resp == nil || resp.StatusCode != 200 {
		t.Errorf("the item must survive refused deletes: %v", err)
	}

	// A prefix of a hierarchical key: 400/1001, as the .NET SDK's tests show.
	req = &cosmos.Request{Method: http.MethodPost, Path: "/dbs/db/colls/tree/operations/partitionkeydelete", ResourceType: "partitionkey", ResourceLink: "dbs/db/colls/tree", Header: http.Header{cosmos.HeaderPartitionKey: {`["x"]`}}}
	resp, _ = c.tr.Do(context.Background(), ep, req)
	if resp == nil || resp.StatusCode != 400 || resp.SubStatus != cosmos.SubPartitionKeyMismatch {
		t.Errorf("prefix key: %v, want 400/1001", resp)
	}
	req.Header.Set(cosmos.HeaderPartitionKey, `["x","y"]`)
	resp, _ = c.tr.Do(context.Background(), ep, req)
	if resp == nil || resp.StatusCode != 200 {
		t.Errorf("full hierarchical key: %v, want 200", resp)
	}
}
