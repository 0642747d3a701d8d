package export

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/query"
)

// BenchmarkExport100k exports 100,000 items of about 250 bytes from the emulator's 4
// ranges (in this process, no injected latency) through the query source, pages of
// 1,000, 4 at once, to a discarding writer: items/s, the most items the copy loop held at
// once (one page), and how far the live heap grew above where it started (after a
// collection every 10,000 items; the emulator serving the pages is in the same process
// and counted too). The process's own memory is BenchmarkExportInvocation100k's in
// cmd/.
//
//	go test -run '^$' -bench Export100k -benchtime 3x ./export/
func BenchmarkExport100k(b *testing.B) {
	const n = 100000
	e := startEmulator(b)
	load(b, e, n)
	var peakGrowth, retained uint64
	var peakItems int
	var total time.Duration
	for b.Loop() {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base := ms.HeapAlloc
		src, err := NewQuerySource(context.Background(), query.Options{Client: e.c, Database: "db", Container: "c",
			Spec: cosmos.QuerySpec{Query: "SELECT * FROM c"}, PageSize: 1000, Parallelism: 4}, nil)
		if err != nil {
			b.Fatal(err)
		}
		next := int64(10000)
		t0 := time.Now()
		res, err := Run(context.Background(), Options{Source: src, Out: io.Discard, Strip: SystemProperties, Progress: func(c Counts) {
			if c.Items >= next {
				next += 10000
				runtime.GC() // the live heap: what is held, not garbage waiting for a cycle
				runtime.ReadMemStats(&ms)
				if ms.HeapAlloc > base {
					peakGrowth = max(peakGrowth, ms.HeapAlloc-base)
				}
			}
		}})
		total += time.Since(t0)
		src.Close()
		if err != nil || res.Items != n {
			b.Fatalf("%d items: %v", res.Items, err)
		}
		peakItems = max(peakItems, res.PeakPageItems)
		runtime.GC()
		runtime.ReadMemStats(&ms)
		if ms.HeapAlloc > base {
			retained = max(retained, ms.HeapAlloc-base)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/total.Seconds(), "items/s")
	b.ReportMetric(float64(peakItems), "peak-items-held")
	b.ReportMetric(float64(peakGrowth)/(1<<20), "peak-live-heap-growth-MiB")
	b.ReportMetric(float64(retained)/(1<<20), "heap-retained-MiB")
}

// load creates n items of about 250 bytes over 997 partition keys, 8 at a time.
func load(b *testing.B, e *emu, n int) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	for range 8 {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n || failed.Load() != nil {
					return
				}
				body := fmt.Appendf(nil, `{"id":"b%06d","pk":"p%d","n":%d,"g":"g%d","pad":"0123456789abcdef0123456789abcdef"}`, i, i%997, (i*7919)%5000, i%7)
				if _, err := e.c.Execute(context.Background(), engine.Operation{Kind: engine.OpCreate, Database: "db", Container: "c", Body: body}); err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := failed.Load(); err != nil {
		b.Fatal(err)
	}
}
