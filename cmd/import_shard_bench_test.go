package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator"
)

// BenchmarkImportShards is one file of 20,000 items of ≈150 bytes imported by one
// `cosmosctl import` process, then by 4 processes started at once with --shard i/4
// (each with the same --concurrency, then with a quarter of it: the same writes in
// flight in all),
// side by side in one run against a new emulator each time (in the test process, sharing the
// machine with them): the wall time of each way, items/s over it, and the CPU time
// of the cosmosctl processes (user + system, from their rusage). On a 2-core machine
// the 4 shards share the 2 cores with each other and with the emulator: what they can
// gain is bounded by the machine, not by the shards.
//
//	go test -run '^$' -bench ImportShards -benchtime 3x ./cmd/
func BenchmarkImportShards(b *testing.B) {
	const n = 20000
	bin := cosmosctlBinary(b)
	run := 0
	for _, tc := range []struct{ shards, concurrency int }{{1, 32}, {4, 32}, {4, 8}} {
		shards := tc.shards
		b.Run(fmt.Sprintf("processes=%d/concurrency=%d", shards, tc.concurrency), func(b *testing.B) {
			var wall time.Duration
			var cpu time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				run++
				dir := b.TempDir()
				path := filepath.Join(dir, "items.ndjson")
				var sb strings.Builder
				for k := 1; k <= n; k++ {
					fmt.Fprintf(&sb, `{"id":"s%d-i%d","pk":"p%d","n":%d,"payload":"%s"}`+"\n", run, k, k%97, k, strings.Repeat("x", 100))
				}
				os.WriteFile(path, []byte(sb.String()), 0o600)
				// A new emulator each time: one that already holds the earlier runs' items
				// writes more slowly, which would favour whichever way ran first.
				env, stop := freshBenchAccount(b)
				b.StartTimer()
				start := time.Now()
				var wg sync.WaitGroup
				var mu sync.Mutex
				created := int64(0)
				for s := range shards {
					wg.Add(1)
					go func() {
						defer wg.Done()
						args := []string{"import", path, "--concurrency", fmt.Sprint(tc.concurrency), "-o", "json", "--state", filepath.Join(dir, fmt.Sprintf("s%d.state", s))}
						if shards > 1 {
							args = append(args, "--shard", fmt.Sprintf("%d/%d", s, shards))
						}
						cmd := exec.Command(bin, args...)
						cmd.Env = env
						out, err := cmd.Output()
						if err != nil {
							b.Errorf("import: %v", err)
							return
						}
						var rep importReport
						if err := json.Unmarshal(out, &rep); err != nil {
							b.Errorf("report %s: %v", out, err)
							return
						}
						if os.Getenv("BENCH_LOG") != "" {
							b.Logf("%d/%d: %s", s, shards, out)
						}
						mu.Lock()
						created += rep.Created
						cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
						mu.Unlock()
					}()
				}
				wg.Wait()
				wall += time.Since(start)
				stop()
				if created != n {
					b.Fatalf("%d items created, want %d", created, n)
				}
			}
			b.ReportMetric(float64(n*b.N)/wall.Seconds(), "items/s")
			b.ReportMetric(wall.Seconds()/float64(b.N), "wall-s/op")
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}

// freshBenchAccount is benchAccount's emulator, closed by the returned function.
func freshBenchAccount(b *testing.B) ([]string, func()) {
	b.Helper()
	srv, err := emulator.Start(emulator.Config{Databases: []emulator.DatabaseConfig{{ID: "app", Containers: []emulator.ContainerConfig{{ID: "items", PartitionKey: []string{"/pk"}}}}}}, emulator.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return append(os.Environ(), "COSMOSCTL_ENDPOINT="+srv.Endpoint(), "COSMOSCTL_KEY="+srv.Key(), "COSMOSCTL_DATABASE=app", "COSMOSCTL_CONTAINER=items",
		"COSMOSCTL_CONFIG="+filepath.Join(b.TempDir(), "none.toml"), "COSMOSCTL_STATE_DIR="+b.TempDir()), func() { srv.Close() }
}
