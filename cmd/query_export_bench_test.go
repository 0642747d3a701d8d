package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// lineCounter counts the lines written to it and keeps nothing.
type lineCounter struct{ lines int }

func (w *lineCounter) Write(p []byte) (int, error) {
	w.lines += bytes.Count(p, []byte{'\n'})
	return len(p), nil
}

// BenchmarkQueryAllVsExport100k is `cosmosctl query 'SELECT * FROM c' --all -o ndjson`
// beside `cosmosctl export` (to stdout) of the same 100,000 items (≈ 250 bytes each) in
// the emulator's 4 ranges, through the commands' own code (Run, in this process, as
// the emulator is), no injected latency. Each iteration runs the query and the export
// one after the other, so that both see the same load; query/export is the ratio of
// their times (the bound: 1.3). The query is also run at the pages of 100 it
// read before it took export's default.
//
//	go test -run='^$' -bench=BenchmarkQueryAllVsExport100k -benchtime=3x -count=3 ./cmd/
func BenchmarkQueryAllVsExport100k(b *testing.B) {
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
	run := func(args ...string) time.Duration {
		out, errOut := &lineCounter{}, &bytes.Buffer{}
		start := time.Now()
		code := Run(context.Background(), &IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut}, args)
		took := time.Since(start)
		if code != 0 || out.lines != n {
			b.Fatalf("%v: exit %d, %d lines, want %d: %s", args, code, out.lines, n, errOut)
		}
		return took
	}
	queryAll := []string{"query", "SELECT * FROM c", "--all", "-o", "ndjson"}
	run(queryAll...) // the connection, the emulator's pools and the heap warm
	var query, export, small time.Duration
	for b.Loop() {
		query += run(queryAll...)
		export += run("export")
		small += run(append(queryAll, "--page-size", "100")...)
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	b.ReportMetric(ms(query), "query-ms/op")
	b.ReportMetric(ms(export), "export-ms/op")
	b.ReportMetric(float64(query)/float64(export), "query/export")
	b.ReportMetric(ms(small), "query-pages-of-100-ms/op")
}
