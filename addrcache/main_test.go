package addrcache

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
)

// Refreshes run on their own goroutines; every test must leave none of them behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A replica set as the gateway returns it: one primary, three secondaries.
const (
	p  = "rntbd://127.0.0.1:10251/apps/a/services/s/partitions/0/replicas/1p/"
	s1 = "rntbd://127.0.0.1:10252/apps/a/services/s/partitions/0/replicas/2s/"
	s2 = "rntbd://127.0.0.1:10253/apps/a/services/s/partitions/0/replicas/3s/"
	s3 = "rntbd://127.0.0.1:10254/apps/a/services/s/partitions/0/replicas/4s/"
	// s4 is the replacement for a secondary that moved.
	s4 = "rntbd://127.0.0.1:10255/apps/a/services/s/partitions/0/replicas/5s/"
)

var key = Key{Region: "West US", Collection: "dbs/AAAA==/colls/AAAAAA==/", Range: "0"}

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// addresses builds a gateway answer; a URL ending in "p/" is the primary.
func addresses(urls ...string) []cosmos.Address {
	out := make([]cosmos.Address, len(urls))
	for i, u := range urls {
		out[i] = cosmos.Address{IsPrimary: strings.HasSuffix(u, "p/"), Protocol: "rntbd",
			PhysicalURI: u, PartitionKeyRangeID: "0"}
	}
	return out
}

type resolveCall struct {
	key   Key
	force bool
}

// fakeResolver is the gateway: it answers with the current set, or fails, and can be
// held so that a resolve stays in flight until the test releases it.
type fakeResolver struct {
	mu        sync.Mutex
	set       []cosmos.Address
	err       error
	gate      chan struct{}
	calls     []resolveCall
	cancelled int // resolves that ended because their context was cancelled
	entered   chan resolveCall
}

func newFakeResolver(urls ...string) *fakeResolver {
	return &fakeResolver{set: addresses(urls...), entered: make(chan resolveCall, 1000)}
}

func (f *fakeResolver) Resolve(ctx context.Context, k Key, force bool) ([]cosmos.Address, error) {
	f.mu.Lock()
	f.calls = append(f.calls, resolveCall{k, force})
	gate := f.gate
	f.mu.Unlock()
	f.entered <- resolveCall{k, force}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			f.mu.Lock()
			f.cancelled++
			f.mu.Unlock()
			return nil, context.Cause(ctx)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	return slices.Clone(f.set), nil
}

// hold makes resolves block until release is called.
func (f *fakeResolver) hold() (release func()) {
	gate := make(chan struct{})
	f.mu.Lock()
	f.gate = gate
	f.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			f.gate = nil
			f.mu.Unlock()
			close(gate)
		})
	}
}

func (f *fakeResolver) returns(urls ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.set, f.err = addresses(urls...), nil
}

func (f *fakeResolver) fails(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
}

// count is the number of resolves asked with the given forceRefresh.
func (f *fakeResolver) count(force bool) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		if c.force == force {
			n++
		}
	}
	return n
}

func (f *fakeResolver) cancels() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cancelled
}

// awaitEntered waits (in real time, as a guard) until n more resolves have started.
func (f *fakeResolver) awaitEntered(t *testing.T, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		select {
		case <-f.entered:
		case <-time.After(5 * time.Second):
			t.Fatalf("resolve %d of %d never started", i+1, n)
		}
	}
}

type harness struct {
	t   *testing.T
	clk *clock.Fake
	res *fakeResolver
	c   *Cache
}

// newHarness builds a cache over the set p, s1, s2, s3 with a fixed seed.
func newHarness(t *testing.T, opts Options) *harness {
	t.Helper()
	h := &harness{t: t, clk: clock.NewFake(t0), res: newFakeResolver(p, s1, s2, s3)}
	if opts.Rand == nil {
		opts.Rand = rand.New(rand.NewPCG(4, 2))
	}
	h.c = New(h.res, h.clk, opts)
	t.Cleanup(h.c.Close)
	return h
}

func (h *harness) replicas() []Replica {
	h.t.Helper()
	rs, err := h.c.Replicas(context.Background(), key, false)
	if err != nil {
		h.t.Fatalf("Replicas: %v", err)
	}
	return rs
}

func (h *harness) order() []string {
	h.t.Helper()
	var urls []string
	for _, r := range h.replicas() {
		urls = append(urls, r.URL)
	}
	return urls
}

// replica is the URL's entry in the set, or fails the test when it is not there.
func (h *harness) replica(url string) Replica {
	h.t.Helper()
	for _, r := range h.replicas() {
		if r.URL == url {
			return r
		}
	}
	h.t.Fatalf("%s is not in the set", url)
	return Replica{}
}

func (h *harness) expectHealth(url string, want Health) {
	h.t.Helper()
	if got := h.replica(url).Health; got != want {
		h.t.Errorf("health of %s = %v, want %v", url, got, want)
	}
}

// expectSlot checks that over many orders url is always at index i (negative: from the end).
func (h *harness) expectSlot(url string, i int) {
	h.t.Helper()
	for n := 0; n < 200; n++ {
		o := h.order()
		j := i
		if j < 0 {
			j += len(o)
		}
		if o[j] != url {
			h.t.Fatalf("order %d: %v, want %s at %d", n, o, url, i)
		}
	}
}

// firstShares draws n orders and returns how often each URL came first.
func (h *harness) firstShares(n int) map[string]float64 {
	h.t.Helper()
	counts := map[string]int{}
	for i := 0; i < n; i++ {
		counts[h.order()[0]]++
	}
	shares := map[string]float64{}
	for u, c := range counts {
		shares[u] = float64(c) / float64(n)
	}
	return shares
}
