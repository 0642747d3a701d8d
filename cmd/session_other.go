//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || illumos || windows)

package cmd

// platformTerminalSession cannot tell a terminal session here: the notice is printed
// every time.
func platformTerminalSession() (string, bool) { return "", false }
