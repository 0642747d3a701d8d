//go:build linux

package data_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator"

	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// BenchmarkChangesInvocation100k is `cosmosctl changes -o ndjson` as an operator runs it,
// a process of its own, catching up on 100,000 changes in the emulator's 4 ranges
// (running in the test process, no injected latency), with a state file saved after
// every batch: the time to its last line on stdout, its peak resident set (Linux),
// which streaming keeps to a batch per range, and its CPU time per change (the client's
// alone).
//
//	go test -run '^$' -bench ChangesInvocation100k -benchtime 3x ./cmd/
func BenchmarkChangesInvocation100k(b *testing.B) {
	const n = 100000
	bin := testkit.Binary(b)
	srv, err := emulator.Start(emulator.Config{Databases: []emulator.DatabaseConfig{{ID: "app", Containers: []emulator.ContainerConfig{{ID: "items", PartitionKey: []string{"/pk"}}}}}}, emulator.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	testkit.LoadItems(b, srv, n)
	dir := b.TempDir()
	env := append(os.Environ(), "COSMOSCTL_ENDPOINT="+srv.Endpoint(), "COSMOSCTL_KEY="+srv.Key(), "COSMOSCTL_DATABASE=app", "COSMOSCTL_CONTAINER=items",
		"COSMOSCTL_CONFIG="+filepath.Join(dir, "none.toml"), "COSMOSCTL_STATE_DIR="+dir)
	// clientCPU adds up the CPU time (user and system) of the cosmosctl processes: the
	// client's cost alone, the emulator's left out.
	var clientCPU time.Duration
	run := func(args ...string) (total time.Duration, lines int, maxRSS int64) {
		os.Remove(filepath.Join(dir, "feed.json"))
		cmd := exec.Command(bin, append([]string{"changes", "-o", "ndjson", "--state", filepath.Join(dir, "feed.json")}, args...)...)
		cmd.Env = env
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines++
			if lines%100 == 0 {
				maxRSS = max(maxRSS, testkit.PeakRSS(cmd.Process.Pid))
			}
		}
		if err := cmd.Wait(); err != nil {
			b.Fatalf("changes: %v", err)
		}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			clientCPU += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
		return time.Since(start), lines, maxRSS
	}
	run("--max-items", "10") // the emulator's per-range LSN order, built once
	for _, pageSize := range []string{"100", "1000"} {
		b.Run("page="+pageSize, func(b *testing.B) {
			var totalSum time.Duration
			var peak int64
			clientCPU = 0
			for b.Loop() {
				total, lines, rss := run("--page-size", pageSize)
				if lines != n {
					b.Fatalf("%d lines, want %d", lines, n)
				}
				totalSum, peak = totalSum+total, max(peak, rss)
			}
			b.ReportMetric(float64(n)*float64(b.N)/totalSum.Seconds(), "changes/s")
			b.ReportMetric(float64(peak)/1024, "peak-RSS-MiB")
			b.ReportMetric(float64(clientCPU.Nanoseconds())/float64(n)/float64(b.N), "client-cpu-ns/change")
		})
	}
}
