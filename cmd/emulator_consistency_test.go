package cmd

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

func TestEmulatorConsistencyFlagWinsOverTheScenario(t *testing.T) {
	path := t.TempDir() + "/s.toml"
	if err := os.WriteFile(path, []byte("consistency = \"Eventual\"\nmax_interval_seconds = 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		set  []string
		flag string
		want string
	}{
		{"the scenario's level without the flag", nil, "session", "Eventual"},
		{"the flag's short name", []string{"consistency"}, "bounded", "BoundedStaleness"},
		{"the service's name in any case", []string{"consistency"}, "consistentPREFIX", "ConsistentPrefix"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := &emulatorOptions{Output: "text", Latency: latencyNone, Scenario: path, Consistency: tc.flag,
				set: func(name string) bool { return strings.Contains(strings.Join(tc.set, ","), name) }}
			cfg, err := o.config()
			if err != nil || cfg.Consistency != tc.want {
				t.Fatalf("→ %q, %v; want %q", cfg.Consistency, err, tc.want)
			}
		})
	}
}

func TestEmulatorConsistencyRefusesWhatTheServiceRefuses(t *testing.T) {
	cases := []struct {
		name string
		args []string
		msg  string
	}{
		{"not a level", []string{"--consistency", "linearizable"}, `--consistency "linearizable" is not a consistency level: use strong, bounded, session, prefix or eventual`},
		{"strong with several write regions", []string{"--consistency", "strong", "--multi-write"}, "cannot go with multi_write"},
		{"K below the multi-region minimum", []string{"--consistency", "bounded", "--max-staleness-prefix", "10"}, "100000 to 2147483647"},
		{"T over the service's limit", []string{"--consistency", "bounded", "--max-interval", "90000"}, "300 to 86400"},
		{"bounds without bounded", []string{"--max-interval", "10"}, "not of Session"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			io, _, errOut := testIO()
			code := Run(context.Background(), io, append([]string{"emulator", "--port", "0"}, tc.args...))
			if code != ExitUsage || !strings.Contains(errOut.String(), tc.msg) {
				t.Fatalf("exit %d, stderr %q; want %d mentioning %q", code, errOut.String(), ExitUsage, tc.msg)
			}
		})
	}
}

func TestEmulatorReportsItsConsistencyInTheAccount(t *testing.T) {
	endpoint, _, key := startEmulatorCmd(t, "--consistency", "Strong", "--latency", "none")
	cred, _ := cosmos.NewMasterKey(key)
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
	resp, err := tr.Do(context.Background(), endpoint, &cosmos.Request{Method: "GET", Path: "/"})
	if err != nil {
		t.Fatal(err)
	}
	var acct cosmos.Account
	_ = json.Unmarshal(resp.Body, &acct)
	if acct.UserConsistencyPolicy.DefaultConsistencyLevel != "Strong" {
		t.Fatalf("GET / reports %+v, want Strong", acct.UserConsistencyPolicy)
	}
}
