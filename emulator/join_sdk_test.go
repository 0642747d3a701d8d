package emulator_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// The official Go SDK runs a JOIN, an EXISTS and an ARRAY(SELECT …) query in one
// partition key (it has no cross-partition pipeline), paging the JOIN's rows two at a
// time: pages end inside a document's rows and resume there, each row once.
func TestSDKRunsJoinAndExistsQueries(t *testing.T) {
	s := startSDKTest(t)
	c := newSDKClient(t, s)
	ctx := context.Background()
	pk := azcosmos.NewPartitionKeyString("p1")
	for _, d := range []sdkDoc{
		{ID: "a", PK: "p1", N: 1, Tags: []string{"x", "y", "z"}},
		{ID: "b", PK: "p1", N: 2},
		{ID: "c", PK: "p1", N: 3, Tags: []string{"y"}},
	} {
		if _, err := c.container.CreateItem(ctx, pk, mustJSON(t, d), nil); err != nil {
			t.Fatalf("create %s: %v", d.ID, err)
		}
	}
	rows := func(sql string, pageSize int32) ([]string, int) {
		t.Helper()
		pager := c.container.NewQueryItemsPager(sql, pk, &azcosmos.QueryOptions{PageSizeHint: pageSize})
		var out []string
		pages := 0
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatalf("%s: %v", sql, err)
			}
			pages++
			if pageSize > 0 && len(page.Items) > int(pageSize) {
				t.Errorf("%s: a page of %d rows for a page size of %d", sql, len(page.Items), pageSize)
			}
			for _, it := range page.Items {
				var v any
				if err := json.Unmarshal(it, &v); err != nil {
					t.Fatal(err)
				}
				b, _ := json.Marshal(v)
				out = append(out, string(b))
			}
		}
		return out, pages
	}
	join, pages := rows("SELECT c.id, t AS tag FROM c JOIN t IN c.tags", 2)
	want := []string{`{"id":"a","tag":"x"}`, `{"id":"a","tag":"y"}`, `{"id":"a","tag":"z"}`, `{"id":"c","tag":"y"}`}
	if !slices.Equal(join, want) || pages < 2 {
		t.Errorf("JOIN through the SDK: %v in %d pages, want %v in at least 2", join, pages, want)
	}
	exists, _ := rows(`SELECT VALUE c.id FROM c WHERE EXISTS(SELECT VALUE t FROM t IN c.tags WHERE t = "y")`, 0)
	if !slices.Equal(exists, []string{`"a"`, `"c"`}) {
		t.Errorf("EXISTS through the SDK: %v, want a and c", exists)
	}
	arrays, _ := rows(`SELECT c.id, ARRAY(SELECT VALUE t FROM t IN c.tags WHERE t != "y") AS others FROM c`, 0)
	if !slices.Equal(arrays, []string{`{"id":"a","others":["x","z"]}`, `{"id":"b","others":[]}`, `{"id":"c","others":[]}`}) {
		t.Errorf("ARRAY(SELECT …) through the SDK: %v", arrays)
	}
}
