package cmd

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
)

// These tests run the built binary: sharing the embedded emulator's data is between
// processes, and so are its locks. Waits are for something to be seen (a record, a line
// on stderr), bounded generously for a loaded machine; nothing sleeps and hopes.

const shareWait = 90 * time.Second

// background is a cosmosctl process that the test runs alongside others.
type background struct {
	cmd    *exec.Cmd
	stderr *watchedBuffer
	stdout *watchedBuffer
	done   chan struct{}
	code   int
}

// watchedBuffer is a buffer that a test can wait on for some text to appear.
type watchedBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{}
}

func newWatchedBuffer() *watchedBuffer { return &watchedBuffer{changed: make(chan struct{})} }

func (w *watchedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	close(w.changed)
	w.changed = make(chan struct{})
	return n, err
}

func (w *watchedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// waitFor waits until the buffer holds text, or the process ends without it.
func (w *watchedBuffer) waitFor(t *testing.T, p *background, text string) {
	t.Helper()
	deadline := time.After(shareWait)
	for {
		w.mu.Lock()
		has, changed := strings.Contains(w.buf.String(), text), w.changed
		w.mu.Unlock()
		if has {
			return
		}
		select {
		case <-changed:
		case <-p.done:
			if !strings.Contains(w.String(), text) {
				t.Fatalf("%v ended (exit %d) without printing %q:\n%s", p.cmd.Args[1:], p.code, text, w.String())
			}
			return
		case <-deadline:
			t.Fatalf("%v did not print %q within %s:\n%s", p.cmd.Args[1:], text, shareWait, w.String())
		}
	}
}

func startBackground(t *testing.T, bin string, args ...string) *background {
	t.Helper()
	p := &background{cmd: exec.Command(bin, args...), stderr: newWatchedBuffer(), stdout: newWatchedBuffer(), done: make(chan struct{})}
	p.cmd.Env = os.Environ()
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := p.cmd.Wait()
		p.code = 0
		if ee, ok := err.(*exec.ExitError); ok {
			p.code = ee.ExitCode()
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("%v (exit %d) stderr:\n%s", args, p.code, p.stderr.String())
		}
	})
	return p
}

func (p *background) pid() int { return p.cmd.Process.Pid }

// stop interrupts the process (as Ctrl-C does) and waits for it to end.
func (p *background) stop(t *testing.T) int {
	t.Helper()
	p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(shareWait):
		t.Fatalf("%v did not end within %s of an interrupt", p.cmd.Args[1:], shareWait)
	}
	return p.code
}

func (p *background) kill(t *testing.T) {
	t.Helper()
	p.cmd.Process.Kill()
	<-p.done
}

// waitRecord waits for the data directory's serving record to satisfy ok.
func waitRecord(t *testing.T, dir string, what string, ok func(servingRecord) bool) servingRecord {
	t.Helper()
	deadline := time.Now().Add(shareWait)
	for {
		if rec, found := readServingRecord(dir); found && ok(rec) {
			return rec
		}
		if time.Now().After(deadline) {
			rec, found := readServingRecord(dir)
			t.Fatalf("the serving record in %s did not show %s within %s (now %+v, found %v)", dir, what, shareWait, rec, found)
		}
		time.Sleep(10 * time.Millisecond) // polling a file: what is awaited is its content
	}
}

func servedBy(pid int) func(servingRecord) bool {
	return func(r servingRecord) bool { return r.PID == pid && !r.Stopped }
}

// shareSetup builds the binary and isolates the test; it returns the binary, the
// embedded emulator's data directory and a runner for one command.
func shareSetup(t *testing.T) (string, string, func(stdin string, args ...string) (int, string, string)) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary and runs processes")
	}
	bin := cosmosctlBinary(t)
	isolate(t)
	dir := os.Getenv("COSMOSCTL_EMULATOR_DATA")
	return bin, dir, func(stdin string, args ...string) (int, string, string) {
		return runBinary(t, bin, os.Environ(), stdin, args...)
	}
}

func TestASecondCommandUsesTheDataWhileAProbeServesIt(t *testing.T) {
	bin, dir, run := shareSetup(t)
	probe := startBackground(t, bin, "probe", "--duration", "10m", "--rate", "2")
	rec := waitRecord(t, dir, "the probe serving", servedBy(probe.pid()))
	if rec.Command != "cosmosctl probe" || !rec.Embedded || rec.Key != cosmos.EmulatorKey || rec.Version == "" || rec.StartedAt.IsZero() || !sameDir(rec.DataDir, dir) {
		t.Errorf("record %+v: want the probe's command, embedded, the well-known key, a version, a start time and the data directory", rec)
	}

	code, _, errOut := run(`{"id":"shared","pk":"p","n":1}`, "create", "-f", "-")
	if code != 0 {
		t.Fatalf("create while the probe runs → %d: %s", code, errOut)
	}
	if want := fmt.Sprintf("served by cosmosctl probe (pid %d)", probe.pid()); !strings.Contains(errOut, want) {
		t.Errorf("create's stderr does not say %q: %q", want, errOut)
	}
	code, out, errOut := run("", "read", "shared", "--pk", "p")
	if code != 0 || !strings.Contains(out, `"n":1`) {
		t.Fatalf("read while the probe runs → %d: %s %s", code, out, errOut)
	}
	if strings.Contains(errOut, "in use") || strings.Contains(errOut, "--data-dir") {
		t.Errorf("read's stderr: %q", errOut)
	}

	if code := probe.stop(t); code != ExitInterrupted {
		t.Fatalf("probe → %d after an interrupt, want %d", code, ExitInterrupted)
	}
	if rec, ok := readServingRecord(dir); ok && !rec.Stopped {
		t.Errorf("the probe ended and left a record that it serves: %+v", rec)
	}
	// The data is the probe's no more: the next command serves it itself.
	code, out, errOut = run("", "read", "shared", "--pk", "p")
	if code != 0 || !strings.Contains(out, `"n":1`) || strings.Contains(errOut, "served by") {
		t.Fatalf("read after the probe → %d: %s %s", code, out, errOut)
	}
}

func TestAStaleServingRecordIsReplaced(t *testing.T) {
	// A port nobody listens on, and a process id nobody has.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	exited := exec.Command(os.Args[0], "-test.run=^$")
	if err := exited.Run(); err != nil {
		t.Fatal(err)
	}
	// An emulator that answers, with the key, but serves other data (a port reused).
	other, err := emulator.Start(emulator.Config{}, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()

	for _, tc := range []struct {
		name string
		rec  servingRecord
	}{
		{"its process is gone", servingRecord{PID: exited.Process.Pid, Endpoint: closed}},
		{"its process lives but nothing answers", servingRecord{PID: os.Getpid(), Endpoint: closed}},
		{"what answers serves other data", servingRecord{PID: os.Getpid(), Endpoint: other.Endpoint()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, dir, run := shareSetup(t)
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			stale := tc.rec
			stale.Format, stale.Command, stale.Embedded, stale.Key, stale.DataDir = servingRecordFormat, "cosmosctl probe", true, cosmos.EmulatorKey, dir
			if err := writeServingRecord(dir, stale); err != nil {
				t.Fatal(err)
			}
			code, _, errOut := run(`{"id":"s","pk":"p"}`, "create", "-f", "-")
			if code != 0 || strings.Contains(errOut, "served by") {
				t.Fatalf("create with a stale record → %d: %s", code, errOut)
			}
			rec, ok := readServingRecord(dir)
			if !ok || rec.PID == stale.PID || !rec.Stopped || rec.Command != "cosmosctl create" {
				t.Errorf("after create the record is %+v (found %v); want create's, stopped", rec, ok)
			}
		})
	}
}

func TestAKilledServerIsTakenOverByTheCommandAttachedToIt(t *testing.T) {
	bin, dir, run := shareSetup(t)
	first := startBackground(t, bin, "probe", "--duration", "10m", "--rate", "2")
	waitRecord(t, dir, "the first probe serving", servedBy(first.pid()))
	if code, _, errOut := run(`{"id":"before","pk":"p"}`, "create", "-f", "-"); code != 0 {
		t.Fatalf("create → %d: %s", code, errOut)
	}
	second := startBackground(t, bin, "probe", "--duration", "10m", "--rate", "20", "-o", "json")
	second.stderr.waitFor(t, second, fmt.Sprintf("served by cosmosctl probe (pid %d)", first.pid()))
	second.stdout.waitFor(t, second, `"type":"interval"`) // it is sending reads

	first.kill(t)
	waitRecord(t, dir, "the second probe serving", servedBy(second.pid()))
	second.stderr.waitFor(t, second, fmt.Sprintf("cosmosctl probe (pid %d), which served the embedded emulator, is gone; this command serves its data now", first.pid()))

	code, out, errOut := run("", "read", "before", "--pk", "p")
	if code != 0 || !strings.Contains(out, `"before"`) {
		t.Fatalf("read after the take-over → %d: %s %s", code, out, errOut)
	}
	if want := fmt.Sprintf("served by cosmosctl probe (pid %d)", second.pid()); !strings.Contains(errOut, want) {
		t.Errorf("read's stderr does not say %q: %q", want, errOut)
	}
	if code := second.stop(t); code != ExitInterrupted {
		t.Fatalf("second probe → %d, want %d", code, ExitInterrupted)
	}
	if !strings.Contains(second.stdout.String(), `"type":"summary"`) {
		t.Errorf("the second probe printed no summary:\n%s", second.stdout.String())
	}
}

func TestConcurrentCommandsOnFreshDataAllSucceed(t *testing.T) {
	_, dir, run := shareSetup(t)
	const n = 6
	type result struct {
		code   int
		errOut string
	}
	results := make([]result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			code, _, errOut := run(fmt.Sprintf(`{"id":"c%d","pk":"p"}`, i), "create", "-f", "-")
			results[i] = result{code, errOut}
		})
	}
	wg.Wait()
	attached := 0
	for i, r := range results {
		if r.code != 0 {
			t.Errorf("create c%d → %d: %s", i, r.code, r.errOut)
		}
		if strings.Contains(r.errOut, "served by") {
			attached++
		}
	}
	if attached == n {
		t.Errorf("all %d creates say they used another's emulator: one of them served it", n)
	}
	t.Logf("%d of %d creates attached to another one's emulator", attached, n)
	for i := range n {
		if code, _, errOut := run("", "read", fmt.Sprintf("c%d", i), "--pk", "p"); code != 0 {
			t.Errorf("read c%d → %d: %s", i, code, errOut)
		}
	}
	if rec, ok := readServingRecord(dir); !ok || !rec.Stopped {
		t.Errorf("after every command ended, the record is %+v (found %v); want a stopped one", rec, ok)
	}
}

func TestAStandaloneEmulatorOnTheEmbeddedDataDir(t *testing.T) {
	bin, dir, run := shareSetup(t)
	emu := startBackground(t, bin, "emulator", "--port", "0", "--data-dir", dir)
	rec := waitRecord(t, dir, "the standalone emulator serving", servedBy(emu.pid()))
	if rec.Command != "cosmosctl emulator" || rec.Embedded {
		t.Errorf("record %+v: want cosmosctl emulator, not embedded", rec)
	}

	t.Run("a second standalone emulator on it is refused, naming its flag", func(t *testing.T) {
		code, _, errOut := run("", "emulator", "--port", "0", "--data-dir", dir)
		want := fmt.Sprintf("the data directory %s is in use: cosmosctl emulator (pid %d) serves it at %s; stop it, or choose another --data-dir", dir, emu.pid(), rec.Endpoint)
		if code != ExitUsage || !strings.Contains(errOut, want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("→ %d %q; want exit %d and one line: %s", code, errOut, ExitUsage, want)
		}
	})

	if code, _, errOut := run(`{"id":"std","pk":"p"}`, "create", "-f", "-"); code != 0 || !strings.Contains(errOut, fmt.Sprintf("served by cosmosctl emulator (pid %d)", emu.pid())) {
		t.Fatalf("create while the standalone emulator serves the data → %d: %s", code, errOut)
	}
	probe := startBackground(t, bin, "probe", "--duration", "10m", "--rate", "20", "-o", "json")
	probe.stdout.waitFor(t, probe, `"type":"interval"`) // it is sending reads

	// A data command cannot serve the data as the standalone emulator did (it does not
	// know its configuration): it says so, once, and its requests fail at once.
	emu.kill(t)
	probe.stderr.waitFor(t, probe, fmt.Sprintf("cosmosctl: cosmosctl emulator (pid %d), which served the embedded emulator's data in %s, stopped: start it again, or run the command again to use the data without it\n", emu.pid(), dir))
	if code := probe.stop(t); code != ExitInterrupted {
		t.Errorf("probe → %d after an interrupt, want %d", code, ExitInterrupted)
	}
	if n := strings.Count(probe.stderr.String(), "which served the embedded emulator's data"); n != 1 {
		t.Errorf("the probe said %d times that the emulator stopped, want once:\n%s", n, probe.stderr.String())
	}
	code, out, errOut := run("", "read", "std", "--pk", "p")
	if code != 0 || !strings.Contains(out, `"std"`) || strings.Contains(errOut, "served by") {
		t.Fatalf("read after the standalone emulator was killed → %d: %s %s", code, out, errOut)
	}
}

// TestDataHeldWithoutARecordNamesTheDataCommandsOwnFlags is in-process: the test holds
// the data file as a process that does not serve it would (an older cosmosctl).
func TestDataHeldWithoutARecordNamesTheDataCommandsOwnFlags(t *testing.T) {
	isolate(t)
	old := embeddedAttachWait
	embeddedAttachWait = 300 * time.Millisecond
	t.Cleanup(func() { embeddedAttachWait = old })
	dir := os.Getenv("COSMOSCTL_EMULATOR_DATA")
	holder, err := emulator.Start(emulator.Config{DataDir: dir}, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()

	r := cosmosctl(t, "", "read", "x", "--pk", "p")
	abs, _ := filepath.Abs(dir)
	want := fmt.Sprintf("Error: the embedded emulator's data in %s is in use by another process that does not serve it to other commands (an older cosmosctl?): let it finish or end it, or use --ephemeral, or set COSMOSCTL_EMULATOR_DATA to another directory\n", abs)
	if r.code != ExitUnavailable || r.errOut != want {
		t.Errorf("read → %d %q\nwant %d %q", r.code, r.errOut, ExitUnavailable, want)
	}
	if strings.Contains(r.errOut, "--data-dir") {
		t.Errorf("the hint names --data-dir, a flag read does not have: %q", r.errOut)
	}
	if r := cosmosctl(t, "", "read", "x", "--pk", "p", "--ephemeral"); r.code != ExitNotFound {
		t.Errorf("read --ephemeral while the data is held → %d: %s", r.code, r.errOut)
	}
}

func TestDataInUseErrorNamesTheEmulatorsFlag(t *testing.T) {
	dir := t.TempDir()
	holder, err := emulator.Start(emulator.Config{DataDir: dir}, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	_, err = emulator.Start(emulator.Config{DataDir: dir}, emulator.Options{DataLockWait: 50 * time.Millisecond})
	var inUse *emulator.DataInUseError
	if !errors.As(err, &inUse) || !strings.Contains(err.Error(), "choose another --data-dir") {
		t.Fatalf("second emulator on %s: %v; want a DataInUseError naming --data-dir", dir, err)
	}
}
