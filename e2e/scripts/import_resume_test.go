//go:build unix

package scripts_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// Ctrl-C on an import prints the command that resumes it: the same input and state,
// and every flag that matters, shell-quoted, with the database and container it writes
// to. Pasted into a shell as it is, it finishes the import; the same command without
// --container (the environment names another container) would be refused.
func TestAnInterruptedImportPrintsTheExactCommandThatResumesIt(t *testing.T) {
	bin := testkit.Binary(t)
	srv := testkit.Account(t, func(c *emulator.Config) {
		c.Databases[0].Containers = append(c.Databases[0].Containers, emulator.ContainerConfig{ID: "orders 2026", PartitionKey: []string{"/pk"}})
		c.Latency = []faults.LatencySpec{{Operation: faults.OpUpsert, Distribution: faults.Distribution{Kind: faults.KindFixed, Value: faults.Duration(20 * time.Millisecond)}}}
	})
	dir := filepath.Join(t.TempDir(), "run 1")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	const lines = 1000
	var in strings.Builder
	for i := range lines {
		fmt.Fprintf(&in, `{"id":"o%d","pk":"p%d"}`+"\n", i, i%7)
	}
	input := filepath.Join(dir, "orders.ndjson")
	if err := os.WriteFile(input, []byte(in.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "orders.state")
	env := os.Environ() // COSMOSCTL_CONTAINER=items: not where this import writes

	cmd := exec.Command(bin, "import", input, "--state", state, "--container", "orders 2026", "--mode", "upsert",
		"--concurrency", "4", "--max-ru-per-second", "5000", "--exclude", "West US")
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupted once a checkpoint holds some lines done: the import is under way.
	waitForCheckpoint(t, cmd, state)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var errLines []string
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		errLines = append(errLines, sc.Text())
	}
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("import after Ctrl-C: %v, want exit 130; stderr:\n%s", err, strings.Join(errLines, "\n"))
	}
	var resume string
	for _, l := range errLines {
		if _, cmdline, ok := strings.Cut(l, "resume with the same command: "); ok {
			resume = cmdline
		}
	}
	want := "cosmosctl import '" + input + "' --state '" + state + "' --concurrency 4 --container 'orders 2026' --exclude 'West US' --max-ru-per-second 5000 --mode upsert --database app"
	if resume != want {
		t.Fatalf("resume command\n %s\nwant\n %s\nstderr:\n%s", resume, want, strings.Join(errLines, "\n"))
	}
	if strings.Contains(strings.Join(errLines, "\n"), srv.Key()) {
		t.Fatal("the key was printed")
	}

	// Pasted into a shell, it finishes the import.
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	srv.Faults().Clear()
	code, out, errOut := testkit.RunBinary(t, bash, append(env, "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH")), "", "-c", resume+" -o json")
	if code != 0 {
		t.Fatalf("the resume command: exit %d: %s", code, errOut)
	}
	var rep struct {
		Lines   int64 `json:"lines"`
		Updated int64 `json:"updated"`
		Created int64 `json:"created"`
		Runs    int   `json:"runs"`
	}
	// import -o json prints its report, one object, on stdout (its progress is on stderr).
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Lines != lines || rep.Runs != 2 {
		t.Fatalf("report %+v (%v): %s", rep, err, out)
	}
}
