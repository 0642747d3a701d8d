package scripts_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// The emulator control commands go where the data commands go, resolved the same way
// (flag > environment > profile > default), with COSMOSCTL_EMULATOR_ENDPOINT, their own
// variable, before COSMOSCTL_ENDPOINT; and they sign with the key the data commands
// would use. A runbook that exports COSMOSCTL_ENDPOINT injects its faults into the
// emulator its reads go to, not into whatever listens on 127.0.0.1:8081.
func TestEmulatorControlCommandsGoWhereTheDataCommandsGo(t *testing.T) {
	bin := testkit.Binary(t)
	testkit.Isolate(t)
	start := func(key string) *emulator.Server {
		t.Helper()
		srv, err := emulator.Start(emulator.Config{Key: key}, emulator.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		return srv
	}
	a, b := start(""), start("")
	own := start(testkit.AccountKey) // an emulator with a key of its own
	keyFile := filepath.Join(t.TempDir(), "own.key")
	if err := os.WriteFile(keyFile, []byte(testkit.AccountKey), 0o600); err != nil {
		t.Fatal(err)
	}
	profiles := `default_profile = "rehearsal"
[profiles.rehearsal]
endpoint = "` + a.Endpoint() + `"
[profiles.own]
endpoint = "` + own.Endpoint() + `"
key_file = "` + keyFile + `"
`
	if err := os.WriteFile(os.Getenv("COSMOSCTL_CONFIG"), []byte(profiles), 0o600); err != nil {
		t.Fatal(err)
	}
	base := os.Environ()
	answered := func(env []string, args ...string) string {
		t.Helper()
		code, out, errOut := testkit.RunBinary(t, bin, env, "", append([]string{"emulator", "status", "-o", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("%v %v: exit %d: %s", env[len(base):], args, code, errOut)
		}
		var st struct {
			Endpoint string `json:"endpoint"`
		}
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatalf("status -o json: %v: %s", err, out)
		}
		return st.Endpoint
	}
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want *emulator.Server
	}{
		{"the default profile's endpoint", nil, nil, a},
		{"COSMOSCTL_ENDPOINT beats the profile", []string{"COSMOSCTL_ENDPOINT=" + b.Endpoint()}, nil, b},
		{"COSMOSCTL_EMULATOR_ENDPOINT beats COSMOSCTL_ENDPOINT", []string{"COSMOSCTL_ENDPOINT=" + a.Endpoint(), "COSMOSCTL_EMULATOR_ENDPOINT=" + b.Endpoint()}, nil, b},
		{"--endpoint beats them all", []string{"COSMOSCTL_ENDPOINT=" + a.Endpoint(), "COSMOSCTL_EMULATOR_ENDPOINT=" + a.Endpoint()}, []string{"--endpoint", b.Endpoint()}, b},
		{"--profile, with the profile's key file", nil, []string{"--profile", "own"}, own},
		{"COSMOSCTL_PROFILE", []string{"COSMOSCTL_PROFILE=own"}, nil, own},
		{"COSMOSCTL_KEY with the endpoint", []string{"COSMOSCTL_ENDPOINT=" + own.Endpoint(), "COSMOSCTL_KEY=" + testkit.AccountKey}, nil, own},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := answered(append(append([]string{}, base...), tc.env...), tc.args...); got != tc.want.Endpoint() {
				t.Errorf("answered by %s, want %s", got, tc.want.Endpoint())
			}
		})
	}

	// A fault added with only COSMOSCTL_ENDPOINT set lands in that emulator.
	env := append(append([]string{}, base...), "COSMOSCTL_ENDPOINT="+b.Endpoint())
	code, _, errOut := testkit.RunBinary(t, bin, env, "", "emulator", "fault", "add", "--region", "East US", "--effect", "refuse")
	if code != 0 {
		t.Fatalf("fault add: exit %d: %s", code, errOut)
	}
	if n, m := len(b.Faults().Rules()), len(a.Faults().Rules()); n != 1 || m != 0 {
		t.Errorf("fault rules: %d in the COSMOSCTL_ENDPOINT emulator, %d in the profile's; want 1 and 0", n, m)
	}
	// The key comes with the endpoint's settings: the emulator with a key of its own
	// refuses the well-known one.
	code, _, errOut = testkit.RunBinary(t, bin, append(append([]string{}, base...), "COSMOSCTL_ENDPOINT="+own.Endpoint()), "", "emulator", "status")
	if code != 7 || !strings.Contains(errOut, "401") {
		t.Errorf("the own-key emulator with the well-known key: exit %d, stderr %q; want 7 (401)", code, errOut)
	}
}
