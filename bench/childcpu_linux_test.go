package bench

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// processCPU is the CPU time of process pid so far: the time on CPU of each of its
// threads, from /proc/PID/task/*/schedstat (nanoseconds; /proc/PID/stat counts in
// 10 ms ticks, too coarse for a read of a few tens of milliseconds). A Go process's
// threads last as long as it does.
func processCPU(pid int) time.Duration {
	tasks, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "schedstat"))
	var total time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		first, _, _ := strings.Cut(string(b), " ")
		ns, _ := strconv.ParseInt(first, 10, 64)
		total += time.Duration(ns)
	}
	return total
}
