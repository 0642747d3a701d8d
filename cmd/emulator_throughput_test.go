package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
)

func TestEmulatorEnforceThroughputFlagAndSubcommand(t *testing.T) {
	endpoint, _, key := startEmulatorCmd(t, "--enforce-throughput", "--ranges", "1", "--latency", "none")
	run := func(args ...string) (int, string, string) {
		io, out, errOut := testIO()
		code := Run(context.Background(), io, append(args, "--endpoint", endpoint))
		return code, out.String(), errOut.String()
	}
	status := func() emulator.State {
		t.Helper()
		code, out, errOut := run("emulator", "status", "-o", "json")
		var st emulator.State
		if code != 0 || json.Unmarshal([]byte(out), &st) != nil {
			t.Fatalf("status → %d %q %q", code, out, errOut)
		}
		return st
	}
	if !status().EnforceThroughput {
		t.Fatal("--enforce-throughput: status says throughput is not enforced")
	}

	// Small writes (5 RU) as fast as loopback allows outrun one range's 400 RU/s.
	cred, _ := cosmos.NewMasterKey(key)
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
	defer tr.HTTP.CloseIdleConnections()
	var throttled *cosmos.Response
	for i := 0; i < 2000 && throttled == nil; i++ {
		resp, _ := tr.Do(context.Background(), endpoint, &cosmos.Request{Method: "POST", Path: cosmos.ItemsPath("app", "items"),
			Header: map[string][]string{cosmos.HeaderPartitionKey: {`["a"]`}}, Body: fmt.Appendf(nil, `{"id":"%d","pk":"a"}`, i)})
		if resp != nil && resp.StatusCode == 429 {
			throttled = resp
		}
	}
	if throttled == nil || throttled.SubStatus != emulator.SubRUBudgetExceeded || throttled.Header.Get(cosmos.HeaderRetryAfterMs) == "" {
		t.Fatalf("2000 writes at once were never throttled with 429/3200 and a retry-after: %+v", throttled)
	}
	if code, out, _ := run("emulator", "status"); code != 0 || !strings.Contains(out, "enforce throughput  true") || !strings.Contains(out, "answered 429/3200") {
		t.Errorf("status → %d %q", code, out)
	}

	if code, out, errOut := run("emulator", "enforce-throughput", "off"); code != 0 || !strings.Contains(out, "bookkeeping only") {
		t.Fatalf("enforce-throughput off → %d %q %q", code, out, errOut)
	}
	if status().EnforceThroughput {
		t.Error("after enforce-throughput off, status says throughput is enforced")
	}
	if code, out, errOut := run("emulator", "enforce-throughput", "on"); code != 0 || !strings.Contains(out, "now enforced") {
		t.Fatalf("enforce-throughput on → %d %q %q", code, out, errOut)
	}
	if code, _, errOut := run("emulator", "enforce-throughput", "maybe"); code != ExitUsage || !strings.Contains(errOut, "on or off") {
		t.Errorf("enforce-throughput maybe → %d %q, want a usage error naming on or off", code, errOut)
	}
}

func TestScenarioCanEnforceThroughput(t *testing.T) {
	o := &emulatorOptions{set: func(string) bool { return false }, Output: "text", Latency: latencyNone}
	path := t.TempDir() + "/s.toml"
	if err := os.WriteFile(path, []byte("enforce_throughput = true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o.Scenario = path
	cfg, err := o.config()
	if err != nil || !cfg.EnforceThroughput {
		t.Fatalf("scenario with enforce_throughput = true → %+v, %v", cfg.EnforceThroughput, err)
	}
	o.set = func(name string) bool { return name == "enforce-throughput" } // --enforce-throughput=false wins
	if cfg, err := o.config(); err != nil || cfg.EnforceThroughput {
		t.Errorf("--enforce-throughput=false over the scenario → %v, %v", cfg.EnforceThroughput, err)
	}
}
