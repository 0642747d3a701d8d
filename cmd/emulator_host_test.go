package cmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// runEmulatorPrinted runs `cosmosctl emulator --port 0 ARGS` until the test ends and
// returns what it printed once it is serving.
func runEmulatorPrinted(t *testing.T, args ...string) (out, errOut string) {
	t.Helper()
	io, o, e := testIO()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- Run(ctx, io, append([]string{"emulator", "--port", "0"}, args...)) }()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("emulator exited with %d after interrupt: %s", code, e.String())
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(e.String(), "emulator running") {
		select {
		case code := <-done:
			t.Fatalf("emulator exited with %d: %s", code, e.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("emulator did not start within 10 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return o.String(), e.String()
}

func writeTestKey(t *testing.T, key string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(path, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A key of our own: 64 bytes, base64.
const testOwnKey = "b3duLWtleS1vd24ta2V5LW93bi1rZXktb3duLWtleS1vd24ta2V5LW93bi1rZXktb3duLWtleS1vd24ta2V5LQ=="

func TestIsLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"":                      true, // the default, 127.0.0.1
		"127.0.0.1":             true,
		"127.0.0.2":             true,
		"127.255.255.254":       true,
		"::1":                   true,
		"[::1]":                 true,
		"localhost":             true,
		"LocalHost":             true,
		"localhost.":            true,
		"::ffff:127.0.0.1":      true,
		"0.0.0.0":               false,
		"::":                    false,
		"[::]":                  false,
		"192.168.1.5":           false,
		"10.0.0.1":              false,
		"128.0.0.1":             false,
		"myhost":                false,
		"localhost.example.com": false,
	} {
		if got := isLoopbackHost(host); got != want {
			t.Errorf("isLoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestEmulatorRefusesTheWellKnownKeyOffLoopback(t *testing.T) {
	scenario := filepath.Join(t.TempDir(), "s.toml")
	if err := os.WriteFile(scenario, []byte("host = \"0.0.0.0\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wellKnown := writeTestKey(t, cosmos.EmulatorKey)
	for name, args := range map[string][]string{
		"wildcard IPv4":                         {"--host", "0.0.0.0"},
		"wildcard IPv6":                         {"--host", "::"},
		"an interface address":                  {"--host", "192.0.2.10"},
		"a host name":                           {"--host", "myhost.example.com"},
		"the scenario's host":                   {"--scenario", scenario},
		"a key file holding the well-known key": {"--host", "0.0.0.0", "--key-file", wellKnown},
	} {
		t.Run(name, func(t *testing.T) {
			io, out, errOut := testIO()
			code := Run(context.Background(), io, append([]string{"emulator", "--port", "0"}, args...))
			msg := strings.TrimSpace(errOut.String())
			if code != ExitUsage || strings.Contains(msg, "\n") || !strings.Contains(msg, "--key-file") || !strings.Contains(msg, "--insecure-public-key") {
				t.Fatalf("exit %d, stderr %q; want exit %d and one line naming --key-file and --insecure-public-key", code, msg, ExitUsage)
			}
			if out.String() != "" {
				t.Fatalf("printed %q on stdout before refusing", out.String())
			}
		})
	}
}

func TestEmulatorServesLoopbackHostsWithTheWellKnownKey(t *testing.T) {
	for _, host := range []string{"127.0.0.2", "localhost"} {
		t.Run(host, func(t *testing.T) {
			_, errOut := runEmulatorPrinted(t, "--host", host, "-o", "json")
			if strings.Contains(errOut, "warning") {
				t.Fatalf("warned on loopback host %s: %s", host, errOut)
			}
		})
	}
}

func TestEmulatorOnAWildcardHostPrintsUsableEndpoints(t *testing.T) {
	keyFile := writeTestKey(t, testOwnKey)
	out, errOut := runEmulatorPrinted(t, "--host", "0.0.0.0", "--key-file", keyFile, "-o", "json")
	var printed struct {
		Endpoint string               `json:"endpoint"`
		Key      string               `json:"key"`
		Regions  []emulatorRegionJSON `json:"regions"`
	}
	if err := json.Unmarshal([]byte(out), &printed); err != nil {
		t.Fatalf("printed %q: %v", out, err)
	}
	if !strings.HasPrefix(printed.Endpoint, "http://127.0.0.1:") || printed.Key != "" {
		t.Fatalf("printed endpoint %q, key %q; want http://127.0.0.1:PORT and no key", printed.Endpoint, printed.Key)
	}
	for _, r := range printed.Regions {
		if !strings.HasPrefix(r.Endpoint, "http://127.0.0.1:") {
			t.Fatalf("region %s printed as %q", r.Region, r.Endpoint)
		}
	}
	if !strings.Contains(errOut, "all interfaces") || !strings.Contains(errOut, keyFile) {
		t.Fatalf("stderr %q does not say it listens on all interfaces with the key from %s", errOut, keyFile)
	}
	cred, _ := cosmos.NewMasterKey(testOwnKey)
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
	for _, ep := range []string{printed.Endpoint, printed.Regions[1].Endpoint} {
		if _, err := tr.Do(context.Background(), ep, &cosmos.Request{Method: "GET", Path: cosmos.ContainerPath("app", "items")}); err != nil {
			t.Fatalf("the printed endpoint %s does not answer: %v", ep, err)
		}
	}
}

func TestEmulatorInsecurePublicKeyAllowsAWildcardHost(t *testing.T) {
	out, errOut := runEmulatorPrinted(t, "--host", "::", "--insecure-public-key")
	if !strings.Contains(out, "endpoint  http://127.0.0.1:") || strings.Contains(out, "[::]") {
		t.Fatalf("text output %q; want a 127.0.0.1 endpoint", out)
	}
	if !strings.Contains(out, cosmos.EmulatorKey) {
		t.Fatalf("text output %q does not show the well-known key", out)
	}
	if !strings.Contains(errOut, "all interfaces") || !strings.Contains(errOut, "public") {
		t.Fatalf("stderr %q does not warn that the public key is served on all interfaces", errOut)
	}
}
