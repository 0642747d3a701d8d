package emulator

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// collRIDs reads the _rids of db/items, as an SDK learns them from the container.
func collRIDs(t *testing.T, c *testClient, endpoint string) (dbRID, collRID string) {
	t.Helper()
	resp := c.mustDo(endpoint, "GET", cosmos.ContainerPath("db", "items"), nil)
	var co cosmos.Container
	if err := json.Unmarshal(resp.Body, &co); err != nil {
		t.Fatal(err)
	}
	segs := strings.Split(strings.Trim(co.Self, "/"), "/")
	if len(segs) != 4 || segs[3] != co.RID {
		t.Fatalf("container _self %q", co.Self)
	}
	return segs[1], co.RID
}

// addressesRequest builds the SDKs' //addresses/ call, signed rid-based for the collection.
func addressesRequest(dbRID, collRID, ranges string, force bool) *cosmos.Request {
	q := url.Values{}
	q.Set("$resolveFor", "dbs/"+dbRID+"/colls/"+collRID+"/docs")
	q.Set("$filter", "protocol eq rntbd")
	if ranges != "" {
		q.Set("$partitionKeyRangeIds", ranges)
	}
	req := &cosmos.Request{Method: "GET", Path: "//addresses/", Query: q, Header: http.Header{},
		ResourceType: cosmos.TypeDocuments, ResourceLink: "dbs/" + dbRID + "/colls/" + collRID}
	if force {
		req.Header.Set(cosmos.HeaderForceRefresh, "true")
	}
	return req
}

func fetchAddresses(t *testing.T, c *testClient, endpoint, ranges string, force bool) []cosmos.Address {
	t.Helper()
	dbRID, collRID := collRIDs(t, c, endpoint)
	resp, err := c.tr.Do(context.Background(), endpoint, addressesRequest(dbRID, collRID, ranges, force))
	if err != nil {
		t.Fatalf("addresses: %v", err)
	}
	var feed cosmos.AddressFeed
	if err := json.Unmarshal(resp.Body, &feed); err != nil {
		t.Fatal(err)
	}
	return feed.Addresses
}

func addressesOfRange(addrs []cosmos.Address, rangeID string) []string {
	var out []string
	for _, a := range addrs {
		if a.PartitionKeyRangeID == rangeID {
			out = append(out, a.PhysicalURI)
		}
	}
	return out
}

// replicaDo sends a request to a replica address; path is the resource path (/dbs/…).
func replicaDo(c *testClient, address, method, path string, hdr map[string]string, body any) (*cosmos.Response, error) {
	return c.do(address, method, path, hdr, body)
}

// rangeOf creates an item and returns the range its partition key lives in.
func createIn(t *testing.T, c *testClient, endpoint, id, pk string) string {
	t.Helper()
	resp := c.mustDo(endpoint, "POST", itemsPath(), pkHeader(`["`+pk+`"]`), `{"id":"`+id+`","pk":"`+pk+`"}`)
	if resp.StatusCode != 201 {
		t.Fatalf("create %s: %d", id, resp.StatusCode)
	}
	return resp.Header.Get(cosmos.HeaderPartitionKeyRangeID)
}

func replicaByAddress(t *testing.T, s *Server, address string) ReplicaInfo {
	t.Helper()
	for _, set := range s.Replicas() {
		for _, r := range set.Replicas {
			if r.Address == address {
				return r
			}
		}
	}
	t.Fatalf("no replica with address %s", address)
	return ReplicaInfo{}
}

// httpReplicas keeps the legacy address feed (http replica addresses on the regional
// port): these tests check replica semantics over HTTP; rntbd_test.go checks them over
// RNTBD.
func httpReplicas(c *Config) { c.ReplicaProtocol = ReplicaProtocolHTTP }

var addressPattern = regexp.MustCompile(`^http://127\.0\.0\.1:\d+/apps/cosmosctl-emulator/services/[A-Za-z0-9+=-]+/partitions/\d+/replicas/\d+[ps]/$`)

func TestAddressesFeedHasTheWireShape(t *testing.T) {
	s := startTest(t, httpReplicas)
	c := newTestClient(t, s.Key())
	east := regionURL(t, s, "East US")
	dbRID, collRID := collRIDs(t, c, east)
	resp, err := c.tr.Do(context.Background(), east, addressesRequest(dbRID, collRID, "0", false))
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string][]map[string]any
	if err := json.Unmarshal(resp.Body, &raw); err != nil {
		t.Fatalf("%v: %s", err, resp.Body)
	}
	entries, ok := raw["Addresss"]
	if !ok || len(entries) != 4 {
		t.Fatalf("want 4 entries under \"Addresss\": %s", resp.Body)
	}
	for _, e := range entries {
		for _, f := range []string{"isPrimary", "protocol", "physcialUri", "partitionKeyRangeId", "partitionIndex"} {
			if _, ok := e[f]; !ok {
				t.Errorf("address entry lacks %q: %v", f, e)
			}
		}
	}

	check := func(addrs []cosmos.Address, ranges ...string) {
		t.Helper()
		if len(addrs) != 4*len(ranges) {
			t.Fatalf("%d addresses for ranges %v, want %d", len(addrs), ranges, 4*len(ranges))
		}
		seen := map[string]bool{}
		for _, rg := range ranges {
			primaries := 0
			for _, a := range addrs {
				if a.PartitionKeyRangeID != rg {
					continue
				}
				if !addressPattern.MatchString(a.PhysicalURI) || !strings.Contains(a.PhysicalURI, "/services/"+collRID+"/partitions/"+rg+"/") {
					t.Errorf("address %q does not have the documented form", a.PhysicalURI)
				}
				if a.Protocol != "http" || a.PartitionIndex != rg {
					t.Errorf("protocol %q, partitionIndex %q", a.Protocol, a.PartitionIndex)
				}
				if a.IsPrimary {
					primaries++
					if !strings.HasSuffix(a.PhysicalURI, "p/") {
						t.Errorf("primary address %q must end in p/", a.PhysicalURI)
					}
				} else if !strings.HasSuffix(a.PhysicalURI, "s/") {
					t.Errorf("secondary address %q must end in s/", a.PhysicalURI)
				}
				if seen[a.PhysicalURI] {
					t.Errorf("address %q listed twice", a.PhysicalURI)
				}
				seen[a.PhysicalURI] = true
				if !strings.HasPrefix(a.PhysicalURI, east+"/") {
					t.Errorf("address %q is not on the region's port %s", a.PhysicalURI, east)
				}
			}
			if primaries != 1 {
				t.Errorf("range %s has %d primaries", rg, primaries)
			}
		}
	}
	check(fetchAddresses(t, c, east, "0", false), "0")
	check(fetchAddresses(t, c, east, "0,1", false), "0", "1")
	check(fetchAddresses(t, c, east, "", false), "0", "1", "2", "3")

	// The same range in another region is another replica set on that region's port.
	west := fetchAddresses(t, c, regionURL(t, s, "West US"), "0", false)
	if len(west) != 4 || !strings.HasPrefix(west[0].PhysicalURI, regionURL(t, s, "West US")+"/") {
		t.Fatalf("West US addresses %v", west)
	}
	// The global endpoint answers as the write region.
	global := fetchAddresses(t, c, s.Endpoint(), "0", false)
	if strings.Join(addressesOfRange(global, "0"), ",") != strings.Join(addressesOfRange(fetchAddresses(t, c, east, "0", false), "0"), ",") {
		t.Fatalf("global endpoint must return the write region's set: %v", global)
	}

	// .NET signs the call with the bare, lower-cased collection rid; names work too.
	req := addressesRequest(dbRID, collRID, "0", false)
	req.ResourceLink = strings.ToLower(collRID)
	if _, err := c.tr.Do(context.Background(), east, req); err != nil {
		t.Fatalf("rid-signed (lower case) addresses call: %v", err)
	}
	req = addressesRequest("db", "items", "1", false)
	if resp, err := c.tr.Do(context.Background(), east, req); err != nil || !strings.Contains(string(resp.Body), `"partitionKeyRangeId":"1"`) {
		t.Fatalf("name-based addresses call: %v", err)
	}
	req = addressesRequest(dbRID, collRID, "0", false)
	req.ResourceLink = "dbs/" + dbRID + "/colls/other"
	if st, _ := sc(t)(c.tr.Do(context.Background(), east, req)); st != 401 {
		t.Fatalf("addresses call signed for another collection → %d, want 401", st)
	}
	if st, sub := sc(t)(c.tr.Do(context.Background(), east, addressesRequest(dbRID, collRID, "0,9", false))); st != 410 || sub != cosmos.SubPartitionKeyRangeGone {
		t.Fatalf("unknown range → %d/%d, want 410/1002", st, sub)
	}
	if st, _ := sc(t)(c.tr.Do(context.Background(), east, addressesRequest(dbRID, "AAAAAAAAAAA=", "0", false))); st != 404 {
		t.Fatalf("unknown collection → %d, want 404", st)
	}
}

func TestReplicaAddressServesItemsAndCountsRequests(t *testing.T) {
	s := startTest(t, httpReplicas)
	c := newTestClient(t, s.Key())
	east := regionURL(t, s, "East US")
	rng := createIn(t, c, s.Endpoint(), "1", "a")
	addrs := addressesOfRange(fetchAddresses(t, c, east, rng, false), rng)
	pk := pkHeader(`["a"]`)

	viaGateway := c.mustDo(east, "GET", itemPath("1"), pk)
	resp, err := replicaDo(c, addrs[2], "GET", itemPath("1"), pk, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("read through a secondary: %v", err)
	}
	if string(resp.Body) != string(viaGateway.Body) || resp.Region != "East US" {
		t.Fatalf("replica read %s (region %q), gateway read %s", resp.Body, resp.Region, viaGateway.Body)
	}
	want := replicaByAddress(t, s, addrs[2])
	if got := resp.Header.Get(HeaderServedReplica); got != want.Name || want.Name != rng+":"+itoa(want.ID) {
		t.Fatalf("served-by header %q, replica name %q", got, want.Name)
	}
	if want.Requests != 1 || want.Index != 2 || want.Primary || want.State != ReplicaServing {
		t.Fatalf("replica after one read: %+v", want)
	}
	if other := replicaByAddress(t, s, addrs[1]); other.Requests != 0 {
		t.Fatalf("another replica counted %d requests", other.Requests)
	}

	// Writes go to the primary; queries read the replica's range.
	if st, _ := sc(t)(replicaDo(c, addrs[0], "PUT", itemPath("1"), pk, `{"id":"1","pk":"a","v":2}`)); st != 200 {
		t.Fatalf("replace through the primary → %d", st)
	}
	q := merge(pk, map[string]string{cosmos.HeaderIsQuery: "true", "Content-Type": "application/query+json"})
	resp, err = replicaDo(c, addrs[1], "POST", itemsPath(), q, `{"query":"SELECT * FROM c"}`)
	if err != nil || !strings.Contains(string(resp.Body), `"v":2`) {
		t.Fatalf("query through a replica: %v %s", err, resp.Body)
	}
	if st, _ := sc(t)(replicaDo(c, addrs[1], "GET", itemsPath(), nil, nil)); st != 200 {
		t.Fatalf("read feed through a replica → %d", st)
	}

	// The signature covers the resource path after the address, not the address.
	u, _ := url.Parse(addrs[2])
	if st, _ := sc(t)(c.do(east, "GET", strings.TrimSuffix(u.Path, "/")+itemPath("1"), pk, nil)); st != 401 {
		t.Fatalf("request signed over the address prefix → %d, want 401", st)
	}
	// A replica answers on its own region's port only, and only at addresses handed out.
	if st, _ := sc(t)(c.do(regionURL(t, s, "West US")+strings.TrimSuffix(u.Path, "/"), "GET", itemPath("1"), pk, nil)); st != 404 {
		t.Fatalf("East US replica on the West US port → %d, want 404", st)
	}
	bogus := strings.Replace(addrs[2], "/replicas/", "/replicas/9", 1)
	if st, _ := sc(t)(replicaDo(c, bogus, "GET", itemPath("1"), pk, nil)); st != 404 {
		t.Fatalf("unknown replica → %d, want 404", st)
	}
	if st, _ := sc(t)(replicaDo(c, addrs[2], "GET", cosmos.ContainerPath("db", "items"), nil, nil)); st != 404 {
		t.Fatalf("metadata through a replica → %d, want 404", st)
	}
	if got := replicaByAddress(t, s, addrs[2]).Requests; got != 2 {
		t.Fatalf("replica counted %d requests, want 2 (a read and a metadata attempt)", got)
	}
}

// sc adapts statusOf to calls that return (response, error).
func sc(t testing.TB) func(*cosmos.Response, error) (int, int) {
	return func(resp *cosmos.Response, err error) (int, int) {
		t.Helper()
		return statusOf(t, resp, err)
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

func TestReplicaOfAnotherRangeAnswersPartitionKeyRangeGone(t *testing.T) {
	s := startTest(t, httpReplicas)
	c := newTestClient(t, s.Key())
	east := regionURL(t, s, "East US")
	rng := createIn(t, c, s.Endpoint(), "1", "a")
	other := "0"
	if rng == "0" {
		other = "1"
	}
	addr := addressesOfRange(fetchAddresses(t, c, east, other, false), other)[0]
	pk := pkHeader(`["a"]`)
	for _, tc := range []struct {
		method, path string
		hdr          map[string]string
		body         any
	}{
		{"GET", itemPath("1"), pk, nil},
		{"PUT", itemPath("1"), pk, `{"id":"1","pk":"a"}`},
		{"POST", itemsPath(), pk, `{"id":"2","pk":"a"}`},
		{"DELETE", itemPath("1"), pk, nil},
		{"POST", itemsPath(), merge(pk, map[string]string{cosmos.HeaderIsQuery: "true", "Content-Type": "application/query+json"}), `{"query":"SELECT * FROM c"}`},
	} {
		if st, sub := sc(t)(replicaDo(c, addr, tc.method, tc.path, tc.hdr, tc.body)); st != 410 || sub != cosmos.SubPartitionKeyRangeGone {
			t.Errorf("%s %s on a replica of range %s (item in %s) → %d/%d, want 410/1002", tc.method, tc.path, other, rng, st, sub)
		}
	}
	if st, _ := code(c.mustDo(east, "GET", itemPath("1"), pk)); st != 200 {
		t.Fatal("a misrouted write must not have changed anything")
	}
}

func TestReplicaScopedFaultRuleFiresOnlyForThatReplica(t *testing.T) {
	s := startTest(t, httpReplicas)
	c := newTestClient(t, s.Key())
	east := regionURL(t, s, "East US")
	rng := createIn(t, c, s.Endpoint(), "1", "a")
	addrs := addressesOfRange(fetchAddresses(t, c, east, rng, false), rng)
	target := replicaByAddress(t, s, addrs[1])
	rule := injectFault(t, s, faults.Rule{Replica: target.Name, Operations: []string{"reads"}, Effect: "status", Status: 503})
	pk := pkHeader(`["a"]`)

	if st, _ := sc(t)(replicaDo(c, addrs[1], "GET", itemPath("1"), pk, nil)); st != 503 {
		t.Fatalf("read on the faulted replica → %d, want 503", st)
	}
	for _, a := range []string{addrs[0], addrs[2], addrs[3]} {
		if st, _ := sc(t)(replicaDo(c, a, "GET", itemPath("1"), pk, nil)); st != 200 {
			t.Fatalf("read on another replica %s → %d", a, st)
		}
	}
	if st, _ := code(c.mustDo(east, "GET", itemPath("1"), pk)); st != 200 {
		t.Fatal("a replica rule must not touch gateway traffic")
	}
	if st, _ := code(c.mustDo(s.Endpoint(), "GET", itemPath("1"), pk)); st != 200 {
		t.Fatal("a replica rule must not touch the global endpoint")
	}
	if n := firedCount(s, rule.ID); n != 1 {
		t.Fatalf("rule fired %d times, want 1", n)
	}
}

func TestReplicaMoveGoneThenGatewayRefreshes(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
	s := startWithClock(t, clk, httpReplicas)
	c := newTestClientAt(t, s.Key(), clk)
	east := regionURL(t, s, "East US")
	rng := createIn(t, c, s.Endpoint(), "1", "a")
	pk := pkHeader(`["a"]`)
	before := addressesOfRange(fetchAddresses(t, c, east, rng, false), rng)
	old := before[1]

	st, err := s.MoveReplica(ReplicaMove{Region: "east us", Database: "db", Container: "items", Range: rng, After: faults.Duration(5 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if st.State != "pending" || st.OldAddress != old || st.NewAddress == old || st.Move.Replica != 1 || st.Move.Effect != MoveGone ||
		time.Duration(st.Move.RefreshDelay) != DefaultMoveRefreshDelay || st.Move.Region != "East US" {
		t.Fatalf("move status %+v", st)
	}
	if code, _ := sc(t)(replicaDo(c, old, "GET", itemPath("1"), pk, nil)); code != 200 {
		t.Fatalf("before After the old replica serves; got %d", code)
	}

	clk.Advance(5 * time.Second) // the move happens
	if code, sub := sc(t)(replicaDo(c, old, "GET", itemPath("1"), pk, nil)); code != 410 || sub != 0 {
		t.Fatalf("moved replica → %d/%d, want 410/0", code, sub)
	}
	if code, _ := sc(t)(replicaDo(c, old, "PUT", itemPath("1"), pk, `{"id":"1","pk":"a"}`)); code != 410 {
		t.Fatalf("every request to a moved replica is gone, got %d", code)
	}
	for _, force := range []bool{false, true} {
		if got := addressesOfRange(fetchAddresses(t, c, east, rng, force), rng); strings.Join(got, ",") != strings.Join(before, ",") {
			t.Fatalf("during the refresh delay (force=%v) the gateway must return the old set: %v", force, got)
		}
	}

	clk.Advance(2 * time.Second) // the refresh delay has passed
	refreshed := addressesOfRange(fetchAddresses(t, c, east, rng, true), rng)
	if len(refreshed) != 4 || refreshed[1] != st.NewAddress || refreshed[0] != before[0] || refreshed[2] != before[2] || refreshed[3] != before[3] {
		t.Fatalf("force refresh after the delay: %v, want the old set with %s at index 1", refreshed, st.NewAddress)
	}
	if got := addressesOfRange(fetchAddresses(t, c, east, rng, false), rng); got[1] != old {
		t.Fatalf("a plain request must still get the cached old set: %v", got)
	}
	if moves := s.ReplicaMoves(); len(moves) != 1 || moves[0].State != "refreshable" {
		t.Fatalf("moves %+v", moves)
	}

	clk.Advance(time.Duration(DefaultGatewayCacheTTL) - time.Millisecond)
	if got := addressesOfRange(fetchAddresses(t, c, east, rng, false), rng); got[1] != old {
		t.Fatalf("just before the gateway cache expires a plain request still gets the old set: %v", got)
	}
	clk.Advance(time.Millisecond)
	if got := addressesOfRange(fetchAddresses(t, c, east, rng, false), rng); got[1] != st.NewAddress {
		t.Fatalf("after the gateway cache TTL plain requests get the new set: %v", got)
	}

	// The replacement serves, and the listing shows both.
	if code, _ := sc(t)(replicaDo(c, st.NewAddress, "GET", itemPath("1"), pk, nil)); code != 200 {
		t.Fatalf("replacement replica → %d", code)
	}
	if code, _ := sc(t)(replicaDo(c, old, "GET", itemPath("1"), pk, nil)); code != 410 {
		t.Fatalf("the old replica stays gone, got %d", code)
	}
	oldInfo, newInfo := replicaByAddress(t, s, old), replicaByAddress(t, s, st.NewAddress)
	if oldInfo.State != "moved (gone)" || oldInfo.Requests != 4 || newInfo.State != ReplicaServing || newInfo.Index != 1 || newInfo.ID == oldInfo.ID || newInfo.Requests != 1 {
		t.Fatalf("old %+v new %+v", oldInfo, newInfo)
	}
	// Other regions' sets did not move.
	if got := addressesOfRange(fetchAddresses(t, c, regionURL(t, s, "West US"), rng, true), rng); strings.Contains(strings.Join(got, ","), st.NewAddress) {
		t.Fatal("a move in East US must not change West US")
	}
}

func TestReplicaMoveHangAndRefuse(t *testing.T) {
	s := startTest(t, httpReplicas)
	c := newTestClient(t, s.Key())
	east := regionURL(t, s, "East US")
	rng := createIn(t, c, s.Endpoint(), "1", "a")
	addrs := addressesOfRange(fetchAddresses(t, c, east, rng, false), rng)
	pk := pkHeader(`["a"]`)

	if _, err := s.MoveReplica(ReplicaMove{Region: "East US", Database: "db", Container: "items", Range: rng, Replica: 2, Effect: MoveHang}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MoveReplica(ReplicaMove{Region: "East US", Database: "db", Container: "items", Range: rng, Replica: 3, Effect: MoveRefuse}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := c.tr.Do(ctx, addrs[2], &cosmos.Request{Method: "GET", Path: itemPath("1"), Header: hdr(pk)})
	var ne *cosmos.NetworkError
	if !errors.As(err, &ne) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("hanging replica → %v, want the client's deadline", err)
	}
	_, err = c.tr.Do(context.Background(), addrs[3], &cosmos.Request{Method: "GET", Path: itemPath("1"), Header: hdr(pk)})
	if !errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("refusing replica → %v, want a connection error", err)
	}
	if st, _ := sc(t)(replicaDo(c, addrs[1], "GET", itemPath("1"), pk, nil)); st != 200 {
		t.Fatal("the other replicas keep serving")
	}
	if info := replicaByAddress(t, s, addrs[2]); info.State != "moved (hang)" {
		t.Fatalf("hang replica %+v", info)
	}
	if info := replicaByAddress(t, s, addrs[3]); info.State != "moved (refuse)" {
		t.Fatalf("refuse replica %+v", info)
	}
}

func TestReplicaMovesOfTheSameIndexChain(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_800_000_000, 0))
	s := startWithClock(t, clk, func(c *Config) { httpReplicas(c); c.GatewayCacheTTL = faults.Duration(time.Second) })
	first, err := s.MoveReplica(ReplicaMove{Region: "East US", Database: "db", Container: "items", Primary: true, After: faults.Duration(10 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(first.OldAddress, "p/") || !strings.HasSuffix(first.NewAddress, "p/") || !first.Move.Primary || first.Move.Replica != 0 {
		t.Fatalf("primary move %+v", first)
	}
	if _, err := s.MoveReplica(ReplicaMove{Region: "East US", Database: "db", Container: "items", Primary: true, After: faults.Duration(5 * time.Second)}); err == nil {
		t.Fatal("a move taking effect before an earlier move of the same index must be refused")
	}
	second, err := s.MoveReplica(ReplicaMove{Region: "East US", Database: "db", Container: "items", Primary: true, After: faults.Duration(20 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if second.OldAddress != first.NewAddress {
		t.Fatalf("second move retires %s, want the first move's replacement %s", second.OldAddress, first.NewAddress)
	}
	clk.Advance(time.Minute)
	c := newTestClientAt(t, s.Key(), clk)
	if got := addressesOfRange(fetchAddresses(t, c, regionURL(t, s, "East US"), "0", false), "0"); got[0] != second.NewAddress {
		t.Fatalf("after both moves the primary is %s, want %s", got[0], second.NewAddress)
	}
	var set ReplicaSetInfo
	for _, rs := range s.Replicas() {
		if rs.Region == "East US" && rs.Range == "0" {
			set = rs
		}
	}
	if len(set.Replicas) != 6 || set.Replicas[0].Address != second.NewAddress || set.Replicas[4].State != "moved (gone)" || set.Replicas[5].State != "moved (gone)" {
		t.Fatalf("replica set after two moves: %+v", set)
	}
}

func TestReplicasListing(t *testing.T) {
	s := startTest(t, httpReplicas, func(c *Config) { c.Ranges = 2; c.Replicas = 3 })
	sets := s.Replicas()
	if len(sets) != 3*2 {
		t.Fatalf("%d sets, want 3 regions × 2 ranges", len(sets))
	}
	ids := map[int64]bool{}
	for _, set := range sets {
		if set.Database != "db" || set.Container != "items" || set.CollectionRID == "" || len(set.Replicas) != 3 {
			t.Fatalf("set %+v", set)
		}
		for i, r := range set.Replicas {
			if r.Index != i || r.Primary != (i == 0) || r.State != ReplicaServing || ids[r.ID] || r.Name != set.Range+":"+itoa(r.ID) {
				t.Fatalf("replica %+v", r)
			}
			ids[r.ID] = true
		}
	}
	// Replicas of the containers that exist at start are numbered in a fixed order:
	// regions as configured, containers, ranges, index.
	if sets[0].Region != "East US" || sets[0].Range != "0" || sets[0].Replicas[0].Name != "0:1" || sets[1].Replicas[2].Name != "1:6" || sets[2].Region != "West US" || sets[2].Replicas[0].ID != 7 {
		t.Fatalf("replica numbering: %+v", sets[:3])
	}
	ctl, _ := NewControlClient(s.Endpoint(), s.Key())
	if _, err := ctl.AddFault(t.Context(), faults.Rule{Replica: "1:6", Effect: "hang"}); err != nil {
		t.Fatalf("rule for an existing replica: %v", err)
	}
	for _, bad := range []string{"1:99", "0:6", "6", "x:y"} {
		if _, err := ctl.AddFault(t.Context(), faults.Rule{Replica: bad, Effect: "hang"}); err == nil || !strings.Contains(err.Error(), "/_emulator/replicas") {
			t.Errorf("rule for replica %q → %v, want a 400 pointing at the listing", bad, err)
		}
	}
	if _, err := s.AddFault(faults.Rule{Replica: "0:99", Effect: "hang"}); err == nil {
		t.Error("Server.AddFault must check the replica too")
	}
	viaAPI, err := ctl.Replicas(t.Context())
	if err != nil || len(viaAPI) != len(sets) || viaAPI[0].Replicas[0].Address != sets[0].Replicas[0].Address {
		t.Fatalf("control API replicas: %v %+v", err, viaAPI)
	}
	c := newTestClient(t, s.Key())
	if got := fetchAddresses(t, c, regionURL(t, s, "East US"), "", false); len(got) != 2*3 {
		t.Fatalf("with replicas = 3 the feed has %d addresses, want 6", len(got))
	}
	var acct cosmos.Account
	_ = json.Unmarshal(c.mustDo(s.Endpoint(), "GET", "/", nil).Body, &acct)
	if acct.UserReplicationPolicy.MaxReplicasetSize != 3 {
		t.Fatalf("account replica set size %d", acct.UserReplicationPolicy.MaxReplicasetSize)
	}
}

func TestReplicaMoveControlAPIValidatesAndRequiresTheKey(t *testing.T) {
	s := startTest(t, httpReplicas)
	ctl, _ := NewControlClient(s.Endpoint(), s.Key())
	ok := ReplicaMove{Region: "East US", Database: "db", Container: "items"}
	for _, tc := range []struct {
		name string
		m    func(ReplicaMove) ReplicaMove
		want string
	}{
		{"unknown region", func(m ReplicaMove) ReplicaMove { m.Region = "Mars"; return m }, `unknown region "Mars"; regions are "East US"`},
		{"missing region", func(m ReplicaMove) ReplicaMove { m.Region = ""; return m }, "region is required"},
		{"unknown container", func(m ReplicaMove) ReplicaMove { m.Container = "nope"; return m }, `container "nope" does not exist`},
		{"missing container", func(m ReplicaMove) ReplicaMove { m.Container = ""; return m }, "database and container are required"},
		{"unknown range", func(m ReplicaMove) ReplicaMove { m.Range = "7"; return m }, `unknown range "7"`},
		{"index too large", func(m ReplicaMove) ReplicaMove { m.Replica = 4; return m }, "replica index 4 is out of range"},
		{"negative index", func(m ReplicaMove) ReplicaMove { m.Replica = -1; return m }, "replica index -1 is out of range"},
		{"primary and index", func(m ReplicaMove) ReplicaMove { m.Primary = true; m.Replica = 2; return m }, "do not also set replica"},
		{"unknown effect", func(m ReplicaMove) ReplicaMove { m.Effect = "explode"; return m }, `unknown effect "explode"`},
	} {
		_, err := ctl.MoveReplica(t.Context(), tc.m(ok))
		var ce *cosmos.Error
		if !errors.As(err, &ce) || ce.StatusCode != 400 || !strings.Contains(ce.Message, tc.want) {
			t.Errorf("%s → %v, want 400 mentioning %q", tc.name, err, tc.want)
		}
	}
	// Unknown or malformed fields are refused rather than ignored.
	resp, err := newTestClient(t, s.Key()).do(s.Endpoint(), "POST", "/_emulator/replica-moves", nil, `{"region":"East US","database":"db","container":"items","refresh_dealy":"1s"}`)
	if st, _ := statusOf(t, resp, err); st != 400 || !strings.Contains(err.Error(), "refresh_dealy") {
		t.Fatalf("misspelt field → %v", err)
	}
	if len(s.ReplicaMoves()) != 0 {
		t.Fatal("invalid moves must not be registered")
	}

	wrong, _ := NewControlClient(s.Endpoint(), "dsZQi3KtZmCv1ljt3VNWNm7sQUF1y5rJfC6kv5JiwvW0EndXdDku/dkKBp8/ufDToSxLzR4y+O/0H/t4bQtVNw==")
	if _, err := wrong.MoveReplica(t.Context(), ok); err == nil {
		t.Fatal("a move signed with the wrong key was accepted")
	}
	if _, err := wrong.Replicas(t.Context()); err == nil {
		t.Fatal("the replica listing must require the key")
	}
	if len(s.ReplicaMoves()) != 0 {
		t.Fatal("an unauthorised call moved a replica")
	}

	st, err := ctl.MoveReplica(t.Context(), ReplicaMove{Region: "West US", Database: "db", Container: "items", Range: "2", Effect: MoveHang, RefreshDelay: faults.Duration(time.Second)})
	if err != nil || st.ID != "m1" || st.State != "moved" || st.Move.Range != "2" || !strings.Contains(st.OldAddress, "/partitions/2/") {
		t.Fatalf("move via the control API: %v %+v", err, st)
	}
	moves, err := ctl.ReplicaMoves(t.Context())
	if err != nil || len(moves) != 1 || moves[0].NewAddress != st.NewAddress {
		t.Fatalf("listing moves: %v %+v", err, moves)
	}
	state, err := ctl.State(t.Context())
	if err != nil || len(state.ReplicaMoves) != 1 {
		t.Fatalf("state lists moves: %v %+v", err, state.ReplicaMoves)
	}
}

func TestScenarioReplicaMoves(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "moves.toml")
	scenario := `
replicas = 4
gateway_cache_ttl = "10s"

[[databases]]
id = "db"
[[databases.containers]]
id = "items"
partition_key = ["/pk"]

[[replica_move]]
region = "East US"
database = "db"
container = "items"
range = "1"
replica = 2
effect = "refuse"
after = "30s"
refresh_delay = "5s"

[[fault]]
replica = "1:6"
operations = ["reads"]
effect = "status"
status = 503
`
	if err := os.WriteFile(path, []byte(scenario), 0o600); err != nil {
		t.Fatal(err)
	}
	var cfg Config
	if err := LoadScenario(path, &cfg); err != nil {
		t.Fatal(err)
	}
	clk := clock.NewFake(time.Unix(1_800_000_000, 0))
	httpReplicas(&cfg)
	s, err := Start(cfg, Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	moves := s.ReplicaMoves()
	if len(moves) != 1 || moves[0].State != "pending" || moves[0].Move.Effect != MoveRefuse ||
		!moves[0].GoneAt.Equal(clk.Now().Add(30*time.Second)) || !moves[0].PublishedAt.Equal(clk.Now().Add(45*time.Second)) {
		t.Fatalf("scenario moves %+v", moves)
	}
	// Ids are fixed: East US range 1 holds replicas 5–8, and the replacement is the first
	// id after every start-time replica (3 regions × 4 ranges × 4 replicas).
	if moves[0].OldReplica != "1:7" || moves[0].NewReplica != "1:49" {
		t.Fatalf("scenario move retires %s and brings in %s, want 1:7 and 1:49", moves[0].OldReplica, moves[0].NewReplica)
	}
	c := newTestClientAt(t, s.Key(), clk)
	c.mustDo(s.Endpoint(), "POST", itemsPath(), pkHeader(`["a"]`), `{"id":"1","pk":"a"}`)
	rng := "1"
	var faulted string
	for _, set := range s.Replicas() {
		if set.Region == "East US" && set.Range == rng {
			faulted = set.Replicas[1].Address
		}
	}
	// Pick a key in range 1 for the scenario's replica rule.
	for i := 0; ; i++ {
		pk := "k" + itoa(int64(i))
		if createIn(t, c, s.Endpoint(), "x"+pk, pk) == rng {
			if st, _ := sc(t)(replicaDo(c, faulted, "GET", itemPath("x"+pk), pkHeader(`["`+pk+`"]`), nil)); st != 503 {
				t.Fatalf("scenario fault on replica 1:6 → %d, want 503", st)
			}
			break
		}
	}
	clk.Advance(40 * time.Second)
	if m := s.ReplicaMoves()[0]; m.State != "refreshable" {
		t.Fatalf("after 40s the move is %q", m.State)
	}

	bad := cfg
	bad.ReplicaMoves = []ReplicaMove{{Region: "East US", Database: "db", Container: "items", Effect: "vanish"}}
	if _, err := Start(bad, Options{}); err == nil || !strings.Contains(err.Error(), `unknown effect "vanish"`) {
		t.Fatalf("a bad scenario move must stop the start: %v", err)
	}
	badRule := cfg
	badRule.ReplicaMoves = nil
	badRule.Faults = []faults.Rule{{Replica: "0:999", Effect: "hang"}}
	if _, err := Start(badRule, Options{}); err == nil || !strings.Contains(err.Error(), `"0:999" does not exist`) {
		t.Fatalf("a scenario fault naming a missing replica must stop the start: %v", err)
	}
	typo := filepath.Join(dir, "typo.toml")
	_ = os.WriteFile(typo, []byte("[[replica_move]]\nregion = \"East US\"\nrefresh_dealy = \"1s\"\n"), 0o600)
	var cfg2 Config
	if err := LoadScenario(typo, &cfg2); err == nil || !strings.Contains(err.Error(), "refresh_dealy") {
		t.Fatalf("a misspelt replica_move key must be an error naming it: %v", err)
	}
}

func TestReplicaOfARecreatedContainerAnswersNameCacheIsStale(t *testing.T) {
	s := startTest(t, httpReplicas)
	c := newTestClient(t, s.Key())
	east := regionURL(t, s, "East US")
	rng := createIn(t, c, s.Endpoint(), "1", "a")
	old := addressesOfRange(fetchAddresses(t, c, east, rng, false), rng)
	c.mustDo(s.Endpoint(), "DELETE", cosmos.ContainerPath("db", "items"), nil)
	c.mustDo(s.Endpoint(), "POST", "/dbs/db/colls", nil, `{"id":"items","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}`)
	createIn(t, c, s.Endpoint(), "1", "a")
	if st, sub := sc(t)(replicaDo(c, old[0], "GET", itemPath("1"), pkHeader(`["a"]`), nil)); st != 410 || sub != cosmos.SubNameCacheIsStale {
		t.Fatalf("replica of the deleted container → %d/%d, want 410/1000", st, sub)
	}
	fresh := addressesOfRange(fetchAddresses(t, c, east, rng, false), rng)
	if fresh[0] == old[0] {
		t.Fatal("the re-created container must have new replica addresses")
	}
	if st, _ := sc(t)(replicaDo(c, fresh[0], "GET", itemPath("1"), pkHeader(`["a"]`), nil)); st != 200 {
		t.Fatalf("replica of the re-created container → %d", st)
	}
}
