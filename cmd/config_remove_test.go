package cmd

import (
	"os"
	"strings"
	"testing"
)

func TestConfigSetEmptyValueLeavesNoEmptyTables(t *testing.T) {
	isolate(t)
	path := os.Getenv("COSMOSCTL_CONFIG")
	for _, args := range [][]string{
		{"config", "set", "--profile", "p", "database", "db"},
		{"config", "set", "--profile", "p", "hedging.threshold", "300ms"},
		{"config", "set", "--profile", "p", "hedging.threshold", ""},
		{"config", "set", "--profile", "p", "database", ""},
	} {
		if r := cosmosctl(t, "", args...); r.code != ExitOK {
			t.Fatalf("%q: exit %d: %s", args, r.code, r.errOut)
		}
	}
	data, _ := os.ReadFile(path)
	if got := string(data); strings.Contains(got, "hedging") || !strings.Contains(got, "[profiles.p]") {
		t.Errorf("after removing every setting, the file is %q; want the profile's table and nothing else", got)
	}
	r := cosmosctl(t, "", "config", "set", "--profile", "nosuch", "database", "")
	if data, _ := os.ReadFile(path); r.code != ExitUsage || strings.Contains(string(data), "nosuch") || !strings.Contains(r.errOut, `no profile "nosuch"`) {
		t.Errorf("removing from a missing profile: exit %d, %s; file %q", r.code, r.errOut, data)
	}
}
