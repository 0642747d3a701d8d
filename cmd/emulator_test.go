package cmd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
)

func testIO() (*IOStreams, *syncBuffer, *syncBuffer) {
	out, errOut := &syncBuffer{}, &syncBuffer{}
	return &IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut}, out, errOut
}

// startEmulatorCmd runs `cosmosctl emulator ARGS -o json` until the test ends and returns
// what it printed.
func startEmulatorCmd(t *testing.T, args ...string) (endpoint string, regions []emulator.Region, key string) {
	t.Helper()
	io, out, errOut := testIO()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- Run(ctx, io, append([]string{"emulator", "--port", "0", "-o", "json"}, args...)) }()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("emulator exited with %d after interrupt: %s", code, errOut.String())
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "\n") {
		select {
		case code := <-done:
			t.Fatalf("emulator exited with %d: %s", code, errOut.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("emulator printed nothing within 10 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	var printed struct {
		Endpoint string               `json:"endpoint"`
		Key      string               `json:"key"`
		Regions  []emulatorRegionJSON `json:"regions"`
	}
	if err := json.Unmarshal([]byte(out.String()), &printed); err != nil {
		t.Fatalf("emulator -o json printed %q: %v", out.String(), err)
	}
	return printed.Endpoint, regionsOf(printed.Regions), printed.Key
}

func TestEmulatorCommandPrintsWhatItServes(t *testing.T) {
	endpoint, regions, key := startEmulatorCmd(t, "--regions", "West Europe, East Asia,Brazil South,Australia East")
	if key != cosmos.EmulatorKey {
		t.Fatalf("printed key %q, want the well-known emulator key", key)
	}
	if len(regions) != 4 || regions[0].Name != "West Europe" || !regions[0].Write || regions[1].Write {
		t.Fatalf("printed regions %+v", regions)
	}
	cred, _ := cosmos.NewMasterKey(key)
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
	resp, err := tr.Do(context.Background(), endpoint, &cosmos.Request{Method: "GET", Path: "/"})
	if err != nil {
		t.Fatal(err)
	}
	var acct cosmos.Account
	_ = json.Unmarshal(resp.Body, &acct)
	if got := strings.Join(acct.ReadRegions(), ","); got != "West Europe,East Asia,Brazil South,Australia East" {
		t.Fatalf("GET / lists %s", got)
	}
	// The default database and container exist.
	if _, err := tr.Do(context.Background(), endpoint, &cosmos.Request{Method: "GET", Path: cosmos.ContainerPath("app", "items")}); err != nil {
		t.Fatalf("default container: %v", err)
	}
}

func TestEmulatorControlSubcommands(t *testing.T) {
	endpoint, _, _ := startEmulatorCmd(t)
	run := func(args ...string) (int, string, string) {
		io, out, errOut := testIO()
		code := Run(context.Background(), io, append(args, "--endpoint", endpoint))
		return code, out.String(), errOut.String()
	}
	if code, out, errOut := run("emulator", "fault", "add", "--region", "West US", "--op", "reads", "--effect", "status", "--status", "503"); code != 0 || !strings.Contains(out, "added fault f1") {
		t.Fatalf("fault add → %d %q %q", code, out, errOut)
	}
	if code, out, _ := run("emulator", "fault", "list"); code != 0 || !strings.Contains(out, "status 503/0") || !strings.Contains(out, "West US") {
		t.Fatalf("fault list → %d %q", code, out)
	}
	if code, out, _ := run("emulator", "failover", "west us"); code != 0 || !strings.Contains(out, "West US") {
		t.Fatalf("failover → %d %q", code, out)
	}
	if code, out, _ := run("emulator", "status", "-o", "json"); code != 0 || !strings.Contains(out, `"write": true`) {
		t.Fatalf("status → %d %q", code, out)
	}
	if code, _, _ := run("emulator", "fault", "remove", "f1"); code != 0 {
		t.Fatalf("fault remove → %d", code)
	}
	bad := []struct {
		name string
		args []string
		want int
		msg  string
	}{
		{"unknown region for failover", []string{"emulator", "failover", "Mars"}, ExitUsage, "East US"},
		{"unknown effect", []string{"emulator", "fault", "add", "--effect", "explode"}, ExitUsage, "valid effects"},
		{"negative delay", []string{"emulator", "fault", "add", "--effect", "delay", "--delay", "-1s"}, ExitUsage, "negative"},
		{"missing fault", []string{"emulator", "fault", "remove", "f99"}, ExitNotFound, "f99"},
		{"negative lag", []string{"emulator", "replication", "--lag", "-2s"}, ExitUsage, "negative"},
		{"latency without a distribution", []string{"emulator", "latency", "--region", "West US"}, ExitUsage, "--fixed"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := run(tc.args...)
			if code != tc.want || !strings.Contains(errOut, tc.msg) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Fatalf("→ exit %d, stderr %q; want exit %d and one line mentioning %q", code, errOut, tc.want, tc.msg)
			}
		})
	}
}

func TestEmulatorCommandRejectsBadInput(t *testing.T) {
	cases := []struct {
		name string
		args []string
		msg  string
	}{
		{"negative lag", []string{"emulator", "--replication-lag", "-1s"}, "negative"},
		{"missing scenario", []string{"emulator", "--scenario", "/nonexistent/x.toml"}, "does not exist"},
		{"missing key file", []string{"emulator", "--key-file", "/nonexistent/key"}, "does not exist"},
		{"duplicate region", []string{"emulator", "--port", "0", "--regions", "East US,eastus"}, "twice"},
		{"bad port", []string{"emulator", "--port", "70000"}, "port"},
		{"unknown flag", []string{"emulator", "--colour"}, "unknown flag"},
		{"bad partition key path", []string{"emulator", "--port", "0", "--partition-key", "pk"}, "must start with /"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			io, _, errOut := testIO()
			code := Run(context.Background(), io, tc.args)
			if code != ExitUsage || !strings.Contains(errOut.String(), tc.msg) {
				t.Fatalf("exit %d, stderr %q; want %d mentioning %q", code, errOut.String(), ExitUsage, tc.msg)
			}
		})
	}
}
