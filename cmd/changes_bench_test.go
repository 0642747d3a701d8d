//go:build linux

package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// BenchmarkChangesCatchUp100k is `cosmosctl changes -o ndjson` catching up on the
// change feed of 100,000 items (≈ 250 bytes each) in the emulator's 4 ranges, through
// the command's own code (Run, in this process, as the emulator is; no injected
// latency), stdout counted and thrown away. It reports, per change, the wall time, the
// CPU time (user + system of the whole process: the emulator's share included) and the
// heap allocations (the emulator's too), at the default page size and at explicit
// pages of 100 and 1,000.
//
//	go test -run '^$' -bench ChangesCatchUp100k -benchtime 3x ./cmd/
func BenchmarkChangesCatchUp100k(b *testing.B) {
	const n = 100000
	srv, err := emulator.Start(emulator.Config{Databases: []emulator.DatabaseConfig{{ID: "app", Containers: []emulator.ContainerConfig{{ID: "items", PartitionKey: []string{"/pk"}}}}}}, emulator.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	testkit.LoadItems(b, srv, n)
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "COSMOSCTL_") {
			b.Setenv(name, "")
		}
	}
	dir := b.TempDir()
	for k, v := range map[string]string{"COSMOSCTL_ENDPOINT": srv.Endpoint(), "COSMOSCTL_KEY": srv.Key(), "COSMOSCTL_DATABASE": "app",
		"COSMOSCTL_CONTAINER": "items", "COSMOSCTL_CONFIG": filepath.Join(dir, "none.toml"), "COSMOSCTL_STATE_DIR": dir,
		"COSMOSCTL_EMULATOR_DATA": filepath.Join(dir, "emulator")} {
		b.Setenv(k, v)
	}
	run := func(b *testing.B, args ...string) {
		out, errOut := &lineCounter{}, &bytes.Buffer{}
		code := Run(context.Background(), &IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut}, append([]string{"changes", "-o", "ndjson"}, args...))
		if code != 0 || out.lines != n {
			b.Fatalf("changes %v: exit %d, %d lines, want %d: %s", args, code, out.lines, n, errOut)
		}
	}
	// The emulator builds its per-range LSN order on the first read after the writes (a
	// real account reads its log), and the connection and heap warm.
	run(b)
	for _, c := range []struct {
		name string
		args []string
	}{{"default", nil}, {"page=100", []string{"--page-size", "100"}}, {"page=1000", []string{"--page-size", "1000"}}} {
		b.Run(c.name, func(b *testing.B) {
			var ms0, ms1 runtime.MemStats
			runtime.ReadMemStats(&ms0)
			cpu0 := testkit.ProcessCPU()
			start := time.Now()
			for b.Loop() {
				run(b, c.args...)
			}
			wall, cpu := time.Since(start), testkit.ProcessCPU()-cpu0
			runtime.ReadMemStats(&ms1)
			changes := float64(n) * float64(b.N)
			b.ReportMetric(float64(wall.Nanoseconds())/changes, "wall-ns/change")
			b.ReportMetric(float64(cpu.Nanoseconds())/changes, "cpu-ns/change")
			b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/changes, "allocs/change")
			b.ReportMetric(changes/wall.Seconds(), "changes/s")
		})
	}
}
