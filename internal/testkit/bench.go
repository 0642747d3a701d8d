package testkit

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/health"
)

// PeakRSS is a running process's peak resident set in KiB (VmHWM), 0 if unknown. (The
// rusage of a finished child will not do: its peak counts the parent's memory from
// before the exec.)
func PeakRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// LoadItems creates n items of about 250 bytes in app/items, spread over many partition
// keys, eight at a time.
func LoadItems(b testing.TB, srv *emulator.Server, n int) {
	LoadItemsAt(b, srv.Endpoint(), srv.Key(), n)
}

// LoadItemsAt is LoadItems for the emulator (or account) at endpoint with key: one in
// another process.
func LoadItemsAt(b testing.TB, endpoint, key string, n int) {
	mk, _ := cosmos.NewMasterKey(key)
	hs, _ := health.New(health.Config{}, clock.Real{})
	c, err := engine.New(engine.Options{Endpoint: endpoint, Transport: &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: mk}, Health: hs})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
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
				if _, err := c.Execute(context.Background(), engine.Operation{Kind: engine.OpCreate, Database: "app", Container: "items", Body: body}); err != nil {
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
