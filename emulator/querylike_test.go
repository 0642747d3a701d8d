package emulator

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
)

// LIKE (with NOT and ESCAPE) and the date and time functions over HTTP, across
// partitions and within one: the functions read the emulator's clock, so moving the
// fake clock changes which items a GetCurrentDateTime() filter keeps.
func TestQueryLikeAndDateTimeFunctionsOverHTTP(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	s := startWithClock(t, clk, nil)
	c := newTestClientAt(t, s.Key(), clk)
	for _, doc := range []struct{ pk, body string }{
		{"a", `{"id":"1","pk":"a","name":"fruit salad","note":"20% off","expires":"2026-11-30T00:00:00.0000000Z"}`},
		{"a", `{"id":"2","pk":"a","name":"Fruit bowl","note":"200 off","expires":"2026-12-02T00:00:00.0000000Z"}`},
		{"b", `{"id":"3","pk":"b","name":"fruitcake","expires":"2026-12-01T12:00:00.0000001Z"}`},
		{"b", `{"id":"4","pk":"b","name":42}`},
	} {
		resp, err := c.do(s.Endpoint(), "POST", itemsPath(), pkHeader(`["`+doc.pk+`"]`), doc.body)
		if code, _ := statusOf(t, resp, err); code != 201 {
			t.Fatalf("create %s: %d %s", doc.body, code, resp.Body)
		}
	}
	cross := map[string]string{cosmos.HeaderEnableCrossPartition: "true"}
	query := func(scope map[string]string, sql string, params ...cosmos.QueryParameter) string {
		t.Helper()
		across := scope == nil
		if across {
			scope = cross // the rows come range by range: compared sorted
		}
		resp, err := c.do(s.Endpoint(), "POST", itemsPath(), docQueryHeaders(scope), cosmos.QuerySpec{Query: sql, Parameters: params})
		if code, _ := statusOf(t, resp, err); code != 200 {
			t.Fatalf("%s: %d %s", sql, code, resp.Body)
		}
		var feed cosmos.DocumentFeed
		if err := json.Unmarshal(resp.Body, &feed); err != nil {
			t.Fatal(err)
		}
		rows := make([]string, len(feed.Documents))
		for i, d := range feed.Documents {
			rows[i] = string(d)
		}
		if across {
			sort.Strings(rows)
		}
		return "[" + strings.Join(rows, ",") + "]"
	}
	param := func(name, v string) cosmos.QueryParameter {
		return cosmos.QueryParameter{Name: name, Value: json.RawMessage(v)}
	}
	for _, tt := range []struct {
		scope  map[string]string
		sql    string
		params []cosmos.QueryParameter
		want   string
	}{
		{nil, `SELECT VALUE c.id FROM c WHERE c.name LIKE 'fruit%'`, nil, `["1","3"]`},
		{nil, `SELECT VALUE c.id FROM c WHERE c.name NOT LIKE 'fruit%'`, nil, `["2"]`},
		{pkHeader(`["a"]`), `SELECT VALUE c.id FROM c WHERE c.name LIKE @p`, []cosmos.QueryParameter{param("@p", `"%r_it%"`)}, `["1","2"]`},
		{nil, `SELECT VALUE c.id FROM c WHERE c.note LIKE '%20!%%' ESCAPE '!'`, nil, `["1"]`},
		{nil, `SELECT VALUE c.id FROM c WHERE c.name LIKE '[A-Z]%'`, nil, `["2"]`},
		// At 12:00 on December 1: item 1 has expired, 2 and 3 have not.
		{nil, `SELECT VALUE c.id FROM c WHERE c.expires > GetCurrentDateTime()`, nil, `["2","3"]`},
		{pkHeader(`["a"]`), `SELECT VALUE {id: c.id, days: DateTimeDiff("dd", GetCurrentDateTimeStatic(), c.expires)} FROM c`, nil,
			`[{"id":"1","days":-1},{"id":"2","days":1}]`},
		{pkHeader(`["b"]`), `SELECT VALUE [GetCurrentDateTime(), GetCurrentTimestamp(), DateTimeAdd("hh", 1, GetCurrentDateTime())] FROM c WHERE c.id = '3'`, nil,
			`[["2026-12-01T12:00:00.0000000Z",1796126400000,"2026-12-01T13:00:00.0000000Z"]]`},
		{pkHeader(`["b"]`), `SELECT VALUE IIF(IS_STRING(c.name), LENGTH(c.name), -1) FROM c`, nil, `[9,-1]`},
	} {
		if got := query(tt.scope, tt.sql, tt.params...); got != tt.want {
			t.Errorf("%s = %s, want %s", tt.sql, got, tt.want)
		}
	}
	clk.Advance(time.Second)
	if got := query(nil, `SELECT VALUE c.id FROM c WHERE c.expires > GetCurrentDateTime()`); got != `["2"]` {
		t.Errorf("a second later, the unexpired items are %s, want [\"2\"]", got)
	}
	// An unknown function is still a 400 that names it.
	resp, err := c.do(s.Endpoint(), "POST", itemsPath(), docQueryHeaders(cross), cosmos.QuerySpec{Query: `SELECT VALUE DateTimeNow() FROM c`})
	if code, _ := statusOf(t, resp, err); code != 400 || !strings.Contains(string(resp.Body), `found \"DateTimeNow\"`) {
		t.Errorf("an unknown function: %d %s, want a 400 naming it", code, resp.Body)
	}
}
