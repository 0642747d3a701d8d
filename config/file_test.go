package config

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// writeConfig writes a config file into a fresh directory and returns its path.
func writeConfig(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const fullProfile = `
default_profile = "prod"

[profiles.prod]
endpoint = "https://myaccount.documents.azure.com:443/"
key_file = "prod.key"
database = "app"
container = "orders"
preferred_regions = ["East US", " West US "]
exclude_regions = []
e2e_timeout = "5s"
output = "json"

[profiles.prod.hedging]
mode = "threshold"
threshold = "300ms"
step = "100ms"
max_regions = 3
budget = "10%"

[profiles.prod.write_retries]
policy = "tracking-id"

[profiles.dev]
connection_string = "AccountEndpoint=https://localhost:8081/;AccountKey=` + emulatorKey + `;"
`

func TestLoadReadsEverySetting(t *testing.T) {
	f, err := Load(writeConfig(t, fullProfile))
	if err != nil {
		t.Fatal(err)
	}
	if !f.Exists || f.DefaultProfile != "prod" || strings.Join(f.ProfileNames(), ",") != "dev,prod" {
		t.Fatalf("file %+v", f)
	}
	p := f.Profiles["prod"]
	want := Hedging{Mode: HedgingThreshold, Threshold: 300 * time.Millisecond, Step: 100 * time.Millisecond, MaxRegions: 3, BudgetPercent: 10}
	if p.Hedging != want {
		t.Errorf("hedging %+v, want %+v", p.Hedging, want)
	}
	if p.WriteRetries.Policy != WriteRetriesTrackingID || p.E2ETimeout != 5*time.Second || p.Output != "json" {
		t.Errorf("profile %+v", p)
	}
	if strings.Join(p.PreferredRegions, "|") != "East US|West US" || len(p.ExcludeRegions) != 0 || !p.IsSet("exclude_regions") {
		t.Errorf("regions %q / %q (set %v)", p.PreferredRegions, p.ExcludeRegions, p.IsSet("exclude_regions"))
	}
	if p.IsSet("key") || !p.IsSet("hedging.threshold") {
		t.Errorf("IsSet wrong: %v", p.set)
	}
}

func TestLoadWithoutAFileHasNoProfiles(t *testing.T) {
	f, err := Load(filepath.Join(t.TempDir(), "absent.toml"))
	if err != nil || f.Exists || len(f.Profiles) != 0 {
		t.Fatalf("Load of a missing file: %+v, %v", f, err)
	}
}

func TestLoadRejectsBadFiles(t *testing.T) {
	cases := []struct {
		name, content string
		want          []string // all must appear in the error
	}{
		{"malformed TOML names the line", "[profiles.prod]\nendpoint = \n", []string{"line 2"}},
		{"a number where a duration string belongs", "[profiles.prod]\ne2e_timeout = 5\n", []string{"line 2", "e2e_timeout"}},
		{"unknown setting in a profile", "[profiles.prod]\nendpont = \"https://a/\"\n", []string{`"profiles.prod.endpont"`, "endpoint, key"}},
		{"unknown hedging setting", "[profiles.prod.hedging]\nthreshhold = \"1s\"\n", []string{`"profiles.prod.hedging.threshhold"`}},
		{"profile table without profiles.", "[prod]\nendpoint = \"https://a/\"\n", []string{`"prod"`, "[profiles.NAME]"}},
		{"negative duration names the setting", "[profiles.prod]\ne2e_timeout = \"-1s\"\n", []string{"profile prod", "e2e_timeout must not be negative"}},
		{"negative hedging step", "[profiles.prod.hedging]\nstep = \"-100ms\"\n", []string{"hedging.step must not be negative"}},
		{"zero threshold", "[profiles.prod.hedging]\nthreshold = \"0s\"\n", []string{"hedging.threshold must be greater than 0"}},
		{"unparsable duration", "[profiles.prod]\ne2e_timeout = \"5\"\n", []string{"e2e_timeout must be a duration"}},
		{"bad output", "[profiles.prod]\noutput = \"yaml\"\n", []string{"output must be table, json, ndjson or tsv"}},
		{"bad hedging mode", "[profiles.prod.hedging]\nmode = \"always\"\n", []string{"hedging.mode must be threshold, adaptive or off"}},
		{"bad policy", "[profiles.prod.write_retries]\npolicy = \"sometimes\"\n", []string{"write_retries.policy must be off, retries or tracking-id"}},
		{"budget without %", "[profiles.prod.hedging]\nbudget = \"0.1\"\n", []string{"hedging.budget must be a percentage"}},
		{"max_regions below 1", "[profiles.prod.hedging]\nmax_regions = 0\n", []string{"hedging.max_regions must be at least 1"}},
		{"endpoint not a URL", "[profiles.prod]\nendpoint = \"myaccount\"\n", []string{"endpoint must be a URL"}},
		{"key and key_file", "[profiles.prod]\nkey = \"" + emulatorKey + "\"\nkey_file = \"k\"\n", []string{"both key and key_file"}},
		{"default_profile missing", "default_profile = \"prd\"\n[profiles.prod]\n", []string{`default_profile "prd"`, "prod"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := writeConfig(t, tc.content)
			_, err := Load(path)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			for _, w := range append(tc.want, path) {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
			if strings.Contains(msg, "\n") || strings.Contains(msg, emulatorKey) {
				t.Errorf("error is not one line without secrets: %q", msg)
			}
		})
	}
}

func TestLoadWarnsAboutAnInlineKeyOthersCanRead(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix permissions")
	}
	path := writeConfig(t, "[profiles.prod]\nkey = \""+emulatorKey+"\"\n")
	f, err := Load(path)
	if err != nil || len(f.Warnings) != 0 {
		t.Fatalf("0600 file: %v, warnings %q", err, f.Warnings)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err = Load(path)
	if err != nil || len(f.Warnings) != 1 || !strings.Contains(f.Warnings[0], "chmod 600") {
		t.Fatalf("0644 file: %v, warnings %q", err, f.Warnings)
	}
	// A key_file in a readable config file is fine: the secret is elsewhere.
	path = writeConfig(t, "[profiles.prod]\nkey_file = \"k\"\n")
	_ = os.Chmod(path, 0o644)
	if f, _ := Load(path); len(f.Warnings) != 0 {
		t.Fatalf("key_file only: warnings %q", f.Warnings)
	}
}
