package cmd

import (
	"bytes"
	"io"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// runWithTerminalStderr runs the binary with stderr on a terminal and stdout on a pipe,
// and returns its exit code, stdout and what it wrote to the terminal.
func runWithTerminalStderr(t *testing.T, bin string, env []string, args ...string) (int, string, string) {
	t.Helper()
	pty, tty := openPTY(t) // embedded_notice_linux_test.go
	defer pty.Close()
	unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 50, Col: 200})
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(""), &out, tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close() // the child has it; the reader sees EIO once the child is gone
	read := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(pty) // ends with EIO when the last writer closes
		read <- string(b)
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatalf("%v did not end within a minute", args)
	}
	code := cmd.ProcessState.ExitCode()
	select {
	case s := <-read:
		return code, out.String(), s
	case <-time.After(10 * time.Second):
		t.Fatal("the terminal's output did not end")
	}
	return code, out.String(), ""
}

// Item 15: --diagnostics=false is honoured on a terminal: the per-attempt table (and a
// query's line of totals) a terminal's stderr gets by default is not printed.
func TestDiagnosticsFalseIsHonouredOnATerminal(t *testing.T) {
	_, env := formatsAccount(t)
	bin := cosmosctlBinary(t)
	env = append(env, "COLUMNS=200", "TERM=dumb")
	cases := []struct {
		args []string
		// shown is what the terminal gets by default.
		shown string
	}{
		{[]string{"read", "o1", "--pk", "t1"}, "ACTIVITY ID"},
		{[]string{"query", "SELECT * FROM c"}, "RU from"},
		{[]string{"db", "show", "app", "--diagnostics"}, "ACTIVITY ID"},
	}
	for _, tc := range cases {
		code, out, term := runWithTerminalStderr(t, bin, env, tc.args...)
		if code != 0 || out == "" || !strings.Contains(term, tc.shown) {
			t.Fatalf("%v on a terminal → exit %d, stdout %q; the terminal got %q, want %q in it", tc.args, code, out, term, tc.shown)
		}
		args := append(append([]string{}, tc.args...), "--diagnostics=false")
		code, quiet, term := runWithTerminalStderr(t, bin, env, args...)
		if code != 0 || sortedLines(quiet) != sortedLines(out) || strings.TrimSpace(term) != "" {
			t.Errorf("%v on a terminal → exit %d, stdout %q (want %q); the terminal got %q, want nothing", args, code, quiet, out, term)
		}
	}
}

func sortedLines(s string) string {
	lines := strings.Split(s, "\n")
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
