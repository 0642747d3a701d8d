package cmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cosmosctl/cosmosctl/internal/statefile"
)

// Notices are the lines a command prints on stderr for a person about what it assumed
// or how it goes on: that no account is configured and the embedded emulator is used,
// that an endpoint is a cosmosctl emulator whose key, database and container are used,
// that a run resumes from a state file. They are never data, so:
//   - they go to stderr, and never into a JSON stream there (export --progress json
//     2>file is NDJSON a program reads): with one, a command prints none;
//   - --quiet, or COSMOSCTL_QUIET=1, silences every one (warnings and errors stay);
//   - the notices of what a command assumed (noticeOnce) say the same thing on every
//     command, and matter once to whoever reads them: on a terminal they are printed
//     once per terminal session, and off a terminal once per run of the script that
//     runs the commands (their parent process), and again when they say something else
//     or noticeExpiry has passed, remembered in the state directory. A script's log,
//     read later and alone, still says once why the script reached the account it did.
//     A command whose parent cannot be told apart from others' (none, or init: a
//     service manager's) prints them every time.

const (
	noticesFile    = "notices.json"
	noticesKind    = "notices"
	noticesVersion = 1
)

var (
	// noticeExpiry is how long a terminal session or a script goes without a notice: a
	// session id is reused once its session ends, and a terminal left open for days may
	// as well be reminded once a day.
	noticeExpiry = 12 * time.Hour
	// terminalSession names the terminal session this process runs in, and scriptRun the
	// run of the process that started it; false when there is no telling. Tests replace
	// them.
	terminalSession = platformTerminalSession
	scriptRun       = parentProcessRun
	noticeNow       = time.Now
)

// noticesState is what notices.json holds.
type noticesState struct {
	// Shown maps a reader (a terminal session or a script run) and what a notice said
	// to when it was printed there.
	Shown map[string]time.Time `json:"shown"`
}

var errNoticeShown = errors.New("already shown to this reader")

// notice prints a notice, unless notices are silenced (--quiet, COSMOSCTL_QUIET) or
// stderr carries a JSON stream.
func (s *IOStreams) notice(line string) {
	if s.quiet || s.errJSON {
		return
	}
	fmt.Fprintln(s.ErrOut, strings.TrimSuffix(line, "\n"))
}

// noticeOnce prints a notice of what the command assumed, when it is due: always, or
// when whoever reads stderr has not been shown what (the notice's subject) yet.
func (s *IOStreams) noticeOnce(what, line string, always bool) {
	if s.quiet || s.errJSON {
		return
	}
	if always || noticeDue(s, what) {
		s.notice(line)
	}
}

// noticeDue says whether the notice about what is due for the reader of stderr, and
// remembers that it was shown.
func noticeDue(io *IOStreams, what string) bool {
	reader, ok := scriptRun()
	if io.ErrTTY {
		reader, ok = terminalSession()
	}
	if !ok {
		return true
	}
	dir, err := statefile.Dir()
	if err != nil {
		return true
	}
	key := reader + " | " + what
	now := noticeNow()
	err = statefile.Update(filepath.Join(dir, noticesFile), noticesKind, noticesVersion, "", func(cur noticesState, _ bool) (noticesState, error) {
		if t, ok := cur.Shown[key]; ok && now.Sub(t) < noticeExpiry && !t.After(now) {
			return cur, errNoticeShown
		}
		next := noticesState{Shown: map[string]time.Time{key: now}}
		for k, t := range cur.Shown {
			if k != key && now.Sub(t) < noticeExpiry {
				next.Shown[k] = t
			}
		}
		return next, nil
	})
	// A state directory that cannot be used costs a repeated notice, never the command.
	return !errors.Is(err, errNoticeShown)
}

// parentProcessRun names the run of the script that started this process: its pid, and
// on Linux its start time, which tells it from a later process given the same pid. A
// shell forks itself for a pipeline, a $(…) or a { …; } group, so the parent of a
// command there is a copy of the script's shell: on Linux the walk goes up through
// parents with the same command line as theirs, to the script itself. No parent, or
// init (pid 1: a service manager that starts every service), tells no script apart.
func parentProcessRun() (string, bool) {
	pid := os.Getppid()
	if pid <= 1 {
		return "", false
	}
	stat := procStat(pid)
	for range 32 { // subshells nest, but not without end
		up, _ := strconv.Atoi(statField(stat, 4))
		if up <= 1 || procCmdline(up) == "" || procCmdline(up) != procCmdline(pid) {
			break
		}
		pid, stat = up, procStat(up)
	}
	key := "parent " + strconv.Itoa(pid)
	if start := statField(stat, 22); start != "" {
		key += " started " + start
	}
	return key, true
}

// procStat is /proc/PID/stat, "" where there is none.
func procStat(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return string(b)
}

// procCmdline is /proc/PID/cmdline, "" where there is none.
func procCmdline(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return string(b)
}

// statField is the nth field (from 1) of a /proc/PID/stat line, "" if it has none. The
// command name, the second, is in parentheses and may hold blanks: the fields from the
// third on come after the last ")".
func statField(stat string, n int) string {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 || n < 3 {
		return ""
	}
	if f := strings.Fields(stat[i+1:]); len(f) > n-3 {
		return f[n-3]
	}
	return ""
}

// quietFromEnv reads COSMOSCTL_QUIET: 1, true, yes or on silence notices; 0, false, no,
// off or empty do not; anything else is an error, so that a misspelt value is not
// silently ignored.
func quietFromEnv(getenv func(string) string) (bool, error) {
	switch v := strings.ToLower(strings.TrimSpace(getenv("COSMOSCTL_QUIET"))); v {
	case "", "0", "false", "no", "off":
		return false, nil
	case "1", "true", "yes", "on":
		return true, nil
	default:
		return false, &UsageError{Err: fmt.Errorf("COSMOSCTL_QUIET must be 1 (no notices) or 0, not %q", v)}
	}
}
