package output

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/workload"
)

func probeReplicaRows() []ProbeReplica {
	addr := func(id string) string {
		return "http://127.0.0.1:8082/apps/cosmosctl/services/AbCdAA==/partitions/2/replicas/" + id + "/"
	}
	ok := func(n int, p50 float64) workload.Summary {
		return workload.Summary{Count: n, ErrorsByStatus: map[string]int{}, P50Ms: workload.Ms(p50), P90Ms: workload.Ms(p50 * 2), P99Ms: workload.Ms(p50 * 3), P999Ms: workload.Ms(p50 * 3), MaxMs: workload.Ms(p50 * 4), RequestCharge: float64(n)}
	}
	return []ProbeReplica{
		{Region: "East US", Range: "2", Address: addr("9p"), Role: RolePrimary, Health: "connected", InReplicaSet: true, Summary: ok(25, 2)},
		{Region: "East US", Range: "2", Address: addr("10s"), Role: RoleSecondary, Health: "unhealthy", InReplicaSet: true,
			Summary: workload.Summary{Count: 25, Errors: 25, ErrorRate: 1, ErrorsByStatus: map[string]int{"410/0": 25}, P50Ms: workload.Ms(0.4), P90Ms: workload.Ms(0.6), P99Ms: workload.Ms(0.9), P999Ms: workload.Ms(0.9), MaxMs: workload.Ms(1.1)}},
		{Region: "East US", Range: "2", Address: addr("11s"), Role: RoleSecondary, Health: "unhealthy-pending", InReplicaSet: true, Summary: ok(25, 2.2)},
		{Region: "East US", Range: "2", Address: addr("12s"), Role: RoleSecondary, Health: "connected", InReplicaSet: true, Summary: ok(25, 2.1)},
		{Region: "West US", Range: "2", Address: addr("13s"), Role: RoleSecondary, Health: "unhealthy", InReplicaSet: false,
			Summary: workload.Summary{Count: 3, Errors: 3, ErrorRate: 1, ErrorsByStatus: map[string]int{"410/0": 3}, P50Ms: workload.Ms(61), P90Ms: workload.Ms(62), P99Ms: workload.Ms(62), P999Ms: workload.Ms(62), MaxMs: workload.Ms(62)}},
		{Region: "West US", Range: "2", Address: addr("14s"), Role: RoleSecondary, Health: "unknown", InReplicaSet: true, Summary: workload.Summary{ErrorsByStatus: map[string]int{}}},
	}
}

func TestProbeReplicasGolden(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ascii bool
	}{{"probe_replicas", false}, {"probe_replicas_ascii", true}} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteProbeReplicas(&buf, NewStyles(&buf, false, tc.ascii), probeReplicaRows()); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, buf.Bytes())
		})
	}
}

func TestProbeReplicasColourMarksUnhealthyReplicas(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteProbeReplicas(&buf, NewStyles(&buf, true, false), probeReplicaRows()[:2]); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	if strings.Contains(lines[1], "\x1b[31m") || !strings.Contains(lines[2], "\x1b[31munhealthy") {
		t.Fatalf("an unhealthy replica's health is red, a connected one's plain:\n%q", buf.String())
	}
}

func TestProbeReplicasJSON(t *testing.T) {
	rows := probeReplicaRows()
	sum := ProbeSummary{Type: ProbeLineSummary, Request: "read", Regions: []ProbeRegionSummary{}, Breaches: []ProbeBreach{},
		Replicas: rows[:4]}
	raw, err := json.Marshal(sum)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Replicas []map[string]any `json:"replicas"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	moved := got.Replicas[1]
	if moved["region"] != "East US" || moved["role"] != "secondary" || moved["health"] != "unhealthy" || moved["in_replica_set"] != true || moved["partition_key_range"] != "2" ||
		moved["errors_by_status"].(map[string]any)["410/0"] != 25.0 || moved["p99_ms"] != 0.9 || !strings.HasSuffix(moved["address"].(string), "/replicas/10s/") {
		t.Fatalf("a replica carries its region, address, role, health and the summary's fields: %v", moved)
	}
	raw, _ = json.Marshal(ProbeSummary{Type: ProbeLineSummary, Regions: []ProbeRegionSummary{}, Breaches: []ProbeBreach{}})
	if strings.Contains(string(raw), "replicas") {
		t.Fatalf("no replicas section without --replicas: %s", raw)
	}
}

func TestProbeReplicaBreach(t *testing.T) {
	row := probeReplicaRows()[1]
	rules, err := workload.ParseRules([]string{"errors>1%"})
	if err != nil {
		t.Fatal(err)
	}
	b := NewProbeReplicaBreach(row.Region, row.Address, rules[0], row.Summary)
	if b.Region != "East US" || b.Replica != row.Address || b.Message != "East US replica "+row.Address+": errors 100% > 1% (25 of 25 requests)" {
		t.Fatalf("breach %+v", b)
	}
}
