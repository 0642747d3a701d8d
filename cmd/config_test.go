package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/cosmos"
)

// configEnv lists every variable config reads, so that a developer's own settings never
// leak into a test.
var configEnv = []string{
	"COSMOSCTL_CONFIG", "COSMOSCTL_PROFILE", "COSMOSCTL_ENDPOINT", "COSMOSCTL_KEY", "COSMOSCTL_KEY_FILE",
	"COSMOSCTL_CONNECTION_STRING", "COSMOSCTL_DATABASE", "COSMOSCTL_CONTAINER", "COSMOSCTL_PREFERRED_REGIONS",
	"COSMOSCTL_EXCLUDE_REGIONS", "COSMOSCTL_E2E_TIMEOUT", "COSMOSCTL_OUTPUT", "COSMOSCTL_WRITE_RETRY_POLICY",
	"COSMOSCTL_AUTH", "COSMOSCTL_AAD_TOKEN_FILE",
}

// isolatedConfig clears the environment config reads (an empty variable counts as unset),
// points COSMOSCTL_CONFIG at a file in a fresh directory holding content ("" for no file)
// and returns its path.
func isolatedConfig(t *testing.T, content string) string {
	t.Helper()
	for _, name := range configEnv {
		t.Setenv(name, "")
	}
	path := filepath.Join(t.TempDir(), "cosmosctl", "config.toml")
	t.Setenv("COSMOSCTL_CONFIG", path)
	if content != "" {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// runConfigCmd runs cosmosctl in-process with stdin and returns the exit code, stdout and
// stderr. It is Run, plus registering the config command if the root does not yet.
func runConfigCmd(stdin string, args ...string) (int, string, string) {
	io, out, errOut := testIO()
	io.In = strings.NewReader(stdin)
	root := NewRootCmd(io)
	if c, _, err := root.Find([]string{"config"}); err != nil || c.Name() != "config" {
		root.AddCommand(newConfigCmd(io))
	}
	root.SetArgs(args)
	code := ExitOK
	if err := root.ExecuteContext(context.Background()); err != nil {
		fmt.Fprintln(io.ErrOut, "Error: "+oneLine(err.Error()))
		code = ExitCode(err)
	}
	return code, out.String(), errOut.String()
}

const prodConfig = `default_profile = "prod"

[profiles.prod]
endpoint = "https://prod.documents.azure.com:443/"
key_file = "prod.key"
database = "app"
container = "orders"
preferred_regions = ["East US", "West US"]
e2e_timeout = "5s"

[profiles.prod.hedging]
threshold = "300ms"

[profiles.staging]
endpoint = "https://staging.documents.azure.com:443/"
key = "` + testAccountKey + `"
`

// prodSetup writes prodConfig and the key file next to it.
func prodSetup(t *testing.T) string {
	t.Helper()
	path := isolatedConfig(t, prodConfig)
	if err := os.WriteFile(filepath.Join(filepath.Dir(path), "prod.key"), []byte(cosmos.EmulatorKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

type shown struct {
	ConfigFile string                `json:"config_file"`
	Configured bool                  `json:"configured"`
	Settings   map[string]shownValue `json:"settings"`
}

type shownValue struct {
	Value  any    `json:"value"`
	Source string `json:"source"`
}

func showJSON(t *testing.T, args ...string) shown {
	t.Helper()
	code, out, errOut := runConfigCmd("", append([]string{"config", "show"}, args...)...)
	if code != ExitOK {
		t.Fatalf("config show %v → %d: %s", args, code, errOut)
	}
	var raw struct {
		ConfigFile string                     `json:"config_file"`
		Configured bool                       `json:"configured"`
		Settings   map[string]json.RawMessage `json:"settings"`
	}
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("config show printed %q: %v", out, err)
	}
	// The settings nest as in the file ([hedging] mode is settings.hedging.mode): the
	// cases name them as the file's keys do, hedging.mode.
	s := shown{ConfigFile: raw.ConfigFile, Configured: raw.Configured, Settings: map[string]shownValue{}}
	var flatten func(prefix string, m map[string]json.RawMessage)
	flatten = func(prefix string, m map[string]json.RawMessage) {
		for k, v := range m {
			var leaf shownValue
			var probe map[string]json.RawMessage
			if err := json.Unmarshal(v, &probe); err != nil {
				t.Fatalf("setting %s%s: %s", prefix, k, v)
			}
			if _, ok := probe["source"]; ok {
				json.Unmarshal(v, &leaf)
				s.Settings[prefix+k] = leaf
				continue
			}
			flatten(prefix+k+".", probe)
		}
	}
	flatten("", raw.Settings)
	return s
}

func TestConfigShowPrecedenceIsFlagThenEnvironmentThenProfileThenDefault(t *testing.T) {
	cases := []struct {
		name    string
		env     map[string]string
		args    []string
		setting string
		value   any
		source  string
	}{
		{"database from the default profile", nil, nil, "database", "app", "profile prod"},
		{"database from the environment", map[string]string{"COSMOSCTL_DATABASE": "envdb"}, nil, "database", "envdb", "env COSMOSCTL_DATABASE"},
		{"database from the flag", map[string]string{"COSMOSCTL_DATABASE": "envdb"}, []string{"--database", "flagdb"}, "database", "flagdb", "flag"},
		{"e2e timeout from the profile", nil, nil, "e2e_timeout_ms", 5000.0, "profile prod"},
		{"e2e timeout from the environment", map[string]string{"COSMOSCTL_E2E_TIMEOUT": "2s"}, nil, "e2e_timeout_ms", 2000.0, "env COSMOSCTL_E2E_TIMEOUT"},
		{"e2e timeout from the flag", map[string]string{"COSMOSCTL_E2E_TIMEOUT": "2s"}, []string{"--e2e-timeout", "750ms"}, "e2e_timeout_ms", 750.0, "flag"},
		{"endpoint from the environment", map[string]string{"COSMOSCTL_ENDPOINT": "https://env.documents.azure.com:443/"}, nil,
			"endpoint", "https://env.documents.azure.com:443/", "env COSMOSCTL_ENDPOINT"},
		{"endpoint from the flag", map[string]string{"COSMOSCTL_ENDPOINT": "https://env/"}, []string{"--endpoint", "https://flag/"}, "endpoint", "https://flag/", "flag"},
		{"regions from the environment", map[string]string{"COSMOSCTL_PREFERRED_REGIONS": "North Europe, West US"}, nil,
			"preferred_regions", []any{"North Europe", "West US"}, "env COSMOSCTL_PREFERRED_REGIONS"},
		{"excluded regions default to none", nil, nil, "exclude_regions", []any{}, "default"},
		{"excluded regions from the flag", nil, []string{"--exclude", "East US"}, "exclude_regions", []any{"East US"}, "flag"},
		{"hedging threshold from the profile", nil, nil, "hedging.threshold_ms", 300.0, "profile prod"},
		// The profile sets a threshold and no mode: reads are hedged, and config show says so.
		{"hedging mode is what the profile's threshold implies", nil, nil, "hedging.mode", "threshold", "implied by hedging.threshold (profile prod)"},
		{"hedging mode defaults to off", nil, []string{"--profile", "staging"}, "hedging.mode", "off", "default"},
		{"connection mode defaults to gateway", nil, nil, "connection_mode", "gateway", "default"},
		{"connection mode from the flag", nil, []string{"--connection-mode", "direct"}, "connection_mode", "direct", "flag"},
		{"write retry policy from the environment", map[string]string{"COSMOSCTL_WRITE_RETRY_POLICY": "WITH_TRACKING_ID"}, nil,
			"write_retries.policy", "tracking-id", "env COSMOSCTL_WRITE_RETRY_POLICY"},
		{"profile from the environment", map[string]string{"COSMOSCTL_PROFILE": "staging"}, nil, "profile", "staging", "env COSMOSCTL_PROFILE"},
		{"profile from the flag", map[string]string{"COSMOSCTL_PROFILE": "staging"}, []string{"--profile", "prod"}, "profile", "prod", "flag"},
		{"another profile's settings do not apply", nil, []string{"--profile", "staging"}, "database", nil, "default"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prodSetup(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			s := showJSON(t, append(tc.args, "-o", "json")...)
			got, ok := s.Settings[tc.setting]
			if !ok {
				t.Fatalf("no setting %q in %v", tc.setting, s.Settings)
			}
			if fmt.Sprint(got.Value) != fmt.Sprint(tc.value) || got.Source != tc.source {
				t.Fatalf("%s = %v from %q, want %v from %q", tc.setting, got.Value, got.Source, tc.value, tc.source)
			}
		})
	}
}

func TestConfigShowFollowsTheOutputSetting(t *testing.T) {
	prodSetup(t)
	t.Setenv("COSMOSCTL_OUTPUT", "json")
	s := showJSON(t)
	if s.Settings["output"].Source != "env COSMOSCTL_OUTPUT" || !s.Configured {
		t.Fatalf("output from %q, configured %v", s.Settings["output"].Source, s.Configured)
	}
	code, out, _ := runConfigCmd("", "config", "show", "-o", "table")
	if code != ExitOK || !strings.HasPrefix(out, "SETTING") || !strings.Contains(out, "database") {
		t.Fatalf("-o table → %d %q", code, out)
	}
}

func TestConfigShowNeverPrintsTheKey(t *testing.T) {
	cases := []struct {
		name      string
		env       map[string]string
		args      []string
		key       string
		keySource string
	}{
		{"key file of the default profile", nil, nil, cosmos.EmulatorKey, "prod.key (profile prod)"},
		{"inline key of a profile", nil, []string{"--profile", "staging"}, testAccountKey, "profile staging (inline key)"},
		{"key from the environment", map[string]string{"COSMOSCTL_KEY": testAccountKey}, nil, testAccountKey, "COSMOSCTL_KEY"},
		{"connection string from the environment", map[string]string{
			"COSMOSCTL_CONNECTION_STRING": "AccountEndpoint=https://cs.documents.azure.com:443/;AccountKey=" + testAccountKey + ";"},
			[]string{"--profile", "staging"}, testAccountKey, "connection string from COSMOSCTL_CONNECTION_STRING"},
	}
	for _, tc := range cases {
		for _, format := range []string{"table", "json"} {
			t.Run(tc.name+" as "+format, func(t *testing.T) {
				prodSetup(t)
				for k, v := range tc.env {
					t.Setenv(k, v)
				}
				code, out, errOut := runConfigCmd("", append([]string{"config", "show", "-o", format}, tc.args...)...)
				if code != ExitOK {
					t.Fatalf("exit %d: %s", code, errOut)
				}
				if strings.Contains(out+errOut, tc.key) {
					t.Fatalf("the key appears in the output:\n%s\n%s", out, errOut)
				}
				if !strings.Contains(out, config.Mask(tc.key)) || !strings.Contains(out, tc.keySource) {
					t.Fatalf("output lacks the masked key %q or its source %q:\n%s", config.Mask(tc.key), tc.keySource, out)
				}
			})
		}
	}
}

func TestConfigShowWithoutAnAccountSaysTheEmulatorIsUsed(t *testing.T) {
	isolatedConfig(t, "")
	code, out, errOut := runConfigCmd("", "config", "show")
	if code != ExitOK || !strings.Contains(errOut, "embedded emulator") || !strings.Contains(out, "endpoint") {
		t.Fatalf("→ %d\n%s\n%s", code, out, errOut)
	}
	if s := showJSON(t, "-o", "json"); s.Configured {
		t.Fatal("configured without an endpoint")
	}
}

func TestConfigSetReadsSecretsFromStdin(t *testing.T) {
	path := isolatedConfig(t, "")
	code, out, errOut := runConfigCmd(testAccountKey+"\n", "config", "set", "--profile", "prod", "key")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(out+errOut, testAccountKey) || !strings.Contains(errOut, config.Mask(testAccountKey)) {
		t.Fatalf("stdout %q, stderr %q: want the key masked", out, errOut)
	}
	f, err := config.Load(path)
	if err != nil || f.Profiles["prod"].Key.Reveal() != testAccountKey {
		t.Fatalf("stored profile %+v, %v", f.Profiles["prod"], err)
	}
	conn := "AccountEndpoint=https://cs.documents.azure.com:443/;AccountKey=" + testAccountKey
	if code, out, errOut := runConfigCmd(conn, "config", "set", "--profile", "prod", "connection_string"); code != ExitOK || strings.Contains(out+errOut, testAccountKey) {
		t.Fatalf("connection_string → %d %q %q", code, out, errOut)
	}
	if f, _ := config.Load(path); f.Profiles["prod"].IsSet("key") || f.Profiles["prod"].ConnectionString.Reveal() != conn {
		t.Fatalf("the connection string did not replace the key: %+v", f.Profiles["prod"])
	}
}

func TestConfigSetChoosesTheProfile(t *testing.T) {
	cases := []struct {
		name        string
		content     string
		env         string // COSMOSCTL_PROFILE
		args        []string
		wantProfile string
		wantDefault string
	}{
		{"a new file gets a default profile", "", "", nil, "default", "default"},
		{"the file's default profile", prodConfig, "", nil, "prod", "prod"},
		{"COSMOSCTL_PROFILE", prodConfig, "staging", nil, "staging", "prod"},
		{"--profile beats COSMOSCTL_PROFILE", prodConfig, "staging", []string{"--profile", "qa"}, "qa", "prod"},
		{"a file without a default gets one", "[profiles.prod]\ndatabase = \"a\"\n", "", nil, "default", "default"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := isolatedConfig(t, tc.content)
			t.Setenv("COSMOSCTL_PROFILE", tc.env)
			code, _, errOut := runConfigCmd("", append([]string{"config", "set", "database", "chosen"}, tc.args...)...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			f, err := config.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if f.Profiles[tc.wantProfile].Database != "chosen" || f.DefaultProfile != tc.wantDefault {
				t.Fatalf("profiles %v, default %q; want database in %q, default %q", f.ProfileNames(), f.DefaultProfile, tc.wantProfile, tc.wantDefault)
			}
		})
	}
}

func TestConfigListMarksTheDefault(t *testing.T) {
	path := prodSetup(t)
	code, out, errOut := runConfigCmd("", "config", "list")
	if code != ExitOK || !strings.Contains(errOut, path) {
		t.Fatalf("→ %d %q %q", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "*") || !strings.Contains(lines[1], "prod") || strings.HasPrefix(lines[2], "*") {
		t.Fatalf("table:\n%s", out)
	}
	code, out, _ = runConfigCmd("", "config", "list", "-o", "json")
	var listed struct {
		ConfigFile     string              `json:"config_file"`
		DefaultProfile string              `json:"default_profile"`
		Profiles       []configListProfile `json:"profiles"`
	}
	if err := json.Unmarshal([]byte(out), &listed); code != ExitOK || err != nil || listed.ConfigFile != path ||
		listed.DefaultProfile != "prod" || len(listed.Profiles) != 2 || !listed.Profiles[0].Default {
		t.Fatalf("json → %d %q (%v)", code, out, err)
	}
	isolatedConfig(t, "")
	if code, out, errOut := runConfigCmd("", "config", "list"); code != ExitOK || out != "" || !strings.Contains(errOut, "no config file") {
		t.Fatalf("without a file → %d %q %q", code, out, errOut)
	}
}

func TestConfigPathPrintsTheFile(t *testing.T) {
	path := isolatedConfig(t, "")
	if code, out, _ := runConfigCmd("", "config", "path"); code != ExitOK || out != path+"\n" {
		t.Fatalf("→ %d %q, want %q", code, out, path)
	}
}

func TestConfigRejectsBadInputWithOneLineAndExitCode2(t *testing.T) {
	cases := []struct {
		name    string
		content string // "" keeps prodConfig
		env     map[string]string
		stdin   string
		args    []string
		want    []string
	}{
		{"unknown profile lists the profiles", "", nil, "", []string{"config", "show", "--profile", "stagng"}, []string{`"stagng"`, "prod, staging"}},
		{"unknown profile from the environment", "", map[string]string{"COSMOSCTL_PROFILE": "qa"}, "", []string{"config", "show"}, []string{`"qa"`, "prod, staging"}},
		{"malformed TOML names the file and line", "[profiles.prod]\nendpoint = \"https://a/\"\ndatabase = \n", nil, "",
			[]string{"config", "show"}, []string{"config.toml", "line 3"}},
		{"unknown key in the file", "[profiles.prod]\ndatabse = \"a\"\n", nil, "", []string{"config", "list"}, []string{`"profiles.prod.databse"`, "config.toml"}},
		{"unknown key for set lists the valid ones", "", nil, "", []string{"config", "set", "databse", "a"}, []string{`"databse"`, "endpoint, key"}},
		{"negative duration in the file", "[profiles.prod]\ne2e_timeout = \"-5s\"\n", nil, "", []string{"config", "show"}, []string{"e2e_timeout must not be negative"}},
		{"negative duration flag", "", nil, "", []string{"config", "show", "--e2e-timeout", "-1s"}, []string{"--e2e-timeout must not be negative"}},
		{"negative duration variable", "", map[string]string{"COSMOSCTL_E2E_TIMEOUT": "-1s"}, "", []string{"config", "show"}, []string{"COSMOSCTL_E2E_TIMEOUT must not be negative"}},
		{"negative duration set", "", nil, "", []string{"config", "set", "hedging.step", "--", "-100ms"}, []string{"hedging.step must not be negative"}},
		{"missing key file", "[profiles.p]\nendpoint = \"https://a/\"\nkey_file = \"/nonexistent/p.key\"\n", nil, "",
			[]string{"config", "show", "--profile", "p"}, []string{"/nonexistent/p.key", "does not exist", "key_file"}},
		{"missing key file flag", "", nil, "", []string{"config", "show", "--key-file", "/nonexistent/k"}, []string{"/nonexistent/k", "does not exist", "--key-file"}},
		{"secret as an argument", "", nil, "", []string{"config", "set", "key", testAccountKey}, []string{"pipe it in", "printf %s"}},
		{"connection string as an argument", "", nil, "", []string{"config", "set", "connection_string", "AccountKey=" + testAccountKey}, []string{"pipe it in"}},
		{"no secret on stdin", "", nil, "", []string{"config", "set", "key"}, []string{"no key on stdin"}},
		{"secret on stdin that is not a key", "", nil, "not*a*key\n", []string{"config", "set", "key"}, []string{"not valid base64"}},
		{"value missing", "", nil, "", []string{"config", "set", "database"}, []string{"needs a VALUE"}},
		{"bad output", "", nil, "", []string{"config", "show", "-o", "yaml"}, []string{"--output must be table, json or tsv"}},
		{"unknown subcommand", "", nil, "", []string{"config", "edit"}, []string{`unknown command "edit"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := prodSetup(t)
			if tc.content != "" {
				if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			before, _ := os.ReadFile(path)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			code, out, errOut := runConfigCmd(tc.stdin, tc.args...)
			if code != ExitUsage || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Fatalf("exit %d, stderr %q; want %d and one line", code, errOut, ExitUsage)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q does not mention %q", errOut, w)
				}
			}
			if strings.Contains(out+errOut, testAccountKey) || strings.Contains(out+errOut, cosmos.EmulatorKey) {
				t.Errorf("a key appears in the output: %q %q", out, errOut)
			}
			if after, _ := os.ReadFile(path); string(after) != string(before) {
				t.Error("the config file changed")
			}
		})
	}
}
