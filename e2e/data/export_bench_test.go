//go:build linux

package data_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator"

	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// BenchmarkExportInvocation100k is `cosmosctl export --output FILE --state FILE` as an
// operator runs it, a process of its own, over 100,000 items in the emulator's 4 ranges
// (running in the test process, no injected latency): items/s, and the most memory the
// process held (its peak resident set, Linux only) beside the same export of 1,000
// items, which is what streaming bounds it by: pages, not the container.
//
//	go test -run '^$' -bench ExportInvocation100k -benchtime 3x ./cmd/
func BenchmarkExportInvocation100k(b *testing.B) {
	const n = 100000
	bin := testkit.Binary(b)
	start := func(items int) (*emulator.Server, []string) {
		srv, err := emulator.Start(emulator.Config{Databases: []emulator.DatabaseConfig{{ID: "app", Containers: []emulator.ContainerConfig{{ID: "items", PartitionKey: []string{"/pk"}}}}}}, emulator.Options{})
		if err != nil {
			b.Fatal(err)
		}
		testkit.LoadItems(b, srv, items)
		return srv, append(os.Environ(), "COSMOSCTL_ENDPOINT="+srv.Endpoint(), "COSMOSCTL_KEY="+srv.Key(), "COSMOSCTL_DATABASE=app", "COSMOSCTL_CONTAINER=items",
			"COSMOSCTL_CONFIG="+filepath.Join(b.TempDir(), "none.toml"), "COSMOSCTL_STATE_DIR="+b.TempDir())
	}
	big, bigEnv := start(n)
	defer big.Close()
	small, smallEnv := start(1000)
	defer small.Close()
	run := func(env []string, args ...string) (time.Duration, int64, int64) {
		dir := b.TempDir()
		out := filepath.Join(dir, "items.ndjson")
		cmd := exec.Command(bin, append([]string{"export", "--output-file", out, "--state", filepath.Join(dir, "items.state"), "--strip-system"}, args...)...)
		cmd.Env = env
		t0 := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var rss int64
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
	wait:
		for {
			select {
			case err := <-done:
				if err != nil {
					b.Fatalf("export: %v", err)
				}
				break wait
			case <-tick.C:
				rss = max(rss, testkit.PeakRSS(cmd.Process.Pid))
			}
		}
		took := time.Since(t0)
		fi, err := os.Stat(out)
		if err != nil {
			b.Fatal(err)
		}
		return took, rss, fi.Size()
	}
	run(bigEnv) // warm the emulator, as a real account's caches are
	var total time.Duration
	var peak, smallPeak int64
	for b.Loop() {
		took, rss, size := run(bigEnv)
		if size < n*50 {
			b.Fatalf("a file of %d bytes for %d items", size, n)
		}
		total, peak = total+took, max(peak, rss)
		_, rss, _ = run(smallEnv)
		smallPeak = max(smallPeak, rss)
	}
	b.ReportMetric(float64(n)*float64(b.N)/total.Seconds(), "items/s")
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms-per-export")
	b.ReportMetric(float64(peak)/1024, "peak-RSS-MiB")
	b.ReportMetric(float64(smallPeak)/1024, "peak-RSS-MiB-1k-items")
}
