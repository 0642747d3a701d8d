//go:build unix

// Package runbook_test runs the README's incident runbook the way an operator rehearses
// it: examples/rehearse-incident.sh, as bash, with the built binary on PATH, against a
// standalone emulator whose write region is slow and then hung.
package runbook_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// The rehearsal's two phases, each a run of the runbook: East US (the write region)
// 800 ms slow, then hung. What the runbook guarantees in both: East US is named in
// trouble, the read that excludes the regions in trouble is served by a region not
// among them, and the runbook ends with exit 0; the slow write is taken (800 ms a
// request against a 5 s end-to-end timeout) and the hung one fails with exit 6, the
// timeout's code, reported as a finding rather than ending the script.
func TestTheRunbookRehearsalFindsTheSickRegionAndReadsAroundIt(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the rehearsal: about 20 s of two runbook runs against a standalone emulator")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("the runbook is a bash script")
	}
	testkit.Isolate(t)
	bin := testkit.Binary(t)
	home := t.TempDir()
	env := append(os.Environ(),
		"PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"EMULATOR_PORT="+strconv.Itoa(testkit.FreePorts(t, 4)),
		"RUNBOOK_PROBE=2s", // of reads in each region: 10 s by default
	)
	script, err := filepath.Abs("../../examples/rehearse-incident.sh")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, script)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// The script and its background emulator are one process group: a test that runs
	// out of time stops them all, not the script alone.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	transcript := out.String()
	if err != nil {
		t.Fatalf("the rehearsal: %v\nstdout:\n%s\nstderr:\n%s", err, transcript, errOut.String())
	}

	slow, hung, ok := strings.Cut(transcript, "### East US hung")
	if !ok || !strings.HasPrefix(slow, "### East US slow") {
		t.Fatalf("the transcript is not the two phases:\n%s", transcript)
	}
	for _, phase := range []struct{ name, text string }{{"slow", slow}, {"hung", hung}} {
		sick := checkReadAround(t, phase.name, phase.text)
		if !sick["East US"] {
			t.Errorf("%s phase: East US is not named in trouble:\n%s", phase.name, phase.text)
		}
	}
	if !regexp.MustCompile(`(?m)^write: 20[01] in `).MatchString(slow) {
		t.Errorf("slow phase: the write to the slow write region was not taken:\n%s", slow)
	}
	if !regexp.MustCompile(`(?m)^write: FAILED \(exit 6\): writes go to East US only`).MatchString(hung) {
		t.Errorf("hung phase: the write to the hung write region did not fail with the timeout's exit 6:\n%s", hung)
	}
	if m := regexp.MustCompile(`(?m)^hedged read: (\d+) from (.+) in `).FindStringSubmatch(hung); m == nil || m[1] != "200" || m[2] == "East US" {
		t.Errorf("hung phase: the hedged read was not answered by another region (%q):\n%s", m, hung)
	}
	if !strings.Contains(hung, "East US\t\tread\t") {
		t.Errorf("hung phase: region health does not show East US's reads:\n%s", hung)
	}
}

// checkReadAround checks one phase's read around the regions in trouble and returns
// those regions.
func checkReadAround(t *testing.T, phase, text string) map[string]bool {
	t.Helper()
	m := regexp.MustCompile(`(?m)^in trouble: (.*)$`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("%s phase: no regions-in-trouble line:\n%s", phase, text)
	}
	sick := map[string]bool{}
	for _, r := range strings.Split(m[1], ",") {
		sick[r] = true
	}
	read := regexp.MustCompile(`(?m)^read: (\d+) from (.+) in `).FindStringSubmatch(text)
	if read == nil || read[1] != "200" || sick[read[2]] {
		t.Errorf("%s phase: the read around %v was not served by a region outside it (%q):\n%s", phase, m[1], read, text)
	}
	return sick
}

// The README shows the runbook whole, for an operator to copy: it is the file's text.
func TestTheReadmeShowsTheRunbookAsItIs(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile("../../examples/incident-runbook.sh")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n### An incident runbook\n")
	if !ok {
		t.Fatal("README.md has no section ### An incident runbook")
	}
	_, block, ok := strings.Cut(section, "\n```bash\n")
	if !ok {
		t.Fatal("after ### An incident runbook the README shows no ```bash block")
	}
	block, _, ok = strings.Cut(block, "```\n")
	if !ok {
		t.Fatal("the runbook's ```bash block is not closed")
	}
	if block != string(file) {
		t.Errorf("the README's runbook differs from examples/incident-runbook.sh: copy the file into the README\nREADME:\n%s", block)
	}
}
