package scripts_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// standalone starts an emulator with app/items, as `cosmosctl emulator` serves one, and
// returns the environment of a script that gives commands its endpoint and nothing else:
// they take its key, database and container from its announcement, and say so.
func standalone(t *testing.T) (*emulator.Server, []string) {
	t.Helper()
	testkit.Isolate(t)
	srv, err := emulator.Start(emulator.Config{Databases: []emulator.DatabaseConfig{{ID: "app",
		Containers: []emulator.ContainerConfig{{ID: "items", PartitionKey: []string{"/pk"}}}}}}, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, append(os.Environ(), "COSMOSCTL_ENDPOINT="+srv.Endpoint())
}

// script runs a bash script file, as a runbook is run, with the built binary as
// cosmosctl on PATH, and returns its exit code, stdout and stderr.
func script(t *testing.T, env []string, body string) (int, string, string) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	bin := testkit.Binary(t)
	file := filepath.Join(t.TempDir(), "runbook.sh")
	if err := os.WriteFile(file, []byte("set -euo pipefail\n"+body), 0o600); err != nil {
		t.Fatal(err)
	}
	env = append(env, "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	return testkit.RunBinary(t, bash, env, "", file)
}

func countLines(s, substr string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, substr) {
			n++
		}
	}
	return n
}

const announced = "is a cosmosctl emulator; using what it announces"

// The notice that an endpoint is a cosmosctl emulator says the same thing on every
// command: a script's log gets it once, from the first command, and the next run of the
// script (another process) once again.
func TestTheEmulatorNoticeIsPrintedOncePerScriptRun(t *testing.T) {
	_, env := standalone(t)
	// The two commands of the pipeline run at once; the $(…) and { …; } run in copies of
	// the script's shell, which are the same script run. (The second reads all of the first's
	// output: a command that read none could end first and cut the first off, exit 141
	// under pipefail.)
	steps := `echo '{"id":"order-1","pk":"tenant-7"}' | cosmosctl create -f - >/dev/null
cosmosctl read order-1 --pk tenant-7 >/dev/null
cosmosctl query "SELECT * FROM c" -o ndjson | cosmosctl import - --mode upsert >/dev/null
n=$(cosmosctl query "SELECT VALUE COUNT(1) FROM c" -o ndjson | wc -l)
total=$(cosmosctl read order-1 --pk tenant-7 --jq .status_code)
{ cosmosctl read order-1 --pk tenant-7 >/dev/null; echo "$n $total"; } | cat >/dev/null
cosmosctl delete order-1 --pk tenant-7
`
	for run := 1; run <= 2; run++ {
		code, _, errOut := script(t, env, steps)
		if code != 0 {
			t.Fatalf("run %d: exit %d: %s", run, code, errOut)
		}
		if n := countLines(errOut, announced); n != 1 {
			t.Errorf("run %d of the script: the notice %d times, want once:\n%s", run, n, errOut)
		}
	}
	// What a command takes from the announcement differs (regions takes only the key):
	// that is news, and told once too.
	code, _, errOut := script(t, env, "cosmosctl regions --no-latency >/dev/null\ncosmosctl regions --no-latency >/dev/null")
	if code != 0 || countLines(errOut, announced+": its well-known key") != 1 {
		t.Errorf("regions twice: exit %d, stderr %q; want the notice of the key alone once", code, errOut)
	}
}

// --quiet and COSMOSCTL_QUIET=1 silence every notice; errors still say what failed.
func TestQuietSilencesEveryNotice(t *testing.T) {
	_, env := standalone(t)
	dir := t.TempDir()
	feed := filepath.Join(dir, "feed.json")
	// The two commands of the pipeline run at once; the $(…) and { …; } run in copies of
	// the script's shell, which are the same script run. (The second reads all of the first's
	// output: a command that read none could end first and cut the first off, exit 141
	// under pipefail.)
	steps := `echo '{"id":"order-1","pk":"tenant-7"}' | cosmosctl upsert -f - QUIET >/dev/null
cosmosctl changes --state ` + feed + ` QUIET >/dev/null
cosmosctl changes --state ` + feed + ` --from now QUIET >/dev/null
cosmosctl read nope --pk tenant-7 QUIET || echo "exit $?" >&2
`
	for _, tc := range []struct {
		name  string
		env   []string
		quiet string
	}{
		{"--quiet", nil, "--quiet"},
		{"-q", nil, "-q"},
		{"COSMOSCTL_QUIET=1", []string{"COSMOSCTL_QUIET=1"}, ""},
		{"COSMOSCTL_QUIET=true", []string{"COSMOSCTL_QUIET=true"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(feed)
			code, _, errOut := script(t, append(env, tc.env...), strings.ReplaceAll(steps, "QUIET", tc.quiet))
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			lines := strings.Split(strings.TrimSpace(errOut), "\n")
			if len(lines) != 2 || !strings.HasPrefix(lines[0], "Error: 404") || lines[1] != "exit 3" {
				t.Errorf("stderr %q, want only the failed read's error and its exit code", errOut)
			}
		})
	}
	// Without it, the same steps tell what they assumed and that the feed resumes.
	os.Remove(feed)
	_, _, errOut := script(t, env, strings.ReplaceAll(steps, "QUIET", ""))
	if countLines(errOut, announced) != 1 || countLines(errOut, "resuming from the position in "+feed) != 1 {
		t.Errorf("without --quiet: stderr %q, want the emulator notice and the resume notice", errOut)
	}
	// A value that means neither is refused rather than ignored.
	code, _, errOut := testkit.RunBinary(t, testkit.Binary(t), append(env, "COSMOSCTL_QUIET=maybe"), "", "read", "order-1", "--pk", "tenant-7")
	if code != 2 || !strings.Contains(errOut, "COSMOSCTL_QUIET must be 1") {
		t.Errorf("COSMOSCTL_QUIET=maybe: exit %d, stderr %q", code, errOut)
	}
}

// export --progress json makes stderr an NDJSON stream: every line of it is a JSON
// object, whatever the command assumed (an emulator's announcement, the embedded
// emulator) and however often it runs.
func TestNoNoticeBreaksIntoAJSONStreamOnStderr(t *testing.T) {
	_, env := standalone(t)
	embedded := os.Environ() // Isolate cleared the endpoint: the embedded emulator
	for _, tc := range []struct {
		name string
		env  []string
	}{
		{"a standalone emulator's endpoint", env},
		{"the embedded emulator", embedded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for run := 1; run <= 2; run++ {
				code, _, errOut := script(t, tc.env, `echo '{"id":"order-1","pk":"tenant-7"}' | cosmosctl upsert -f - --quiet >/dev/null
cosmosctl export --progress json >/dev/null`)
				if code != 0 {
					t.Fatalf("run %d: exit %d: %s", run, code, errOut)
				}
				events := 0
				for _, l := range strings.Split(strings.TrimSpace(errOut), "\n") {
					var ev struct {
						Event string `json:"event"`
					}
					if err := json.Unmarshal([]byte(l), &ev); err != nil || ev.Event == "" {
						t.Fatalf("run %d: a line of the NDJSON stream on stderr is not an event: %q\nstderr:\n%s", run, l, errOut)
					}
					events++
				}
				if events == 0 {
					t.Fatalf("run %d: no events on stderr", run)
				}
			}
		})
	}
}
