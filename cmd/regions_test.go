package cmd

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

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
			Name      string `json:"region"`
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

// A region that hangs or refuses must not hold up regions: --e2e-timeout bounds the
// whole command, and the region is shown unreachable next to the others.
func TestRegionsFinishesWithinTheEndToEndTimeout(t *testing.T) {
	for _, tc := range []struct {
		name   string
		effect string
		shown  string // its LATENCY
	}{
		{"a region that hangs", faults.EffectHang, "timeout"},
		{"a region that refuses connections", faults.EffectRefuse, "unreachable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := testAccount(t)
			if _, err := srv.AddFault(faults.Rule{Region: "West US", Effect: tc.effect}); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			r := cosmosctl(t, "", "regions", "--e2e-timeout", "1s")
			if took := time.Since(start); took > 10*time.Second {
				t.Fatalf("regions took %s with --e2e-timeout 1s", took)
			}
			if r.code != 0 {
				t.Fatalf("regions: %+v", r)
			}
			for _, l := range strings.Split(r.out, "\n") {
				if strings.HasPrefix(l, "West US") && !strings.Contains(l, tc.shown) {
					t.Errorf("West US is not shown %s: %q", tc.shown, l)
				}
				if strings.HasPrefix(l, "East US") && (strings.Contains(l, "unreachable") || strings.Contains(l, "timeout")) {
					t.Errorf("East US is shown unreachable: %q", l)
				}
			}

			start = time.Now()
			r = cosmosctl(t, "", "regions", "--e2e-timeout", "1s", "-o", "json")
			if took := time.Since(start); r.code != 0 || took > 10*time.Second {
				t.Fatalf("regions -o json: %s, %+v", took, r)
			}
			var rep struct {
				Regions []struct {
					Name  string `json:"region"`
					Error string
				}
			}
			if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
				t.Fatal(err)
			}
			for _, reg := range rep.Regions {
				if (reg.Error != "") != (reg.Name == "West US") {
					t.Errorf("%s: error %q", reg.Name, reg.Error)
				}
			}
		})
	}
}

// regions shows the health remembered of each region, and the order reads use now.
func TestRegionsShowsRegionHealth(t *testing.T) {
	eastUSDown(t)
	r := cosmosctl(t, "", "regions", "--no-latency")
	if r.code != 0 || !strings.Contains(r.out, "HEALTH") || strings.Contains(r.out, "unavailable") {
		t.Fatalf("regions before any failure: %+v", r)
	}
	readTimes(t, 3)

	r = cosmosctl(t, "", "regions", "--no-latency")
	if r.code != 0 {
		t.Fatalf("regions: %+v", r)
	}
	for _, want := range []string{
		"reads: unavailable until ",
		"(3 unreachable); writes: available",
		"reads go to:  West US → North Europe → East US (region health: East US unavailable, used last)",
		"writes go to: East US\n",
	} {
		if !strings.Contains(r.out, want) {
			t.Errorf("regions lacks %q:\n%s", want, r.out)
		}
	}

	r = cosmosctl(t, "", "regions", "--no-latency", "-o", "json")
	var rep struct {
		Regions []struct {
			Name   string `json:"region"`
			Health map[string]struct {
				Status           string
				Failures         map[string]int
				UnavailableUntil time.Time `json:"unavailable_until_at"`
			}
		}
		HealthReadOrder  []string `json:"health_read_order"`
		HealthWriteOrder []string `json:"health_write_order"`
	}
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatal(err)
	}
	for _, reg := range rep.Regions {
		read, write := reg.Health["read"], reg.Health["write"]
		if write.Status != "available" {
			t.Errorf("%s writes: %+v", reg.Name, write)
		}
		if reg.Name == "East US" {
			if read.Status != "unavailable" || read.Failures["unreachable"] != 3 || read.UnavailableUntil.IsZero() {
				t.Errorf("East US reads: %+v", read)
			}
		} else if read.Status != "available" {
			t.Errorf("%s reads: %+v", reg.Name, read)
		}
	}
	if strings.Join(rep.HealthReadOrder, ",") != "West US,North Europe,East US" || strings.Join(rep.HealthWriteOrder, ",") != "East US" {
		t.Errorf("health orders: reads %v, writes %v", rep.HealthReadOrder, rep.HealthWriteOrder)
	}
}
