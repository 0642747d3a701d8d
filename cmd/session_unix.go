//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly || illumos

package cmd

import (
	"bytes"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// platformTerminalSession is the session id of this process (a terminal's shell leads
// a session, and every command started from it is in it). On Linux the session
// leader's start time is added, which tells a session from a later one given the
// same id.
func platformTerminalSession() (string, bool) {
	sid, err := unix.Getsid(0)
	if err != nil {
		return "", false
	}
	key := "sid " + strconv.Itoa(sid)
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(sid) + "/stat"); err == nil {
		// After the command name in parentheses come the fields from the third, state;
		// the start time is the 22nd.
		if i := bytes.LastIndexByte(b, ')'); i >= 0 {
			if f := strings.Fields(string(b[i+1:])); len(f) > 19 {
				key += " started " + f[19]
			}
		}
	}
	return key, true
}
