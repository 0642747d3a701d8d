package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// env is a fake environment.
type env map[string]string

func (e env) lookup(name string) (string, bool) { v, ok := e[name]; return v, ok }

func ptr[T any](v T) *T { return &v }

const otherKey = "b3RoZXIta2V5LWZvci10ZXN0cy1vbmx5LTAxMjM0NTY3ODk="

// profileConfig writes a file with a default profile "prod" (key in prod.key next to it)
// and a profile "dev" holding a connection string.
func profileConfig(t *testing.T) string {
	t.Helper()
	path := writeConfig(t, fullProfile)
	if err := os.WriteFile(filepath.Join(filepath.Dir(path), "prod.key"), []byte(emulatorKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestResolvePrecedence(t *testing.T) {
	path := profileConfig(t)
	cases := []struct {
		name  string
		flags Flags
		env   env
		check func(t *testing.T, s Settings)
	}{
		{"profile beats default", Flags{}, env{}, func(t *testing.T, s Settings) {
			expect(t, s, "database", "app", s.Database, "profile prod")
			expect(t, s, "output", "json", s.Output, "profile prod")
			expect(t, s, "e2e_timeout", "5s", s.E2ETimeout.String(), "profile prod")
			expect(t, s, "profile", "prod", s.Profile, "default_profile")
		}},
		{"environment beats profile", Flags{}, env{"COSMOSCTL_DATABASE": "envdb", "COSMOSCTL_OUTPUT": "TABLE", "COSMOSCTL_E2E_TIMEOUT": "2s",
			"COSMOSCTL_PREFERRED_REGIONS": "North Europe, West US", "COSMOSCTL_WRITE_RETRY_POLICY": "WITH_RETRIES"}, func(t *testing.T, s Settings) {
			expect(t, s, "database", "envdb", s.Database, "env COSMOSCTL_DATABASE")
			expect(t, s, "output", "table", s.Output, "env COSMOSCTL_OUTPUT")
			expect(t, s, "e2e_timeout", "2s", s.E2ETimeout.String(), "env COSMOSCTL_E2E_TIMEOUT")
			expect(t, s, "preferred_regions", "North Europe|West US", strings.Join(s.PreferredRegions, "|"), "env COSMOSCTL_PREFERRED_REGIONS")
			expect(t, s, "write_retries.policy", "retries", string(s.WriteRetries.Policy), "env COSMOSCTL_WRITE_RETRY_POLICY")
			expect(t, s, "container", "orders", s.Container, "profile prod")
		}},
		{"flag beats environment", Flags{Database: ptr("flagdb"), Output: ptr("json"), E2ETimeout: ptr(time.Second),
			ExcludeRegions: ptr([]string{"East US"}), WriteRetryPolicy: ptr("off"), HedgeThreshold: ptr(time.Second)},
			env{"COSMOSCTL_DATABASE": "envdb", "COSMOSCTL_OUTPUT": "table", "COSMOSCTL_E2E_TIMEOUT": "2s", "COSMOSCTL_WRITE_RETRY_POLICY": "WITH_RETRIES"},
			func(t *testing.T, s Settings) {
				expect(t, s, "database", "flagdb", s.Database, "flag")
				expect(t, s, "output", "json", s.Output, "flag")
				expect(t, s, "e2e_timeout", "1s", s.E2ETimeout.String(), "flag")
				expect(t, s, "exclude_regions", "East US", strings.Join(s.ExcludeRegions, "|"), "flag")
				expect(t, s, "write_retries.policy", "off", string(s.WriteRetries.Policy), "flag")
				expect(t, s, "hedging.threshold", "1s", s.Hedging.Threshold.String(), "flag")
				expect(t, s, "hedging.step", "100ms", s.Hedging.Step.String(), "profile prod")
			}},
		{"defaults without a profile", Flags{}, env{"COSMOSCTL_CONFIG": "ignored: Resolve is given the path"}, func(t *testing.T, s Settings) {}},
		{"an empty variable counts as unset", Flags{}, env{"COSMOSCTL_DATABASE": "", "COSMOSCTL_PROFILE": ""}, func(t *testing.T, s Settings) {
			expect(t, s, "database", "app", s.Database, "profile prod")
		}},
		{"COSMOSCTL_PROFILE picks the profile", Flags{}, env{"COSMOSCTL_PROFILE": "dev"}, func(t *testing.T, s Settings) {
			expect(t, s, "profile", "dev", s.Profile, "env COSMOSCTL_PROFILE")
			expect(t, s, "database", "", s.Database, "default")
			expect(t, s, "output", "table", s.Output, "default")
			expect(t, s, "hedging.mode", "off", string(s.Hedging.Mode), "default")
			expect(t, s, "write_retries.policy", "off", string(s.WriteRetries.Policy), "default")
		}},
		{"--profile beats COSMOSCTL_PROFILE", Flags{Profile: ptr("prod")}, env{"COSMOSCTL_PROFILE": "dev"}, func(t *testing.T, s Settings) {
			expect(t, s, "profile", "prod", s.Profile, "flag")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Resolve(path, tc.flags, tc.env.lookup)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, s)
		})
	}
}

func expect(t *testing.T, s Settings, key, want, got, source string) {
	t.Helper()
	if got != want || s.Source(key) != source {
		t.Errorf("%s = %q from %q, want %q from %q", key, got, s.Source(key), want, source)
	}
}

func TestResolveWithoutAnyConfiguration(t *testing.T) {
	s, err := Resolve(filepath.Join(t.TempDir(), "none.toml"), Flags{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Configured() || s.Profile != "" || s.Key != "" || s.Output != OutputTable || s.Hedging.Mode != HedgingOff ||
		s.WriteRetries.Policy != WriteRetriesOff || s.E2ETimeout != 0 || s.Source("endpoint") != SourceDefault {
		t.Fatalf("settings %+v", s)
	}
}

func TestResolveCredentials(t *testing.T) {
	path := profileConfig(t)
	dir := filepath.Dir(path)
	keyFile := filepath.Join(dir, "other.key")
	if err := os.WriteFile(keyFile, []byte(otherKey), 0o600); err != nil {
		t.Fatal(err)
	}
	connStr := "AccountEndpoint=https://conn.documents.azure.com:443/;AccountKey=" + otherKey
	const prodEndpoint = "https://myaccount.documents.azure.com:443/"
	cases := []struct {
		name                   string
		flags                  Flags
		env                    env
		endpoint, endpointSrc  string
		key, keySrc, keySource string
	}{
		{"profile key_file relative to the config file", Flags{}, env{},
			prodEndpoint, "profile prod", emulatorKey, "profile prod", "key_file " + filepath.Join(dir, "prod.key") + " (profile prod)"},
		{"profile connection string", Flags{Profile: ptr("dev")}, env{},
			"https://localhost:8081/", "profile dev", emulatorKey, "profile dev", "connection string in profile dev"},
		{"COSMOSCTL_KEY beats the profile", Flags{}, env{"COSMOSCTL_KEY": otherKey},
			prodEndpoint, "profile prod", otherKey, "env COSMOSCTL_KEY", "COSMOSCTL_KEY"},
		{"COSMOSCTL_KEY_FILE beats the profile", Flags{}, env{"COSMOSCTL_KEY_FILE": keyFile},
			prodEndpoint, "profile prod", otherKey, "env COSMOSCTL_KEY_FILE", "COSMOSCTL_KEY_FILE " + keyFile},
		{"environment connection string beats the profile", Flags{}, env{"COSMOSCTL_CONNECTION_STRING": connStr},
			"https://conn.documents.azure.com:443/", "env COSMOSCTL_CONNECTION_STRING", otherKey, "env COSMOSCTL_CONNECTION_STRING",
			"connection string from COSMOSCTL_CONNECTION_STRING"},
		{"COSMOSCTL_ENDPOINT beats a connection string at the same level", Flags{},
			env{"COSMOSCTL_CONNECTION_STRING": connStr, "COSMOSCTL_ENDPOINT": "https://private.documents.azure.com:443/"},
			"https://private.documents.azure.com:443/", "env COSMOSCTL_ENDPOINT", otherKey, "env COSMOSCTL_CONNECTION_STRING",
			"connection string from COSMOSCTL_CONNECTION_STRING"},
		{"COSMOSCTL_KEY beats a connection string at the same level", Flags{},
			env{"COSMOSCTL_CONNECTION_STRING": "AccountEndpoint=https://conn/;AccountKey=" + emulatorKey, "COSMOSCTL_KEY": otherKey},
			"https://conn/", "env COSMOSCTL_CONNECTION_STRING", otherKey, "env COSMOSCTL_KEY", "COSMOSCTL_KEY"},
		{"flags beat the environment", Flags{Endpoint: ptr("https://flag/"), KeyFile: ptr(keyFile)},
			env{"COSMOSCTL_ENDPOINT": "https://env/", "COSMOSCTL_KEY": emulatorKey},
			"https://flag/", "flag", otherKey, "flag", "--key-file " + keyFile},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Resolve(path, tc.flags, tc.env.lookup)
			if err != nil {
				t.Fatal(err)
			}
			if s.Endpoint != tc.endpoint || s.Source("endpoint") != tc.endpointSrc {
				t.Errorf("endpoint %q from %q, want %q from %q", s.Endpoint, s.Source("endpoint"), tc.endpoint, tc.endpointSrc)
			}
			if s.Key.Reveal() != tc.key || s.Source("key") != tc.keySrc || s.KeySource != tc.keySource {
				t.Errorf("key %s from %q (%q), want %s from %q (%q)", s.Key, s.Source("key"), s.KeySource, Secret(tc.key), tc.keySrc, tc.keySource)
			}
			if !s.Configured() {
				t.Error("not Configured")
			}
		})
	}
}

func TestResolveExpandsHomeInKeyFiles(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("USERPROFILE", home)
	if err := os.WriteFile(filepath.Join(home, "k"), []byte(otherKey), 0o600); err != nil {
		t.Fatal(err)
	}
	path := writeConfig(t, "[profiles.p]\nendpoint = \"https://a/\"\nkey_file = \"~/k\"\n")
	for _, tc := range []struct {
		name  string
		flags Flags
		env   env
	}{
		{"profile", Flags{Profile: ptr("p")}, env{}},
		{"flag", Flags{KeyFile: ptr("~/k")}, env{}},
		{"environment", Flags{}, env{"COSMOSCTL_KEY_FILE": "~/k"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Resolve(path, tc.flags, tc.env.lookup)
			if err != nil || s.Key.Reveal() != otherKey {
				t.Fatalf("key %s, %v", s.Key, err)
			}
		})
	}
}

func TestResolveErrors(t *testing.T) {
	path := profileConfig(t)
	dir := filepath.Dir(path)
	missing := writeConfig(t, "default_profile = \"p\"\n[profiles.p]\nendpoint = \"https://a/\"\nkey_file = \"~/nowhere/p.key\"\n")
	cases := []struct {
		name  string
		path  string
		flags Flags
		env   env
		want  []string
	}{
		{"unknown profile lists the profiles", path, Flags{Profile: ptr("stagng")}, env{}, []string{`"stagng"`, "--profile", "dev, prod"}},
		{"unknown profile from the environment", path, Flags{}, env{"COSMOSCTL_PROFILE": "x"}, []string{`"x"`, "COSMOSCTL_PROFILE", "dev, prod"}},
		{"named profile without a file", filepath.Join(dir, "none.toml"), Flags{Profile: ptr("prod")}, env{}, []string{"no config file", "config set --profile prod"}},
		{"missing key file in the profile", missing, Flags{}, env{}, []string{"nowhere/p.key", "does not exist", "fix key_file of profile p in " + missing}},
		{"missing key file from the flag", path, Flags{KeyFile: ptr(filepath.Join(dir, "no.key"))}, env{}, []string{"no.key", "does not exist", "--key-file"}},
		{"missing key file from the environment", path, Flags{}, env{"COSMOSCTL_KEY_FILE": "/no/such.key"}, []string{"/no/such.key", "COSMOSCTL_KEY_FILE"}},
		{"negative duration flag", path, Flags{E2ETimeout: ptr(-time.Second)}, env{}, []string{"--e2e-timeout must not be negative"}},
		{"negative duration variable", path, Flags{}, env{"COSMOSCTL_E2E_TIMEOUT": "-5s"}, []string{"COSMOSCTL_E2E_TIMEOUT must not be negative"}},
		{"bad output flag", path, Flags{Output: ptr("yaml")}, env{}, []string{"--output must be table, json, ndjson or tsv"}},
		{"bad policy variable", path, Flags{}, env{"COSMOSCTL_WRITE_RETRY_POLICY": "ALWAYS"}, []string{"COSMOSCTL_WRITE_RETRY_POLICY must be"}},
		{"bad endpoint variable", path, Flags{}, env{"COSMOSCTL_ENDPOINT": "myaccount"}, []string{"COSMOSCTL_ENDPOINT must be a URL"}},
		{"key in the environment not base64", path, Flags{}, env{"COSMOSCTL_KEY": "secret*value"}, []string{"COSMOSCTL_KEY is not valid base64"}},
		{"two keys in the environment", path, Flags{}, env{"COSMOSCTL_KEY": otherKey, "COSMOSCTL_KEY_FILE": "/k"}, []string{"both set"}},
		{"bad connection string", path, Flags{}, env{"COSMOSCTL_CONNECTION_STRING": "AccountKey=secret*value"}, []string{"COSMOSCTL_CONNECTION_STRING has no AccountEndpoint"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Resolve(tc.path, tc.flags, tc.env.lookup)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "secret*value") || strings.Contains(err.Error(), otherKey) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line without secrets: %q", err)
			}
		})
	}
}

func TestResolveReadsOnlyTheKeyFileThatWins(t *testing.T) {
	path := writeConfig(t, "[profiles.p]\nendpoint = \"https://a/\"\nkey_file = \"absent.key\"\n")
	s, err := Resolve(path, Flags{Profile: ptr("p")}, env{"COSMOSCTL_KEY": otherKey}.lookup)
	if err != nil || s.Key.Reveal() != otherKey {
		t.Fatalf("key %s, %v", s.Key, err)
	}
}

func TestPath(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	if p, err := Path(env{"COSMOSCTL_CONFIG": "/etc/c.toml"}.lookup); err != nil || p != "/etc/c.toml" {
		t.Fatalf("COSMOSCTL_CONFIG: %q, %v", p, err)
	}
	p, err := Path(env{}.lookup)
	if err != nil || !strings.HasPrefix(p, home) || !strings.HasSuffix(p, filepath.Join("cosmosctl", "config.toml")) {
		t.Fatalf("default: %q, %v", p, err)
	}
}
