package bench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The benchmarks: one per workload, each iteration running cosmosctl, the Go SDK and
// the floor one after the other on the same emulator, in an order that rotates from
// iteration to iteration (and across -count), so that the machine's noise and the order
// fall on all three alike. Per implementation: wall and process CPU time per item; and
// the ratios cosmosctl/floor and cosmosctl/SDK of their totals, which the issue's
// targets are stated in.
//
//	go test -run='^$' -bench=. -benchtime=2x -count=2 ./bench/
//	COSMOSCTL_BENCH_N=100000 go test -run='^$' -bench=. -benchtime=2x -count=2 -timeout=60m ./bench/

func BenchmarkImportCreate(b *testing.B) { benchWorkload(b, "ImportCreate") }
func BenchmarkImportUpsert(b *testing.B) { benchWorkload(b, "ImportUpsert") }
func BenchmarkChanges(b *testing.B)      { benchWorkload(b, "Changes") }
func BenchmarkExport(b *testing.B)       { benchWorkload(b, "Export") }
func BenchmarkQueryAll(b *testing.B)     { benchWorkload(b, "QueryAll") }

var (
	sharedOnce  sync.Once
	shared      *suite
	sharedDir   string
	sharedError error
	// round rotates the implementations' order across iterations and -count.
	round atomic.Int64
)

// sharedSuite is the one emulator every benchmark of the process uses, loaded once.
func sharedSuite(b *testing.B) *suite {
	sharedOnce.Do(func() {
		n := benchN(b)
		sharedDir, sharedError = os.MkdirTemp("", "cosmosctl-bench-")
		if sharedError != nil {
			return
		}
		start := time.Now()
		shared = newSuite(b, n, sharedDir)
		b.Logf("emulator loaded with %d items in %v", n, time.Since(start).Round(time.Millisecond))
	})
	if sharedError != nil {
		b.Fatal(sharedError)
	}
	if shared == nil {
		b.Fatal("the shared emulator failed to start (see the first benchmark)")
	}
	return shared
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		shared.srv.Close()
	}
	if sharedDir != "" {
		os.RemoveAll(sharedDir)
	}
	os.Exit(code)
}

func benchWorkload(b *testing.B, name string) {
	s := sharedSuite(b)
	s.pointCommandsAt(b)
	w := s.workload(b, name)
	ctx := context.Background()
	// One unmeasured run of each first: the code, the emulator's pools and the heap warm.
	for _, im := range w.impls {
		if _, err := s.runOnce(ctx, w, im); err != nil {
			b.Fatal(err)
		}
	}
	var sum [3]measurement
	for b.Loop() {
		r := int(round.Add(1))
		for k := range 3 {
			i := (r + k) % 3
			m, err := s.runOnce(ctx, w, w.impls[i])
			if err != nil {
				b.Fatal(err)
			}
			sum[i].wall += m.wall
			sum[i].cpu += m.cpu
		}
	}
	items := float64(b.N) * float64(s.n)
	for i, name := range implNames {
		b.ReportMetric(float64(sum[i].wall.Nanoseconds())/items, name+"-wall-ns/item")
		b.ReportMetric(float64(sum[i].cpu.Nanoseconds())/items, name+"-cpu-ns/item")
	}
	ratio := func(a, b time.Duration) float64 { return float64(a) / float64(b) }
	b.ReportMetric(ratio(sum[cosmosctlImpl].wall, sum[floorImpl].wall), "wall-cosmosctl/floor")
	b.ReportMetric(ratio(sum[cosmosctlImpl].cpu, sum[floorImpl].cpu), "cpu-cosmosctl/floor")
	b.ReportMetric(ratio(sum[cosmosctlImpl].wall, sum[sdkImpl].wall), "wall-cosmosctl/sdk")
	b.ReportMetric(ratio(sum[cosmosctlImpl].cpu, sum[sdkImpl].cpu), "cpu-cosmosctl/sdk")
	b.ReportMetric(0, "ns/op") // the three runs' sum, set-up included: no one's figure
}

func (s *suite) workload(tb testing.TB, name string) workload {
	for _, w := range s.workloads() {
		if w.name == name {
			return w
		}
	}
	tb.Fatalf("no workload %q", name)
	return workload{}
}

// Every implementation of every workload does the whole work on a small container, and
// a run that does less than the work is caught: a broken path cannot look fast.
func TestEveryImplementationDoesTheWork(t *testing.T) {
	const n = 300
	s := newSuite(t, n, t.TempDir())
	t.Cleanup(func() { s.srv.Close() })
	s.pointCommandsAt(t)
	ctx := context.Background()
	for _, w := range s.workloads() {
		for _, im := range w.impls {
			t.Run(w.name+"/"+im.name, func(t *testing.T) {
				if _, err := s.runOnce(ctx, w, im); err != nil {
					t.Fatal(err)
				}
			})
		}
	}

	short := impl{name: "short", run: func(ctx context.Context, container string) (int, error) {
		n, err := s.floorQuery(ctx, container)
		return n - 1, err
	}}
	if _, err := s.runOnce(ctx, workload{name: "QueryAll"}, short); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%d items, want %d", n-1, n)) {
		t.Errorf("a run one item short: %v, want it refused", err)
	}
	lost := impl{name: "lost", run: func(ctx context.Context, container string) (int, error) {
		return n, nil // says it wrote them, wrote nothing
	}}
	if _, err := s.runOnce(ctx, workload{name: "ImportCreate", write: true}, lost); err == nil || !strings.Contains(err.Error(), "holds 0 items") {
		t.Errorf("an import that wrote nothing: %v, want it refused", err)
	}
}
