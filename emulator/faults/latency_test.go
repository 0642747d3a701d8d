package faults

import (
	"testing"
	"time"
)

func TestLatencyLookupPrefersTheMostSpecificEntry(t *testing.T) {
	// Each entry has a distinct fixed value so the chosen one is visible.
	entries := []struct {
		region, op string
		d          time.Duration
	}{
		{"", "all", ms(1)},
		{"", "reads", ms(2)},
		{"", "read", ms(3)},
		{"West US", "all", ms(4)},
		{"West US", "reads", ms(5)},
		{"West US", "read", ms(6)},
	}
	tests := []struct {
		name       string
		upTo       int // only entries[:upTo] are set
		region, op string
		want       time.Duration
	}{
		{"region+op beats region+group", 6, "West US", "read", ms(6)},
		{"region+group beats region+all", 6, "West US", "query", ms(5)},
		{"region+all beats default+op", 4, "westus", "read", ms(4)},
		{"default+op beats default+group", 3, "West US", "read", ms(3)},
		{"default+group beats default+all", 2, "West US", "query", ms(2)},
		{"default+all as last resort", 6, "East US", "create", ms(1)},
		{"default+op applies to other regions", 6, "East US", "read", ms(3)},
		{"region matched case-insensitively", 6, "WEST us", "create", ms(4)},
		{"nothing set means zero", 0, "West US", "read", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, _ := newTestInjector(t)
			for _, e := range entries[:tt.upTo] {
				if err := in.SetLatency(e.region, e.op, fixed(e.d)); err != nil {
					t.Fatal(err)
				}
			}
			if got := in.Decide(tt.region, tt.op, "").Delay; got != tt.want {
				t.Fatalf("Decide(%q, %q).Delay = %v, want %v", tt.region, tt.op, got, tt.want)
			}
		})
	}
}

func TestExplicitNoneLatencyExemptsAnOperation(t *testing.T) {
	in, _ := newTestInjector(t)
	mustSetLatency(t, in, "", "all", fixed(ms(50)))
	mustSetLatency(t, in, "", "account", Distribution{Kind: KindNone})
	if got := in.Decide("East US", "account", "").Delay; got != 0 {
		t.Fatalf("account delay = %v, want 0", got)
	}
	if got := in.Decide("East US", "read", "").Delay; got != ms(50) {
		t.Fatalf("read delay = %v, want 50ms", got)
	}
}

func TestSetLatencyReplacesEntryForSameRegionAndOperation(t *testing.T) {
	in, _ := newTestInjector(t)
	mustSetLatency(t, in, "East US", "reads", fixed(ms(1)))
	mustSetLatency(t, in, "", "", fixed(ms(2)))
	mustSetLatency(t, in, "eastus", "reads", fixed(ms(3)))

	got := in.Latency()
	want := []LatencyEntry{
		{Region: "eastus", Operation: "reads", Distribution: fixed(ms(3))},
		{Region: "", Operation: "all", Distribution: fixed(ms(2))},
	}
	if len(got) != len(want) {
		t.Fatalf("Latency() = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Latency()[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestSetLatencyRejectsInvalidInput(t *testing.T) {
	tests := []struct {
		name, region, op string
		d                Distribution
		wantErr          string
	}{
		{"unknown operation", "West US", "reed", fixed(ms(1)),
			`latency for region "West US": unknown operation "reed"; valid operations:`},
		{"invalid distribution", "", "reads", Distribution{Kind: KindLognormal, P50: Duration(ms(9)), P99: Duration(ms(1))},
			`latency for all regions, operation "reads": lognormal distribution p99 1ms is less than p50 9ms`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, _ := newTestInjector(t)
			wantErrContaining(t, in.SetLatency(tt.region, tt.op, tt.d), tt.wantErr)
			if n := len(in.Latency()); n != 0 {
				t.Fatalf("rejected entry was stored: %d entries", n)
			}
		})
	}
}

func mustSetLatency(t *testing.T, in *Injector, region, op string, d Distribution) {
	t.Helper()
	if err := in.SetLatency(region, op, d); err != nil {
		t.Fatal(err)
	}
}
