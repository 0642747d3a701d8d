//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly || illumos

package cmd

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
)

// TestHelperPrintTerminalSession is not a test: TestTerminalSessionIsTheProcessSession
// runs the test binary again with COSMOSCTL_TEST_PRINT_SESSION set.
func TestHelperPrintTerminalSession(t *testing.T) {
	if os.Getenv("COSMOSCTL_TEST_PRINT_SESSION") == "" {
		t.Skip("helper process")
	}
	s, ok := platformTerminalSession()
	if !ok {
		os.Exit(3)
	}
	os.Stdout.WriteString(s)
	os.Exit(0)
}

func TestTerminalSessionIsTheProcessSession(t *testing.T) {
	mine, ok := platformTerminalSession()
	if !ok {
		t.Skipf("no terminal session on %s", runtime.GOOS)
	}
	session := func(newSession bool) string {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperPrintTerminalSession$")
		cmd.Env = append(os.Environ(), "COSMOSCTL_TEST_PRINT_SESSION=1")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: newSession}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("helper (new session %v): %v", newSession, err)
		}
		return string(out)
	}
	if got := session(false); got != mine {
		t.Errorf("a child in this session reports %q, this process %q: commands of one terminal must agree", got, mine)
	}
	if a, b := session(true), session(true); a == mine || b == mine || a == b {
		t.Errorf("children in new sessions report %q and %q, this process %q: each session must differ", a, b, mine)
	}
}
