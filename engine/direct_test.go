package engine

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// directClient starts an emulator and a direct-mode engine client: metadata over HTTP
// to the gateway, point operations over RNTBD/TLS to the replicas, trusting the
// emulator's certificate.
func directClient(t *testing.T, noHealth bool) (*emulator.Server, *Client) {
	t.Helper()
	srv, err := emulator.Start(emulator.Config{Databases: []emulator.DatabaseConfig{{ID: "db", Containers: []emulator.ContainerConfig{{ID: "c", PartitionKey: []string{"/pk"}}}}}}, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cred, _ := cosmos.NewMasterKey(srv.Key())
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred, TLSConfig: srv.ClientTLSConfig()}
	c, err := New(Options{Endpoint: srv.Endpoint(), Transport: tr, Direct: true, NoReplicaHealth: noHealth})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		tr.CloseIdleConnections()
		srv.Close()
	})
	if _, err := c.Execute(context.Background(), Operation{Kind: OpCreate, Database: "db", Container: "c", Body: []byte(`{"id":"1","pk":"a"}`)}); err != nil {
		t.Fatal(err)
	}
	return srv, c
}

func directRead() Operation {
	op := readOp()
	op.Database, op.Container = "db", "c"
	return op
}

func TestDirectModeReadsGoToReplicas(t *testing.T) {
	_, c := directClient(t, false)
	res, err := c.Execute(context.Background(), directRead())
	if err != nil {
		t.Fatal(err)
	}
	a := res.Diagnostics.Attempts[0]
	if !strings.Contains(a.Replica, "/replicas/") || a.Endpoint != strings.TrimRight(a.Replica, "/") || a.ReplicaHealth == "" {
		t.Fatalf("attempt %+v", a)
	}
	// The replica's role and the transport that carried the attempt are recorded beside it.
	wantRole := RoleSecondary
	if strings.HasSuffix(strings.TrimRight(a.Replica, "/"), "p") {
		wantRole = RolePrimary
	}
	scheme, _, _ := strings.Cut(a.Replica, "://")
	if a.ReplicaRole != wantRole || a.Transport != scheme {
		t.Fatalf("attempt role %q transport %q, want %q and %q (replica %s)", a.ReplicaRole, a.Transport, wantRole, scheme, a.Replica)
	}
}

// Direct mode reads one replica: correct for Session, Consistent Prefix and Eventual
// only. On a Strong or Bounded Staleness account a point operation is refused before
// anything is sent, with the account's level and the fix.
func TestDirectModeRefusesStrongAndBoundedStalenessAccounts(t *testing.T) {
	for _, level := range []string{cosmos.ConsistencyStrong, cosmos.ConsistencyBoundedStaleness} {
		t.Run(level, func(t *testing.T) {
			srv, err := emulator.Start(emulator.Config{Consistency: level, Databases: []emulator.DatabaseConfig{{ID: "db", Containers: []emulator.ContainerConfig{{ID: "c", PartitionKey: []string{"/pk"}}}}}}, emulator.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			cred, _ := cosmos.NewMasterKey(srv.Key())
			tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
			defer tr.CloseIdleConnections()
			c, err := New(Options{Endpoint: srv.Endpoint(), Transport: tr, Direct: true})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for _, op := range []Operation{directRead(), {Kind: OpCreate, Database: "db", Container: "c", Body: []byte(`{"id":"2","pk":"a"}`)}} {
				res, err := c.Execute(context.Background(), op)
				var ie *InputError
				if !errors.As(err, &ie) || !strings.Contains(err.Error(), "a "+level+" account") || !strings.Contains(err.Error(), "--connection-mode gateway") {
					t.Fatalf("%s: error %v, want an input error naming %s and gateway mode", op.Kind, err, level)
				}
				if n := len(res.Diagnostics.Attempts); n != 0 {
					t.Errorf("%s: %d attempts sent, want none", op.Kind, n)
				}
			}
		})
	}
}

// replicaMoveWindow moves a secondary replica of the item's partition in East US (410
// from then on; the gateway keeps handing out the old addresses for 2 s) and reads the
// item sequentially for most of that window. It returns how many reads went to the
// moved replica after its first 410, the number of reads, and their p99.
func replicaMoveWindow(t *testing.T, noHealth bool) (afterFirst410, reads int, p99 time.Duration) {
	srv, c := directClient(t, noHealth)
	ctx := context.Background()
	if _, err := c.Execute(ctx, directRead()); err != nil { // warm the address cache
		t.Fatal(err)
	}
	first, err := c.Execute(ctx, directRead())
	if err != nil {
		t.Fatal(err)
	}
	rangeOf := ""
	for _, set := range srv.Replicas() {
		for _, r := range set.Replicas {
			if strings.TrimRight(r.Address, "/") == first.Diagnostics.Attempts[0].Endpoint {
				rangeOf = set.Range
			}
		}
	}
	move, err := srv.MoveReplica(emulator.ReplicaMove{Region: "East US", Database: "db", Container: "c", Range: rangeOf, Replica: 1,
		Effect: emulator.MoveGone, RefreshDelay: faults.Duration(2 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	requestsTo := func(name string) int64 {
		for _, set := range srv.Replicas() {
			for _, r := range set.Replicas {
				if r.Name == name {
					return r.Requests
				}
			}
		}
		t.Fatalf("no replica %s", name)
		return 0
	}
	var lat []time.Duration
	firstGone := int64(-1)
	deadline := time.Now().Add(1500 * time.Millisecond)
	for time.Now().Before(deadline) {
		start := time.Now()
		res, err := c.Execute(ctx, directRead())
		lat = append(lat, time.Since(start))
		if err != nil {
			t.Fatalf("read during the move: %v", err)
		}
		if firstGone < 0 {
			for _, a := range res.Diagnostics.Attempts {
				if a.StatusCode == 410 {
					firstGone = requestsTo(move.OldReplica)
				}
			}
		}
	}
	if firstGone < 0 {
		t.Fatalf("no read met the moved replica in %d reads", len(lat))
	}
	if n := srv.ReplicaHTTPRequests(); n != 0 {
		t.Fatalf("%d HTTP requests reached a replica: the move must be met over RNTBD", n)
	}
	if tr := first.Diagnostics.Attempts[0].Transport; tr != "rntbd" {
		t.Fatalf("transport %q, want rntbd", tr)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return int(requestsTo(move.OldReplica) - firstGone), len(lat), lat[len(lat)*99/100]
}

func TestReplicaMoveIsRoutedAroundWithHealthAwareness(t *testing.T) {
	after, reads, p99 := replicaMoveWindow(t, false)
	t.Logf("health aware: %d of %d reads sent to the moved replica after its first 410; p99 %v", after, reads, p99)
	if after != 0 {
		t.Fatalf("%d reads went to a replica known to be gone", after)
	}
}

func TestWithoutHealthAwarenessAQuarterOfReadsHitTheMovedReplica(t *testing.T) {
	after, reads, p99 := replicaMoveWindow(t, true)
	share := float64(after) / float64(reads)
	t.Logf("no health awareness: %d of %d reads (%.1f%%) sent to the moved replica after its first 410; p99 %v", after, reads, 100*share, p99)
	if share < 0.15 || share > 0.35 {
		t.Fatalf("with 4 replicas chosen at random about a quarter of reads should hit the moved one, got %.1f%%", 100*share)
	}
}

// In direct mode a point read and a write go on after the item's range is merged with
// its neighbour, and again after the merged range splits: the retired range's
// replicas answer 410, the engine refreshes its routing and finds the range that holds
// the key now.
func TestDirectModeFollowsAMergeAndASplit(t *testing.T) {
	srv, c := directClient(t, false)
	ctx := context.Background()
	if _, err := c.Execute(ctx, directRead()); err != nil { // warm the routing and address caches
		t.Fatal(err)
	}
	ranges, _, err := c.PartitionKeyRanges(ctx, "db", "c", false, 0)
	if err != nil {
		t.Fatal(err)
	}
	pk, _ := cosmos.PK("a")
	held, _ := cosmos.RangeFor(cosmos.EffectivePartitionKey(pk), ranges)
	i := 0
	for j, r := range ranges {
		if r.ID == held.ID {
			i = j
		}
	}
	if i == len(ranges)-1 {
		i--
	}
	merged, err := srv.MergeRanges(emulator.MergeRequest{Database: "db", Container: "c", Ranges: []string{ranges[i].ID, ranges[i+1].ID}})
	if err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		res, err := c.Execute(ctx, directRead())
		if err != nil || !strings.Contains(string(res.Body), `"id":"1"`) {
			t.Fatalf("read %s: %v %s", when, err, res.Body)
		}
		if !strings.Contains(res.Diagnostics.Attempts[len(res.Diagnostics.Attempts)-1].Replica, "/replicas/") {
			t.Fatalf("read %s did not end at a replica: %+v", when, res.Diagnostics.Attempts)
		}
		w := Operation{Kind: OpUpsert, Database: "db", Container: "c", PartitionKey: pk, Body: []byte(`{"id":"2","pk":"a","when":"` + when + `"}`)}
		if _, err := c.Execute(ctx, w); err != nil {
			t.Fatalf("write %s: %v", when, err)
		}
	}
	check("after the merge")
	if _, err := srv.SplitRange(emulator.SplitRequest{Database: "db", Container: "c", Range: merged.Created[0].ID}); err != nil {
		t.Fatal(err)
	}
	check("after the split")
}

// A replica that stops answering over RNTBD (the move's "hang": its frames are read and
// never answered, the connection's other frames still are) costs one read one attempt
// timeout: that attempt times out, the replica is marked unhealthy, and the read is
// answered by another replica of the region; no later read is sent to it.
func TestAHungReplicaCostsOneAttemptTimeoutOverRNTBD(t *testing.T) {
	srv, err := emulator.Start(emulator.Config{Databases: []emulator.DatabaseConfig{{ID: "db", Containers: []emulator.ContainerConfig{{ID: "c", PartitionKey: []string{"/pk"}}}}}}, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cred, _ := cosmos.NewMasterKey(srv.Key())
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred, TLSConfig: srv.ClientTLSConfig()}
	defer tr.CloseIdleConnections()
	timeouts := DefaultAttemptTimeouts().Capped(400 * time.Millisecond)
	c, err := New(Options{Endpoint: srv.Endpoint(), Transport: tr, Direct: true, AttemptTimeouts: &timeouts})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Execute(ctx, Operation{Kind: OpCreate, Database: "db", Container: "c", Body: []byte(`{"id":"1","pk":"a"}`)}); err != nil {
		t.Fatal(err)
	}
	res, err := c.Execute(ctx, directRead())
	if err != nil {
		t.Fatal(err)
	}
	rangeOf := ""
	for _, set := range srv.Replicas() {
		for _, r := range set.Replicas {
			if strings.TrimRight(r.Address, "/") == res.Diagnostics.Attempts[0].Endpoint {
				rangeOf = set.Range
			}
		}
	}
	move, err := srv.MoveReplica(emulator.ReplicaMove{Region: "East US", Database: "db", Container: "c", Range: rangeOf, Replica: 1,
		Effect: emulator.MoveHang, RefreshDelay: faults.Duration(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	hung := strings.TrimRight(move.OldAddress, "/")
	// Reads pick among the four replicas at random: go on until one met the hung
	// replica (in a few reads; 400 without is (3/4)^400 away), then 30 more.
	timedOut, after := 0, 0
	for i := 0; i < 400 && after < 30; i++ {
		res, err := c.Execute(ctx, directRead())
		if err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
		if timedOut > 0 {
			after++
		}
		for _, a := range res.Diagnostics.Attempts {
			if a.Endpoint != hung {
				continue
			}
			if !a.TimedOut || timedOut > 0 {
				t.Fatalf("read %d: attempt %+v to the hung replica (%d timed out before): only one attempt may go there, and it times out", i, a, timedOut)
			}
			timedOut++
		}
		if res.Diagnostics.Attempts[len(res.Diagnostics.Attempts)-1].StatusCode != 200 {
			t.Fatalf("read %d: %+v", i, res.Diagnostics.Attempts)
		}
	}
	if timedOut != 1 || after < 30 {
		t.Fatalf("%d attempts met the hung replica; %d reads after it", timedOut, after)
	}
}
