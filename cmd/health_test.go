package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
	"github.com/cosmosctl/cosmosctl/internal/statefile"
)

// healthJSON is the part of `health -o json` the tests look at.
type healthJSON struct {
	AccountEndpoint string `json:"account_endpoint"`
	StateFile       string `json:"state_file"`
	Entries         []struct {
		Region           string         `json:"region"`
		Kind             string         `json:"kind"`
		Status           string         `json:"status"`
		Failures         map[string]int `json:"failures"`
		UnavailableUntil time.Time      `json:"unavailable_until_at"`
	} `json:"entries"`
	Topology *struct {
		FetchedAt time.Time `json:"fetched_at"`
		Regions   []struct {
			Name  string `json:"region"`
			Write bool   `json:"write"`
		} `json:"regions"`
	} `json:"topology"`
	Adaptive *struct {
		Samples map[string]int `json:"samples"`
	} `json:"adaptive"`
}

func healthOf(t *testing.T, args ...string) healthJSON {
	t.Helper()
	r := cosmosctl(t, "", append([]string{"health", "-o", "json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("health -o json: %+v", r)
	}
	var h healthJSON
	if err := json.Unmarshal([]byte(r.out), &h); err != nil {
		t.Fatalf("health -o json is not JSON (%v): %s", err, r.out)
	}
	return h
}

// eastUSDown is an account whose first region, East US, refuses connections, with an
// item to read that was written while it was up.
func eastUSDown(t *testing.T) *emulator.Server {
	t.Helper()
	srv := testAccount(t)
	if r := cosmosctl(t, `{"id":"h1","pk":"t1"}`, "create", "-f", "-"); r.code != 0 {
		t.Fatalf("create: %+v", r)
	}
	if _, err := srv.AddFault(faults.Rule{Region: "East US", Effect: faults.EffectRefuse}); err != nil {
		t.Fatal(err)
	}
	return srv
}

func readTimes(t *testing.T, n int, extra ...string) {
	t.Helper()
	for i := range n {
		if r := cosmosctl(t, "", append([]string{"read", "h1", "--pk", "t1"}, extra...)...); r.code != 0 {
			t.Fatalf("read %d with East US down: %+v", i+1, r)
		}
	}
}

func TestHealthShowsWhatReadsLearned(t *testing.T) {
	eastUSDown(t)
	readTimes(t, 3)

	for _, tc := range []struct {
		name  string
		check func(t *testing.T)
	}{
		{"the table shows East US unavailable for reads", func(t *testing.T) {
			r := cosmosctl(t, "", "health")
			if r.code != 0 {
				t.Fatalf("health: %+v", r)
			}
			lines := strings.Split(strings.TrimSpace(r.out), "\n")
			for _, h := range []string{"REGION", "RANGE", "KIND", "STATUS", "FAILURES", "LAST FAILURE", "UNAVAILABLE UNTIL", "HEDGE LOSSES", "LAST SUCCESS", "NOTE"} {
				if !strings.Contains(lines[0], h) {
					t.Errorf("header lacks %s: %q", h, lines[0])
				}
			}
			var east string
			for _, l := range lines {
				if strings.HasPrefix(l, "East US") {
					east = l
				}
			}
			for _, want := range []string{"read", "unavailable", "3 unreachable", " ago)", "used last"} {
				if !strings.Contains(east, want) {
					t.Errorf("East US row lacks %q: %q\n%s", want, east, r.out)
				}
			}
			if !strings.Contains(r.out, "account topology: East US (write), West US, North Europe") {
				t.Errorf("no topology line:\n%s", r.out)
			}
			if !strings.Contains(r.errOut, "state file ") || strings.Contains(r.errOut, "cosmosctl:") {
				t.Errorf("stderr: %q", r.errOut)
			}
		}},
		{"JSON shows East US unavailable for reads, until a few seconds from now", func(t *testing.T) {
			h := healthOf(t)
			if h.AccountEndpoint == "" || !strings.HasSuffix(h.StateFile, "health.json") {
				t.Errorf("endpoint %q, state file %q", h.AccountEndpoint, h.StateFile)
			}
			found := false
			for _, e := range h.Entries {
				if e.Region == "East US" && e.Kind == "read" {
					found = true
					if e.Status != "unavailable" || e.Failures["unreachable"] < 3 {
						t.Errorf("East US read: %+v", e)
					}
					if until := time.Until(e.UnavailableUntil); until <= 0 || until > 5*time.Second {
						t.Errorf("unavailable until %s, %s from now; want within 5s", e.UnavailableUntil, until)
					}
				}
				if e.Region != "East US" && e.Status != "available" {
					t.Errorf("%s is %s, want available", e.Region, e.Status)
				}
			}
			if !found {
				t.Errorf("no East US read entry: %+v", h.Entries)
			}
			if h.Topology == nil || len(h.Topology.Regions) != 3 || !h.Topology.Regions[0].Write || h.Topology.FetchedAt.IsZero() {
				t.Errorf("topology %+v", h.Topology)
			}
			if h.Adaptive != nil {
				t.Errorf("no adaptive hedging ran, adaptive = %+v", h.Adaptive)
			}
		}},
		{"health sends no request: it works with every region down", func(t *testing.T) {
			t.Setenv("COSMOSCTL_ENDPOINT", "http://127.0.0.1:1/") // nothing listens
			r := cosmosctl(t, "", "health", "--e2e-timeout", "1ms")
			if r.code != 0 || !strings.Contains(r.errOut, "no region health remembered for http://127.0.0.1:1") {
				t.Errorf("health of an account never used: %+v", r)
			}
		}},
	} {
		t.Run(tc.name, tc.check)
	}
}

func TestHealthReset(t *testing.T) {
	for _, tc := range []struct {
		name        string
		args        []string
		wantSaid    []string
		topologyToo bool
	}{
		{"reset clears the region health and keeps the topology", []string{"health", "reset"}, []string{"cleared region health (1 entry)"}, false},
		{"reset --all clears the topology too", []string{"health", "reset", "--all"}, []string{"region health (1 entry)", "the account topology (3 regions)"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eastUSDown(t)
			readTimes(t, 3)
			if h := healthOf(t); len(h.Entries) == 0 {
				t.Fatal("nothing remembered after 3 reads")
			}
			r := cosmosctl(t, "", tc.args...)
			if r.code != 0 {
				t.Fatalf("%v: %+v", tc.args, r)
			}
			for _, want := range tc.wantSaid {
				if !strings.Contains(r.errOut, want) {
					t.Errorf("%v says %q, want %q", tc.args, r.errOut, want)
				}
			}
			h := healthOf(t)
			if len(h.Entries) != 0 {
				t.Errorf("after %v: entries %+v", tc.args, h.Entries)
			}
			if (h.Topology == nil) != tc.topologyToo {
				t.Errorf("after %v: topology %+v", tc.args, h.Topology)
			}
			r = cosmosctl(t, "", "health")
			if r.code != 0 || strings.Contains(r.out, "East US   ") || !strings.Contains(r.errOut, "no region health remembered") {
				t.Errorf("health after reset: %+v", r)
			}
			if tc.topologyToo {
				return // with the topology forgotten and East US (the global endpoint's region) down, the account cannot be looked up
			}
			// Reads use East US first again, and learn again.
			readTimes(t, 1)
			if h := healthOf(t); len(h.Entries) != 1 || h.Entries[0].Status != "available" || h.Entries[0].Failures["unreachable"] != 1 {
				t.Errorf("after one more read: %+v", h.Entries)
			}
		})
	}
}

func TestHealthResetWithNothingRemembered(t *testing.T) {
	testAccount(t)
	r := cosmosctl(t, "", "health", "reset", "--all", "-o", "json")
	if r.code != 0 || !strings.Contains(r.errOut, "nothing to clear") {
		t.Fatalf("reset of an account never used: %+v", r)
	}
	var rep struct {
		Cleared []any `json:"cleared"`
	}
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil || rep.Cleared == nil || len(rep.Cleared) != 0 {
		t.Errorf("reset -o json: %v %q", err, r.out)
	}
	if entries, _ := os.ReadDir(os.Getenv(statefile.EnvDir)); len(entries) != 0 {
		t.Errorf("reset made files for an account never used: %v", entries)
	}
}

func TestHealthMemoryOffLeavesNoFile(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
	}{
		{"--no-health-memory", []string{"--no-health-memory"}, nil},
		{"COSMOSCTL_HEALTH_MEMORY=off", nil, map[string]string{"COSMOSCTL_HEALTH_MEMORY": "off"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eastUSDown(t)
			// The create that made the item saved health memory; only the reads count.
			os.Remove(healthOf(t).StateFile)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			readTimes(t, 3, tc.args...)
			h := healthOf(t)
			if len(h.Entries) != 0 {
				t.Errorf("reads with health memory off were remembered: %+v", h.Entries)
			}
			if _, err := os.Stat(h.StateFile); !os.IsNotExist(err) {
				t.Errorf("%s exists (%v), want no health file", h.StateFile, err)
			}
			if tc.env != nil {
				if r := cosmosctl(t, "", "health"); !strings.Contains(r.errOut, "health memory is off (env COSMOSCTL_HEALTH_MEMORY)") {
					t.Errorf("health with memory off does not say so: %q", r.errOut)
				}
			}
		})
	}
}

func TestHealthWithACorruptFile(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content string
		problem string
	}{
		{"not JSON", "{\"kind\": \"region-hea", "not valid JSON"},
		{"empty", "", "empty"},
		{"another kind of state", `{"kind":"adaptive-hedging","version":1,"endpoint":"x","data":{}}`, `holds "adaptive-hedging" state`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testAccount(t)
			path := healthOf(t).StateFile
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			r := cosmosctl(t, "", "health")
			if r.code != 0 || r.out != "" {
				t.Fatalf("health with a corrupt file: %+v", r)
			}
			if n := strings.Count(r.errOut, "ignoring state file"); n != 1 || !strings.Contains(r.errOut, tc.problem) {
				t.Errorf("want one notice saying %q, got %q", tc.problem, r.errOut)
			}
			if !strings.Contains(r.errOut, "no region health remembered") {
				t.Errorf("want an empty view after the notice: %q", r.errOut)
			}
			// reset replaces it.
			if r := cosmosctl(t, "", "health", "reset"); r.code != 0 || !strings.Contains(r.errOut, "cleared region health (0 entries)") {
				t.Errorf("reset of a corrupt file: %+v", r)
			}
			if r := cosmosctl(t, "", "health"); r.code != 0 || strings.Contains(r.errOut, "ignoring") {
				t.Errorf("health after reset: %+v", r)
			}
		})
	}
}

func TestHealthOnTheEmbeddedEmulator(t *testing.T) {
	for _, args := range [][]string{{"health"}, {"health", "reset", "--all"}, {"health", "-o", "json"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			isolate(t)
			r := cosmosctl(t, "", args...)
			if r.code != 0 || !strings.Contains(r.errOut, "nothing is remembered for the embedded emulator: it listens on new ports every run") {
				t.Fatalf("%v without an account: %+v", args, r)
			}
			if strings.Contains(r.errOut, "using the embedded emulator") {
				t.Errorf("%v started the embedded emulator: %q", args, r.errOut)
			}
			if args[len(args)-1] == "json" {
				var h healthJSON
				if err := json.Unmarshal([]byte(r.out), &h); err != nil || h.Entries == nil || len(h.Entries) != 0 || h.Topology != nil {
					t.Errorf("JSON without an account: %v %s", err, r.out)
				}
			} else if r.out != "" {
				t.Errorf("stdout: %q", r.out)
			}
		})
	}
}
