package testkit

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
)

// QueryTestItems is how many items the query tests spread over the four ranges.
const QueryTestItems = 120

// QueryItem is one test item of the query, export and change feed tests, as their
// in-memory evaluations see it.
type QueryItem struct {
	ID, PK, Cat, Grp, Name string
	N, Rank                int
	F                      float64
	Opt                    *int
}

// Doc is the item as it is stored.
func (q QueryItem) Doc() map[string]any {
	d := map[string]any{"id": q.ID, "pk": q.PK, "n": q.N, "rank": q.Rank, "cat": q.Cat, "grp": q.Grp, "name": q.Name, "f": q.F}
	if q.Opt != nil {
		d["opt"] = *q.Opt
	}
	return d
}

// QueryItems makes n items over 13 partition keys, with repeated values to group and
// order by, and an optional property that every other item lacks.
func QueryItems(n int) []QueryItem {
	items := make([]QueryItem, n)
	for i := range items {
		items[i] = QueryItem{ID: fmt.Sprintf("q%03d", i), PK: fmt.Sprintf("p%d", i%13), N: i, Rank: i % 7,
			Cat: []string{"red", "green", "blue"}[i%3], Grp: fmt.Sprintf("g%d", i%5), Name: fmt.Sprintf("name-%03d", (i*7)%n), F: float64(i%4) * 1.5}
		if i%2 == 0 {
			v := i / 2
			items[i].Opt = &v
		}
	}
	return items
}

// queryContainer is the items container's definition: the default indexing policy with
// a composite index for each multi-key ORDER BY of the query forms the tests run.
const queryContainer = `{"id":"items","partitionKey":{"paths":["/pk"],"kind":"Hash"},"indexingPolicy":{` +
	`"indexingMode":"consistent","automatic":true,"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/\"_etag\"/?"}],` +
	`"compositeIndexes":[` +
	`[{"path":"/rank","order":"ascending"},{"path":"/n","order":"descending"}],` +
	`[{"path":"/f","order":"descending"},{"path":"/n","order":"ascending"}]]}}`

// QueryAccount starts a test account (Account) with the items written straight to the
// emulator, into a container with the composite indexes of queryContainer, and checks
// the container has four partition key ranges, so that cross-partition work really
// crosses ranges.
func QueryAccount(t *testing.T, items []QueryItem, mutate ...func(*emulator.Config)) *emulator.Server {
	t.Helper()
	srv := Account(t, mutate...)
	cred, _ := cosmos.NewMasterKey(srv.Key())
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
	// The container has the composite indexes the query forms' multi-key ORDER BYs need,
	// as a real container must: without one such a query is a 400.
	replace := &cosmos.Request{Method: http.MethodPut, Path: cosmos.EscapePath("dbs", "app", "colls", "items"), Header: http.Header{}, Body: []byte(queryContainer)}
	if resp, err := tr.Do(context.Background(), srv.Endpoint(), replace); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("replacing the items container's indexing policy: %v %+v", err, resp)
	}
	for _, it := range items {
		body, _ := json.Marshal(it.Doc())
		pk, _ := cosmos.PK(it.PK)
		req := &cosmos.Request{Method: http.MethodPost, Path: cosmos.ItemsPath("app", "items"), Header: http.Header{}, Body: body}
		req.Header.Set(cosmos.HeaderPartitionKey, pk.JSON())
		resp, err := tr.Do(context.Background(), srv.Endpoint(), req)
		if err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("seeding %s: %v %+v", it.ID, err, resp)
		}
	}
	req := &cosmos.Request{Method: http.MethodGet, Path: cosmos.EscapePath("dbs", "app", "colls", "items", "pkranges"), Header: http.Header{}}
	resp, err := tr.Do(context.Background(), srv.Endpoint(), req)
	if err != nil {
		t.Fatal(err)
	}
	var ranges struct {
		PartitionKeyRanges []json.RawMessage `json:"PartitionKeyRanges"`
	}
	if err := json.Unmarshal(resp.Body, &ranges); err != nil || len(ranges.PartitionKeyRanges) != 4 {
		t.Fatalf("the test container must have 4 partition key ranges: %v %s", err, resp.Body)
	}
	return srv
}

// Where is the items keep holds for, in their order.
func Where(items []QueryItem, keep func(QueryItem) bool) []QueryItem {
	var out []QueryItem
	for _, it := range items {
		if keep(it) {
			out = append(out, it)
		}
	}
	return out
}
