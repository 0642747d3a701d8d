package changefeed

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// BenchmarkCatchUp100k reads the change feed of 100,000 items in the emulator's 4
// ranges from the beginning until every range is caught up (Until CaughtUp), through
// the engine, the emulator in the same process with no injected latency, and reports
// the catch-up rate.
//
//	go test -run '^$' -bench CatchUp100k -benchtime 3x ./changefeed/
func BenchmarkCatchUp100k(b *testing.B) {
	const n = 100000
	e := startEmulator(b, 4)
	e.pad = strings.Repeat("0123456789abcdef", 12)
	start := time.Now()
	e.write(b, 0, n)
	b.Logf("wrote %d items in %v", n, time.Since(start).Round(time.Millisecond))
	catchUp := func(b *testing.B, pageSize int) (time.Duration, int) {
		t0 := time.Now()
		f, err := Open(context.Background(), Options{Client: e.c, Database: "db", Container: "c", Until: CaughtUp, PageSize: pageSize})
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		items, bytes := 0, 0
		for {
			batch, err := f.Next(context.Background())
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			items += len(batch.Items)
			for _, it := range batch.Items {
				bytes += len(it)
			}
		}
		if items != n {
			b.Fatalf("read %d changes, want %d", items, n)
		}
		return time.Since(t0), bytes / n
	}
	// The emulator builds its per-range LSN order on the first read after writes (a real
	// account reads its log): that first, cold read is reported on its own.
	cold, size := catchUp(b, 100)
	b.Logf("cold (the emulator's LSN order built on the way): %v, %.0f items/s, %d bytes/item", cold.Round(time.Millisecond), n/cold.Seconds(), size)
	for _, pageSize := range []int{100, 1000} {
		b.Run(fmt.Sprintf("page=%d", pageSize), func(b *testing.B) {
			var total time.Duration
			cpu0 := testkit.ProcessCPU()
			for i := 0; i < b.N; i++ {
				d, _ := catchUp(b, pageSize)
				total += d
			}
			b.ReportMetric(float64(n)*float64(b.N)/total.Seconds(), "items/s")
			// CPU time, client and emulator together: what a loaded machine's wall
			// times hide.
			b.ReportMetric(float64(testkit.ProcessCPU()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		})
	}
}
