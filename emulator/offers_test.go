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
	resp, _ = c.do(ep, "POST", "/dbs/db/colls", queryHeaders(), `{"query":"SELECT udf.f(c.id) FROM c"}`)
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

// A replace that would change an offer's mode without the migration header is refused
// with the service's own 400s; with the header, the offer migrates and the service's
// rules pick the throughput it ends with.
func TestOfferMigrationBetweenManualAndAutoscale(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	ep := s.Endpoint()
	cont, _ := s.store.container("db", "items")
	read := func() offerBody {
		t.Helper()
		resp, _ := c.do(ep, "POST", "/offers", queryHeaders(), `{"query":"SELECT * FROM c WHERE c.offerResourceId = '`+cont.meta.RID+`'"}`)
		var feed struct {
			Offers []offerBody `json:"Offers"`
		}
		if resp == nil || json.Unmarshal(resp.Body, &feed) != nil || len(feed.Offers) != 1 {
			t.Fatalf("offer query: %+v", resp)
		}
		return feed.Offers[0]
	}
	put := func(hdr map[string]string, content string) (int, string) {
		t.Helper()
		of := read()
		resp, _ := c.do(ep, "PUT", "/offers/"+of.ID, hdr, `{"offerVersion":"V2","id":"`+of.ID+`","content":`+content+`}`)
		if resp == nil {
			t.Fatal("no answer to the replace")
		}
		return resp.StatusCode, string(resp.Body)
	}
	toAuto := map[string]string{headerMigrateToAutoscale: "true"}
	toManual := map[string]string{headerMigrateToManual: "True"}

	if code, body := put(nil, `{"offerThroughput":1400}`); code != 200 {
		t.Fatalf("replace with 1400 RU/s: %d %s", code, body)
	}
	for _, tc := range []struct {
		name    string
		hdr     map[string]string
		content string
		want    string
	}{
		{"a plain replace to autoscale", nil, `{"offerAutopilotSettings":{"maxThroughput":4000}}`, msgMigrateToAutoscale},
		{"the autoscale migration with autopilot settings", toAuto, `{"offerAutopilotSettings":{"maxThroughput":4000}}`, msgMigrateToAutoscale},
		{"the manual migration of a manual offer", toManual, `{"offerAutopilotSettings":{"maxThroughput":0}}`, "already manual"},
		{"both migrations at once", map[string]string{headerMigrateToAutoscale: "true", headerMigrateToManual: "true"}, `{}`, "not both"},
	} {
		if code, body := put(tc.hdr, tc.content); code != 400 || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %s, want 400 saying %q", tc.name, code, body, tc.want)
		}
	}
	if of := read(); of.Content.Autopilot != nil || of.Content.OfferThroughput != 1400 {
		t.Fatalf("after refused replaces the offer is %+v, want manual 1400 RU/s", of.Content)
	}

	// MAX(1,000, 1,400, …) rounded to the nearest 1,000 (the autoscale FAQ's formula).
	if code, body := put(toAuto, `{"offerIsRUPerMinuteThroughputEnabled":false}`); code != 200 {
		t.Fatalf("the migration to autoscale: %d %s", code, body)
	}
	if of := read(); of.Content.Autopilot == nil || of.Content.Autopilot.MaxThroughput != 1000 || of.Content.OfferThroughput != 100 {
		t.Errorf("after the migration to autoscale the offer is %+v, want a maximum of 1000 RU/s (100 RU/s now)", of.Content)
	}
	for _, tc := range []struct {
		name    string
		hdr     map[string]string
		content string
		want    string
	}{
		{"a plain replace to manual", nil, `{"offerThroughput":1000}`, msgMigrateToManual},
		{"the manual migration without autopilot settings", toManual, `{"offerThroughput":1000}`, msgMigrateToManual},
		{"the autoscale migration of an autoscale offer", toAuto, `{}`, "already autoscale"},
	} {
		if code, body := put(tc.hdr, tc.content); code != 400 || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %s, want 400 saying %q", tc.name, code, body, tc.want)
		}
	}
	if code, body := put(nil, `{"offerAutopilotSettings":{"maxThroughput":7000}}`); code != 200 {
		t.Fatalf("a replace of the autoscale maximum: %d %s", code, body)
	}
	// The manual throughput is the autoscale maximum; the request's RU/s are not taken.
	if code, body := put(toManual, `{"offerThroughput":400,"offerAutopilotSettings":{"maxThroughput":0}}`); code != 200 {
		t.Fatalf("the migration to manual: %d %s", code, body)
	}
	if of := read(); of.Content.Autopilot != nil || of.Content.OfferThroughput != 7000 {
		t.Errorf("after the migration to manual the offer is %+v, want manual 7000 RU/s", of.Content)
	}
}

func TestInitialAutoscaleMaxFollowsTheFAQ(t *testing.T) {
	for manual, want := range map[int]int{400: 1000, 1000: 1000, 1400: 1000, 1500: 2000, 10_000: 10_000, 50_000: 50_000, 1_000_000: 1_000_000} {
		if got := initialAutoscaleMax(manual); got != want {
			t.Errorf("a manual offer of %d RU/s migrates to an autoscale maximum of %d, want %d", manual, got, want)
		}
	}
}
