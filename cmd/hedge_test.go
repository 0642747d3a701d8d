package cmd

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

type hedgedResult struct {
	Diagnostics struct {
		HedgeConfig   string `json:"hedge_config"`
		WinningRegion string `json:"winning_region"`
		Attempts      []struct {
			Region, Reason, Outcome string
			StartMs                 float64 `json:"start_ms"`
		}
	}
}

func readJSON(t *testing.T, args ...string) (hedgedResult, runResult) {
	t.Helper()
	r := cosmosctl(t, "", append([]string{"read", "x", "--pk", "p", "-o", "json"}, args...)...)
	var got hedgedResult
	if err := json.Unmarshal([]byte(r.out), &got); err != nil {
		t.Fatalf("%v: %q %q", err, r.out, r.errOut)
	}
	return got, r
}

func TestHedgedReadCommandAnswersFromTheNextRegion(t *testing.T) {
	srv := testAccount(t)
	cosmosctl(t, `{"id":"x","pk":"p"}`, "create", "-f", "-")
	srv.Faults().SetLatency("East US", "read", faults.Distribution{Kind: "fixed", Value: faults.Duration(2 * time.Second)})
	got, r := readJSON(t, "--hedge-threshold", "50ms", "--hedge-step", "50ms")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	d := got.Diagnostics
	if d.HedgeConfig != "threshold=50ms step=50ms max_regions=all" || d.WinningRegion != "West US" {
		t.Fatalf("diagnostics %+v", d)
	}
	if d.Attempts[0].Region != "East US" || d.Attempts[0].Outcome != "cancelled" || d.Attempts[1].Reason != "hedge" || d.Attempts[1].StartMs < 50 {
		t.Fatalf("attempts %+v", d.Attempts)
	}
	// The table on stderr shows the same race.
	r = cosmosctl(t, "", "read", "x", "--pk", "p", "--hedge-threshold", "50ms", "--diagnostics")
	for _, want := range []string{"threshold=50ms", "hedge", "cancelled", "won", "TIMELINE"} {
		if !strings.Contains(r.errOut, want) {
			t.Fatalf("diagnostics table lacks %q:\n%s", want, r.errOut)
		}
	}
}

func TestHedgingIsOffByDefaultAndFlagsBeatTheProfile(t *testing.T) {
	testAccount(t)
	cosmosctl(t, `{"id":"x","pk":"p"}`, "create", "-f", "-")
	if got, _ := readJSON(t); got.Diagnostics.HedgeConfig != "off" {
		t.Fatalf("default: %q", got.Diagnostics.HedgeConfig)
	}
	cfg := os.Getenv("COSMOSCTL_CONFIG")
	os.WriteFile(cfg, []byte("default_profile = \"p\"\n[profiles.p.hedging]\nthreshold = \"700ms\"\nstep = \"0s\"\nmax_regions = 2\n"), 0o600)
	if got, _ := readJSON(t); got.Diagnostics.HedgeConfig != "threshold=700ms step=0s max_regions=2" {
		t.Fatalf("profile: %q", got.Diagnostics.HedgeConfig)
	}
	if got, _ := readJSON(t, "--hedge-threshold", "300ms", "--hedge-step", "100ms"); got.Diagnostics.HedgeConfig != "threshold=300ms step=100ms max_regions=2" {
		t.Fatalf("flags over profile: %q", got.Diagnostics.HedgeConfig)
	}
	if got, _ := readJSON(t, "--no-hedge"); got.Diagnostics.HedgeConfig != "off" {
		t.Fatalf("--no-hedge: %q", got.Diagnostics.HedgeConfig)
	}
	os.WriteFile(cfg, []byte("default_profile = \"p\"\n[profiles.p.hedging]\nmode = \"threshold\"\n"), 0o600)
	if got, _ := readJSON(t); got.Diagnostics.HedgeConfig != "threshold=500ms step=100ms max_regions=all" {
		t.Fatalf("mode without numbers uses the SDK defaults: %q", got.Diagnostics.HedgeConfig)
	}
}

func TestHedgeFlagValidation(t *testing.T) {
	testAccount(t)
	for _, args := range [][]string{
		{"--hedge-threshold", "0s"},
		{"--hedge-threshold", "-5ms"},
		{"--hedge-threshold", "100ms", "--hedge-step", "-1ms"},
		{"--hedge-threshold", "100ms", "--hedge-max-regions", "-1"},
		{"--hedge-threshold", "soon"},
	} {
		r := cosmosctl(t, "", append([]string{"read", "x", "--pk", "p"}, args...)...)
		if r.code != ExitUsage || strings.Count(strings.TrimSpace(r.errOut), "\n") != 0 {
			t.Fatalf("%v: exit %d %q", args, r.code, r.errOut)
		}
	}
}

func TestAdaptiveModeFromTheProfile(t *testing.T) {
	testAccount(t)
	cosmosctl(t, `{"id":"x","pk":"p"}`, "create", "-f", "-")
	cfg := os.Getenv("COSMOSCTL_CONFIG")
	os.WriteFile(cfg, []byte("default_profile = \"p\"\n[profiles.p.hedging]\nmode = \"adaptive\"\nbudget = \"5%\"\n"), 0o600)
	got, r := readJSON(t)
	if r.code != 0 || !strings.HasPrefix(got.Diagnostics.HedgeConfig, "adaptive threshold=500ms (fallback: 0 of 20 read samples)") || !strings.Contains(got.Diagnostics.HedgeConfig, "budget=5%") {
		t.Fatalf("hedge config %q (%s)", got.Diagnostics.HedgeConfig, r.errOut)
	}
	os.WriteFile(cfg, []byte("default_profile = \"p\"\n[profiles.p.hedging]\nmode = \"adaptive\"\nbudget = \"0%\"\n"), 0o600)
	if r := cosmosctl(t, "", "read", "x", "--pk", "p"); r.code != ExitUsage {
		t.Fatalf("a 0%% budget: exit %d %s", r.code, r.errOut)
	}
}
