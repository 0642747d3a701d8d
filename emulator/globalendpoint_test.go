package emulator

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// Microsoft's emulator has one region whose endpoint is the global one: azcosmos's
// TestGlobalEndpointManagerEmulator expects the account to list https://127.0.0.1:8081/
// for "South Central US", read and write, with consistency Strong.
func TestOneRegionServedOnTheGlobalEndpoint(t *testing.T) {
	s := startTest(t, httpReplicas, func(c *Config) {
		c.Regions = []RegionConfig{{Name: "South Central US", GlobalEndpoint: true}}
		c.Consistency = "strong"
	})
	c := newTestClient(t, s.Key())
	ep := s.Endpoint()

	resp := c.mustDo(ep, "GET", "/", nil)
	var acct cosmos.Account
	if err := json.Unmarshal(resp.Body, &acct); err != nil {
		t.Fatal(err)
	}
	want := []cosmos.Location{{Name: "South Central US", Endpoint: ep + "/"}}
	if !equalLocations(acct.WritableLocations, want) || !equalLocations(acct.ReadableLocations, want) {
		t.Fatalf("locations: write %+v read %+v, want %+v for both", acct.WritableLocations, acct.ReadableLocations, want)
	}
	if acct.UserConsistencyPolicy.DefaultConsistencyLevel != "Strong" {
		t.Fatalf("consistency %q, want Strong", acct.UserConsistencyPolicy.DefaultConsistencyLevel)
	}
	if regions := s.Regions(); len(regions) != 1 || regions[0].Endpoint != ep || !regions[0].Write {
		t.Fatalf("regions %+v, want the one on the global endpoint", regions)
	}
	if got := resp.Header.Get(cosmos.HeaderServedRegion); got != "South Central US" {
		t.Fatalf("served region %q", got)
	}

	// Items, and replica addresses, which carry the global endpoint's URL.
	pk := pkHeader(`["a"]`)
	rng := createIn(t, c, ep, "1", "a")
	addrs := addressesOfRange(fetchAddresses(t, c, ep, rng, false), rng)
	if len(addrs) == 0 || !strings.HasPrefix(addrs[0], ep+"/apps/") {
		t.Fatalf("addresses %q, want them on %s", addrs, ep)
	}
	if st, _ := sc(t)(replicaDo(c, addrs[0], "GET", itemPath("1"), pk, nil)); st != 200 {
		t.Fatalf("read through replica %s → %d", addrs[0], st)
	}

	// A refuse fault on the region drops its requests, but the control API on the same
	// endpoint stays reachable to lift it.
	ctl, err := NewControlClient(ep, s.Key())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := ctl.AddFault(ctx, faults.Rule{ID: "down", Region: "South Central US", Effect: faults.EffectRefuse}); err != nil {
		t.Fatalf("add fault: %v", err)
	}
	if _, err := c.do(ep, "GET", itemPath("1"), pk, nil); err == nil {
		t.Fatal("a read while the region refuses succeeded")
	}
	if err := ctl.RemoveFault(ctx, "down"); err != nil {
		t.Fatalf("the control API after a refuse fault: %v", err)
	}
	if st, _ := sc(t)(c.do(ep, "GET", itemPath("1"), pk, nil)); st != 200 {
		t.Fatalf("read after the fault → %d", st)
	}
}

func equalLocations(a, b []cosmos.Location) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Endpoint != b[i].Endpoint {
			return false
		}
	}
	return true
}

func TestConsistencyAndGlobalEndpointSettings(t *testing.T) {
	two := []RegionConfig{{Name: "East US"}, {Name: "West US"}}
	cases := []struct {
		name    string
		cfg     Config
		want    string // the consistency level, or
		problem string // the start's error
	}{
		{"Session by default", Config{}, "Session", ""},
		{"a level in any case", Config{Consistency: "eventual"}, "Eventual", ""},
		{"ConsistentPrefix across regions", Config{Consistency: "ConsistentPrefix"}, "ConsistentPrefix", ""},
		{"Strong in one region", Config{Consistency: "Strong", Regions: []RegionConfig{{Name: "East US"}}}, "Strong", ""},
		{"not a level", Config{Consistency: "Linearizable"}, "", "is not a consistency level"},
		{"BoundedStaleness", Config{Consistency: "BoundedStaleness", Regions: []RegionConfig{{Name: "East US"}}}, "BoundedStaleness", ""},
		{"Strong across regions", Config{Consistency: "Strong", Regions: two}, "Strong", ""},
		{"Strong with multi-region writes", Config{Consistency: "Strong", MultiWrite: true, Regions: []RegionConfig{{Name: "East US"}}}, "", "cannot go with multi_write"},
		{"the global endpoint for one of two regions", Config{Regions: []RegionConfig{{Name: "East US", GlobalEndpoint: true}, {Name: "West US"}}}, "", "only an account of one region"},
		{"the global endpoint and a port", Config{Regions: []RegionConfig{{Name: "East US", GlobalEndpoint: true, Port: 9999}}}, "", "cannot have a port of its own"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.cfg.withDefaults()
			switch {
			case tc.problem != "" && (err == nil || !strings.Contains(err.Error(), tc.problem)):
				t.Fatalf("error %v, want one saying %q", err, tc.problem)
			case tc.problem == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.problem == "" && got.Consistency != tc.want:
				t.Fatalf("consistency %q, want %q", got.Consistency, tc.want)
			}
		})
	}
}

// The example scenario is the shape azcosmos's emulator tests expect.
func TestMicrosoftEmulatorScenario(t *testing.T) {
	var cfg Config
	if err := LoadScenario("../examples/microsoft-emulator.toml", &cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Port = 0 // the scenario's 8081 may be taken
	cfg.Databases = []DatabaseConfig{{ID: "db", Containers: []ContainerConfig{{ID: "items"}}}}
	s, err := Start(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if !strings.HasPrefix(s.Endpoint(), "https://") {
		t.Fatalf("endpoint %s, want https", s.Endpoint())
	}
	a := s.Account()
	if len(a.ReadableLocations) != 1 || a.ReadableLocations[0].Name != "South Central US" || a.ReadableLocations[0].Endpoint != s.Endpoint()+"/" ||
		a.UserConsistencyPolicy.DefaultConsistencyLevel != "Strong" || !s.cfg.AADEmulatorTokens {
		t.Fatalf("account %+v (aad_emulator_tokens %v), want South Central US on the global endpoint, Strong, emulator tokens", a, s.cfg.AADEmulatorTokens)
	}
	c, cerr := s.store.container("db", "items")
	if cerr != nil || len(c.partitions()) != 1 {
		t.Fatalf("container: %v, %d ranges, want 1", cerr, len(c.partitions()))
	}
}
