// Package paging_test runs the data and resource commands against an emulator that
// serves its metadata feeds in pages of one (feed_page_size = 1), standing for a real
// account's container with many physical partitions, whose partition key ranges the
// service pages: every command must read every feed to its end, or it answers from the
// first range alone and says it is complete.
package paging_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/internal/clitest"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

const (
	ranges = 8
	items  = 120
)

// pagedAccount starts an emulator with 8 ranges per container and feeds in pages of
// one, and writes items items straight to it, each under its own partition key; it
// returns the emulator and the range every partition key went to (the range the
// service stored it in), having checked that every range holds some.
func pagedAccount(t *testing.T) (*emulator.Server, map[string]string) {
	t.Helper()
	srv := testkit.Account(t, func(c *emulator.Config) { c.Ranges, c.FeedPageSize = ranges, 1 })
	rangeOf := map[string]string{}
	for i := 0; i < items; i++ {
		pk := fmt.Sprintf("p%03d", i)
		resp := send(t, srv, http.MethodPost, cosmos.ItemsPath("app", "items"), map[string]string{cosmos.HeaderPartitionKey: `["` + pk + `"]`},
			fmt.Sprintf(`{"id":"i%03d","pk":%q,"n":%d}`, i, pk, i))
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("seeding %s: %d %s", pk, resp.StatusCode, resp.Body)
		}
		rangeOf[pk] = resp.Header.Get(cosmos.HeaderPartitionKeyRangeID)
	}
	used := map[string]bool{}
	for _, r := range rangeOf {
		used[r] = true
	}
	if len(used) != ranges {
		t.Fatalf("the items landed in %d ranges, want all %d", len(used), ranges)
	}
	// The feed really comes a range at a time.
	resp := send(t, srv, http.MethodGet, cosmos.PKRangesPath("app", "items"), nil, "")
	var feed cosmos.PartitionKeyRangeFeed
	if json.Unmarshal(resp.Body, &feed) != nil || len(feed.Ranges) != 1 || resp.Header.Get(cosmos.HeaderContinuation) == "" {
		t.Fatalf("the first page of the ranges: %s, continuation %q; want one range and a continuation", resp.Body, resp.Header.Get(cosmos.HeaderContinuation))
	}
	return srv, rangeOf
}

func send(t *testing.T, srv *emulator.Server, method, path string, header map[string]string, body string) *cosmos.Response {
	t.Helper()
	cred, _ := cosmos.NewMasterKey(srv.Key())
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
	req := &cosmos.Request{Method: method, Path: path, Header: http.Header{}}
	if body != "" {
		req.Body = []byte(body)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := tr.Do(context.Background(), srv.Endpoint(), req)
	if resp == nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

type queryJSON struct {
	Items    []json.RawMessage `json:"items"`
	Complete bool              `json:"complete"`
}

func query(t *testing.T, args ...string) queryJSON {
	t.Helper()
	var q queryJSON
	out := clitest.MustRun(t, append([]string{"query", "-o", "json"}, args...)...)
	if err := json.Unmarshal([]byte(out), &q); err != nil {
		t.Fatalf("query -o json printed %q: %v", out, err)
	}
	return q
}

// ndjsonIDs counts the ids of NDJSON lines.
func ndjsonIDs(t *testing.T, out string) map[string]int {
	t.Helper()
	seen := map[string]int{}
	clitest.ItemIDs(t, out, seen)
	return seen
}

func wantEveryItemOnce(t *testing.T, what string, seen map[string]int) {
	t.Helper()
	missing := 0
	for i := 0; i < items; i++ {
		if seen[fmt.Sprintf("i%03d", i)] != 1 {
			missing++
		}
	}
	if len(seen) != items || missing > 0 {
		t.Errorf("%s: %d distinct items, %d not exactly once; want all %d once", what, len(seen), missing, items)
	}
}

// TestDataCommandsReadEveryRangeOfAPagedFeed: with the ranges listed one per page,
// cross-partition queries (an aggregate, ORDER BY, a plain scan), the change feed and
// export read all eight ranges, and locate finds ranges beyond the first page.
func TestDataCommandsReadEveryRangeOfAPagedFeed(t *testing.T) {
	_, rangeOf := pagedAccount(t)

	t.Run("COUNT counts every range", func(t *testing.T) {
		q := query(t, "SELECT VALUE COUNT(1) FROM c")
		if len(q.Items) != 1 || string(q.Items[0]) != fmt.Sprint(items) || !q.Complete {
			t.Errorf("COUNT(1) = %s complete %v, want [%d] complete", q.Items, q.Complete, items)
		}
	})
	t.Run("a plain query returns every item", func(t *testing.T) {
		q := query(t, "--all", "SELECT c.id FROM c")
		seen := map[string]int{}
		for _, it := range q.Items {
			var d struct{ ID string }
			_ = json.Unmarshal(it, &d)
			seen[d.ID]++
		}
		wantEveryItemOnce(t, "SELECT c.id FROM c --all", seen)
		if !q.Complete {
			t.Error("not complete")
		}
	})
	t.Run("ORDER BY merges every range", func(t *testing.T) {
		q := query(t, "--all", "SELECT VALUE c.n FROM c ORDER BY c.n DESC")
		ok := len(q.Items) == items
		for i := 0; ok && i < items; i++ {
			ok = string(q.Items[i]) == fmt.Sprint(items-1-i)
		}
		if !ok || !q.Complete {
			t.Errorf("ORDER BY c.n DESC gave %d values (complete %v), want %d..0: %s", len(q.Items), q.Complete, items-1, q.Items)
		}
	})
	t.Run("changes reads every range", func(t *testing.T) {
		state := filepath.Join(t.TempDir(), "changes.state")
		wantEveryItemOnce(t, "changes --state", ndjsonIDs(t, clitest.MustRun(t, "changes", "--state", state)))
		if out := clitest.MustRun(t, "changes", "--state", state); out != "" {
			t.Errorf("a second run from the saved state printed %q, want nothing", out)
		}
	})
	for _, source := range []string{"query", "change-feed"} {
		t.Run("export from the "+source+" reads every range", func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "items.ndjson")
			clitest.MustRun(t, "export", "--source", source, "--output-file", out, "--state", filepath.Join(dir, "state"))
			b, _ := os.ReadFile(out)
			wantEveryItemOnce(t, "export --source "+source, ndjsonIDs(t, string(b)))
		})
	}
	t.Run("locate finds ranges past the first page", func(t *testing.T) {
		for _, pk := range []string{"p000", "p037", "p074", "p111", "p119"} {
			var rep struct {
				Ranges []struct {
					ID string `json:"id"`
				} `json:"ranges"`
			}
			out := clitest.MustRun(t, "locate", "--pk", pk, "-o", "json")
			if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Ranges) != 1 || rep.Ranges[0].ID != rangeOf[pk] {
				t.Errorf("locate --pk %s: %s, want range %s", pk, out, rangeOf[pk])
			}
		}
	})
	t.Run("container show counts every range", func(t *testing.T) {
		var c struct {
			Ranges *int `json:"partition_key_ranges"`
		}
		out := clitest.MustRun(t, "container", "show", "items", "-o", "json")
		if err := json.Unmarshal([]byte(out), &c); err != nil || c.Ranges == nil || *c.Ranges != ranges {
			t.Errorf("container show: %s, want %d ranges", out, ranges)
		}
	})
}

// TestResourceCommandsListEveryPage: with the databases, containers and offers listed one
// per page, db ls, container ls and throughput see every resource and its throughput.
func TestResourceCommandsListEveryPage(t *testing.T) {
	srv := testkit.Account(t, func(c *emulator.Config) { c.FeedPageSize = 1 })
	for i := 1; i <= 3; i++ {
		if r := send(t, srv, http.MethodPost, "/dbs", map[string]string{"x-ms-offer-throughput": fmt.Sprint(400 * i)}, fmt.Sprintf(`{"id":"d%d"}`, i)); r.StatusCode != http.StatusCreated {
			t.Fatalf("creating d%d: %d %s", i, r.StatusCode, r.Body)
		}
		if r := send(t, srv, http.MethodPost, "/dbs/app/colls", map[string]string{"x-ms-offer-throughput": fmt.Sprint(500 * i)},
			fmt.Sprintf(`{"id":"c%d","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}`, i)); r.StatusCode != http.StatusCreated {
			t.Fatalf("creating c%d: %d %s", i, r.StatusCode, r.Body)
		}
	}
	type tp struct {
		Mode string `json:"mode"`
		RU   *int   `json:"ru_per_second"`
	}

	var dbs []struct {
		ID         string `json:"id"`
		Throughput *tp    `json:"throughput"`
	}
	out := clitest.MustRun(t, "db", "ls", "-o", "json")
	if err := json.Unmarshal([]byte(out), &dbs); err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, d := range dbs {
		s := d.ID
		if d.Throughput != nil && d.Throughput.RU != nil {
			s += fmt.Sprintf(":%s/%d", d.Throughput.Mode, *d.Throughput.RU)
		}
		got = append(got, s)
	}
	if want := "app d1:manual/400 d2:manual/800 d3:manual/1200"; strings.Join(got, " ") != want {
		t.Errorf("db ls: %s, want %s", strings.Join(got, " "), want)
	}

	var colls []struct {
		ID string `json:"id"`
	}
	out = clitest.MustRun(t, "container", "ls", "-o", "json")
	if err := json.Unmarshal([]byte(out), &colls); err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for _, c := range colls {
		got = append(got, c.ID)
	}
	if want := "items c1 c2 c3"; strings.Join(got, " ") != want {
		t.Errorf("container ls: %s, want %s", strings.Join(got, " "), want)
	}

	for i := 1; i <= 3; i++ {
		var th tp
		out = clitest.MustRun(t, "throughput", "show", fmt.Sprintf("c%d", i), "-o", "json")
		if err := json.Unmarshal([]byte(out), &th); err != nil || th.Mode != "manual" || th.RU == nil || *th.RU != 500*i {
			t.Errorf("throughput show c%d: %s, want manual %d RU/s", i, out, 500*i)
		}
		out = clitest.MustRun(t, "throughput", "show", fmt.Sprintf("d%d", i), "--level", "database", "-o", "json")
		if err := json.Unmarshal([]byte(out), &th); err != nil || th.Mode != "manual" || th.RU == nil || *th.RU != 400*i {
			t.Errorf("throughput show d%d --level database: %s, want manual %d RU/s", i, out, 400*i)
		}
	}
}
