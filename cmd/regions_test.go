package cmd

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

func TestRegionsShowsRolesEffectiveOrderAndLatency(t *testing.T) {
	srv := testAccount(t)
	srv.AddFault(faults.Rule{Region: "North Europe", Effect: "refuse"})
	r := cosmosctl(t, "", "regions", "--preferred-regions", "West US,North Europe,East US", "--exclude", "north europe", "-o", "json")
	if r.code != 0 {
		t.Fatalf("regions: %+v", r)
	}
	var rep struct {
		Regions []struct {
			Name      string
			Write     bool
			ReadRank  int     `json:"read_rank"`
			WriteRank int     `json:"write_rank"`
			LatencyMs float64 `json:"latency_ms"`
			Error     string
			Note      string
		}
		EffectiveReads  []string `json:"effective_read_regions"`
		EffectiveWrites []string `json:"effective_write_regions"`
	}
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatal(err)
	}
	if strings.Join(rep.EffectiveReads, ",") != "West US,East US" || strings.Join(rep.EffectiveWrites, ",") != "East US" {
		t.Fatalf("effective reads %v writes %v", rep.EffectiveReads, rep.EffectiveWrites)
	}
	byName := map[string]int{}
	for i, reg := range rep.Regions {
		byName[reg.Name] = i
	}
	east, west, north := rep.Regions[byName["East US"]], rep.Regions[byName["West US"]], rep.Regions[byName["North Europe"]]
	if !east.Write || west.Write || east.ReadRank != 2 || west.ReadRank != 1 || north.ReadRank != 0 || east.WriteRank != 1 {
		t.Fatalf("regions %+v", rep.Regions)
	}
	if !strings.Contains(north.Note, "excluded") || north.Error == "" {
		t.Fatalf("North Europe is excluded and down: %+v", north)
	}
	if east.LatencyMs <= 0 || east.Error != "" {
		t.Fatalf("East US latency %+v", east)
	}

	r = cosmosctl(t, "", "regions")
	for _, want := range []string{"REGION", "East US", "write", "West US", "reads go to:  East US → West US", "writes go to: East US", "unreachable"} {
		if !strings.Contains(r.out, want) {
			t.Fatalf("table lacks %q:\n%s", want, r.out)
		}
	}
}
