package emulator_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/cosmosctl/cosmosctl/emulator"
)

// The Go SDK creates a container with a unique key policy, reads the policy back, and
// gets the service's 409 for a duplicate within one partition key (by create, upsert
// and replace), while the same value in another partition key is accepted.
func TestSDKUniqueKeyPolicy(t *testing.T) {
	s, err := emulator.Start(emulator.Config{Databases: []emulator.DatabaseConfig{{ID: "db"}}}, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c := newSDKClient(t, s)
	ctx := context.Background()
	db, err := c.client.NewDatabase("db")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "users",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/tenant"}},
		UniqueKeyPolicy:        &azcosmos.UniqueKeyPolicy{UniqueKeys: []azcosmos.UniqueKey{{Paths: []string{"/email"}}, {Paths: []string{"/first", "/last"}}}},
	}, nil); err != nil {
		t.Fatal(err)
	}
	cont, _ := db.NewContainer("users")
	props, err := cont.Read(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := props.ContainerProperties.UniqueKeyPolicy
	if got == nil || len(got.UniqueKeys) != 2 || !slices.Equal(got.UniqueKeys[1].Paths, []string{"/first", "/last"}) {
		t.Fatalf("the SDK read the unique key policy back as %+v", got)
	}
	// The service fills in its default conflict resolution policy.
	if cr := props.ContainerProperties.ConflictResolutionPolicy; cr == nil || cr.Mode != azcosmos.ConflictResolutionModeLastWriteWins || cr.ResolutionPath != "/_ts" {
		t.Errorf("the SDK read the conflict resolution policy as %+v, want last writer wins on /_ts", cr)
	}
	t1, t2 := azcosmos.NewPartitionKeyString("t1"), azcosmos.NewPartitionKeyString("t2")
	mustWrite := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	wantUniqueConflict := func(what string, err error) {
		t.Helper()
		var re *azcore.ResponseError
		if err == nil || !asResponseError(err, &re) || re.StatusCode != http.StatusConflict {
			t.Fatalf("%s: %v, want a 409 ResponseError", what, err)
		}
		if !strings.Contains(err.Error(), "Unique index constraint violation.") {
			t.Errorf("%s: the 409 says %v, want the service's unique index message", what, err)
		}
	}
	_, err = cont.CreateItem(ctx, t1, []byte(`{"id":"1","tenant":"t1","email":"a@x","first":"A","last":"B"}`), nil)
	mustWrite("the first item", err)
	_, err = cont.CreateItem(ctx, t1, []byte(`{"id":"2","tenant":"t1","email":"a@x","first":"C","last":"D"}`), nil)
	wantUniqueConflict("a create repeating the email in t1", err)
	_, err = cont.UpsertItem(ctx, t1, []byte(`{"id":"2","tenant":"t1","email":"b@x","first":"A","last":"B"}`), nil)
	wantUniqueConflict("an upsert repeating first and last in t1", err)
	_, err = cont.CreateItem(ctx, t2, []byte(`{"id":"2","tenant":"t2","email":"a@x","first":"A","last":"B"}`), nil)
	mustWrite("the same values in t2", err)
	_, err = cont.CreateItem(ctx, t1, []byte(`{"id":"3","tenant":"t1","email":"c@x","first":"A","last":"C"}`), nil)
	mustWrite("another item in t1", err)
	_, err = cont.ReplaceItem(ctx, t1, "3", []byte(`{"id":"3","tenant":"t1","email":"a@x","first":"A","last":"C"}`), nil)
	wantUniqueConflict("a replace taking the first item's email", err)
	_, err = cont.ReplaceItem(ctx, t1, "1", []byte(`{"id":"1","tenant":"t1","email":"a@x","first":"A","last":"B","n":1}`), nil)
	mustWrite("a replace keeping the item's own values", err)
	_, err = cont.DeleteItem(ctx, t1, "1", nil)
	mustWrite("delete", err)
	_, err = cont.ReplaceItem(ctx, t1, "3", []byte(`{"id":"3","tenant":"t1","email":"a@x","first":"A","last":"B"}`), nil)
	mustWrite("a replace taking the deleted item's values", err)
}
