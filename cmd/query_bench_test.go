//go:build linux

package cmd

import (
	"bufio"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator"
)

// BenchmarkQueryInvocation100k is `cosmosctl query 'SELECT * FROM c ORDER BY c.n DESC'
// --all -o ndjson --page-size 100` (the pages the README's figures were measured with) as
// an operator runs it, a process of its own, over 100,000 items in the emulator's 4 ranges
// (running in the test process, no injected latency): the time to its first line on
// stdout, the time to its last, and the most memory the process held (its peak resident
// set, Linux only), which streaming keeps to pages × ranges, not the result.
//
//	go test -run '^$' -bench QueryInvocation100k -benchtime 3x ./cmd/
func BenchmarkQueryInvocation100k(b *testing.B) {
	const n = 100000
	bin := cosmosctlBinary(b)
	srv, err := emulator.Start(emulator.Config{Databases: []emulator.DatabaseConfig{{ID: "app", Containers: []emulator.ContainerConfig{{ID: "items", PartitionKey: []string{"/pk"}}}}}}, emulator.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	testkit.LoadItems(b, srv, n)
	env := append(os.Environ(), "COSMOSCTL_ENDPOINT="+srv.Endpoint(), "COSMOSCTL_KEY="+srv.Key(), "COSMOSCTL_DATABASE=app", "COSMOSCTL_CONTAINER=items",
		"COSMOSCTL_CONFIG="+filepath.Join(b.TempDir(), "none.toml"), "COSMOSCTL_STATE_DIR="+b.TempDir())
	run := func(limit ...string) (first, total time.Duration, lines int, maxRSS int64) {
		cmd := exec.Command(bin, append([]string{"query", "SELECT * FROM c ORDER BY c.n DESC", "-o", "ndjson"}, limit...)...)
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
			if lines == 0 {
				first = time.Since(start)
			}
			lines++
			if lines%100 == 0 {
				maxRSS = max(maxRSS, testkit.PeakRSS(cmd.Process.Pid))
			}
		}
		if err := cmd.Wait(); err != nil {
			b.Fatalf("query: %v", err)
		}
		total = time.Since(start)
		return first, total, lines, maxRSS
	}
	run("--all", "--page-size", "100") // warm the emulator's per-range ORDER BY caches, as a real account's are
	var firstSum, totalSum time.Duration
	var peak, small int64
	for b.Loop() {
		first, total, lines, rss := run("--all", "--page-size", "100")
		if lines != n {
			b.Fatalf("%d lines, want %d", lines, n)
		}
		firstSum, totalSum, peak = firstSum+first, totalSum+total, max(peak, rss)
		// The same process reading 1,000 items: what the process needs whatever it reads.
		_, _, _, rss = run("--max-items", "1000", "--page-size", "100")
		small = max(small, rss)
	}
	b.ReportMetric(float64(firstSum.Microseconds())/1000/float64(b.N), "ms-to-first-line")
	b.ReportMetric(float64(totalSum.Milliseconds())/float64(b.N), "ms-to-last-line")
	b.ReportMetric(float64(peak)/1024, "peak-RSS-MiB")
	b.ReportMetric(float64(small)/1024, "peak-RSS-MiB-1k-items")
}
