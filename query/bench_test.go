package query

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// benchDocs are n small documents with a sort key of many ties spread over pk values
// that fill the 4 ranges about evenly.
func benchDocs(n int) []fdoc {
	docs := make([]fdoc, n)
	for i := range docs {
		body := map[string]any{"id": fmt.Sprintf("b%06d", i), "pk": fmt.Sprintf("p%d", i%997), "n": (i * 7919) % 5000, "g": fmt.Sprintf("g%d", i%7), "pad": "0123456789abcdef0123456789abcdef"}
		docs[i].raw, _ = json.Marshal(body)
		docs[i].body = body
	}
	return docs
}

// BenchmarkOrderByAcross4Ranges runs SELECT * … ORDER BY c.n DESC over 100,000 items in
// the emulator's 4 ranges, pages of 100, and reports the time to the first item, the
// throughput, the most items the pipeline held at once (its buffers: a page per range
// and one read ahead) and the most the process heap grew over its level before the
// query (the emulator runs in the same process; its own per-range caches count too).
//
//	go test -run '^$' -bench OrderByAcross4Ranges -benchtime 3x ./query/
func BenchmarkOrderByAcross4Ranges(b *testing.B) {
	const n, pageSize = 100000, 100
	e := startEmulator(b)
	start := time.Now()
	e.load(b, benchDocs(n))
	b.Logf("loaded %d items in %v", n, time.Since(start).Round(time.Millisecond))
	o := Options{Client: e.c, Database: "db", Container: "c", Spec: cosmos.QuerySpec{Query: "SELECT * FROM c ORDER BY c.n DESC"}, PageSize: pageSize}

	// Warm the emulator's per-range ORDER BY caches and the connections, as a real
	// account's would be.
	drain := func(sample bool) (first time.Duration, total time.Duration, items, held int, heap uint64) {
		var base runtime.MemStats
		if sample {
			runtime.GC()
			runtime.ReadMemStats(&base)
		}
		t0 := time.Now()
		it, err := Run(context.Background(), o)
		if err != nil {
			b.Fatal(err)
		}
		defer it.Close()
		for {
			got, _, err := it.Next(context.Background())
			if len(got) > 0 && items == 0 {
				first = time.Since(t0)
			}
			items += len(got)
			h := 0
			for _, r := range it.ranges {
				h += len(r.buf)
				if r.ahead != nil {
					h += len(r.ahead.items)
				}
			}
			held = max(held, h)
			if sample && items%5000 < pageSize && len(got) > 0 {
				var m runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&m)
				if m.HeapAlloc > base.HeapAlloc {
					heap = max(heap, m.HeapAlloc-base.HeapAlloc)
				}
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		return first, time.Since(t0), items, held, heap
	}
	drain(false)

	b.Run("stream", func(b *testing.B) {
		var firstSum, totalSum time.Duration
		peakHeld := 0
		for b.Loop() {
			first, total, items, held, _ := drain(false)
			if items != n {
				b.Fatalf("%d items, want %d", items, n)
			}
			firstSum += first
			totalSum += total
			peakHeld = max(peakHeld, held)
		}
		b.ReportMetric(float64(firstSum.Microseconds())/1000/float64(b.N), "ms-to-first-item")
		b.ReportMetric(float64(n)/(totalSum.Seconds()/float64(b.N)), "items/s")
		b.ReportMetric(float64(peakHeld), "peak-items-held")
	})
	b.Run("memory", func(b *testing.B) {
		var peakHeap uint64
		peakHeld := 0
		for b.Loop() {
			_, _, items, held, heap := drain(true)
			if items != n {
				b.Fatalf("%d items, want %d", items, n)
			}
			peakHeld = max(peakHeld, held)
			peakHeap = max(peakHeap, heap)
		}
		b.ReportMetric(float64(peakHeld), "peak-items-held")
		b.ReportMetric(float64(peakHeap)/(1<<20), "peak-heap-growth-MiB")
	})
}
