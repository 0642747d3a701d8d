package bench

import (
	"context"
	"fmt"
	"os"
	"runtime"
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
//
// COSMOSCTL_BENCH_ONLY=cosmosctl (or sdk, or floor) runs one implementation alone, for a
// profile of it (-cpuprofile, -memprofile) without the others' work; it reports that
// implementation's figures and no ratios.

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
	if os.Getenv(childEmulatorEnv) == "1" {
		os.Exit(runChildEmulator())
	}
	code := m.Run()
	if shared != nil {
		shared.emu.stop()
	}
	if sharedDir != "" {
		os.RemoveAll(sharedDir)
	}
	os.Exit(code)
}

func benchWorkload(b *testing.B, name string) {
	only := benchOnly(b) // before pointCommandsAt clears the COSMOSCTL_ variables
	s := sharedSuite(b)
	s.pointCommandsAt(b)
	w := s.workload(b, name)
	ctx := context.Background()
	// The implementations this run measures: the workload's, or the one named.
	var runs []int
	for i, im := range w.impls {
		if im.run != nil && (only < 0 || i == only) {
			runs = append(runs, i)
		}
	}
	if len(runs) == 0 {
		b.Skipf("%s has no %s implementation", name, implNames[only])
	}
	// One unmeasured run of each first: the code, the emulator's pools and the heap warm.
	for _, i := range runs {
		if _, err := s.runOnce(ctx, w, w.impls[i]); err != nil {
			b.Fatal(err)
		}
	}
	var sum [nImpls]measurement
	for b.Loop() {
		r := int(round.Add(1))
		for k := range runs {
			i := runs[(r+k)%len(runs)]
			m, err := s.runOnce(ctx, w, w.impls[i])
			if err != nil {
				b.Fatal(err)
			}
			sum[i].wall += m.wall
			sum[i].cpu += m.cpu
			sum[i].emuCPU += m.emuCPU
		}
	}
	items := float64(b.N) * float64(s.n)
	for _, i := range runs {
		b.ReportMetric(float64(sum[i].wall.Nanoseconds())/items, implNames[i]+"-wall-ns/item")
		b.ReportMetric(float64(sum[i].cpu.Nanoseconds())/items, implNames[i]+"-cpu-ns/item")
		if s.emu.srv == nil { // the emulator's CPU is apart from this process's only in a child
			b.ReportMetric(float64(sum[i].emuCPU.Nanoseconds())/items, implNames[i]+"-emu-cpu-ns/item")
		}
	}
	b.ReportMetric(0, "ns/op") // the runs' sum, set-up included: no one's figure
	if only >= 0 {
		return
	}
	for _, i := range runs[1:] {
		b.ReportMetric(float64(sum[cosmosctlImpl].wall)/float64(sum[i].wall), "wall-cosmosctl/"+implNames[i])
		b.ReportMetric(float64(sum[cosmosctlImpl].cpu)/float64(sum[i].cpu), "cpu-cosmosctl/"+implNames[i])
	}
}

// onlyEnv is COSMOSCTL_BENCH_ONLY as the process started (the benchmarks clear the
// COSMOSCTL_ variables for the commands they run).
var onlyEnv = os.Getenv("COSMOSCTL_BENCH_ONLY")

// benchOnly is the implementation COSMOSCTL_BENCH_ONLY names, or -1 (all of them).
func benchOnly(tb testing.TB) int {
	v := onlyEnv
	if v == "" {
		return -1
	}
	for i, name := range implNames {
		if v == name {
			return i
		}
	}
	tb.Fatalf("COSMOSCTL_BENCH_ONLY=%q: want one of %s", v, strings.Join(implNames[:], ", "))
	return -1
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
	t.Cleanup(s.emu.stop)
	s.pointCommandsAt(t)
	ctx := context.Background()
	for _, w := range s.workloads() {
		for _, im := range w.impls {
			if im.run == nil {
				continue
			}
			t.Run(w.name+"/"+im.name, func(t *testing.T) {
				if _, err := s.runOnce(ctx, w, im); err != nil {
					t.Fatal(err)
				}
			})
		}
	}

	// The emulator's work is in every CPU figure: it serves from a process of its own.
	if runtime.GOOS == "linux" && s.emu.srv == nil && s.emu.cpuTime() <= 0 {
		t.Error("the emulator process's CPU time reads 0: the CPU figures would leave its work out")
	}

	short := impl{name: "short", run: func(ctx context.Context, container string) (int, error) {
		n, err := s.floorQuery(false)(ctx, container)
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
