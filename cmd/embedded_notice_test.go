package cmd

import (
	"context"
	"strings"
	"testing"
	"time"
)

const noAccountNotice = "cosmosctl: no account configured; using the embedded emulator"

// runInTerminal runs one invocation in-process as if stderr were a terminal of the
// given terminal session.
func runInTerminal(t *testing.T, session string, args ...string) runResult {
	t.Helper()
	old := terminalSession
	terminalSession = func() (string, bool) { return session, session != "" }
	defer func() { terminalSession = old }()
	io, out, errOut := testIO()
	io.ErrTTY = true
	code := Run(context.Background(), io, args)
	return runResult{code, out.String(), errOut.String()}
}

func TestTheNoAccountNoticeIsPrintedOncePerTerminalSession(t *testing.T) {
	isolate(t)
	now := time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)
	oldNow := noticeNow
	noticeNow = func() time.Time { return now }
	t.Cleanup(func() { noticeNow = oldNow })

	read := []string{"read", "x", "--pk", "p"}
	for _, step := range []struct {
		name    string
		session string
		args    []string
		later   time.Duration
		want    bool
	}{
		{"the first command of a session prints it", "A", read, 0, true},
		{"the second command of that session does not", "A", read, time.Minute, false},
		{"nor does another command", "A", []string{"delete", "x", "--pk", "p"}, time.Minute, false},
		{"a new terminal session prints it", "B", read, time.Minute, true},
		{"and only once", "B", read, time.Minute, false},
		{"the first session still does not", "A", read, time.Minute, false},
		{"--diagnostics prints it whenever asked", "A", append(read, "--diagnostics"), time.Minute, true},
		{"data elsewhere (--ephemeral) is told once too", "A", append(read, "--ephemeral"), time.Minute, true},
		{"--ephemeral again is not", "A", append(read, "--ephemeral"), time.Minute, false},
		{"a session unheard of for 12 hours is told again", "A", read, 12 * time.Hour, true},
		{"no telling the session: printed every time", "", read, time.Minute, true},
		{"no telling the session: printed every time, again", "", read, time.Minute, true},
	} {
		now = now.Add(step.later)
		r := runInTerminal(t, step.session, step.args...)
		if r.code != ExitNotFound {
			t.Fatalf("%s: %v → %d: %s", step.name, step.args, r.code, r.errOut)
		}
		if got := strings.Contains(r.errOut, noAccountNotice); got != step.want {
			t.Errorf("%s: notice printed = %v, want %v; stderr %q", step.name, got, step.want, r.errOut)
		}
	}
}

func TestTheNoAccountNoticeIsPrintedOncePerScriptRunWhenStderrIsNotATerminal(t *testing.T) {
	isolate(t)
	old, oldRun := terminalSession, scriptRun
	terminalSession = func() (string, bool) { return "A", true }
	run := "script 1"
	scriptRun = func() (string, bool) { return run, run != "" }
	t.Cleanup(func() { terminalSession, scriptRun = old, oldRun })
	// A script's log: read later, one run at a time, it must say (once) why the script
	// never reached an account; the terminal's session has nothing to do with it.
	for _, step := range []struct {
		name, run string
		want      bool
	}{
		{"the first command of a script run prints it", "script 1", true},
		{"its next command does not", "script 1", false},
		{"another run of the script prints it", "script 2", true},
		{"a command whose parent tells no run apart prints it", "", true},
		{"every time", "", true},
	} {
		run = step.run
		if r := cosmosctl(t, "", "read", "x", "--pk", "p"); strings.Contains(r.errOut, noAccountNotice) != step.want {
			t.Errorf("%s: stderr %q", step.name, r.errOut)
		}
	}
}
