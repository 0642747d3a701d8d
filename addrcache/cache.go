package addrcache

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
)

// Key names one replica set: a partition key range of a container in a region.
type Key struct {
	Region string
	// Collection is the container's resource id path the gateway resolves
	// (dbs/{dbRid}/colls/{collRid}).
	Collection string
	Range      string
}

func (k Key) String() string { return k.Region + ":" + k.Collection + "#" + k.Range }

// Resolver asks the gateway for replica addresses. It must return promptly once ctx is
// cancelled: Close waits for resolves in flight.
type Resolver interface {
	// Resolve asks the gateway for the key's replica addresses; forceRefresh asks it to
	// bypass its own cache.
	Resolve(ctx context.Context, key Key, forceRefresh bool) ([]cosmos.Address, error)
}

// Options tune the cache. The zero value is the SDKs' behaviour.
type Options struct {
	// UnhealthyFor is how long a mark lasts without a refresh (default 1 minute, as the
	// .NET and Java SDKs).
	UnhealthyFor time.Duration
	// DisableHealth is for comparison only: plain random order, marks ignored
	// (cosmosctl --no-replica-health). Gone still refreshes the addresses.
	DisableHealth bool
	// Rand orders the replicas; default seeded from the clock. The cache serializes its
	// use, so it need not be safe for concurrent use, but it must not be shared.
	Rand *rand.Rand
	// RefreshTimeout bounds one background refresh (default 10 s).
	RefreshTimeout time.Duration
}

const (
	defaultUnhealthyFor   = time.Minute
	defaultRefreshTimeout = 10 * time.Second
)

var (
	// ErrClosed is returned by Replicas once Close was called and the key is not cached.
	ErrClosed = errors.New("addrcache: closed")
	// ErrNoPrimary is returned by Replicas for a write when the set has no primary.
	ErrNoPrimary = errors.New("addrcache: replica set has no primary")
	// ErrNoAddresses is returned when the gateway answered with no usable address.
	ErrNoAddresses = errors.New("addrcache: gateway returned no replica addresses")
)

// Cache maps partitions to replica sets. It is safe for concurrent use.
type Cache struct {
	resolver Resolver
	clk      clock.Clock
	opts     Options

	// life is cancelled by Close; every resolve the cache starts derives from it.
	life context.Context
	stop context.CancelFunc

	mu        sync.Mutex
	idle      *sync.Cond // signalled when inflight drops to zero
	rand      *rand.Rand
	entries   map[Key]*entry
	inflight  int // resolves and refreshes running, for Wait and Close
	refreshes int
	closed    bool
}

// entry is one key's replica set and the resolves running for it.
type entry struct {
	replicas []*replica // nil until the first resolve succeeded
	// resolving is the foreground resolve callers wait on while replicas is nil.
	resolving *flight
	// refreshing is true while a background refresh runs: the single flight of Gone.
	refreshing bool
	// lastRefresh is when the last background refresh started; it paces the refreshes
	// triggered by expired marks when the gateway keeps failing.
	lastRefresh time.Time
}

type replica struct {
	url     string
	primary bool
	health  Health
	since   time.Time
}

// New returns a cache that resolves through r and reads time from clk.
func New(r Resolver, clk clock.Clock, opts Options) *Cache {
	if opts.UnhealthyFor <= 0 {
		opts.UnhealthyFor = defaultUnhealthyFor
	}
	if opts.RefreshTimeout <= 0 {
		opts.RefreshTimeout = defaultRefreshTimeout
	}
	rnd := opts.Rand
	if rnd == nil {
		seed := uint64(clk.Now().UnixNano())
		rnd = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	}
	life, stop := context.WithCancel(context.Background())
	c := &Cache{resolver: r, clk: clk, opts: opts, life: life, stop: stop,
		rand: rnd, entries: map[Key]*entry{}}
	c.idle = sync.NewCond(&c.mu)
	return c
}

// Replicas returns the key's replica set in the order to try them, resolving it first if
// not cached (a foreground, deduplicated resolve: concurrent callers for the same key
// share one gateway call). forWrite returns the primary only.
//
// With health on, the order is a random permutation (spreading reads over the set, as
// the SDKs do) stable-partitioned by health: Connected and Unknown first, then
// UnhealthyPending, then Unhealthy, so a request never picks a replica known bad while a
// healthy one remains.
func (c *Cache) Replicas(ctx context.Context, key Key, forWrite bool) ([]Replica, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, err := c.resolvedLocked(ctx, key)
	if err != nil {
		return nil, err
	}
	now := c.clk.Now()
	if !c.opts.DisableHealth {
		c.refreshIfStaleLocked(key, e, now)
	}
	if forWrite {
		// Only the primary takes writes; its health cannot change that, so it is
		// returned whatever its state.
		for _, r := range e.replicas {
			if r.primary {
				return []Replica{r.export()}, nil
			}
		}
		return nil, fmt.Errorf("%w: %v", ErrNoPrimary, key)
	}
	out := make([]Replica, len(e.replicas))
	for i, r := range e.replicas {
		out[i] = r.export()
	}
	c.rand.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	if c.opts.DisableHealth {
		return out, nil
	}
	return c.orderLocked(out, now), nil
}

// orderLocked stable-partitions a permutation into the health buckets, keeping the
// random order within each bucket so that load still spreads over equally good replicas.
func (c *Cache) orderLocked(perm []Replica, now time.Time) []Replica {
	out := make([]Replica, 0, len(perm))
	for b := tryFirst; b <= tryLast; b++ {
		for _, r := range perm {
			if bucket(r.Health, r.Since, now, c.opts.UnhealthyFor) == b {
				out = append(out, r)
			}
		}
	}
	return out
}

// Gone records a 410 (or a connection failure / hang) from a replica: it becomes
// Unhealthy now, and one background refresh of the key starts (single flight: many
// concurrent Gone calls for the key → one Resolve(forceRefresh=true) call). Returns
// whether this call started the refresh (for diagnostics).
//
// A url that is not in the cached set came from a list an earlier refresh already
// replaced, so it neither marks nor refreshes: the cache has moved past it.
func (c *Cache) Gone(key Key, url string) (startedRefresh bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[key]
	if e == nil {
		return false
	}
	r := e.find(url)
	if r == nil {
		return false
	}
	now := c.clk.Now()
	if !c.opts.DisableHealth {
		// A repeated failure renews the mark (as Java's setUnhealthy does): the
		// replica is known bad as of now, not as of the first failure.
		r.health, r.since = Unhealthy, now
	}
	return c.startRefreshLocked(key, e, now)
}

// Succeeded records that the replica answered: it becomes Connected.
//
// A fresh Unhealthy mark is kept, as Java's Uri.setHealthStatus does: a success arriving
// right after a 410 is most likely a request sent before the replica moved, and must not
// put the moved replica back at the front while the refresh is running.
func (c *Cache) Succeeded(key Key, url string) {
	if c.opts.DisableHealth {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[key]
	if e == nil {
		return
	}
	r := e.find(url)
	if r == nil || r.health == Connected {
		return
	}
	now := c.clk.Now()
	if r.health == Unhealthy && now.Sub(r.since) < c.opts.UnhealthyFor {
		return
	}
	r.health, r.since = Connected, now
}

// Refreshes is the number of background refreshes started so far.
func (c *Cache) Refreshes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.refreshes
}

// Wait waits for the resolves and background refreshes in flight (tests, shutdown).
func (c *Cache) Wait() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.inflight > 0 {
		c.idle.Wait()
	}
}

// Close cancels the resolves and refreshes in flight and waits for them. Afterwards no
// refresh starts, and Replicas serves only keys already cached.
func (c *Cache) Close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.stop()
	c.Wait()
}

func (e *entry) find(url string) *replica {
	for _, r := range e.replicas {
		if r.url == url {
			return r
		}
	}
	return nil
}

func (r *replica) export() Replica {
	return Replica{URL: r.url, Primary: r.primary, Health: r.health, Since: r.since}
}
