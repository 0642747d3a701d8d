package emulator_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/emulator"
)

// The Go SDK sends LIKE with a parameter and ESCAPE, and a filter on
// GetCurrentDateTime(), and reads the items the documented semantics keep; the
// date functions read the emulator's (fake) clock. The SDK signs with the wall clock;
// the fake clock starts there and moves by minutes, well inside the 15 minutes the
// emulator accepts.
func TestSDKQueryLikeAndDateTimeFunctions(t *testing.T) {
	start := time.Now().UTC().Truncate(time.Second)
	clk := clock.NewFake(start)
	s, err := emulator.Start(emulator.Config{Databases: []emulator.DatabaseConfig{{ID: "db",
		Containers: []emulator.ContainerConfig{{ID: "items", PartitionKey: []string{"/pk"}}}}}}, emulator.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c := newSDKClient(t, s)
	ctx := context.Background()
	pk := azcosmos.NewPartitionKeyString("a")
	at := func(d time.Duration) string { return start.Add(d).Format("2006-01-02T15:04:05.0000000Z") }
	for _, doc := range []string{
		`{"id":"1","pk":"a","sku":"AB_100%","due":"` + at(-time.Minute) + `"}`,
		`{"id":"2","pk":"a","sku":"AB-100","due":"` + at(5*time.Minute) + `"}`,
		`{"id":"3","pk":"a","sku":"ab_100%","due":"` + at(10*time.Minute) + `"}`,
	} {
		if _, err := c.container.CreateItem(ctx, pk, []byte(doc), nil); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(sql string, params ...azcosmos.QueryParameter) string {
		t.Helper()
		pager := c.container.NewQueryItemsPager(sql, pk, &azcosmos.QueryOptions{QueryParameters: params})
		var got []string
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatalf("%s: %v", sql, err)
			}
			for _, it := range page.Items {
				got = append(got, string(it))
			}
		}
		return strings.Join(got, ",")
	}
	// "_" and "%" of the data escaped with "!": only the upper-case SKU with a
	// literal underscore and percent sign matches.
	if got := ids(`SELECT VALUE c.id FROM c WHERE c.sku LIKE @p ESCAPE '!'`, azcosmos.QueryParameter{Name: "@p", Value: "AB!_%!%"}); got != `"1"` {
		t.Errorf("LIKE 'AB!_%%!%%' ESCAPE '!' = %s, want \"1\"", got)
	}
	if got := ids(`SELECT VALUE c.id FROM c WHERE c.sku NOT LIKE 'AB_100%'`); got != `"3"` {
		t.Errorf("NOT LIKE 'AB_100%%' = %s, want \"3\"", got)
	}
	if got := ids(`SELECT VALUE c.id FROM c WHERE c.due > GetCurrentDateTime()`); got != `"2","3"` {
		t.Errorf("due after now = %s, want \"2\",\"3\"", got)
	}
	clk.Advance(6 * time.Minute)
	if got := ids(`SELECT VALUE c.id FROM c WHERE c.due > GetCurrentDateTime()`); got != `"3"` {
		t.Errorf("six minutes later, due after now = %s, want \"3\"", got)
	}
	want := `"` + at(6*time.Minute) + `"`
	if got := ids(`SELECT VALUE GetCurrentDateTimeStatic() FROM c WHERE c.id = '1'`); got != want {
		t.Errorf("GetCurrentDateTimeStatic() = %s, want the emulator's clock %s", got, want)
	}
}
