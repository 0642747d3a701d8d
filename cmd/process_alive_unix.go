//go:build unix

package cmd

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process with this id exists (signal 0 checks without
// sending anything; EPERM is a process of another user, alive).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
