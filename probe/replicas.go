package probe

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/cosmosctl/cosmosctl/addrcache"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/output"
	"github.com/cosmosctl/cosmosctl/workload"
)

// replicaProber sends each probe read of `probe --replicas` to one replica of the probe
// item's partition key range, cycling through the region's replica set as the address
// cache holds it, and keeps a record per replica.
type replicaProber struct {
	client *engine.Client
	op     engine.Operation

	mu      sync.Mutex
	regions map[string]*replicaRegion
}

// replicaRegion is one region's replicas in the order they were first seen: the primary,
// the secondaries by address, then any replica an address refresh brought in.
type replicaRegion struct {
	rangeID string
	next    int
	rows    []*replicaRow
	byURL   map[string]*replicaRow
}

type replicaRow struct {
	address string
	primary bool
	// health is the replica's state in the address cache after its last answer (before
	// its first, as the cache listed it); listed is whether the cache still lists it.
	health addrcache.Health
	listed bool
	stats  *workload.Stats
}

func newReplicaProber(client *engine.Client, op engine.Operation) *replicaProber {
	return &replicaProber{client: client, op: op, regions: map[string]*replicaRegion{}}
}

// resolve looks up each region's replica set before the probe starts, so that the first
// request to a replica measures the replica and not the address lookup. A region whose
// set cannot be resolved is left to the probe, which counts its errors.
func (p *replicaProber) resolve(ctx context.Context, regions []string, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var wg sync.WaitGroup
	for _, region := range regions {
		wg.Go(func() { _, _, _ = p.client.ReplicaSet(ctx, p.op, region) })
	}
	wg.Wait()
}

// pickAttempts bounds how often send asks for the replica set again when the replica it
// picked was dropped by a refresh in between.
const pickAttempts = 3

// send reads the probe item from the region's next replica.
func (p *replicaProber) send(ctx context.Context, region string) outcome {
	var res *engine.ReplicaResult
	var err error
	url := ""
	for range pickAttempts {
		if url, err = p.pick(ctx, region); err != nil {
			break
		}
		res, err = p.client.ReadReplica(ctx, p.op, region, url)
		if !errors.Is(err, engine.ErrNotInReplicaSet) {
			break
		}
	}
	if res == nil {
		// The replica set could not be resolved in time: the end-to-end timeout, as a
		// read would report it.
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return timeoutOutcome
		}
		return readOutcome(nil, err)
	}
	out := readOutcome(res.Result, err)
	if len(res.Diagnostics.Attempts) == 0 {
		// Nothing reached a replica: the region counts the error, no replica does.
		return out
	}
	out.replica = url
	p.mu.Lock()
	row := p.regions[region].byURL[url]
	row.health, row.listed = res.Health, res.InReplicaSet
	p.mu.Unlock()
	return out
}

// pick returns the next replica of the region's current set. Resolving the set is
// bounded by the probe's end-to-end timeout, as the read is.
func (p *replicaProber) pick(ctx context.Context, region string) (string, error) {
	if p.op.E2ETimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.op.E2ETimeout)
		defer cancel()
	}
	key, set, err := p.client.ReplicaSet(ctx, p.op, region)
	if err != nil {
		return "", err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.regions[region]
	if r == nil {
		r = &replicaRegion{rangeID: key.Range, byURL: map[string]*replicaRow{}}
		p.regions[region] = r
	}
	r.update(set)
	url := set[r.next%len(set)].URL
	r.next++
	return url, nil
}

// update adds the replicas of set not seen before and notes which rows the cache still
// lists.
func (r *replicaRegion) update(set []addrcache.Replica) {
	for _, row := range r.rows {
		row.listed = false
	}
	for _, s := range set {
		row := r.byURL[s.URL]
		if row == nil {
			row = &replicaRow{address: s.URL, health: s.Health, stats: workload.NewStats()}
			r.byURL[s.URL] = row
			r.rows = append(r.rows, row)
		}
		row.primary, row.listed = s.Primary, true
	}
}

// record adds one request's latency and outcome to its replica's record.
func (p *replicaProber) record(region string, latency time.Duration, out outcome) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r := p.regions[region]; r != nil {
		if row := r.byURL[out.replica]; row != nil {
			for _, t := range out.serverTimes {
				row.stats.RecordServerTime(t)
			}
			if out.timedOut {
				row.stats.RecordTimeout(out.charge)
			} else {
				row.stats.Record(latency, out.status, out.substatus, out.charge, out.failed)
			}
		}
	}
}

// rows returns every replica of the probed regions, in region order.
func (p *replicaProber) rows(regions []string) []output.ProbeReplica {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []output.ProbeReplica
	for _, region := range regions {
		r := p.regions[region]
		if r == nil {
			continue
		}
		for _, row := range r.rows {
			role := output.RoleSecondary
			if row.primary {
				role = output.RolePrimary
			}
			out = append(out, output.ProbeReplica{Region: region, Range: r.rangeID, Address: row.address, Role: role,
				Health: row.health.String(), InReplicaSet: row.listed, Summary: row.stats.Summary()})
		}
	}
	return out
}
