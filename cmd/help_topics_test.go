package cmd

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

func helpTopic(t *testing.T, name string) string {
	t.Helper()
	r := cosmosctl(t, "", "help", name)
	if r.code != 0 || r.errOut != "" {
		t.Fatalf("help %s: %+v", name, r)
	}
	return r.out
}

func TestHelpTopicsPrintTheirText(t *testing.T) {
	isolate(t)
	for topic, want := range map[string]string{
		"environment":   "COSMOSCTL_WRITE_RETRY_POLICY",
		"configuration": "[profiles.prod.hedging]",
		"scenarios":     "[[replica_move]]",
		"exit-codes":    "10  a --fail-on threshold was breached",
	} {
		if out := helpTopic(t, topic); !strings.Contains(out, want) {
			t.Errorf("help %s lacks %q:\n%s", topic, want, out)
		}
	}
	// They are listed as help topics, not commands.
	r := cosmosctl(t, "", "--help")
	_, topics, _ := strings.Cut(r.out, "Additional help topics:")
	for _, topic := range []string{"environment", "configuration", "scenarios", "exit-codes"} {
		if !strings.Contains(topics, "cosmosctl "+topic) {
			t.Errorf("cosmosctl --help does not list %s under Additional help topics:\n%s", topic, r.out)
		}
	}
}

// Every variable the code reads is documented: a new COSMOSCTL_ variable without a line
// in `cosmosctl help environment` fails here.
func TestEnvironmentTopicListsEveryVariableTheCodeReads(t *testing.T) {
	isolate(t)
	text := helpTopic(t, "environment")
	// Variables are read by their full names as string literals: os.Getenv("COSMOSCTL_KEY").
	re := regexp.MustCompile(`"(COSMOSCTL_[A-Z0-9_]*[A-Z0-9])"`)
	found := map[string]bool{"NO_COLOR": true, "COLUMNS": true}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.HasSuffix(path, "help_topics.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range re.FindAllStringSubmatch(string(data), -1) {
			found[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !found["COSMOSCTL_ENDPOINT"] || !found["COSMOSCTL_EMULATOR_ENDPOINT"] {
		t.Fatalf("the scan found too little: %v", found)
	}
	var missing []string
	for v := range found {
		if !regexp.MustCompile(`(?m)^\s+` + v + `\s`).MatchString(text) {
			missing = append(missing, v)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("help environment does not describe %s", strings.Join(missing, ", "))
	}
}

func TestConfigurationTopicShowsEverySetting(t *testing.T) {
	isolate(t)
	text := helpTopic(t, "configuration")
	for _, key := range config.SettingKeys() {
		leaf := key[strings.LastIndex(key, ".")+1:]
		if !regexp.MustCompile(`(?m)^\s*#?\s*` + regexp.QuoteMeta(leaf) + ` = `).MatchString(text) {
			t.Errorf("help configuration has no example of %s", key)
		}
	}
	for _, want := range []string{"COSMOSCTL_CONFIG", "cosmosctl config path", "1. a flag", "2. an environment variable", "3. the profile", "4. what the endpoint announces", "5. the built-in default"} {
		if !strings.Contains(text, want) {
			t.Errorf("help configuration lacks %q", want)
		}
	}
}

// Every setting of a scenario file, every effect and every built-in scenario is in
// `cosmosctl help scenarios`.
func TestScenariosTopicCoversTheScenarioFile(t *testing.T) {
	isolate(t)
	text := helpTopic(t, "scenarios")
	var names []string
	var collect func(reflect.Type)
	collect = func(ty reflect.Type) {
		for i := range ty.NumField() {
			f := ty.Field(i)
			if f.Anonymous {
				collect(f.Type)
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
			if name != "" && name != "-" {
				names = append(names, name)
			}
		}
	}
	for _, v := range []any{emulator.Config{}, emulator.RegionConfig{}, emulator.DatabaseConfig{}, emulator.ContainerConfig{},
		faults.LatencySpec{}, faults.Rule{}, emulator.ReplicaMove{}} {
		collect(reflect.TypeOf(v))
	}
	for _, name := range names {
		if !regexp.MustCompile(`(^|[\s\[.(])` + name + `( = |\]\]|[,)])`).MatchString(text) {
			t.Errorf("help scenarios does not show the setting %s", name)
		}
	}
	for _, effect := range []string{faults.EffectDelay, faults.EffectStatus, faults.EffectHang, faults.EffectRefuse, faults.EffectDropResponse,
		emulator.MoveGone, emulator.MoveHang, emulator.MoveRefuse} {
		if !strings.Contains(text, effect) {
			t.Errorf("help scenarios does not describe the effect %s", effect)
		}
	}
	for _, s := range emulator.BuiltinScenarioNames() {
		if !strings.Contains(text, "  "+s+" ") {
			t.Errorf("help scenarios does not list the built-in scenario %s", s)
		}
	}
}

// Every command shows how it is used: help topics aside, each has an Example.
func TestEveryCommandHasAnExample(t *testing.T) {
	io, _, _ := testIO()
	var missing []string
	walk(NewRootCmd(io), func(c *cobra.Command) {
		if c.IsAdditionalHelpTopicCommand() || c.Hidden {
			return
		}
		if strings.TrimSpace(c.Example) == "" {
			missing = append(missing, c.CommandPath())
		}
	})
	if len(missing) > 0 {
		t.Errorf("commands without an Example: %s", strings.Join(missing, ", "))
	}
}

func TestStatusesTopicListsEveryRowOfTheTable(t *testing.T) {
	out := helpTopic(t, "statuses")
	for _, s := range cosmos.Statuses {
		code := fmt.Sprintf("%d/%d", s.Code, s.Sub)
		if s.Sub < 0 {
			code = fmt.Sprintf("%d/*", s.Code)
		}
		if !strings.Contains(out, "  "+code+" ") {
			t.Errorf("cosmosctl help statuses does not list %s", code)
		}
	}
	if !strings.Contains(out, "RU/s budget was used up") {
		t.Errorf("the 429/3200 row is not in words:\n%s", out)
	}
}
