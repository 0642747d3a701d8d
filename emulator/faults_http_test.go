package emulator

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

func injectFault(t *testing.T, s *Server, r faults.Rule) faults.Rule {
	t.Helper()
	added, err := s.AddFault(r)
	if err != nil {
		t.Fatal(err)
	}
	return added
}

func firedCount(s *Server, id string) int {
	for _, r := range s.Faults().Rules() {
		if r.ID == id {
			return r.Fired
		}
	}
	return -1
}

func TestStatusFaultAnswersWithStatusSubstatusAndRetryAfter(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	pk := pkHeader(`["a"]`)
	c.mustDo(s.Endpoint(), "POST", itemsPath(), pk, `{"id":"1","pk":"a"}`)
	r := injectFault(t, s, faults.Rule{Region: "West US", Operations: []string{"read"}, Effect: "status", Status: 429, RetryAfter: faults.Duration(250 * time.Millisecond), Count: 1})
	resp, err := c.do(regionURL(t, s, "West US"), "GET", itemPath("1"), pk, nil)
	var ce *cosmos.Error
	if !errors.As(err, &ce) || ce.StatusCode != 429 || ce.RetryAfter != 250*time.Millisecond {
		t.Fatalf("throttled read → %v (%+v)", err, ce)
	}
	if resp.Header.Get(cosmos.HeaderRetryAfterMs) != "250" {
		t.Fatalf("x-ms-retry-after-ms = %q", resp.Header.Get(cosmos.HeaderRetryAfterMs))
	}
	if st, _ := code(c.mustDo(regionURL(t, s, "West US"), "GET", itemPath("1"), pk)); st != 200 {
		t.Fatalf("after its count the rule must stop firing; read → %d", st)
	}
	if st, _ := code(c.mustDo(regionURL(t, s, "East US"), "GET", itemPath("1"), pk)); st != 200 {
		t.Fatal("a rule for West US must not touch East US")
	}
	if n := firedCount(s, r.ID); n != 1 {
		t.Fatalf("rule fired %d times, want 1", n)
	}
}

func TestDelayFaultAndLatencyModelSlowTheirRegionOnly(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	pk := pkHeader(`["a"]`)
	c.mustDo(s.Endpoint(), "POST", itemsPath(), pk, `{"id":"1","pk":"a"}`)
	if err := s.Faults().SetLatency("North Europe", "reads", faults.Distribution{Kind: "fixed", Value: faults.Duration(150 * time.Millisecond)}); err != nil {
		t.Fatal(err)
	}
	injectFault(t, s, faults.Rule{Region: "North Europe", Operations: []string{"read"}, Effect: "delay", Delay: faults.Distribution{Kind: "fixed", Value: faults.Duration(100 * time.Millisecond)}})
	start := time.Now()
	c.mustDo(regionURL(t, s, "North Europe"), "GET", itemPath("1"), pk)
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Fatalf("read took %v; base latency 150ms plus a 100ms delay rule must add up", d)
	}
	// Writes in the write region are not slowed by a read latency elsewhere.
	if st, _ := code(c.mustDo(s.Endpoint(), "PUT", itemPath("1"), pk, `{"id":"1","pk":"a"}`)); st != 200 {
		t.Fatal("replace failed")
	}
}

func TestHangFaultHoldsTheRequestUntilTheClientGivesUp(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	r := injectFault(t, s, faults.Rule{Region: "East US", Operations: []string{"read"}, Effect: "hang"})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := c.tr.Do(ctx, regionURL(t, s, "East US"), &cosmos.Request{Method: "GET", Path: itemPath("1"), Header: hdr(pkHeader(`["a"]`))})
	var ne *cosmos.NetworkError
	if !errors.As(err, &ne) || !errors.Is(err, context.DeadlineExceeded) || !ne.Sent {
		t.Fatalf("hung read → %v, want a sent request ended by the client's deadline", err)
	}
	if firedCount(s, r.ID) != 1 {
		t.Fatal("hang rule did not fire")
	}
}

func TestRefuseFaultTakesTheRegionDown(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	pk := pkHeader(`["a"]`)
	west := regionURL(t, s, "West US")
	c.mustDo(s.Endpoint(), "POST", itemsPath(), pk, `{"id":"1","pk":"a"}`)
	// Warm a keep-alive connection: the outage must cut it too.
	c.mustDo(west, "GET", itemPath("1"), pk)
	r := injectFault(t, s, faults.Rule{Region: "West US", Effect: "refuse"})
	for i := 0; i < 3; i++ {
		_, err := c.do(west, "GET", itemPath("1"), pk, nil)
		var ne *cosmos.NetworkError
		if !errors.As(err, &ne) {
			t.Fatalf("attempt %d on a down region → %v, want a network error", i, err)
		}
	}
	if st, _ := code(c.mustDo(regionURL(t, s, "East US"), "GET", itemPath("1"), pk)); st != 200 {
		t.Fatal("other regions must stay up")
	}
	s.Faults().Remove(r.ID)
	if st, _ := code(c.mustDo(west, "GET", itemPath("1"), pk)); st != 200 {
		t.Fatal("region must come back when the rule is removed")
	}
}

func TestDropResponseAppliesTheWriteButNeverAnswers(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	pk := pkHeader(`["a"]`)
	injectFault(t, s, faults.Rule{Operations: []string{"create"}, Effect: "drop-response", Count: 1})
	_, err := c.do(s.Endpoint(), "POST", itemsPath(), pk, `{"id":"amb","pk":"a"}`)
	var ne *cosmos.NetworkError
	if !errors.As(err, &ne) || !ne.Sent {
		t.Fatalf("dropped response → %v, want a network error after sending", err)
	}
	if st, _ := code(c.mustDo(s.Endpoint(), "GET", itemPath("amb"), pk)); st != 200 {
		t.Fatal("the write behind a dropped response must have been applied")
	}
	if st, _ := code(c.mustDo(s.Endpoint(), "POST", itemsPath(), pk, `{"id":"amb","pk":"a"}`)); st != 409 {
		t.Fatalf("retrying the ambiguous create must see the conflict, got %d", st)
	}
}

func TestControlAPIRequiresTheKeyAndTheGlobalEndpoint(t *testing.T) {
	s := startTest(t)
	wrong, _ := NewControlClient(s.Endpoint(), "dsZQi3KtZmCv1ljt3VNWNm7sQUF1y5rJfC6kv5JiwvW0EndXdDku/dkKBp8/ufDToSxLzR4y+O/0H/t4bQtVNw==")
	if _, err := wrong.AddFault(t.Context(), faults.Rule{Effect: "refuse"}); err == nil {
		t.Fatal("control API accepted a request signed with the wrong key")
	}
	if len(s.Faults().Rules()) != 0 {
		t.Fatal("an unauthorised control call changed the faults")
	}
	regional, _ := NewControlClient(regionURL(t, s, "East US"), s.Key())
	if _, err := regional.State(t.Context()); err == nil {
		t.Fatal("control API must be on the global endpoint only")
	}
	ctl, _ := NewControlClient(s.Endpoint(), s.Key())
	added, err := ctl.AddFault(t.Context(), faults.Rule{Region: "east us", Effect: "status", Status: 503, Operations: []string{"reads"}})
	if err != nil || added.ID == "" {
		t.Fatalf("add fault: %v", err)
	}
	if _, err := ctl.AddFault(t.Context(), faults.Rule{Region: "Mars", Effect: "refuse"}); err == nil || !strings.Contains(err.Error(), "East US") {
		t.Fatalf("unknown region must be refused with the valid names: %v", err)
	}
	if _, err := ctl.AddFault(t.Context(), faults.Rule{Effect: "status", Status: 42}); err == nil {
		t.Fatal("invalid rule accepted")
	}
	if _, err := ctl.SetLatency(t.Context(), faults.LatencySpec{Region: "West US", Operation: "reads", Distribution: faults.Distribution{Kind: "lognormal", P50: faults.Duration(5 * time.Millisecond), P99: faults.Duration(40 * time.Millisecond)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ctl.SetReplicationLag(t.Context(), faults.Duration(time.Second)); err != nil {
		t.Fatal(err)
	}
	st, err := ctl.State(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Faults) != 1 || len(st.Latency) != 1 || time.Duration(st.ReplicationLag) != time.Second {
		t.Fatalf("state = %+v", st)
	}
	if err := ctl.RemoveFault(t.Context(), added.ID); err != nil {
		t.Fatal(err)
	}
	if err := ctl.RemoveFault(t.Context(), added.ID); err == nil {
		t.Fatal("removing a missing fault must fail")
	}
}

func TestScenarioFileConfiguresTheEmulator(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "brownout.toml")
	scenario := `
account = "rehearsal"
replication_lag = "250ms"
ranges = 2
seed = 7

[[regions]]
name = "West Europe"
[[regions]]
name = "North Europe"

[[databases]]
id = "shop"
[[databases.containers]]
id = "orders"
partition_key = ["/customerId"]

[[latency]]
region = "North Europe"
operation = "reads"
kind = "lognormal"
p50 = "5ms"
p99 = "40ms"

[[fault]]
region = "West Europe"
operations = ["read"]
probability = 0.05
effect = "delay"
delay = { kind = "uniform", min = "500ms", max = "2s" }
`
	if err := os.WriteFile(path, []byte(scenario), 0o600); err != nil {
		t.Fatal(err)
	}
	var cfg Config
	if err := LoadScenario(path, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Port = 0
	s, err := Start(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st := s.State()
	if st.Account != "rehearsal" || len(st.Regions) != 2 || st.Regions[0].Name != "West Europe" || !st.Regions[0].Write {
		t.Fatalf("state = %+v", st)
	}
	if len(st.Faults) != 1 || len(st.Latency) != 1 || time.Duration(st.ReplicationLag) != 250*time.Millisecond {
		t.Fatalf("faults/latency/lag = %+v %+v %v", st.Faults, st.Latency, st.ReplicationLag)
	}
	c := newTestClient(t, s.Key())
	resp := c.mustDo(s.Endpoint(), "GET", cosmos.PKRangesPath("shop", "orders"), nil)
	if resp.StatusCode != 200 || !strings.Contains(string(resp.Body), `"_count":2`) {
		t.Fatalf("pkranges of the scenario's container: %d %s", resp.StatusCode, resp.Body)
	}

	bad := filepath.Join(dir, "typo.toml")
	_ = os.WriteFile(bad, []byte("[[fault]]\nregion = \"x\"\neffect = \"delay\"\ndelya = \"1s\"\n"), 0o600)
	var cfg2 Config
	if err := LoadScenario(bad, &cfg2); err == nil || !strings.Contains(err.Error(), "delya") {
		t.Fatalf("a misspelt key must be an error naming it: %v", err)
	}
	if err := LoadScenario(filepath.Join(dir, "missing.toml"), &cfg2); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("missing file: %v", err)
	}
}

func hdr(m map[string]string) map[string][]string {
	out := map[string][]string{}
	for k, v := range m {
		out[httpCanonical(k)] = []string{v}
	}
	return out
}

// A write-region outage drops the global endpoint's data requests (it is the write
// region's alias) while its control API stays reachable, so the outage can be ended.
func TestWriteRegionOutageKeepsTheControlAPIReachable(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	pk := pkHeader(`["a"]`)
	c.mustDo(s.Endpoint(), "POST", itemsPath(), pk, `{"id":"1","pk":"a"}`)
	ctl, _ := NewControlClient(s.Endpoint(), s.Key())
	added, err := ctl.AddFault(t.Context(), faults.Rule{Region: "East US", Effect: "refuse"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.do(s.Endpoint(), "GET", itemPath("1"), pk, nil)
	var ne *cosmos.NetworkError
	if !errors.As(err, &ne) {
		t.Fatalf("a data request to the global endpoint during the write region's outage → %v, want no answer", err)
	}
	if st, _ := code(c.mustDo(regionURL(t, s, "West US"), "GET", itemPath("1"), pk)); st != 200 {
		t.Fatal("read regions stay up")
	}
	if err := ctl.RemoveFault(t.Context(), added.ID); err != nil {
		t.Fatalf("the control API must stay reachable during the outage: %v", err)
	}
	if st, _ := code(c.mustDo(s.Endpoint(), "GET", itemPath("1"), pk)); st != 200 {
		t.Fatal("the global endpoint answers again once the fault is removed")
	}
}
