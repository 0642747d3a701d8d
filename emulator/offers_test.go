package emulator

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

func queryHeaders() map[string]string {
	return map[string]string{cosmos.HeaderIsQuery: "true", "Content-Type": "application/query+json"}
}

func TestUnsupportedResourcesAreA400NotA404(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	for _, tc := range []struct{ method, path, what string }{
		{"GET", "/dbs/db/colls/items/sprocs", "stored procedures"},
		{"POST", "/dbs/db/colls/items/sprocs", "stored procedures"},
		{"POST", "/dbs/db/colls/items/sprocs/sp1", "stored procedures"},
		{"GET", "/dbs/db/colls/items/udfs/f", "user-defined functions"},
		{"POST", "/dbs/db/colls/items/triggers", "triggers"},
		{"GET", "/dbs/db/users", "users"},
		{"GET", "/dbs/db/users/u1/permissions", "permissions"},
	} {
		resp, _ := c.do(s.Endpoint(), tc.method, tc.path, nil, `{"id":"x","body":"function(){}"}`)
		if resp == nil || resp.StatusCode != 400 {
			t.Errorf("%s %s: %+v, want 400", tc.method, tc.path, resp)
			continue
		}
		if !strings.Contains(string(resp.Body), tc.what+" are not supported by the emulator") {
			t.Errorf("%s %s: body %s does not say %s are not supported", tc.method, tc.path, resp.Body, tc.what)
		}
	}
}

func TestMetadataQueriesDoNotCreate(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	ep := s.Endpoint()
	resp, _ := c.do(ep, "POST", "/dbs", queryHeaders(), `{"query":"SELECT * FROM root r WHERE r.id = @id","parameters":[{"name":"@id","value":"db"}]}`)
	if resp == nil || resp.StatusCode != 200 {
		t.Fatalf("database query: %+v", resp)
	}
	var feed struct {
		RID       string            `json:"_rid"`
		Databases []cosmos.Database `json:"Databases"`
		Count     int               `json:"_count"`
	}
	if err := json.Unmarshal(resp.Body, &feed); err != nil || feed.Count != 1 || len(feed.Databases) != 1 || feed.Databases[0].ID != "db" {
		t.Errorf("database query answered %s (%v)", resp.Body, err)
	}
	resp, _ = c.do(ep, "POST", "/dbs/db/colls", queryHeaders(), `{"query":"SELECT * FROM c WHERE c.id = 'nope'"}`)
	if resp == nil || resp.StatusCode != 200 || !strings.Contains(string(resp.Body), `"DocumentCollections":[]`) || !strings.Contains(string(resp.Body), `"_count":0`) {
		t.Errorf("container query for a missing id: %+v", resp)
	}
	resp, _ = c.do(ep, "POST", "/dbs/db/colls", queryHeaders(), `{"query":"SELECT c.id FROM c JOIN t IN c.tags"}`)
	if resp == nil || resp.StatusCode != 400 {
		t.Errorf("an unsupported metadata query: %+v, want 400", resp)
	}
	if got := len(s.store.listDatabases()); got != 1 {
		t.Errorf("%d databases after queries, want 1", got)
	}
}

func TestOffersFeedQueryAndReplace(t *testing.T) {
	dir := t.TempDir()
	withDir := func(cfg *Config) { cfg.DataDir = dir }
	s := startTest(t, withDir)
	c := newTestClient(t, s.Key())
	ep := s.Endpoint()
	cont, _ := s.store.container("db", "items")

	resp, _ := c.do(ep, "GET", "/offers", nil, nil)
	if resp == nil || resp.StatusCode != 200 {
		t.Fatalf("GET /offers: %+v", resp)
	}
	var feed struct {
		Offers []offerBody `json:"Offers"`
		Count  int         `json:"_count"`
	}
	_ = json.Unmarshal(resp.Body, &feed)
	if feed.Count != 1 || feed.Offers[0].OfferResourceID != cont.meta.RID || feed.Offers[0].Content.OfferThroughput != 400 || feed.Offers[0].OfferVersion != "V2" {
		t.Fatalf("offers feed %s: want the container's default 400 RU/s offer", resp.Body)
	}
	offer := feed.Offers[0]
	if offer.Resource != "dbs/"+cont.db.meta.RID+"/colls/"+cont.meta.RID+"/" || offer.Self != "offers/"+offer.ID+"/" {
		t.Errorf("offer links %q %q", offer.Resource, offer.Self)
	}

	resp, _ = c.do(ep, "POST", "/offers", queryHeaders(), `{"query":"SELECT * FROM c WHERE c.offerResourceId = '`+cont.meta.RID+`'"}`)
	if resp == nil || resp.StatusCode != 200 || !strings.Contains(string(resp.Body), `"_count":1`) {
		t.Fatalf("offer query: %+v", resp)
	}

	stale := map[string]string{cosmos.HeaderIfMatch: `"stale"`}
	body := `{"offerVersion":"V2","content":{"offerThroughput":700},"id":"` + offer.ID + `"}`
	if resp, _ := c.do(ep, "PUT", "/offers/"+offer.ID, stale, body); resp == nil || resp.StatusCode != 412 {
		t.Errorf("replace with a stale etag: %+v, want 412", resp)
	}
	if resp, _ := c.do(ep, "PUT", "/offers/"+offer.ID, nil, `{"offerVersion":"V1","offerType":"S1"}`); resp == nil || resp.StatusCode != 400 {
		t.Errorf("a V1 offer: %+v, want 400", resp)
	}
	resp, _ = c.do(ep, "PUT", "/offers/"+offer.ID, map[string]string{cosmos.HeaderIfMatch: offer.ETag}, body)
	if resp == nil || resp.StatusCode != 200 || resp.ETag == "" || resp.ETag == offer.ETag {
		t.Fatalf("replace: %+v", resp)
	}
	if resp, _ := c.do(ep, "GET", "/offers/nope", nil, nil); resp == nil || resp.StatusCode != 404 {
		t.Errorf("a missing offer: %+v, want 404", resp)
	}

	// Invalid throughput on create is refused before anything is created.
	hdr := map[string]string{headerOfferThroughput: "50"}
	if resp, _ := c.do(ep, "POST", "/dbs/db/colls", hdr, `{"id":"tiny","partitionKey":{"paths":["/pk"],"kind":"Hash"}}`); resp == nil || resp.StatusCode != 400 {
		t.Errorf("a container with 50 RU/s: %+v, want 400", resp)
	}
	if _, err := s.store.container("db", "tiny"); err == nil {
		t.Error("the container with invalid throughput was created")
	}

	s.Close()
	s2 := startTest(t, withDir)
	c2 := newTestClient(t, s2.Key())
	resp, _ = c2.do(s2.Endpoint(), "GET", "/offers/"+offer.ID, nil, nil)
	if resp == nil || resp.StatusCode != 200 || !strings.Contains(string(resp.Body), `"offerThroughput":700`) {
		t.Errorf("the replaced throughput did not survive a restart: %+v", resp)
	}
}
