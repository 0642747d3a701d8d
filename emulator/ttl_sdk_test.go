package emulator_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/emulator"
)

// The Go SDK creates a container with a default time to live, reads it back, and sees an
// item expire by its own ttl when the emulator's (fake) clock moves past it. The SDK
// signs with the wall clock; seconds of fake time are well inside the 15 minutes the
// emulator accepts.
func TestSDKContainerTimeToLive(t *testing.T) {
	clk := clock.NewFake(time.Now())
	s, err := emulator.Start(emulator.Config{Databases: []emulator.DatabaseConfig{{ID: "db"}}}, emulator.Options{Clock: clk})
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
	ttl := int32(60)
	if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "ttl", DefaultTimeToLive: &ttl,
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}, nil); err != nil {
		t.Fatal(err)
	}
	cont, _ := db.NewContainer("ttl")
	props, err := cont.Read(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := props.ContainerProperties.DefaultTimeToLive; got == nil || *got != 60 {
		t.Fatalf("the SDK read defaultTtl %v, want 60", got)
	}
	pk := azcosmos.NewPartitionKeyString("a")
	for _, doc := range []string{`{"id":"short","pk":"a","ttl":2}`, `{"id":"default","pk":"a"}`} {
		if _, err := cont.CreateItem(ctx, pk, []byte(doc), nil); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(2 * time.Second)
	_, err = cont.ReadItem(ctx, pk, "short", nil)
	var re *azcore.ResponseError
	if err == nil || !asResponseError(err, &re) || re.StatusCode != http.StatusNotFound {
		t.Fatalf("the SDK read an item 2 s past its ttl of 2: %v, want 404", err)
	}
	if _, err := cont.ReadItem(ctx, pk, "default", nil); err != nil {
		t.Fatalf("an item within the container's 60 s: %v", err)
	}
	pager := cont.NewQueryItemsPager("SELECT VALUE COUNT(1) FROM c", pk, nil)
	page, err := pager.NextPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 1 || string(page.Items[0]) != "1" {
		t.Fatalf("COUNT over the partition after one item expired: %s, want 1", page.Items)
	}
}

func asResponseError(err error, re **azcore.ResponseError) bool { return errors.As(err, re) }
