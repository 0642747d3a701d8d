package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/addrcache"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/retries"
)

func TestReplicaSetListsTheRangesReplicasPrimaryFirst(t *testing.T) {
	_, c := directClient(t, false)
	key, set, err := c.ReplicaSet(context.Background(), directRead(), "east us")
	if err != nil {
		t.Fatal(err)
	}
	if key.Region != "East US" || key.Range == "" || len(set) != emulator.DefaultReplicas {
		t.Fatalf("key %v, %d replicas", key, len(set))
	}
	if !set[0].Primary || !strings.HasSuffix(set[0].URL, "p/") {
		t.Fatalf("the primary comes first: %+v", set)
	}
	for i, r := range set[1:] {
		if r.Primary || (i > 0 && set[i].URL > r.URL) {
			t.Fatalf("then the secondaries in address order: %+v", set)
		}
	}
}

func TestReadReplicaRecordsEachAnswerInTheAddressCache(t *testing.T) {
	srv, c := directClient(t, false)
	ctx := context.Background()
	key, set, err := c.ReplicaSet(ctx, directRead(), "East US")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range set {
		res, err := c.ReadReplica(ctx, directRead(), "East US", r.URL)
		if err != nil || res.StatusCode != 200 || len(res.Diagnostics.Attempts) != 1 || res.Diagnostics.Attempts[0].Replica != r.URL {
			t.Fatalf("read from %s: %v %+v", r.URL, err, res.Diagnostics)
		}
		if res.Health != addrcache.Connected || !res.InReplicaSet {
			t.Fatalf("an answer leaves the replica connected: %v %v", res.Health, res.InReplicaSet)
		}
	}
	move, err := srv.MoveReplica(emulator.ReplicaMove{Region: "East US", Database: "db", Container: "c", Range: key.Range, Replica: 2})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.ReadReplica(ctx, directRead(), "East US", move.OldAddress)
	if status, sub, _ := cosmos.Status(err); status != 410 || sub != 0 || res.Diagnostics.Attempts[0].Outcome != OutcomeFailed {
		t.Fatalf("the moved replica: %v %+v", err, res.Diagnostics.Attempts)
	}
	if res.Health != addrcache.Unhealthy || !res.InReplicaSet {
		t.Fatalf("a 410 leaves the replica unhealthy (and listed until the gateway moves on): %v %v", res.Health, res.InReplicaSet)
	}
	_, after, _ := c.ReplicaSet(ctx, directRead(), "East US")
	for _, r := range after {
		want := addrcache.Connected
		if r.URL == move.OldAddress {
			want = addrcache.Unhealthy
		}
		// The refresh the 410 started may already have returned the old set, which
		// turns Unhealthy into UnhealthyPending.
		if r.Health != want && !(want == addrcache.Unhealthy && r.Health == addrcache.UnhealthyPending) {
			t.Errorf("%s: %v, want %v", r.URL, r.Health, want)
		}
	}
	if _, err := c.ReadReplica(ctx, directRead(), "East US", "http://127.0.0.1:1/nowhere/"); err == nil || !strings.Contains(err.Error(), "not in the replica set") {
		t.Fatalf("an address outside the set: %v", err)
	}
}

func TestDeriveDirectHasItsOwnAddressCache(t *testing.T) {
	_, c := directClient(t, false)
	gw, err := New(Options{Endpoint: c.endpoint, Transport: c.transport})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := gw.ReplicaSet(context.Background(), directRead(), "East US"); !errors.Is(err, ErrNotDirect) {
		t.Fatalf("a gateway client has no replica set: %v", err)
	}
	d := gw.DeriveDirect(nil, retries.Policy{}, true)
	defer d.Close()
	if d.AddressCache() == nil || d.AddressCache() == c.AddressCache() {
		t.Fatal("DeriveDirect builds a new address cache")
	}
	res, err := d.Execute(context.Background(), directRead())
	if err != nil || res.Diagnostics.Attempts[0].Replica == "" {
		t.Fatalf("a derived direct client reads from replicas: %v %+v", err, res.Diagnostics)
	}
}
