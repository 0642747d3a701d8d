//go:build unix

package testkit

import (
	"syscall"
	"time"
)

// ProcessCPU is this process's user and system CPU time so far: what a benchmark
// reports as the CPU its work cost (an in-process emulator's included).
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
