package acceptance

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// importState is what the kill test reads of a state file.
type importState struct {
	State struct {
		RunID  string `json:"run_id"`
		Counts struct {
			Lines int64 `json:"lines"`
		} `json:"counts"`
	} `json:"state"`
}

func readImportState(path string) (importState, bool) {
	var s importState
	b, err := os.ReadFile(path)
	return s, err == nil && json.Unmarshal(b, &s) == nil
}

// importReport is what the test reads of `import -o json`'s report.
type importReport struct {
	Event          string `json:"event"`
	Complete       bool   `json:"complete"`
	Lines          int64  `json:"lines"`
	Created        int64  `json:"created"`
	AlreadyPresent int64  `json:"already_present"`
	Failed         int64  `json:"failed"`
	BadLines       int64  `json:"bad_lines"`
	Runs           int    `json:"runs"`
	ThisRun        struct {
		Lines   int64 `json:"lines"`
		Skipped int64 `json:"skipped"`
	} `json:"this_run"`
}

// lastReport reads the report off `import -o json`'s stdout: one object (the progress
// goes to stderr).
func lastReport(t *testing.T, out string) importReport {
	t.Helper()
	var r importReport
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Event != "report" {
		t.Fatalf("stdout %q is not the report: %v", out, err)
	}
	return r
}

// writeItems writes n items, {"id":"i<k>","pk":"p<k%97>",...}, one a line.
func writeItems(t testing.TB, path string, n int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for k := 1; k <= n; k++ {
		fmt.Fprintf(w, `{"id":"i%d","pk":"p%d","n":%d,"payload":"%s"}`+"\n", k, k%97, k, strings.Repeat("x", 100))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// TestImportKilledTwiceWithLostAnswersStoresEveryItemOnce is the acceptance test of
// issue 15's import: 50,000 items, 30 % of the write answers dropped after the write is
// applied, the import process SIGKILLed twice and resumed from its state file: exactly
// 50,000 items stored, each once and each the run's own (its _trackingId), and the
// report's counts covering the whole run.
func TestImportKilledTwiceWithLostAnswersStoresEveryItemOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and imports 50,000 items")
	}
	const items = 50000
	bin := testkit.Binary(t)
	endpoint := emulatorProcess(t, bin, isolatedEnv(t), "--latency", "none")
	env := isolatedEnv(t, "COSMOSCTL_ENDPOINT="+endpoint)
	if code, _, errOut := runBinary(t, bin, env, "emulator", "fault", "add", "--endpoint", endpoint,
		"--op", "create", "--effect", "drop-response", "--probability", "0.3"); code != 0 {
		t.Fatalf("fault add: %s", errOut)
	}
	dir := t.TempDir()
	input, state := filepath.Join(dir, "items.ndjson"), filepath.Join(dir, "items.state")
	writeItems(t, input, items)
	args := []string{"import", input, "--state", state, "--concurrency", "256"}

	for kill, at := range []int64{items * 3 / 10, items * 6 / 10} {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		var errOut strings.Builder
		cmd.Stderr = &errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		deadline := time.Now().Add(90 * time.Second)
		for {
			if s, ok := readImportState(state); ok && s.State.Counts.Lines >= at {
				break
			}
			select {
			case err := <-exited:
				t.Fatalf("kill %d: the import ended before it was killed (%v): %s", kill+1, err, errOut.String())
			case <-time.After(20 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("kill %d: the state file never counted %d lines: %s", kill+1, at, errOut.String())
			}
		}
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		<-exited
	}
	code, out, errOut := runBinary(t, bin, env, append(args, "-o", "json")...)
	if code != 0 {
		t.Fatalf("the resumed import exited %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "resuming the import from "+state) {
		t.Fatalf("stderr does not say it resumes: %q", errOut)
	}
	r := lastReport(t, out)
	if !r.Complete || r.Lines != items || r.Created+r.AlreadyPresent != items || r.Failed != 0 || r.BadLines != 0 || r.Runs != 3 {
		t.Fatalf("report %+v", r)
	}
	// Every item was this run's to create: an answer lost to a drop or a kill is
	// recognised by its _trackingId, never counted as already present.
	if r.Created != items || r.ThisRun.Skipped < items*6/10 || r.ThisRun.Lines+r.ThisRun.Skipped != items {
		t.Fatalf("created %d, this run %+v", r.Created, r.ThisRun)
	}
	code, out, _ = runBinary(t, bin, env, "emulator", "fault", "list", "--endpoint", endpoint, "-o", "json")
	var rules []struct{ Fired int }
	if json.Unmarshal([]byte(out), &rules) != nil || len(rules) != 1 || rules[0].Fired < items/5 {
		t.Fatalf("the drop-response rule fired too little to test anything: %s", out)
	}
	s, _ := readImportState(state)
	query := func(sql string, extra ...string) string {
		code, out, errOut := runBinary(t, bin, env, append([]string{"query", sql, "--all", "-o", "ndjson"}, extra...)...)
		if code != 0 {
			t.Fatalf("query %s: exit %d: %s", sql, code, errOut)
		}
		return strings.TrimSpace(out)
	}
	if n := query("SELECT VALUE COUNT(1) FROM c"); n != fmt.Sprint(items) {
		t.Fatalf("%s items stored, want %d", n, items)
	}
	if n := query("SELECT VALUE COUNT(1) FROM c WHERE STARTSWITH(c._trackingId, @run)", "--param", "@run="+s.State.RunID+":"); n != fmt.Sprint(items) {
		t.Fatalf("%s items carry the run's _trackingId, want %d", n, items)
	}
	ids := strings.Split(query("SELECT VALUE c.id FROM c"), "\n")
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("item %s stored twice", id)
		}
		seen[id] = true
	}
	if len(seen) != items {
		t.Fatalf("%d distinct ids stored", len(seen))
	}
}
