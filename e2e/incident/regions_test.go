package incident_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator/faults"
	"github.com/cosmosctl/cosmosctl/internal/clitest"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// regionsJSON is `regions -o json`, as far as these tests look.
type regionsJSON struct {
	Topology struct {
		Source    string    `json:"source"`
		FetchedAt time.Time `json:"fetched_at"`
		Error     string    `json:"error"`
	} `json:"topology"`
	Measurement *struct {
		Request   string  `json:"request"`
		Container string  `json:"container"`
		ID        string  `json:"id"`
		TimeoutMs float64 `json:"timeout_ms"`
		Note      string  `json:"note"`
	} `json:"measurement"`
	Regions []struct {
		Name       string   `json:"region"`
		Write      bool     `json:"write"`
		LatencyMs  *float64 `json:"latency_ms"`
		StatusCode *int     `json:"status_code"`
		TimedOut   bool     `json:"timed_out"`
		Health     struct {
			Read struct {
				Status   string         `json:"status"`
				Failures map[string]int `json:"failures"`
			} `json:"read"`
		} `json:"health"`
	} `json:"regions"`
	EffectiveWrites []string `json:"effective_write_regions"`
}

func regions(t *testing.T, args ...string) (regionsJSON, clitest.Result) {
	t.Helper()
	r := clitest.Run(t, "", append([]string{"regions", "-o", "json"}, args...)...)
	var rep regionsJSON
	if r.Code == 0 {
		if err := json.Unmarshal([]byte(r.Out), &rep); err != nil {
			t.Fatalf("regions -o json printed %q: %v", r.Out, err)
		}
	}
	return rep, r
}

func writeRegion(rep regionsJSON) string {
	for _, r := range rep.Regions {
		if r.Write {
			return r.Name
		}
	}
	return ""
}

// TestRegionsShowsAFailoverAtOnce: the saved topology is fresh for 5 minutes, and regions
// used to show it (the old write region) although it contacts every region anyway.
func TestRegionsShowsAFailoverAtOnce(t *testing.T) {
	srv := testkit.Account(t)
	if rep, r := regions(t, "--no-latency"); r.Code != 0 || writeRegion(rep) != "East US" {
		t.Fatalf("before the failover: exit %d, write region %q: %s", r.Code, writeRegion(rep), r.ErrOut)
	}
	if r := clitest.Run(t, "", "emulator", "failover", "West US", "--endpoint", srv.Endpoint()); r.Code != 0 {
		t.Fatalf("failover: %+v", r)
	}
	rep, r := regions(t)
	if r.Code != 0 || writeRegion(rep) != "West US" || strings.Join(rep.EffectiveWrites, ",") != "West US" || rep.Topology.Source != "account" {
		t.Fatalf("after the failover: exit %d, write region %q, writes go to %v, topology %+v: %s", r.Code, writeRegion(rep), rep.EffectiveWrites, rep.Topology, r.ErrOut)
	}
	table := clitest.Run(t, "", "regions", "--no-latency")
	if !strings.Contains(table.Out, "writes go to: West US\n") || strings.Contains(table.Out, "as saved") {
		t.Fatalf("the table after the failover:\n%s", table.Out)
	}
	for _, l := range strings.Split(table.Out, "\n") {
		if strings.HasPrefix(l, "West US") && !strings.Contains(l, " write ") {
			t.Fatalf("West US is not shown as the write region: %q", l)
		}
	}
}

// TestRegionsFallsBackToTheSavedTopologyAndSaysSo: when no endpoint of the account answers
// GET /, the topology an earlier command saved is shown, marked as such.
func TestRegionsFallsBackToTheSavedTopologyAndSaysSo(t *testing.T) {
	srv := testkit.Account(t)
	if _, r := regions(t, "--no-latency"); r.Code != 0 {
		t.Fatalf("saving the topology: %+v", r)
	}
	for _, region := range []string{"East US", "West US", "North Europe"} {
		if _, err := srv.AddFault(faults.Rule{Region: region, Operations: []string{faults.OpAccount}, Effect: faults.EffectStatus, Status: 503}); err != nil {
			t.Fatal(err)
		}
	}
	rep, r := regions(t)
	if r.Code != 0 || rep.Topology.Source != "saved" || rep.Topology.FetchedAt.IsZero() || !strings.Contains(rep.Topology.Error, "answered 503") ||
		writeRegion(rep) != "East US" {
		t.Fatalf("exit %d, topology %+v: %s", r.Code, rep.Topology, r.ErrOut)
	}
	table := clitest.Run(t, "", "regions")
	if table.Code != 0 || !strings.Contains(table.Out, "note: the account did not answer (") || !strings.Contains(table.Out, "the regions and their roles are as saved ") {
		t.Fatalf("the table does not say it shows a saved topology:\n%s%s", table.Out, table.ErrOut)
	}
}

// TestRegionsMeasuresADataRead: a region whose reads are slow, and whose gateway answers
// GET / at once, used to show as the fastest; its reads are what is measured now, and a
// read that does not answer within --e2e-timeout counts toward its region health.
func TestRegionsMeasuresADataRead(t *testing.T) {
	srv := testkit.Account(t)
	srv.Faults().SetLatency("East US", "read", faults.Distribution{Kind: faults.KindFixed, Value: faults.Duration(300 * time.Millisecond)})
	rep, r := regions(t)
	if r.Code != 0 || rep.Measurement == nil || rep.Measurement.Request != "read" || rep.Measurement.Container != "items" || rep.Measurement.ID != "cosmosctl-probe" {
		t.Fatalf("exit %d, measurement %+v: %s", r.Code, rep.Measurement, r.ErrOut)
	}
	latency := map[string]float64{}
	for _, reg := range rep.Regions {
		if reg.LatencyMs == nil || reg.StatusCode == nil || *reg.StatusCode != 404 {
			t.Fatalf("%s: latency %v, status %v: want the probe item's 404 and its time", reg.Name, reg.LatencyMs, reg.StatusCode)
		}
		latency[reg.Name] = *reg.LatencyMs
	}
	if latency["East US"] < 300 || latency["East US"] < latency["West US"] || latency["East US"] < latency["North Europe"] {
		t.Fatalf("latencies %v: East US's reads take 300ms, it is not the fastest", latency)
	}
	table := clitest.Run(t, "", "regions")
	if !strings.Contains(table.Out, `latency: one read of the item "cosmosctl-probe" in app/items`) {
		t.Fatalf("the table does not say what it measured:\n%s", table.Out)
	}

	// Slow answers count: 100ms is less than East US's 300ms.
	rep, r = regions(t, "--e2e-timeout", "100ms")
	for _, reg := range rep.Regions {
		timedOut := reg.Name == "East US"
		if reg.TimedOut != timedOut || (reg.LatencyMs == nil) != timedOut {
			t.Errorf("%s: timed out %v, latency %v", reg.Name, reg.TimedOut, reg.LatencyMs)
		}
		if timedOut && reg.Health.Read.Failures["timeout"] != 1 {
			t.Errorf("East US read health %+v: want its slow read counted as a timeout", reg.Health.Read)
		}
	}
	h := clitest.Run(t, "", "health", "-o", "json")
	if h.Code != 0 || !strings.Contains(h.Out, `"region": "East US"`) || !strings.Contains(h.Out, `"timeout": 1`) {
		t.Fatalf("health does not remember the slow read:\n%s%s", h.Out, h.ErrOut)
	}

	// Without a container, GET / is measured, and the output says it is not a read.
	rep, r = regions(t, "--database", "", "--container", "")
	if r.Code != 0 || rep.Measurement == nil || rep.Measurement.Request != "account" {
		t.Fatalf("exit %d, measurement %+v", r.Code, rep.Measurement)
	}
	table = clitest.Run(t, "", "regions", "--database", "", "--container", "")
	if !strings.Contains(table.Out, "latency: GET / to each regional endpoint, the account lookup: not a data read") {
		t.Fatalf("the table does not say GET / is no data read:\n%s", table.Out)
	}
}
