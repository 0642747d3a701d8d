package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/emulator"
)

// A JWT-shaped test token, without an exp claim: the emulator compares it, nothing more.
const testAADToken = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJjb3Ntb3NjdGwtdGVzdCJ9.dGVzdC1zaWduYXR1cmU"

// aadAccount starts an emulator that accepts testAADToken and points the environment at
// it with Azure AD auth and a token file holding token, and no key anywhere.
func aadAccount(t *testing.T, token string) (*emulator.Server, string) {
	t.Helper()
	srv := testAccount(t, func(c *emulator.Config) { c.AADToken = testAADToken })
	os.Unsetenv("COSMOSCTL_KEY")
	t.Setenv("COSMOSCTL_AUTH", "aad")
	path := filepath.Join(t.TempDir(), "ci.token")
	if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("COSMOSCTL_AAD_TOKEN_FILE", path)
	return srv, path
}

func TestAzureADTokenFileCreatesAndReadsWithoutAKey(t *testing.T) {
	aadAccount(t, testAADToken)
	if _, ok := os.LookupEnv("COSMOSCTL_KEY"); ok {
		t.Fatal("COSMOSCTL_KEY is set: the test must run with no key configured")
	}
	r := cosmosctl(t, `{"id":"aad1","pk":"t1","total":7}`, "create", "-f", "-")
	if r.code != ExitOK || !strings.Contains(r.out, `"total":7`) {
		t.Fatalf("create with Azure AD: %+v", r)
	}
	r = cosmosctl(t, "", "read", "aad1", "--pk", "t1")
	if r.code != ExitOK || !strings.Contains(r.out, `"total":7`) {
		t.Fatalf("read with Azure AD: %+v", r)
	}
	// --auth on the command line too.
	t.Setenv("COSMOSCTL_AUTH", "")
	if r := cosmosctl(t, "", "read", "aad1", "--pk", "t1", "--auth", "aad"); r.code != ExitOK {
		t.Fatalf("read with --auth aad: %+v", r)
	}
}

func TestAzureADFailuresExitCodes(t *testing.T) {
	t.Run("a token the account refuses is exit 7", func(t *testing.T) {
		aadAccount(t, "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ3cm9uZyJ9.d3Jvbmc")
		r := cosmosctl(t, "", "read", "x", "--pk", "p")
		if r.code != ExitAuth || !strings.Contains(r.errOut, "401") {
			t.Fatalf("wrong token: %+v", r)
		}
		if strings.Contains(r.errOut, "d3Jvbmc") || strings.Contains(r.errOut, testAADToken) {
			t.Fatalf("the error shows a token: %s", r.errOut)
		}
	})
	t.Run("a missing token file is exit 2", func(t *testing.T) {
		_, path := aadAccount(t, testAADToken)
		os.Remove(path)
		r := cosmosctl(t, "", "read", "x", "--pk", "p")
		if r.code != ExitUsage || !strings.Contains(r.errOut, "does not exist") || !strings.Contains(r.errOut, "COSMOSCTL_AAD_TOKEN_FILE") {
			t.Fatalf("missing token file: %+v", r)
		}
	})
	t.Run("an empty token file is exit 2", func(t *testing.T) {
		_, path := aadAccount(t, testAADToken)
		os.WriteFile(path, []byte("\n"), 0o600)
		r := cosmosctl(t, "", "read", "x", "--pk", "p")
		if r.code != ExitUsage || !strings.Contains(r.errOut, "is empty") {
			t.Fatalf("empty token file: %+v", r)
		}
	})
	t.Run("--auth bogus is exit 2", func(t *testing.T) {
		testAccount(t)
		r := cosmosctl(t, "", "read", "x", "--pk", "p", "--auth", "bogus")
		if r.code != ExitUsage || !strings.Contains(r.errOut, `--auth must be key or aad, not "bogus"`) {
			t.Fatalf("--auth bogus: %+v", r)
		}
	})
	t.Run("Azure AD without an endpoint does not fall back to the embedded emulator", func(t *testing.T) {
		isolate(t)
		t.Setenv("COSMOSCTL_AUTH", "aad")
		r := cosmosctl(t, "", "read", "x", "--pk", "p")
		if r.code != ExitUsage || !strings.Contains(r.errOut, "no account endpoint is configured") {
			t.Fatalf("aad without endpoint: %+v", r)
		}
	})
}

func TestConfigShowShowsAuthAndTheTokenFileButNeverTheToken(t *testing.T) {
	_, path := aadAccount(t, testAADToken)
	for _, format := range []string{"table", "json"} {
		r := cosmosctl(t, "", "config", "show", "-o", format)
		if r.code != ExitOK {
			t.Fatalf("config show -o %s: %+v", format, r)
		}
		if strings.Contains(r.out+r.errOut, testAADToken) || strings.Contains(r.out+r.errOut, testAADToken[len(testAADToken)-4:]) {
			t.Fatalf("config show -o %s shows the token:\n%s", format, r.out)
		}
		if !strings.Contains(r.out, path) || !strings.Contains(r.out, "aad") {
			t.Fatalf("config show -o %s does not show auth and the token file path:\n%s", format, r.out)
		}
		if strings.Contains(r.errOut, "no account key is configured") {
			t.Fatalf("config show asks for a key with Azure AD auth: %s", r.errOut)
		}
	}
	s := showJSON(t, "-o", "json")
	if a := s.Settings["auth"]; a.Value != "aad" || a.Source != "env COSMOSCTL_AUTH" {
		t.Fatalf("auth row %+v", a)
	}
	if f := s.Settings["aad_token_file"]; f.Value != path || f.Source != "env COSMOSCTL_AAD_TOKEN_FILE" {
		t.Fatalf("aad_token_file row %+v", f)
	}
}

func TestEmulatorAADTokenFileFlag(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "token")
	os.WriteFile(good, []byte(testAADToken+"\n"), 0o600)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o600)
	cases := []struct {
		name string
		file string
		code int
		want string
	}{
		{"a token file", good, ExitOK, ""},
		{"a missing file", filepath.Join(dir, "nope"), ExitUsage, "does not exist"},
		{"an empty file", empty, ExitUsage, "is empty"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := &emulatorOptions{Output: "text", Port: 0, AADTokenFile: tc.file, set: func(string) bool { return false }}
			cfg, err := o.config()
			if code := ExitCode(err); code != tc.code || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("exit %d (%v), want %d containing %q", code, err, tc.code, tc.want)
			}
			if err == nil && cfg.AADToken != testAADToken {
				t.Fatalf("AADToken %q", cfg.AADToken)
			}
		})
	}
}
