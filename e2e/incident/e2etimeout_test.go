package incident_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator/faults"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// readJSON is what `read -o json` prints, as far as these tests look.
type readJSON struct {
	StatusCode  int `json:"status_code"`
	Diagnostics struct {
		Attempts []struct {
			Region   string  `json:"region"`
			TimedOut bool    `json:"timed_out"`
			Timeout  float64 `json:"timeout_ms"`
		} `json:"attempts"`
		WinningRegion string `json:"winning_region"`
	} `json:"diagnostics"`
}

// env is the process environment of the built binary: the test's own (Isolate and
// Account set COSMOSCTL_*), with extra variables after it.
func env(extra ...string) []string { return append(os.Environ(), extra...) }

// TestTheREADMEProfilesEndToEndTimeoutFailsOverFromAHungRegion: the README's profile sets
// e2e_timeout = "5s", less than the 6s first rung of a point read. With the first region
// hung, the read must still be answered by the next region, well before the 5s: the
// first attempt gets half of what is left while another region remains.
func TestTheREADMEProfilesEndToEndTimeoutFailsOverFromAHungRegion(t *testing.T) {
	srv := testkit.Account(t)
	bin := testkit.Binary(t)
	if code, _, errOut := testkit.RunBinary(t, bin, env(), `{"id":"o1","pk":"t1"}`, "upsert", "-f", "-"); code != 0 {
		t.Fatalf("seeding: exit %d: %s", code, errOut)
	}
	config := filepath.Join(t.TempDir(), "config.toml")
	profile := `default_profile = "prod"

[profiles.prod]
endpoint = "` + srv.Endpoint() + `"
database = "app"
container = "items"
preferred_regions = ["East US", "West US"]
e2e_timeout = "5s"
`
	if err := os.WriteFile(config, []byte(profile), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.AddFault(faults.Rule{Region: "East US", Operations: []string{faults.GroupReads}, Effect: faults.EffectHang}); err != nil {
		t.Fatal(err)
	}
	// The profile, not the environment, gives the endpoint and the timeout.
	e := env("COSMOSCTL_CONFIG="+config, "COSMOSCTL_ENDPOINT=", "COSMOSCTL_DATABASE=", "COSMOSCTL_CONTAINER=")
	start := time.Now()
	code, out, errOut := testkit.RunBinary(t, bin, e, "", "read", "o1", "--pk", "t1", "-o", "json")
	took := time.Since(start)
	if code != 0 {
		t.Fatalf("exit %d (6 is the end-to-end timeout that prevented failover): %s%s", code, out, errOut)
	}
	var r readJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("read -o json printed %q: %v", out, err)
	}
	as := r.Diagnostics.Attempts
	if r.Diagnostics.WinningRegion != "West US" || len(as) != 2 || as[0].Region != "East US" || !as[0].TimedOut || as[0].Timeout > 2500 || as[0].Timeout < 2000 {
		t.Fatalf("diagnostics %+v: want East US's attempt to expire at 2.5s (half of the 5s, less what the account lookup took) and West US to answer", r.Diagnostics)
	}
	// 2.5s for East US, then West US: generous for a loaded machine, but short of the
	// 5s the whole timeout would have taken.
	if took > 4900*time.Millisecond {
		t.Fatalf("the read took %s", took)
	}
	if strings.Contains(errOut, "raise --e2e-timeout") {
		t.Fatalf("stderr %q", errOut)
	}
}
