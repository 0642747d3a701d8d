package scripts_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// importFile writes n items, one a line.
func importFile(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"id":"o%d","pk":"p%d"}`+"\n", i, i%7)
	}
	path := filepath.Join(t.TempDir(), "orders.ndjson")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// reportJSON is import -o json's stdout, its report (one object), decoded.
func reportJSON(t *testing.T, out string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("stdout is not one JSON object (%v): %q", err, out)
	}
}

// An import whose writes cannot work for any line (no such container or database, the
// credential refused: 401, 403, 404) stops at the first such answer with that error and
// its exit code, instead of rejecting every line one by one and reporting the import
// complete. No line is marked done or rejected, and a first run that did nothing leaves
// nothing behind (no state bound to the wrong container, no empty rejected-lines file),
// so that the corrected command starts clean; the same command imports everything once
// the cause is gone.
func TestAnImportWhoseWritesCannotWorkStopsAtOnceWithThatError(t *testing.T) {
	bin := testkit.Binary(t)
	srv := testkit.Account(t)
	env := os.Environ()
	const lines = 200
	input := importFile(t, lines)
	dir := t.TempDir()
	state := filepath.Join(dir, "orders.state")
	rejected := strings.TrimSuffix(input, ".ndjson") + ".rejected.ndjson"

	for _, tc := range []struct {
		name string
		args []string
		rule *faults.Rule
		code int
		says string
	}{
		{"a container that does not exist", []string{"--container", "ordres"}, nil, 3, `404 NotFound: container "ordres" does not exist`},
		{"a database that does not exist", []string{"--database", "ap"}, nil, 3, `404 NotFound: database "ap" does not exist`},
		{"writes refused by RBAC (403/5301)", nil, &faults.Rule{Operations: []string{"create"}, Effect: faults.EffectStatus, Status: 403, SubStatus: 5301}, 7, "403"},
		{"a credential the account refuses (401)", nil, &faults.Rule{Operations: []string{"create"}, Effect: faults.EffectStatus, Status: 401}, 7, "401"},
		{"a container deleted under the import (404)", nil, &faults.Rule{Operations: []string{"create"}, Effect: faults.EffectStatus, Status: 404, SubStatus: 1003}, 3, "404"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv.Faults().Clear()
			if tc.rule != nil {
				if _, err := srv.AddFault(*tc.rule); err != nil {
					t.Fatal(err)
				}
			}
			args := append([]string{"import", input, "--state", state, "-o", "json"}, tc.args...)
			code, out, errOut := testkit.RunBinary(t, bin, env, "", args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, errOut)
			}
			if l := strings.Split(strings.TrimSpace(errOut), "\n"); len(l) != 1 || !strings.Contains(l[0], tc.says) {
				t.Errorf("stderr %q, want one line saying %q", errOut, tc.says)
			}
			if strings.Contains(errOut, "rejected") {
				t.Errorf("stderr talks of rejected lines: %q", errOut)
			}
			// The report, or (stopped before any write: at the container's definition)
			// the failure object: either way not complete, nothing done, the error.
			var rep struct {
				Complete bool  `json:"complete"`
				Lines    int64 `json:"lines"`
				Failed   int64 `json:"failed"`
				Error    any   `json:"error"`
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				reportJSON(t, out, &rep)
			}
			if rep.Complete || rep.Lines != 0 || rep.Failed != 0 || rep.Error == nil {
				t.Errorf("stdout %+v: want not complete, no line done or failed, the error", rep)
			}
			for _, f := range []string{state, rejected} {
				if _, err := os.Stat(f); err == nil {
					t.Errorf("%s was left behind by a run that did nothing", f)
				}
			}
		})
	}

	// With the cause gone, the same command imports every line.
	srv.Faults().Clear()
	code, out, errOut := testkit.RunBinary(t, bin, env, "", "import", input, "--state", state, "-o", "json")
	var rep struct {
		Created int64 `json:"created"`
		Runs    int   `json:"runs"`
	}
	reportJSON(t, out, &rep)
	if code != 0 || rep.Created != lines || rep.Runs != 1 {
		t.Fatalf("the same command, the cause gone: exit %d, report %+v: %s\n%s", code, rep, errOut, out)
	}
}

// A credential refused in the middle of an import (a token file's token expired) stops
// it there, with the lines written so far done and the state saved: the same command,
// given a credential again, resumes after them.
func TestAnImportRefusedMidwayKeepsWhatItDidAndResumes(t *testing.T) {
	bin := testkit.Binary(t)
	srv := testkit.Account(t, func(c *emulator.Config) {
		c.Latency = []faults.LatencySpec{{Operation: faults.OpCreate, Distribution: faults.Distribution{Kind: faults.KindFixed, Value: faults.Duration(5 * time.Millisecond)}}}
	})
	const lines = 1000
	input := importFile(t, lines)
	state := filepath.Join(t.TempDir(), "orders.state")
	cmd := exec.Command(bin, "import", input, "--state", state, "--concurrency", "1", "-o", "json")
	cmd.Env = os.Environ()
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Once a checkpoint holds lines done, the account starts refusing the credential.
	waitForCheckpoint(t, cmd, state)
	if _, err := srv.AddFault(faults.Rule{Operations: []string{"create"}, Effect: faults.EffectStatus, Status: 401}); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 7 {
		t.Fatalf("refused midway: %v, want exit 7: %s", err, errOut.String())
	}
	var rep struct {
		Complete bool  `json:"complete"`
		Lines    int64 `json:"lines"`
		Created  int64 `json:"created"`
		Failed   int64 `json:"failed"`
	}
	reportJSON(t, out.String(), &rep)
	if rep.Complete || rep.Lines == 0 || rep.Lines >= lines || rep.Created != rep.Lines || rep.Failed != 0 {
		t.Fatalf("report %+v: want the lines before the refusal created, none failed", rep)
	}
	if !strings.Contains(errOut.String(), "resume with the same command: cosmosctl import "+input+" --state "+state) {
		t.Errorf("stderr %q: want the command that resumes", errOut.String())
	}

	srv.Faults().Clear()
	code, stdout, stderr := testkit.RunBinary(t, bin, os.Environ(), "", "import", input, "--state", state, "-o", "json")
	var again struct {
		Created        int64 `json:"created"`
		AlreadyPresent int64 `json:"already_present"`
		Runs           int   `json:"runs"`
	}
	reportJSON(t, stdout, &again)
	if code != 0 || again.Created != lines || again.AlreadyPresent != 0 || again.Runs != 2 {
		t.Fatalf("resumed: exit %d, report %+v: %s", code, again, stderr)
	}
}

// waitForCheckpoint waits until the import cmd runs has saved a checkpoint in state
// with lines done: the import is then under way.
func waitForCheckpoint(t *testing.T, cmd *exec.Cmd, state string) {
	t.Helper()
	waitForLines(t, cmd, state, 0)
}
