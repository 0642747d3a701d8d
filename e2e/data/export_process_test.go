//go:build unix

package data_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator/faults"

	"github.com/cosmosctl/cosmosctl/cmd"
)

// exportProcessItems is how many items the process tests export: pages of 10 at 20 ms
// each make a run of 1.2 s or more, long enough to be stopped twice, each time after a
// checkpoint (one every exportProcessCheckpoint, some 50 items) and well before the end.
const exportProcessItems = 600

// exportProcessCheckpoint is how often the binary of the process tests checkpoints: a
// tenth of the product's second, so that a run can be stopped after one sooner.
const exportProcessCheckpoint = "100ms"

var (
	exportBinOnce sync.Once
	exportBinPath string
	exportBinErr  error
)

// exportBinary is the real binary built once per test process with its checkpoint
// interval shortened to exportProcessCheckpoint (a link of cached packages), beside the
// one cosmosctlBinary builds.
func exportBinary(t *testing.T) string {
	t.Helper()
	exportBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "cosmosctl-export-bin")
		if err != nil {
			exportBinErr = err
			return
		}
		exportBinPath = filepath.Join(dir, "cosmosctl")
		out, err := exec.Command("go", "build", "-o", exportBinPath,
			"-ldflags", "-X github.com/cosmosctl/cosmosctl/cmd.exportCheckpointEveryLinked="+exportProcessCheckpoint,
			"github.com/cosmosctl/cosmosctl").CombinedOutput()
		if err != nil {
			exportBinErr = fmt.Errorf("%v\n%s", err, out)
		}
	})
	if exportBinErr != nil {
		t.Fatalf("building cosmosctl: %v", exportBinErr)
	}
	return exportBinPath
}

// slowExportAccount is the account of the process tests, its reads slowed by a fault
// until fast is called: the runs that are stopped are slow, the last one, which only has
// to finish, is not.
func slowExportAccount(t *testing.T) (want []string, fast func()) {
	t.Helper()
	items := testkit.QueryItems(exportProcessItems)
	srv := testkit.QueryAccount(t, items)
	rule, err := srv.AddFault(faults.Rule{Operations: []string{faults.OpQuery}, Effect: faults.EffectDelay,
		Delay: faults.Distribution{Kind: faults.KindFixed, Value: faults.Duration(20 * time.Millisecond)}})
	if err != nil {
		t.Fatal(err)
	}
	return qids(items), func() { srv.Faults().Remove(rule.ID) }
}

// readExportState reads the state file as the process left it (nil: none yet).
func readExportState(path string) *struct {
	Items       int64 `json:"items"`
	OutputBytes int64 `json:"output_bytes"`
	Complete    bool  `json:"complete"`
} {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var s struct {
		Items       int64 `json:"items"`
		OutputBytes int64 `json:"output_bytes"`
		Complete    bool  `json:"complete"`
	}
	if json.Unmarshal(b, &s) != nil {
		return nil
	}
	return &s
}

// exportProcess is the built binary exporting into a file with a state.
type exportProcess struct {
	cmd    *exec.Cmd
	errOut *bytes.Buffer // read only after done
	done   chan error    // the process's end (cmd.Wait)
}

func startExport(t *testing.T, bin, out, state string, extra ...string) *exportProcess {
	t.Helper()
	p := &exportProcess{errOut: &bytes.Buffer{}, done: make(chan error, 1)}
	p.cmd = exec.Command(bin, append([]string{"export", "--output-file", out, "--state", state, "--page-size", "10", "--parallelism", "1", "--strip-system"}, extra...)...)
	p.cmd.Env = os.Environ()
	p.cmd.Stderr = p.errOut
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
	})
	return p
}

// wait waits for the process to end, bounded by a minute.
func (p *exportProcess) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err
		return err
	case <-time.After(time.Minute):
		t.Fatal("the export did not end within a minute")
		return nil
	}
}

// waitForCheckpoint waits until the state file counts more than after items of an export
// not yet complete, and returns it; it fails the test when the export ends first.
func waitForCheckpoint(t *testing.T, p *exportProcess, state string, after int64) int64 {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		if s := readExportState(state); s != nil && s.Items > after {
			if s.Complete {
				t.Fatalf("the export completed (%d items) before it could be stopped", s.Items)
			}
			return s.Items
		}
		select {
		case err := <-p.done:
			t.Fatalf("the export ended (%v) before its next checkpoint: %s", err, p.errOut.String())
		case <-deadline:
			t.Fatal("no checkpoint within 60 s")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// TestExportKilledTwiceAndResumedHasEveryItemOnce: the operator's worst case. The
// binary is SIGKILLed twice mid-export, after a checkpoint and with lines written past
// it; each time the same command resumes; the file ends with every item exactly once.
func TestExportKilledTwiceAndResumedHasEveryItemOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	for _, source := range []string{"query", "change-feed"} {
		t.Run(source, func(t *testing.T) { testExportKilledTwice(t, source) })
	}
}

func testExportKilledTwice(t *testing.T, source string) {
	bin := exportBinary(t)
	want, fast := slowExportAccount(t)
	dir := t.TempDir()
	out, state := filepath.Join(dir, "items.ndjson"), filepath.Join(dir, "items.state")
	var checkpointed int64
	for kill := 1; kill <= 2; kill++ {
		p := startExport(t, bin, out, state, "--source", source)
		checkpointed = waitForCheckpoint(t, p, state, checkpointed)
		// Killed with lines in the file past the checkpoint, when the test is quick
		// enough to see some: the resumed run must cut them.
		waitForLinesPastCheckpoint(out, state)
		p.cmd.Process.Kill()
		p.wait(t)
		s := readExportState(state)
		fi, _ := os.Stat(out)
		t.Logf("kill %d: state %d items, %d bytes; the file %d bytes", kill, s.Items, s.OutputBytes, fi.Size())
		if fi.Size() < s.OutputBytes {
			t.Fatalf("kill %d: the file (%d bytes) is shorter than its checkpoint (%d)", kill, fi.Size(), s.OutputBytes)
		}
		checkpointed = s.Items
	}
	fast()
	p := startExport(t, bin, out, state, "--source", source)
	if err := p.wait(t); err != nil {
		t.Fatalf("the resumed export: %v: %s", err, p.errOut.String())
	}
	b, _ := os.ReadFile(out)
	if got := exportedIDs(t, string(b)); !slices.Equal(got, want) {
		t.Fatalf("the file holds %d items, want %d", len(got), len(want))
	}
	if s := readExportState(state); s == nil || !s.Complete || s.Items != int64(len(want)) || s.OutputBytes != int64(len(b)) {
		t.Fatalf("final state %+v for a file of %d bytes", s, len(b))
	}
}

// waitForLinesPastCheckpoint waits, for half a second at most, until the file holds
// lines the last checkpoint does not count.
func waitForLinesPastCheckpoint(out, state string) {
	for range 100 {
		s, fi := readExportState(state), statOrNil(out)
		if s == nil || fi == nil || fi.Size() > s.OutputBytes {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func statOrNil(path string) os.FileInfo {
	fi, err := os.Stat(path)
	if err != nil {
		return nil
	}
	return fi
}

// TestExportCtrlCOnTheBinarySavesTheStateAndSaysHowToResume: a real SIGINT: exit 130,
// the state saved right after the last line written, and stderr says what to run.
func TestExportCtrlCOnTheBinarySavesTheStateAndSaysHowToResume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := exportBinary(t)
	want, fast := slowExportAccount(t)
	dir := t.TempDir()
	out, state := filepath.Join(dir, "items.ndjson"), filepath.Join(dir, "items.state")
	p := startExport(t, bin, out, state)
	waitForCheckpoint(t, p, state, 0)
	waitForLinesPastCheckpoint(out, state) // so that only a save on the way out counts them
	p.cmd.Process.Signal(os.Interrupt)
	err := p.wait(t)
	errOut := p.errOut
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != cmd.ExitInterrupted {
		t.Fatalf("exit %v, want %d: %s", err, cmd.ExitInterrupted, errOut.String())
	}
	if !strings.Contains(errOut.String(), "the state is saved in "+state+": run the same command to resume after the ") ||
		!strings.Contains(errOut.String(), "Error: interrupted: export after ") {
		t.Fatalf("stderr %q", errOut.String())
	}
	// Saved on the way out, not at the last periodic checkpoint: it counts the whole file.
	s := readExportState(state)
	fi, _ := os.Stat(out)
	if s == nil || s.OutputBytes != fi.Size() || s.Complete {
		t.Fatalf("state %+v for a file of %d bytes", s, fi.Size())
	}
	fast()
	p = startExport(t, bin, out, state)
	if err := p.wait(t); err != nil {
		t.Fatalf("resumed: %v: %s", err, p.errOut.String())
	}
	b, _ := os.ReadFile(out)
	if got := exportedIDs(t, string(b)); !slices.Equal(got, want) {
		t.Fatalf("the file holds %d items, want %d", len(got), len(want))
	}
}
