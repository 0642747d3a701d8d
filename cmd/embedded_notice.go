package cmd

import (
	"errors"
	"path/filepath"
	"time"

	"github.com/cosmosctl/cosmosctl/internal/statefile"
)

// The notice that a command uses the embedded emulator because no account is
// configured matters once: after that, at a terminal, it is noise on every command. So
// on a terminal it is printed once per terminal session, and again when the data is
// elsewhere (in memory with --ephemeral, another COSMOSCTL_EMULATOR_DATA) or
// noticeExpiry has passed, remembered in the state directory; with --diagnostics it is
// printed every time. When stderr is not a terminal it is printed every time: a
// script's log is read later, one run at a time, and the line is what says that the
// script never reached an account.

const (
	noticesFile    = "notices.json"
	noticesKind    = "notices"
	noticesVersion = 1
)

var (
	// noticeExpiry is how long a terminal session goes without the notice: a session id
	// is reused once its session ends, and a terminal left open for days may as well be
	// reminded once a day.
	noticeExpiry = 12 * time.Hour
	// terminalSession names the terminal session this process runs in, false when
	// there is no telling; tests replace it.
	terminalSession = platformTerminalSession
	noticeNow       = time.Now
)

// noticesState is what notices.json holds.
type noticesState struct {
	// Shown maps a terminal session and what a notice said to when it was printed there.
	Shown map[string]time.Time `json:"shown"`
}

var errNoticeShown = errors.New("already shown in this terminal session")

// embeddedNoticeDue says whether the "no account configured" notice, for data that is
// where, should be printed now, and remembers that it was.
func embeddedNoticeDue(io *IOStreams, diagnostics bool, where string) bool {
	if !io.ErrTTY || diagnostics {
		return true
	}
	session, ok := terminalSession()
	if !ok {
		return true
	}
	dir, err := statefile.Dir()
	if err != nil {
		return true
	}
	key := session + " | " + where
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
