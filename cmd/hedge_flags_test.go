package cmd

import (
	"os"
	"strings"
	"testing"
)

func TestHedgeStepWithoutHedgingOnIsAUsageError(t *testing.T) {
	testAccount(t)
	cosmosctl(t, `{"id":"x","pk":"p"}`, "create", "-f", "-")
	cfg := os.Getenv("COSMOSCTL_CONFIG")
	cases := []struct {
		name    string
		profile string // the hedging table of the default profile, "" for no config file
		args    []string
		code    int
		want    string // in stderr when refused, the hedge_config when read
	}{
		{"--hedge-step alone names --hedge-threshold", "", []string{"--hedge-step", "50ms"}, ExitUsage, "--hedge-step needs hedging on: add --hedge-threshold"},
		{"--hedge-max-regions alone names --hedge-threshold", "", []string{"--hedge-max-regions", "2"}, ExitUsage, "--hedge-max-regions needs hedging on: add --hedge-threshold"},
		{"a profile's mode = off does not make the step apply", `mode = "off"`, []string{"--hedge-step", "50ms"}, ExitUsage, "--hedge-threshold"},
		{"with --hedge-threshold the step applies", "", []string{"--hedge-threshold", "300ms", "--hedge-step", "50ms"}, ExitOK, "threshold=300ms step=50ms max_regions=all"},
		{"a profile's threshold turns hedging on for the step", `threshold = "400ms"`, []string{"--hedge-step", "50ms"}, ExitOK, "threshold=400ms step=50ms max_regions=all"},
		{"a profile's mode turns hedging on for the step", `mode = "threshold"`, []string{"--hedge-step", "0s"}, ExitOK, "threshold=500ms step=0s max_regions=all"},
		{"a profile's step alone stays quiet and off", `step = "50ms"`, nil, ExitOK, "off"},
		{"--no-hedge wins over the step", "", []string{"--no-hedge", "--hedge-step", "50ms"}, ExitOK, "off"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(cfg)
			if c.profile != "" {
				if err := os.WriteFile(cfg, []byte("default_profile = \"p\"\n[profiles.p.hedging]\n"+c.profile+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if c.code != ExitOK {
				r := cosmosctl(t, "", append([]string{"read", "x", "--pk", "p"}, c.args...)...)
				if r.code != c.code || !strings.Contains(r.errOut, c.want) {
					t.Fatalf("exit %d, want %d with %q in stderr: %s", r.code, c.code, c.want, r.errOut)
				}
				return
			}
			got, r := readJSON(t, c.args...)
			if r.code != ExitOK || got.Diagnostics.HedgeConfig != c.want {
				t.Fatalf("exit %d, hedge_config %q, want %q: %s", r.code, got.Diagnostics.HedgeConfig, c.want, r.errOut)
			}
		})
	}
}
