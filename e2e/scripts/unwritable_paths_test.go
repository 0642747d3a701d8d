package scripts_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// A state or output file that import, export or changes could not write is refused
// before the command sends its first request, as a bad flag is (exit 2, one line naming
// the flag, the path and the problem), instead of being found at the first checkpoint
// or at the end, after the work and the RU it cost. Nothing is left behind: no output
// file, no state, no directory.
//
// The paths cannot be written by root either (CI runs tests as root, and a read-only
// directory does not stop root): a directory that does not exist, and sysfs, which
// takes no new file from anyone. The account counts what reaches it: a fault rule
// matching every operation, a delay of a millisecond that changes nothing else, fires
// once per request, so its count proves that none was sent.
func TestUnwritablePathsAreRefusedBeforeAnyRequest(t *testing.T) {
	bin := testkit.Binary(t)
	srv := testkit.Account(t)
	env := os.Environ()
	input := importFile(t, 20)
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	output := filepath.Join(dir, "items.ndjson")
	rejected := strings.TrimSuffix(input, ".ndjson") + ".rejected.ndjson"
	rule, err := srv.AddFault(faults.Rule{Operations: []string{faults.GroupAll}, Effect: faults.EffectDelay,
		Delay: faults.Distribution{Kind: faults.KindFixed, Value: faults.Duration(time.Millisecond)}})
	if err != nil {
		t.Fatal(err)
	}
	_, statErr := os.Stat("/sys/kernel")
	sysfs := runtime.GOOS == "linux" && statErr == nil

	for _, tc := range []struct {
		name     string
		args     []string
		readOnly bool   // needs sysfs
		says     string // the flag and the path
		problem  string
		leftover []string // files a refused run must not leave
	}{
		{"import: --state in a read-only directory", []string{"import", input, "--state", "/sys/orders.state"}, true,
			"--state /sys/orders.state", "no file can be created in /sys", []string{rejected}},
		{"import: --rejected in a missing directory", []string{"import", input, "--rejected", filepath.Join(missing, "orders.rejected.ndjson"), "--state", filepath.Join(dir, "orders.state")}, false,
			"--rejected " + filepath.Join(missing, "orders.rejected.ndjson"), "the directory " + missing + " does not exist", []string{filepath.Join(dir, "orders.state"), missing}},
		{"import: --state in a missing directory", []string{"import", input, "--state", filepath.Join(missing, "orders.state")}, false,
			"--state " + filepath.Join(missing, "orders.state"), "the directory " + missing + " does not exist", []string{rejected, missing}},
		{"export: --state in a read-only directory", []string{"export", "--output-file", output, "--state", "/sys/items.state"}, true,
			"--state /sys/items.state", "no file can be created in /sys", []string{output}},
		{"export: --output-file in a missing directory", []string{"export", "--output-file", filepath.Join(missing, "items.ndjson"), "--state", filepath.Join(dir, "items.state")}, false,
			"--output-file " + filepath.Join(missing, "items.ndjson"), "the directory " + missing + " does not exist", []string{filepath.Join(dir, "items.state"), missing}},
		{"changes: --state in a read-only directory", []string{"changes", "--state", "/sys/feed.json"}, true,
			"--state /sys/feed.json", "no file can be created in /sys", nil},
		{"changes: --state in a missing directory", []string{"changes", "--state", filepath.Join(missing, "feed.json")}, false,
			"--state " + filepath.Join(missing, "feed.json"), "the directory " + missing + " does not exist", []string{missing}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.readOnly && !sysfs {
				t.Skip("needs Linux's sysfs, a directory no one can create files in")
			}
			before := firedCount(srv, rule.ID)
			code, out, errOut := testkit.RunBinary(t, bin, env, "", tc.args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2: %s", code, errOut)
			}
			line := strings.TrimSpace(errOut)
			if strings.Contains(line, "\n") || !strings.HasPrefix(line, "Error: "+tc.says+" cannot be written: ") || !strings.Contains(line, tc.problem) {
				t.Errorf("stderr %q, want one line naming %s and saying %q", errOut, tc.says, tc.problem)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
			if n := firedCount(srv, rule.ID) - before; n != 0 {
				t.Errorf("%d requests reached the account, want none", n)
			}
			for _, f := range tc.leftover {
				if _, err := os.Stat(f); err == nil {
					t.Errorf("%s was left behind by a refused run", f)
					os.RemoveAll(f)
				}
			}
		})
	}
}

// firedCount is how often the account's fault rule id has fired: the requests it matched.
func firedCount(srv *emulator.Server, id string) int {
	for _, r := range srv.Faults().Rules() {
		if r.ID == id {
			return r.Fired
		}
	}
	return -1
}

// locate's refusal of a key with more values than the container has paths counts the
// paths in words that agree with the number: "1 path", not "1 path(s)".
func TestLocateSaysOnePathNotPaths(t *testing.T) {
	bin := testkit.Binary(t)
	testkit.Account(t)
	code, _, errOut := testkit.RunBinary(t, bin, os.Environ(), "", "locate", "--pk", `["a","b"]`)
	if want := "has 2 values but the container's partition key has 1 path (/pk): give one value per path"; code != 2 || !strings.Contains(errOut, want) {
		t.Fatalf("exit %d, stderr %q: want 2 and %q", code, errOut, want)
	}
}
