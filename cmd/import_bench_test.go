package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator"
)

// benchAccount is an emulator in the test process (no injected latency) and the
// environment a cosmosctl process needs to use it.
func benchAccount(b *testing.B) []string {
	b.Helper()
	srv, err := emulator.Start(emulator.Config{Databases: []emulator.DatabaseConfig{{ID: "app", Containers: []emulator.ContainerConfig{{ID: "items", PartitionKey: []string{"/pk"}}}}}}, emulator.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close() })
	return append(os.Environ(), "COSMOSCTL_ENDPOINT="+srv.Endpoint(), "COSMOSCTL_KEY="+srv.Key(), "COSMOSCTL_DATABASE=app", "COSMOSCTL_CONTAINER=items",
		"COSMOSCTL_CONFIG="+filepath.Join(b.TempDir(), "none.toml"), "COSMOSCTL_STATE_DIR="+b.TempDir())
}

// BenchmarkImport is `cosmosctl import FILE --concurrency N` as a process of its own,
// 5,000 items of ≈150 bytes a run (new ids each run), against the emulator: the items/s
// and RU/s of its own report.
//
//	go test -run '^$' -bench 'Import|CreateLoop' -benchtime 3x ./cmd/
func BenchmarkImport(b *testing.B) {
	const n = 5000
	bin := cosmosctlBinary(b)
	env := benchAccount(b)
	run := 0 // new ids every run: the benchmark function is called more than once
	for _, conc := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("concurrency=%d", conc), func(b *testing.B) {
			var items, ru, secs float64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				run++
				path := filepath.Join(b.TempDir(), "items.ndjson")
				var sb strings.Builder
				for k := 1; k <= n; k++ {
					fmt.Fprintf(&sb, `{"id":"r%d-i%d","pk":"p%d","n":%d,"payload":"%s"}`+"\n", run, k, k%97, k, strings.Repeat("x", 100))
				}
				os.WriteFile(path, []byte(sb.String()), 0o600)
				b.StartTimer()
				cmd := exec.Command(bin, "import", path, "--concurrency", fmt.Sprint(conc), "-o", "json")
				cmd.Env = env
				out, err := cmd.Output()
				if err != nil {
					b.Fatalf("import: %v", err)
				}
				lines := strings.Split(strings.TrimSpace(string(out)), "\n")
				var rep importReport
				if err := json.Unmarshal([]byte(lines[len(lines)-1]), &rep); err != nil || rep.Created != n {
					b.Fatalf("report %s: %v", lines[len(lines)-1], err)
				}
				items += float64(rep.Created)
				ru += rep.RequestCharge
				secs += float64(rep.Created) / rep.ThisRun.ItemsPerSecond
			}
			b.ReportMetric(items/secs, "items/s")
			b.ReportMetric(ru/secs, "RU/s")
		})
	}
}

var loopRun int

// BenchmarkCreateLoop is the naive way to load a file: one `cosmosctl create -f -`
// process per item, one after the other, 200 items a run.
func BenchmarkCreateLoop(b *testing.B) {
	const n = 200
	bin := cosmosctlBinary(b)
	env := benchAccount(b)
	var elapsed time.Duration
	for i := 0; i < b.N; i++ {
		loopRun++
		start := time.Now()
		for k := 1; k <= n; k++ {
			cmd := exec.Command(bin, "create", "-f", "-")
			cmd.Env = env
			cmd.Stdin = strings.NewReader(fmt.Sprintf(`{"id":"loop-r%d-i%d","pk":"p%d","n":%d,"payload":"%s"}`, loopRun, k, k%97, k, strings.Repeat("x", 100)))
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("create: %v %s", err, out)
			}
		}
		elapsed += time.Since(start)
	}
	b.ReportMetric(float64(n*b.N)/elapsed.Seconds(), "items/s")
}
