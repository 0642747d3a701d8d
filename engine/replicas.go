package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/cosmosctl/cosmosctl/addrcache"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/retries"
)

// Replica-level access for measurements: `probe --replicas` reads from every replica of
// a partition in turn, and `hedge-test --scenario replica-move` builds direct-mode
// clients with and without health awareness to compare them. Ordinary operations never
// name a replica: Execute picks one through the address cache.

var (
	// ErrNotDirect is returned by the replica methods of a client in gateway mode.
	ErrNotDirect = errors.New("engine: the client is not in direct mode (no address cache)")
	// ErrNotInReplicaSet is returned by ReadReplica for an address the address cache no
	// longer lists (a refresh replaced it): ask ReplicaSet again.
	ErrNotInReplicaSet = errors.New("not in the replica set")
)

// DeriveDirect returns a client like Derive's (same endpoint, transport, clock and cached
// account topology; its own preferred regions and retry policy) that routes operations
// to replicas through an address cache of its own, with or without health awareness.
// The caller closes it.
func (c *Client) DeriveDirect(preferred []string, retry retries.Policy, noReplicaHealth bool) *Client {
	o := c.opts
	o.PreferredRegions, o.Retry, o.Direct, o.NoReplicaHealth = preferred, &retry, true, noReplicaHealth
	d, _ := New(o)
	c.share(d)
	return d
}

// ReplicaSet returns the replicas that serve op's partition key in region, as the
// client's address cache holds them (resolved through the region's gateway on first
// use), with each replica's recorded health: the primary first, then the secondaries in
// address order. The key names the partition key range. Direct mode only.
func (c *Client) ReplicaSet(ctx context.Context, op Operation, region string) (addrcache.Key, []addrcache.Replica, error) {
	if c.addr == nil {
		return addrcache.Key{}, nil, ErrNotDirect
	}
	loc, err := c.regionLocation(ctx, region)
	if err != nil {
		return addrcache.Key{}, nil, err
	}
	key, err := c.rangeKey(ctx, &op, loc)
	if err != nil {
		return key, nil, err
	}
	set, err := c.addr.Replicas(ctx, key, false)
	if err != nil {
		return key, nil, err
	}
	sort.Slice(set, func(i, j int) bool {
		if set[i].Primary != set[j].Primary {
			return set[i].Primary
		}
		return set[i].URL < set[j].URL
	})
	return key, set, nil
}

// ReplicaResult is a read from one chosen replica: the Result, and the replica as its
// answer left it in the address cache.
type ReplicaResult struct {
	*Result
	// Health is the replica's state once its answer was recorded: Unhealthy after a 410
	// or no answer (with health awareness on), Connected after any other answer — unless
	// a concurrent request's answer said otherwise. A refresh that returns while the
	// answer is read (and turns the Unhealthy mark into UnhealthyPending) does not count:
	// this is the answer's verdict.
	Health addrcache.Health
	// InReplicaSet is false once an address refresh has dropped the replica from the
	// cached set.
	InReplicaSet bool
}

// ReadReplica reads op's item from one replica of region, once: no retry, no other
// replica, no other region. The answer is recorded in the address cache as any
// direct-mode attempt's is — a 410 or no answer marks the replica Unhealthy and starts an
// address refresh, any other answer marks it Connected — so that the health a probe
// reports is the health routing acts on. The replica must be in the cache's current set
// for op's partition key range (see ReplicaSet). Results and errors are Execute's; the
// result is never nil.
func (c *Client) ReadReplica(ctx context.Context, op Operation, region, replicaURL string) (*ReplicaResult, error) {
	rec := newRecorder(c.clock.Now)
	rec.d.Operation, rec.d.Database, rec.d.Container, rec.d.ID = op.Kind, op.Database, op.Container, op.ID
	rec.d.HedgeConfig = "off"
	rec.d.E2ETimeout = op.E2ETimeout
	res := &ReplicaResult{Result: &Result{}}
	finish := func(err error) (*ReplicaResult, error) {
		res.Diagnostics = rec.snapshot()
		return res, err
	}
	switch {
	case c.addr == nil:
		return finish(ErrNotDirect)
	case op.Kind != OpRead:
		return finish(inputErrorf("only reads are sent to a chosen replica, not %s", op.Kind))
	case op.E2ETimeout < 0:
		return finish(inputErrorf("the end-to-end timeout must not be negative (got %s)", op.E2ETimeout))
	}
	ctx, timedOut, stop := c.withE2ETimeout(ctx, op.E2ETimeout)
	defer stop()
	fail := func(err error) (*ReplicaResult, error) {
		if timedOut() {
			rec.cancelAll("end-to-end timeout expired")
			rec.mu.Lock()
			rec.d.TimedOut = true
			rec.mu.Unlock()
			return finish(&TimeoutError{Timeout: op.E2ETimeout, Cause: err})
		}
		return finish(err)
	}

	loc, err := c.regionLocation(ctx, region)
	if err != nil {
		return fail(err)
	}
	acct, err := c.topology.get(ctx)
	if err != nil {
		return fail(err)
	}
	if err := c.prepare(ctx, &op, acct, endpointOf(loc)); err != nil {
		return fail(err)
	}
	op.reqOnce = new(sync.Once)
	rec.mu.Lock()
	rec.d.PartitionKey = []byte(op.PartitionKey.JSON())
	rec.d.EffectiveRegions, rec.d.PreferredRegions, rec.d.ExcludedRegions = []string{loc.Name}, []string{}, []string{}
	rec.mu.Unlock()
	key, err := c.rangeKey(ctx, &op, loc)
	if err != nil {
		return fail(err)
	}
	set, err := c.addr.Replicas(ctx, key, false)
	if err != nil {
		return fail(err)
	}
	var replica addrcache.Replica
	found := false
	for _, r := range set {
		if r.URL == replicaURL {
			replica, found = r, true
		}
	}
	if !found {
		return fail(fmt.Errorf("replica %s is %w of partition key range %s in %s (the addresses were refreshed since)", replicaURL, ErrNotInReplicaSet, key.Range, loc.Name))
	}

	target := strings.TrimRight(replica.URL, "/")
	i := rec.begin(loc.Name, target, ReasonInitial)
	rec.setReplica(i, replica.URL, replica.Health.String(), replica.Primary)
	resp, err := c.do(ctx, ClassPoint, target, op.request(acct.EnableMultipleWriteLocations))
	if ctx.Err() != nil && resp == nil {
		rec.cancel(i, context.Cause(ctx).Error())
		return fail(ctx.Err())
	}
	if resp != nil {
		rec.finishResponse(i, resp)
		res.fill(resp)
	} else {
		rec.finish(i, 0, 0, 0, "", err.Error())
	}
	gone := replicaGone(resp, err)
	switch {
	case gone:
		how := "an address refresh is already in flight"
		if c.addr.Gone(key, replica.URL) {
			how = "address refresh started"
		}
		rec.setOutcome(i, OutcomeFailed, fmt.Sprintf("%s from replica %s: marked unhealthy, %s", statusText(resp), replica.URL, how))
	case resp != nil:
		c.addr.Succeeded(key, replica.URL)
		rec.setOutcome(i, OutcomeWon, "")
	default:
		rec.setOutcome(i, OutcomeFailed, "")
	}
	res.Health, res.InReplicaSet = replica.Health, false
	if now, err := c.addr.Replicas(ctx, key, false); err == nil {
		for _, r := range now {
			if r.URL == replica.URL {
				res.Health, res.InReplicaSet = r.Health, true
			}
		}
	}
	if gone && res.Health == addrcache.UnhealthyPending {
		// Only Gone's mark, re-listed by the refresh it started, can be pending this
		// soon after a 410 (without health awareness nothing is ever marked).
		res.Health = addrcache.Unhealthy
	}
	return finish(err)
}

// regionLocation is the readable region of the account named region (matched as the
// regions of every command are).
func (c *Client) regionLocation(ctx context.Context, region string) (cosmos.Location, error) {
	acct, err := c.topology.get(ctx)
	if err != nil {
		return cosmos.Location{}, err
	}
	for _, l := range acct.ReadableLocations {
		if cosmos.SameRegion(l.Name, region) {
			return l, nil
		}
	}
	return cosmos.Location{}, inputErrorf("region %q is not a region of this account; its regions are %s", region, strings.Join(quoted(acct.ReadRegions()), ", "))
}

// rangeKey is the address-cache key of op's partition key range in region, as
// replicaTarget computes it for every direct-mode attempt.
func (c *Client) rangeKey(ctx context.Context, op *Operation, region cosmos.Location) (addrcache.Key, error) {
	if op.PartitionKey == nil {
		return addrcache.Key{}, inputErrorf("no partition key: a replica is chosen by the partition key range that holds the item")
	}
	info, err := c.containerRouting(ctx, op.Database, op.Container, endpointOf(region))
	if err != nil {
		return addrcache.Key{}, err
	}
	rng, ok := cosmos.RangeFor(cosmos.EffectivePartitionKey(op.PartitionKey), info.ranges)
	if !ok {
		return addrcache.Key{}, fmt.Errorf("no partition key range holds %s", op.PartitionKey)
	}
	return addrcache.Key{Region: region.Name, Collection: info.link, Range: rng.ID}, nil
}
