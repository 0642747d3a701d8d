//go:build linux

package scripts_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/bulk"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// importState is what these tests read of an import's --state file.
type importState struct {
	State struct {
		Prefix int64 `json:"done_prefix"`
		Counts struct {
			Lines    int64 `json:"lines"`
			BadLines int64 `json:"bad_lines"`
		} `json:"counts"`
		Runs     int  `json:"runs"`
		Complete bool `json:"complete"`
	} `json:"state"`
}

// readImportState reads a state file; ok is false while there is none (or half of one).
func readImportState(path string) (importState, bool) {
	var st importState
	b, err := os.ReadFile(path)
	return st, err == nil && json.Unmarshal(b, &st) == nil
}

// waitForState polls the import's state file until a checkpoint satisfies ready, for at
// most two minutes (the machine may be loaded; a checkpoint is saved every second).
func waitForState(t *testing.T, cmd *exec.Cmd, path, what string, ready func(importState) bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if st, ok := readImportState(path); ok && ready(st) {
			return
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no checkpoint with %s within two minutes", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// exitOf waits for cmd, for at most limit (then kills it), and returns its exit code
// and how long it took.
func exitOf(t *testing.T, cmd *exec.Cmd, limit time.Duration) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		t.Fatalf("still running %v after it was told to stop", limit)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), time.Since(start)
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, time.Since(start)
}

// rejectedLines reads a rejected-lines file, each line of which must be JSON.
func rejectedLines(t *testing.T, path string) []bulk.Rejection {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []bulk.Rejection
	for l := range strings.Lines(string(b)) {
		var r bulk.Rejection
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("the rejected-lines file has a line that is not JSON (%v): %q", err, l)
		}
		out = append(out, r)
	}
	return out
}

// A line of a gigabyte, streamed on standard input, is rejected as too large as soon as
// more than an item's worth of it is read, before the rest of it is even written to the
// pipe; the rest is skipped without being held, so the process stays small, and the
// line after it is imported.
func TestImportRejectsAGigabyteLineWithoutHoldingIt(t *testing.T) {
	bin := testkit.Binary(t)
	testkit.Account(t)
	dir := t.TempDir()
	state, rejected := filepath.Join(dir, "big.state"), filepath.Join(dir, "big.rejected.ndjson")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "import", "-", "--state", state, "--rejected", rejected, "-o", "json")
	cmd.Env = os.Environ()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	var peakKiB int64
	write := func(b []byte) {
		if _, err := stdin.Write(b); err != nil {
			cmd.Process.Kill()
			t.Fatalf("writing the input: %v; stderr: %s", err, errOut.String())
		}
		peakKiB = max(peakKiB, testkit.PeakRSS(pid))
	}

	const lineBytes = 1 << 30
	const head = `{"id":"big","pk":"p","x":"`
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	write([]byte(head))
	written := len(head)
	// Half a MiB past the limit, and then nothing until the rejection is in a
	// checkpoint: the rest of the line is not there to read.
	for written < bulk.MaxItemBytes+(512<<10) {
		n := min(len(chunk), bulk.MaxItemBytes+(512<<10)-written)
		write(chunk[:n])
		written += n
	}
	paused := time.Now()
	waitForState(t, cmd, state, "line 1 rejected", func(st importState) bool { return st.State.Counts.BadLines == 1 })
	rejectedAfter := time.Since(paused)
	for written < lineBytes-2 {
		n := min(len(chunk), lineBytes-2-written)
		write(chunk[:n])
		written += n
	}
	write([]byte("\"}\n" + `{"id":"after","pk":"p"}` + "\n"))
	peakKiB = max(peakKiB, testkit.PeakRSS(pid))
	stdin.Close()
	code, _ := exitOf(t, cmd, 2*time.Minute)
	t.Logf("line of %d bytes: rejected %v after the limit was passed (checkpoints are 1 s apart); peak RSS %d KiB (rusage, which counts the test's own memory from before the exec: %d KiB)",
		lineBytes, rejectedAfter.Round(time.Millisecond), peakKiB, cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss)

	if code != 11 {
		t.Fatalf("exit %d, want 11 (a line rejected); stderr: %s", code, errOut.String())
	}
	var rep struct {
		Lines    int64 `json:"lines"`
		Created  int64 `json:"created"`
		BadLines int64 `json:"bad_lines"`
		Complete bool  `json:"complete"`
	}
	reportJSON(t, out.String(), &rep)
	if rep.Lines != 2 || rep.BadLines != 1 || rep.Created != 1 || !rep.Complete {
		t.Fatalf("report %+v: want line 1 rejected, line 2 created", rep)
	}
	if r := rejectedLines(t, rejected); len(r) != 1 || r[0].Line != 1 || r[0].Reason != bulk.ReasonTooLarge || r[0].Bytes <= bulk.MaxItemBytes {
		t.Fatalf("rejected %+v: want line 1, too large", r)
	}
	if peakKiB == 0 {
		t.Fatal("no peak RSS read from /proc")
	}
	if peakKiB > 64<<10 {
		t.Fatalf("peak RSS %d KiB, want at most 64 MiB", peakKiB)
	}
}

// SIGTERM while an import skips a line that never ends (/dev/zero) stops it with
// 143, the line rejected and the state saved; the same command resumes the run
// (skipping the line again, without rejecting it twice), and Ctrl-C stops that with
// 130, its state saved too.
func TestSignalsStopAnImportSkippingAnEndlessLine(t *testing.T) {
	bin := testkit.Binary(t)
	testkit.Account(t)
	state := filepath.Join(t.TempDir(), "zero.state")
	rejected := state + ".rejected.ndjson"
	args := []string{"import", "/dev/zero", "--state", state, "-o", "json"}

	for _, run := range []struct {
		signal syscall.Signal
		code   int
	}{{syscall.SIGTERM, 143}, {syscall.SIGINT, 130}} {
		cmd := exec.Command(bin, args...)
		cmd.Env = os.Environ()
		var out, errOut testkit.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		runs := 1
		if run.signal == syscall.SIGINT {
			runs = 2
		}
		// Under way: a checkpoint of this process with the line rejected (and its
		// rejection flushed to the file before that).
		waitForState(t, cmd, state, fmt.Sprintf("run %d and line 1 rejected", runs), func(st importState) bool {
			return st.State.Runs == runs && st.State.Counts.BadLines == 1
		})
		if r := rejectedLines(t, rejected); len(r) != 1 || r[0].Line != 1 || r[0].Reason != bulk.ReasonTooLarge {
			t.Fatalf("rejected %+v while skipping: want line 1, too large", r)
		}
		if err := cmd.Process.Signal(run.signal); err != nil {
			t.Fatal(err)
		}
		code, took := exitOf(t, cmd, time.Minute)
		t.Logf("%v: exit %d %v after the signal", run.signal, code, took.Round(time.Millisecond))
		if code != run.code {
			t.Fatalf("%v: exit %d, want %d; stderr: %s", run.signal, code, run.code, errOut.String())
		}
		if !strings.Contains(errOut.String(), "resume with the same command: cosmosctl import /dev/zero --state "+state) {
			t.Errorf("%v: stderr %q: want the command that resumes", run.signal, errOut.String())
		}
		st, ok := readImportState(state)
		if !ok || st.State.Runs != runs || st.State.Prefix != 1 || st.State.Counts.Lines != 1 || st.State.Counts.BadLines != 1 || st.State.Complete {
			t.Fatalf("%v: state %+v: want run %d saved, line 1 done and rejected", run.signal, st.State, runs)
		}
		if r := rejectedLines(t, rejected); len(r) != 1 {
			t.Fatalf("%v: %d rejections, want the one line's", run.signal, len(r))
		}
	}
}

// SIGTERM while the progress display counts the input's lines (a sparse file of
// terabytes, one line of zeros) stops the import with 143 and its state saved, not
// after the count.
func TestSIGTERMStopsAnImportCountingItsLines(t *testing.T) {
	bin := testkit.Binary(t)
	testkit.Account(t)
	dir := t.TempDir()
	input, state := filepath.Join(dir, "zeros.ndjson"), filepath.Join(dir, "zeros.state")
	f, err := os.Create(input)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(4 << 40); err != nil {
		t.Skipf("no sparse file of 4 TiB here: %v", err)
	}
	f.Close()
	cmd := exec.Command(bin, "import", input, "--state", state, "--progress", "json", "-o", "json")
	cmd.Env = os.Environ()
	var errOut testkit.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Counting: far more read than the MiB the input's fingerprint takes.
	deadline := time.Now().Add(2 * time.Minute)
	for readBytes(cmd.Process.Pid) < 256<<20 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the import did not read 256 MiB within two minutes; stderr: %s", errOut.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	code, took := exitOf(t, cmd, time.Minute)
	t.Logf("SIGTERM while counting: exit %d %v after it", code, took.Round(time.Millisecond))
	if code != 143 {
		t.Fatalf("exit %d, want 143; stderr: %s", code, errOut.String())
	}
	if st, ok := readImportState(state); !ok || st.State.Runs != 1 || st.State.Complete {
		t.Fatalf("state %+v (saved: %v): want the run saved, not complete", st.State, ok)
	}
}

// readBytes is what the process has read so far (rchar in /proc/PID/io), 0 if unknown.
func readBytes(pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 4096))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "rchar:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
			return n
		}
	}
	return 0
}

// Ctrl-C while an import waits for the first MiB of its standard input (a pipe whose
// writer stalls) stops it with 130 at once, not at the second Ctrl-C.
func TestCtrlCStopsAnImportWaitingForItsFirstMiB(t *testing.T) {
	bin := testkit.Binary(t)
	testkit.Account(t)
	cmd := exec.Command(bin, "import", "-", "--state", filepath.Join(t.TempDir(), "in.state"), "-o", "json")
	cmd.Env = os.Environ()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errOut testkit.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	// More than a pipe holds (64 KiB): the write returns once the import has read most of
	// it, so the import is reading its input when the signal comes. Then the writer stalls.
	chunk := bytes.Repeat([]byte(`{"id":"a","pk":"p"}`+"\n"), 200<<10/20)
	if _, err := in.Write(chunk); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	code, took := exitOf(t, cmd, time.Minute)
	t.Logf("Ctrl-C before the first MiB: exit %d %v after it", code, took.Round(time.Millisecond))
	if code != 130 {
		t.Fatalf("exit %d, want 130; stderr: %s", code, errOut.String())
	}
}
