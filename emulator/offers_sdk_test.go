package emulator_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// Queries on the databases and containers feeds, and throughput, through the official Go
// SDK: its pagers and its offers client are the judges of the wire shape.

func TestSDKQueriesDatabasesAndContainers(t *testing.T) {
	s := startSDKTest(t)
	c := newSDKClient(t, s)
	ctx := context.Background()
	for _, id := range []string{"other", "third"} {
		if _, err := c.client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: id}, nil); err != nil {
			t.Fatal(err)
		}
	}
	pager := c.client.NewQueryDatabasesPager("SELECT * FROM root r WHERE r.id = @id", &azcosmos.QueryDatabasesOptions{
		QueryParameters: []azcosmos.QueryParameter{{Name: "@id", Value: "other"}},
	})
	var ids []string
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range page.Databases {
			ids = append(ids, d.ID)
		}
	}
	if len(ids) != 1 || ids[0] != "other" {
		t.Errorf("query for database other found %v", ids)
	}
	// Creating by query must not happen any more: the database list is unchanged.
	all := c.client.NewQueryDatabasesPager("SELECT * FROM c", nil)
	n := 0
	for all.More() {
		page, err := all.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n += len(page.Databases)
	}
	if n != 3 {
		t.Errorf("SELECT * FROM c found %d databases, want 3 (db, other, third)", n)
	}

	db, err := c.client.NewDatabase("db")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "second", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/k"}}}, nil); err != nil {
		t.Fatal(err)
	}
	cp := db.NewQueryContainersPager("SELECT * FROM root r WHERE r.id = @id", &azcosmos.QueryContainersOptions{
		QueryParameters: []azcosmos.QueryParameter{{Name: "@id", Value: "second"}},
	})
	var colls []azcosmos.ContainerProperties
	for cp.More() {
		page, err := cp.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		colls = append(colls, page.Containers...)
	}
	if len(colls) != 1 || colls[0].ID != "second" || colls[0].PartitionKeyDefinition.Paths[0] != "/k" {
		t.Errorf("query for container second found %+v", colls)
	}
}

func TestSDKReadsAndReplacesContainerThroughput(t *testing.T) {
	s := startSDKTest(t)
	c := newSDKClient(t, s)
	ctx := context.Background()

	tp, err := c.container.ReadThroughput(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := tp.ThroughputProperties.ManualThroughput(); !ok || n != 400 {
		t.Errorf("a container created without throughput has %d RU/s (manual %v), want 400", n, ok)
	}
	if tp.MinThroughput == nil || *tp.MinThroughput != 400 || tp.IsReplacePending {
		t.Errorf("the SDK read min throughput %v, replace pending %v; want 400 and false", tp.MinThroughput, tp.IsReplacePending)
	}
	if _, err := c.container.ReplaceThroughput(ctx, azcosmos.NewManualThroughputProperties(1200), nil); err != nil {
		t.Fatal(err)
	}
	tp, err = c.container.ReadThroughput(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := tp.ThroughputProperties.ManualThroughput(); n != 1200 {
		t.Errorf("after replacing with 1200 RU/s the container has %d", n)
	}
	_, err = c.container.ReplaceThroughput(ctx, azcosmos.NewManualThroughputProperties(450), nil)
	wantStatus(t, err, http.StatusBadRequest, "replacing with 450 RU/s (not a multiple of 100)")
	_, err = c.container.ReplaceThroughput(ctx, azcosmos.NewAutoscaleThroughputProperties(4000), nil)
	wantStatus(t, err, http.StatusBadRequest, "switching a manual container to autoscale")
}

func TestSDKAutoscaleContainerAndSharedDatabaseThroughput(t *testing.T) {
	s := startSDKTest(t)
	c := newSDKClient(t, s)
	ctx := context.Background()
	db, err := c.client.NewDatabase("db")
	if err != nil {
		t.Fatal(err)
	}
	auto := azcosmos.NewAutoscaleThroughputProperties(4000)
	if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "auto", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}},
		&azcosmos.CreateContainerOptions{ThroughputProperties: &auto}); err != nil {
		t.Fatal(err)
	}
	ac, _ := db.NewContainer("auto")
	tp, err := ac.ReadThroughput(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := tp.ThroughputProperties.AutoscaleMaxThroughput(); !ok || m != 4000 {
		t.Errorf("autoscale max %d (%v), want 4000", m, ok)
	}
	if tp.MinThroughput == nil || *tp.MinThroughput != 1000 {
		t.Errorf("the SDK read min throughput %v for autoscale, want 1000 (the lowest autoscale maximum)", tp.MinThroughput)
	}
	if _, err := ac.ReplaceThroughput(ctx, azcosmos.NewAutoscaleThroughputProperties(6000), nil); err != nil {
		t.Fatal(err)
	}
	tp, _ = ac.ReadThroughput(ctx, nil)
	if m, _ := tp.ThroughputProperties.AutoscaleMaxThroughput(); m != 6000 {
		t.Errorf("after replacing, autoscale max %d, want 6000", m)
	}
	// The SDK cannot migrate: a manual replace of an autoscale offer is the service's 400.
	_, err = ac.ReplaceThroughput(ctx, azcosmos.NewManualThroughputProperties(6000), nil)
	wantStatus(t, err, http.StatusBadRequest, "switching an autoscale container to manual")
	tp, _ = ac.ReadThroughput(ctx, nil)
	if m, ok := tp.ThroughputProperties.AutoscaleMaxThroughput(); !ok || m != 6000 {
		t.Errorf("after a refused manual replace, autoscale max %d (%v), want 6000 still", m, ok)
	}

	shared := azcosmos.NewManualThroughputProperties(1000)
	if _, err := c.client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "shared"}, &azcosmos.CreateDatabaseOptions{ThroughputProperties: &shared}); err != nil {
		t.Fatal(err)
	}
	sdb, _ := c.client.NewDatabase("shared")
	dtp, err := sdb.ReadThroughput(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := dtp.ThroughputProperties.ManualThroughput(); n != 1000 {
		t.Errorf("shared database throughput %d, want 1000", n)
	}
	if _, err := sdb.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "in-shared", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}, nil); err != nil {
		t.Fatal(err)
	}
	ic, _ := sdb.NewContainer("in-shared")
	_, err = ic.ReadThroughput(ctx, nil)
	wantStatus(t, err, http.StatusNotFound, "a container that shares its database's throughput has no offer")

	plain, _ := c.client.NewDatabase("db")
	_, err = plain.ReadThroughput(ctx, nil)
	wantStatus(t, err, http.StatusNotFound, "a database created without throughput has no offer")
}
