package emulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// startPagedTest starts an emulator whose containers have ranges partition key ranges
// and whose metadata feeds come in pages of at most pageSize (0: as the client asks),
// with database "db" and container "items" partitioned by /pk.
func startPagedTest(t *testing.T, ranges, pageSize int) *Server {
	t.Helper()
	s, err := Start(Config{Ranges: ranges, FeedPageSize: pageSize, Databases: []DatabaseConfig{{
		ID: "db", Containers: []ContainerConfig{{ID: "items", PartitionKey: []string{"/pk"}}},
	}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// readFeedPages reads a feed with x-ms-continuation until an answer has none, returning
// the ids of each page.
func readFeedPages(t *testing.T, c *testClient, s *Server, path, field string, hdr map[string]string) [][]string {
	t.Helper()
	var pages [][]string
	cont := ""
	for len(pages) < 100 {
		h := map[string]string{}
		for k, v := range hdr {
			h[k] = v
		}
		if cont != "" {
			h[cosmos.HeaderContinuation] = cont
		}
		resp, err := c.do(s.Endpoint(), http.MethodGet, path, h, nil)
		if err != nil {
			t.Fatalf("page %d of %s: %v", len(pages)+1, path, err)
		}
		var feed map[string]json.RawMessage
		var items []struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(resp.Body, &feed) != nil || json.Unmarshal(feed[field], &items) != nil {
			t.Fatalf("page %d of %s is not a feed of %s: %s", len(pages)+1, path, field, resp.Body)
		}
		var ids []string
		for _, it := range items {
			ids = append(ids, it.ID)
		}
		if n := resp.Header.Get(cosmos.HeaderItemCount); n != fmt.Sprint(len(ids)) {
			t.Errorf("page %d of %s: x-ms-item-count %s for %d resources", len(pages)+1, path, n, len(ids))
		}
		pages = append(pages, ids)
		if cont = resp.Header.Get(cosmos.HeaderContinuation); cont == "" {
			return pages
		}
	}
	t.Fatalf("%s never ended", path)
	return nil
}

func pagesString(pages [][]string) string {
	var out []string
	for _, p := range pages {
		out = append(out, strings.Join(p, ","))
	}
	return strings.Join(out, " | ")
}

// TestMetadataFeedsComeInPages: the databases, containers, offers and partition key
// ranges feeds hold at most x-ms-max-item-count resources a page, and at most
// feed_page_size whatever the client asks, with x-ms-continuation on every page but the
// last; a continuation that is not the emulator's, or is another feed's, is a 400.
func TestMetadataFeedsComeInPages(t *testing.T) {
	s := startPagedTest(t, 8, 0)
	c := newTestClient(t, s.Key())
	for _, id := range []string{"d1", "d2", "d3", "d4"} {
		if _, err := c.do(s.Endpoint(), http.MethodPost, "/dbs", map[string]string{"x-ms-offer-throughput": "400"}, map[string]string{"id": id}); err != nil {
			t.Fatal(err)
		}
	}
	three := map[string]string{cosmos.HeaderMaxItemCount: "3"}
	cases := []struct {
		name, path, field string
		hdr               map[string]string
		want              string
	}{
		{"ranges in pages of 3", cosmos.PKRangesPath("db", "items"), "PartitionKeyRanges", three, "0,1,2 | 3,4,5 | 6,7"},
		{"ranges, all at once with -1", cosmos.PKRangesPath("db", "items"), "PartitionKeyRanges", map[string]string{cosmos.HeaderMaxItemCount: "-1"}, "0,1,2,3,4,5,6,7"},
		{"ranges, all at once without a page size", cosmos.PKRangesPath("db", "items"), "PartitionKeyRanges", nil, "0,1,2,3,4,5,6,7"},
		{"databases in pages of 3", "/dbs", "Databases", three, "db,d1,d2 | d3,d4"},
		{"containers", "/dbs/db/colls", "DocumentCollections", three, "items"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := pagesString(readFeedPages(t, c, s, tc.path, tc.field, tc.hdr)); got != tc.want {
				t.Errorf("pages %s, want %s", got, tc.want)
			}
		})
	}
	t.Run("offers in pages of 2", func(t *testing.T) {
		if pages := readFeedPages(t, c, s, "/offers", "Offers", map[string]string{cosmos.HeaderMaxItemCount: "2"}); len(pages) != 3 || len(pages[2]) != 1 {
			t.Errorf("five offers (items' and four databases') in pages of 2: %s", pagesString(pages))
		}
	})

	forced := startPagedTest(t, 8, 1)
	fc := newTestClient(t, forced.Key())
	if got := pagesString(readFeedPages(t, fc, forced, cosmos.PKRangesPath("db", "items"), "PartitionKeyRanges", map[string]string{cosmos.HeaderMaxItemCount: "-1"})); got != "0 | 1 | 2 | 3 | 4 | 5 | 6 | 7" {
		t.Errorf("feed_page_size 1, whatever the client asks: %s", got)
	}

	first, err := fc.do(forced.Endpoint(), http.MethodGet, cosmos.PKRangesPath("db", "items"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path, token string }{
		{"not the emulator's", "/dbs", "not-a-token"},
		{"another feed's", "/dbs", first.Header.Get(cosmos.HeaderContinuation)},
	} {
		_, err := fc.do(forced.Endpoint(), http.MethodGet, tc.path, map[string]string{cosmos.HeaderContinuation: tc.token}, nil)
		if status, _, _ := cosmos.Status(err); status != http.StatusBadRequest {
			t.Errorf("a continuation %s: %v, want 400", tc.name, err)
		}
	}
}

// TestPartitionKeyRangesIncrementalFeedPagesByETag: read as the Go SDK reads it (A-IM:
// Incremental Feed, If-None-Match with the etag of the page before), the ranges come a
// page at a time and end with 304 Not Modified, whose etag is the end's: a read of the
// whole feed gives that etag too, and If-None-Match with it answers 304.
func TestPartitionKeyRangesIncrementalFeedPagesByETag(t *testing.T) {
	s := startPagedTest(t, 8, 3)
	c := newTestClient(t, s.Key())
	var pages [][]string
	etag := ""
	for {
		h := map[string]string{cosmos.HeaderAIM: "Incremental Feed", cosmos.HeaderMaxItemCount: "-1"}
		if etag != "" {
			h[cosmos.HeaderIfNoneMatch] = etag
		}
		resp, err := c.do(s.Endpoint(), http.MethodGet, cosmos.PKRangesPath("db", "items"), h, nil)
		if status, _, _ := cosmos.Status(err); err != nil && status != http.StatusNotModified {
			t.Fatal(err)
		}
		if resp.StatusCode == http.StatusNotModified {
			if resp.ETag != etag {
				t.Errorf("304 with etag %s, want the last page's %s", resp.ETag, etag)
			}
			break
		}
		if resp.ETag == "" || resp.ETag == etag {
			t.Fatalf("page %d has etag %q after %q: the Go SDK would loop", len(pages)+1, resp.ETag, etag)
		}
		if resp.Header.Get(cosmos.HeaderContinuation) != "" {
			t.Errorf("an incremental page carries x-ms-continuation %q; its etag is its continuation", resp.Header.Get(cosmos.HeaderContinuation))
		}
		var feed cosmos.PartitionKeyRangeFeed
		_ = json.Unmarshal(resp.Body, &feed)
		var ids []string
		for _, r := range feed.Ranges {
			ids = append(ids, r.ID)
		}
		pages = append(pages, ids)
		etag = resp.ETag
		if len(pages) > 10 {
			t.Fatal("the incremental feed never answered 304")
		}
	}
	if got := pagesString(pages); got != "0,1,2 | 3,4,5 | 6,7" {
		t.Errorf("incremental pages %s", got)
	}
	whole, err := c.do(s.Endpoint(), http.MethodGet, cosmos.PKRangesPath("db", "items"), nil, nil)
	if err != nil || whole.ETag != etag {
		t.Fatalf("the read feed's etag %q (%v), want the end's %s", whole.ETag, err, etag)
	}
	resp, _ := c.do(s.Endpoint(), http.MethodGet, cosmos.PKRangesPath("db", "items"), map[string]string{cosmos.HeaderIfNoneMatch: etag}, nil)
	if resp == nil || resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match with the end's etag: %+v, want 304", resp)
	}
}
