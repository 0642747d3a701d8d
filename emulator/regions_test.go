package emulator

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

func startWithClock(t *testing.T, clock faults.Clock, mutate func(*Config)) *Server {
	t.Helper()
	cfg := Config{Databases: []DatabaseConfig{{ID: "db", Containers: []ContainerConfig{{ID: "items", PartitionKey: []string{"/pk"}}}}}}
	if mutate != nil {
		mutate(&cfg)
	}
	s, err := Start(cfg, Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func regionURL(t *testing.T, s *Server, name string) string {
	t.Helper()
	u, ok := s.RegionEndpoint(name)
	if !ok {
		t.Fatalf("no region %s", name)
	}
	return u
}

func TestReplicationLagDelaysVisibilityInReadRegions(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
	s := startWithClock(t, clk, func(c *Config) { c.ReplicationLag = faults.Duration(2 * time.Second) })
	c := newTestClientAt(t, s.Key(), clk)
	pk := pkHeader(`["a"]`)
	east, west := regionURL(t, s, "East US"), regionURL(t, s, "west us")

	created, err := c.do(east, "POST", itemsPath(), pk, `{"id":"1","pk":"a","v":1}`)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := code(c.mustDo(east, "GET", itemPath("1"), pk)); st != 200 {
		t.Fatalf("write region read → %d, want 200 at once", st)
	}
	if st, _ := code(c.mustDo(west, "GET", itemPath("1"), pk)); st != 404 {
		t.Fatalf("read region before the lag → %d, want 404", st)
	}
	// A session read that demands the write gets 404/1002 from the lagging region.
	withSession := merge(pk, map[string]string{cosmos.HeaderSessionToken: created.SessionToken})
	if st, sub := code(c.mustDo(west, "GET", itemPath("1"), withSession)); st != 404 || sub != cosmos.SubReadSessionNotAvailable {
		t.Fatalf("session read in a lagging region → %d/%d, want 404/1002", st, sub)
	}
	clk.Advance(1999 * time.Millisecond)
	if st, _ := code(c.mustDo(west, "GET", itemPath("1"), pk)); st != 404 {
		t.Fatalf("read region just before the lag → %d, want 404", st)
	}
	clk.Advance(time.Millisecond)
	if st, _ := code(c.mustDo(west, "GET", itemPath("1"), withSession)); st != 200 {
		t.Fatalf("session read after the lag → %d, want 200", st)
	}

	// An update is visible in the write region at once, elsewhere the old version
	// stays until the lag passes.
	if _, err := c.do(east, "PUT", itemPath("1"), pk, `{"id":"1","pk":"a","v":2}`); err != nil {
		t.Fatal(err)
	}
	if v := versionOf(t, c.mustDo(west, "GET", itemPath("1"), pk)); v != 1 {
		t.Fatalf("read region sees v%d before the lag, want v1", v)
	}
	if v := versionOf(t, c.mustDo(east, "GET", itemPath("1"), pk)); v != 2 {
		t.Fatalf("write region sees v%d, want v2", v)
	}
	clk.Advance(2 * time.Second)
	if v := versionOf(t, c.mustDo(west, "GET", itemPath("1"), pk)); v != 2 {
		t.Fatalf("read region sees v%d after the lag, want v2", v)
	}
}

func TestWithoutLagEveryRegionSeesWritesAtOnce(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	pk := pkHeader(`["a"]`)
	c.mustDo(s.Endpoint(), "POST", itemsPath(), pk, `{"id":"1","pk":"a"}`)
	for _, r := range s.Regions() {
		resp := c.mustDo(r.Endpoint, "GET", itemPath("1"), pk)
		if resp.StatusCode != 200 || resp.Region != r.Name {
			t.Errorf("%s → %d served by %q", r.Name, resp.StatusCode, resp.Region)
		}
	}
}

func TestReadRegionsRefuseWritesWith403_3(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	resp, err := c.do(regionURL(t, s, "West US"), "POST", itemsPath(), pkHeader(`["a"]`), `{"id":"1","pk":"a"}`)
	if st, sub := statusOf(t, resp, err); st != 403 || sub != cosmos.SubWriteForbidden {
		t.Fatalf("write to a read region → %d/%d, want 403/3", st, sub)
	}
}

func TestFailoverMovesTheWriteRegion(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	pk := pkHeader(`["a"]`)
	east, west := regionURL(t, s, "East US"), regionURL(t, s, "West US")
	ctl, err := NewControlClient(s.Endpoint(), s.Key())
	if err != nil {
		t.Fatal(err)
	}
	acct, err := ctl.Failover(t.Context(), "west us")
	if err != nil {
		t.Fatal(err)
	}
	if acct.WritableLocations[0].Name != "West US" || acct.ReadableLocations[0].Name != "West US" {
		t.Fatalf("after failover GET / lists %v / %v", acct.WriteRegions(), acct.ReadRegions())
	}
	if st, sub := code(c.mustDo(east, "POST", itemsPath(), pk, `{"id":"1","pk":"a"}`)); st != 403 || sub != 3 {
		t.Fatalf("write to the old write region → %d/%d, want 403/3", st, sub)
	}
	resp := c.mustDo(west, "POST", itemsPath(), pk, `{"id":"1","pk":"a"}`)
	if resp.StatusCode != 201 {
		t.Fatalf("write to the new write region → %d", resp.StatusCode)
	}
	// The global endpoint follows the write region.
	if resp := c.mustDo(s.Endpoint(), "POST", itemsPath(), pk, `{"id":"2","pk":"a"}`); resp.StatusCode != 201 || resp.Region != "West US" {
		t.Fatalf("global endpoint write → %d in %s", resp.StatusCode, resp.Region)
	}
	if _, err := ctl.Failover(t.Context(), "Atlantis"); err == nil {
		t.Fatal("failover to an unknown region must fail")
	}
}

func TestMultiWriteAcceptsWritesEverywhere(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_800_000_000, 0))
	s := startWithClock(t, clk, func(c *Config) { c.MultiWrite = true; c.ReplicationLag = faults.Duration(time.Second) })
	c := newTestClientAt(t, s.Key(), clk)
	pk := pkHeader(`["a"]`)
	acct := s.Account()
	if !acct.EnableMultipleWriteLocations || len(acct.WritableLocations) != 3 {
		t.Fatalf("multi-write account lists %d writable regions", len(acct.WritableLocations))
	}
	for i, r := range s.Regions() {
		id := string(rune('a' + i))
		resp := c.mustDo(r.Endpoint, "POST", itemsPath(), pk, `{"id":"`+id+`","pk":"a"}`)
		if resp.StatusCode != 201 {
			t.Fatalf("write in %s → %d", r.Name, resp.StatusCode)
		}
		// Visible where it was written at once, elsewhere after the lag.
		if st, _ := code(c.mustDo(r.Endpoint, "GET", itemPath(id), pk)); st != 200 {
			t.Fatalf("own-region read in %s → %d", r.Name, st)
		}
		other := s.Regions()[(i+1)%3]
		if st, _ := code(c.mustDo(other.Endpoint, "GET", itemPath(id), pk)); st != 404 {
			t.Fatalf("%s sees %s's write before the lag", other.Name, r.Name)
		}
	}
	clk.Advance(time.Second)
	for _, r := range s.Regions() {
		for _, id := range []string{"a", "b", "c"} {
			if st, _ := code(c.mustDo(r.Endpoint, "GET", itemPath(id), pk)); st != 200 {
				t.Fatalf("%s does not see %s after the lag", r.Name, id)
			}
		}
	}
}

func (c *testClient) mustDo(endpoint, method, path string, hdr map[string]string, body ...any) *cosmos.Response {
	c.t.Helper()
	var b any
	if len(body) > 0 {
		b = body[0]
	}
	resp, err := c.do(endpoint, method, path, hdr, b)
	if resp == nil {
		c.t.Fatalf("%s %s: no response: %v", method, path, err)
	}
	return resp
}

func code(resp *cosmos.Response) (int, int) { return resp.StatusCode, resp.SubStatus }

func versionOf(t *testing.T, resp *cosmos.Response) int {
	t.Helper()
	if resp.StatusCode != 200 {
		t.Fatalf("read → %d: %s", resp.StatusCode, resp.Body)
	}
	var doc struct{ V int }
	_ = json.Unmarshal(resp.Body, &doc)
	return doc.V
}
