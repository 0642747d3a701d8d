package cmd

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator"
)

// complete runs `cosmosctl __complete ARGS…`, as the shell scripts do on Tab, and returns
// the completions (descriptions cut off) and the directive line. It fails the test if
// stdout holds anything but completions and the directive.
func complete(t *testing.T, args ...string) (values []string, directive string) {
	t.Helper()
	r := cosmosctl(t, "", append([]string{"__complete"}, args...)...)
	if r.code != 0 {
		t.Fatalf("__complete %q exited %d: %s", args, r.code, r.errOut)
	}
	lines := strings.Split(strings.TrimSuffix(r.out, "\n"), "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[len(lines)-1], ":") {
		t.Fatalf("__complete %q: stdout does not end with the directive:\n%s", args, r.out)
	}
	for _, l := range lines[:len(lines)-1] {
		if strings.HasPrefix(l, ":") || strings.Contains(l, "Error") || strings.Contains(l, "warning") {
			t.Fatalf("__complete %q: stdout has something that is not a completion: %q\n%s", args, l, r.out)
		}
		v, _, _ := strings.Cut(l, "\t")
		values = append(values, v)
	}
	return values, lines[len(lines)-1]
}

const noFileCompDirective = ":4"

// isolateCache points the user cache directory (completion's region cache) at a temp dir.
func isolateCache(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", dir)
	t.Setenv("HOME", t.TempDir())
	return dir
}

func TestCompletionScriptsGenerateForEveryShell(t *testing.T) {
	isolate(t)
	marks := map[string]string{
		"bash":       "complete -o default -F __start_cosmosctl cosmosctl",
		"zsh":        "#compdef cosmosctl",
		"fish":       "complete -c cosmosctl",
		"powershell": "Register-ArgumentCompleter -CommandName 'cosmosctl'",
	}
	for shell, mark := range marks {
		r := cosmosctl(t, "", "completion", shell)
		if r.code != 0 || !strings.Contains(r.out, mark) || !strings.Contains(r.out, "__complete") || r.errOut != "" {
			t.Errorf("completion %s: code %d, stderr %q, script without %q", shell, r.code, r.errOut, mark)
		}
		// completions/ holds exactly what the command prints (go generate writes it).
		file := filepath.Join("..", "completions", CompletionFiles()[shell])
		if data, err := os.ReadFile(file); err != nil || string(data) != r.out {
			t.Errorf("%s is not what `cosmosctl completion %s` prints: run go generate ./... (%v)", file, shell, err)
		}
	}
	if r := cosmosctl(t, "", "completion", "tcsh"); r.code != ExitUsage {
		t.Errorf("completion tcsh: code %d, want %d: %s", r.code, ExitUsage, r.errOut)
	}
	if r := cosmosctl(t, "", "completion", "bash", "--no-descriptions"); r.code != 0 || !strings.Contains(r.out, "__completeNoDesc") {
		t.Errorf("completion bash --no-descriptions: code %d, no __completeNoDesc", r.code)
	}
}

func TestProfileCompletionListsTheProfilesOfTheConfigFile(t *testing.T) {
	isolate(t)
	isolatedConfig(t, `default_profile = "prod"

[profiles.prod]
endpoint = "https://prod.documents.azure.com:443/"

[profiles.staging]
database = "app"
`)
	for _, args := range [][]string{
		{"read", "--profile", ""},
		{"regions", "--profile", ""},
		{"config", "show", "--profile", ""},
		{"config", "set", "--profile", ""},
	} {
		got, dir := complete(t, args...)
		if !slices.Equal(got, []string{"prod", "staging"}) || dir != noFileCompDirective {
			t.Errorf("%q: completions %q directive %s, want [prod staging] :4", args, got, dir)
		}
	}
	// No config file, or a broken one: no completions, and nothing else either.
	isolatedConfig(t, "")
	if got, _ := complete(t, "read", "--profile", ""); len(got) != 0 {
		t.Errorf("without a config file: %q", got)
	}
	isolatedConfig(t, "this is [not toml")
	if got, dir := complete(t, "read", "--profile", ""); len(got) != 0 || dir != noFileCompDirective {
		t.Errorf("with a broken config file: %q %s", got, dir)
	}
}

func TestEnumFlagCompletion(t *testing.T) {
	isolate(t)
	isolateCache(t)
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"read", "-o", ""}, []string{"table", "json"}},
		{[]string{"query", "-o", ""}, []string{"table", "json", "ndjson", "tsv"}},
		{[]string{"query", "SELECT * FROM c", "--pk", ""}, nil},
		{[]string{"hedge-test", "--op", ""}, []string{"read", "query", "query-cross"}},
		{[]string{"config", "set", "output", ""}, []string{"table", "json", "ndjson", "tsv"}},
		{[]string{"regions", "--output", ""}, []string{"table", "json", "tsv"}},
		{[]string{"config", "list", "-o", ""}, []string{"table", "json", "tsv"}},
		{[]string{"version", "-o", ""}, []string{"table", "json"}},
		{[]string{"emulator", "status", "-o", ""}, []string{"table", "json"}},
		{[]string{"emulator", "fault", "list", "-o", ""}, []string{"table", "json", "tsv"}},
		{[]string{"create", "--write-retries", ""}, []string{"off", "retries", "tracking-id"}},
		{[]string{"patch", "--write-retries", ""}, []string{"off", "retries"}},
		{[]string{"import", "x.ndjson", "--mode", ""}, []string{"create", "upsert"}},
		{[]string{"read", "--connection-mode", ""}, []string{"gateway", "direct", "gateway2"}},
		{[]string{"hedge-test", "--scenario", ""}, emulator.BuiltinScenarioNames()},
		{[]string{"hedge-test", "--scenario", "th"}, []string{"throttle"}},
		{[]string{"emulator", "fault", "add", "--effect", ""}, []string{"delay", "status", "hang", "refuse", "drop-response"}},
		{[]string{"config", "set", "hedging.mode", ""}, []string{"off", "threshold", "adaptive"}},
		{[]string{"completion", ""}, []string{"bash", "fish", "powershell", "zsh"}},
		{[]string{"help", "e"}, []string{"emulator", "export", "embedded-emulator", "environment", "exit-codes"}},
		{[]string{"export", "--source", ""}, []string{"query", "change-feed"}},
		{[]string{"export", "--progress", ""}, []string{"bar", "json", "off"}},
		{[]string{"export", "--output", ""}, []string{"ndjson"}},
		{[]string{"export", "--output-file", ""}, nil}, // a file
		{[]string{"import", "x.ndjson", "--progress", ""}, []string{"bar", "json", "off"}},
		{[]string{"hedge-test", "--strategies", "none,"}, []string{"none,threshold=500ms/100ms", "none,fanout", "none,adaptive", "none,adaptive=10%"}},
	}
	for _, c := range cases {
		got, _ := complete(t, c.args...)
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: got %q, want %q", c.args, got, c.want)
		}
	}
	// A scenario that is no built-in's prefix is a file.
	if got, dir := complete(t, "hedge-test", "--scenario", "exam"); !slices.Equal(got, []string{"toml"}) || dir != ":8" {
		t.Errorf("--scenario exam: %q %s, want toml files", got, dir)
	}
	// Item ids are not files.
	if got, dir := complete(t, "read", ""); len(got) != 0 || dir != noFileCompDirective {
		t.Errorf("read ID: %q %s", got, dir)
	}
}

func TestRegionCompletionWithNothingConfiguredOffersTheEmbeddedEmulatorsRegions(t *testing.T) {
	isolate(t)
	isolateCache(t)
	start := time.Now()
	got, _ := complete(t, "read", "--region", "")
	if !slices.Equal(got, emulator.DefaultRegions) {
		t.Errorf("--region: %q, want %q", got, emulator.DefaultRegions)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("completion took %s", d)
	}
	// The embedded emulator was not started: it would have created its data directory.
	if _, err := os.Stat(os.Getenv("COSMOSCTL_EMULATOR_DATA")); !os.IsNotExist(err) {
		t.Errorf("completion started the embedded emulator (its data directory exists: %v)", err)
	}
}

func TestRegionCompletionAsksTheAccountAndCachesTheNames(t *testing.T) {
	srv := testAccount(t, func(c *emulator.Config) {
		c.Regions = []emulator.RegionConfig{{Name: "Japan East"}, {Name: "Brazil South"}, {Name: "UK West"}}
	})
	cache := isolateCache(t)
	want := []string{"Japan East", "Brazil South", "UK West"}
	if got, _ := complete(t, "read", "--region", ""); !slices.Equal(got, want) {
		t.Fatalf("--region: %q, want %q", got, want)
	}
	files, _ := filepath.Glob(filepath.Join(cache, "cosmosctl", "completion", "regions-*.json"))
	if len(files) != 1 {
		t.Fatalf("cache files: %q", files)
	}
	if data, _ := os.ReadFile(files[0]); strings.Contains(string(data), srv.Key()) {
		t.Fatal("the region cache holds the key")
	}
	// Comma-separated lists keep what is typed and do not offer it again.
	got, _ := complete(t, "read", "--exclude", "japan east,")
	if !slices.Equal(got, []string{"japan east,Brazil South", "japan east,UK West"}) {
		t.Errorf("--exclude 'japan east,': %q", got)
	}
	if got, _ := complete(t, "regions", "--preferred-regions", ""); !slices.Equal(got, want) {
		t.Errorf("--preferred-regions: %q", got)
	}
	// With the account gone, the cached names still complete.
	srv.Close()
	if got, _ := complete(t, "read", "--region", ""); !slices.Equal(got, want) {
		t.Errorf("from the cache: %q", got)
	}
}

func TestRegionCompletionOfAnUnreachableAccountOffersNothingQuickly(t *testing.T) {
	isolate(t)
	isolateCache(t)
	t.Setenv("COSMOSCTL_ENDPOINT", "http://127.0.0.1:1/")
	t.Setenv("COSMOSCTL_KEY", testAccountKey)
	start := time.Now()
	got, dir := complete(t, "read", "--region", "")
	if len(got) != 0 || dir != noFileCompDirective {
		t.Errorf("unreachable account: %q %s", got, dir)
	}
	if d := time.Since(start); d > completionTimeout+time.Second {
		t.Errorf("completion took %s", d)
	}
	// No key at all: nothing, and no error on stdout.
	t.Setenv("COSMOSCTL_KEY", "")
	if got, _ := complete(t, "read", "--region", ""); len(got) != 0 {
		t.Errorf("no key: %q", got)
	}
}

func TestEmulatorRegionCompletionAsksTheRunningEmulator(t *testing.T) {
	isolate(t)
	endpoint, _, _ := startEmulatorCmd(t, "--regions", "West Europe,East Asia")
	want := []string{"West Europe", "East Asia"}
	if got, _ := complete(t, "emulator", "failover", "--endpoint", endpoint, ""); !slices.Equal(got, want) {
		t.Errorf("failover REGION: %q, want %q", got, want)
	}
	if got, _ := complete(t, "emulator", "failover", "--endpoint", endpoint, "West Europe", ""); len(got) != 0 {
		t.Errorf("failover takes one region: %q", got)
	}
	t.Setenv("COSMOSCTL_EMULATOR_ENDPOINT", endpoint)
	if got, _ := complete(t, "emulator", "fault", "add", "--region", ""); !slices.Equal(got, want) {
		t.Errorf("fault add --region: %q, want %q", got, want)
	}
	// No emulator there: the default regions.
	if got, _ := complete(t, "emulator", "latency", "--endpoint", "http://127.0.0.1:1", "--region", ""); !slices.Equal(got, emulator.DefaultRegions) {
		t.Errorf("no emulator: %q", got)
	}
}
