package engine

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// OpPartitionKeyRanges names the partition key range reads of PartitionKeyRanges in
// their diagnostics; Execute does not run it.
const OpPartitionKeyRanges OpKind = "pkranges"

// PartitionKeyRanges returns the container's current partition key ranges, ordered by
// their start, from the client's routing cache (which direct routing shares), or read
// from the service when the cache has none or refresh is set (a query found a range
// gone). A read goes to the effective read regions in turn until one answers: the ranges
// are the same everywhere, so a region that is down must not stop a query. e2e bounds
// the whole read (0: no bound). The diagnostics record every attempt.
func (c *Client) PartitionKeyRanges(ctx context.Context, db, coll string, refresh bool, e2e time.Duration) ([]cosmos.PartitionKeyRange, *Diagnostics, error) {
	rec := newRecorder(c.clock.Now)
	rec.d.Operation, rec.d.Database, rec.d.Container = OpPartitionKeyRanges, db, coll
	rec.d.HedgeConfig, rec.d.E2ETimeout, rec.d.ConnectionMode = "off", e2e, "gateway"
	rec.d.PartitionKey = json.RawMessage("null")
	if db == "" || coll == "" {
		return nil, rec.snapshot(), inputErrorf("no database or container: give --database and --container (or set them in a profile)")
	}
	key := db + "/" + coll
	if !refresh {
		c.mu.Lock()
		ranges, ok := c.ranges[key]
		c.mu.Unlock()
		if ok {
			rec.note("partition key ranges from the routing cache")
			return append([]cosmos.PartitionKeyRange(nil), ranges...), rec.snapshot(), nil
		}
	}
	ctx, timedOut, stop := c.withE2ETimeout(ctx, e2e)
	defer stop()
	acct, err := c.topology.get(ctx)
	if err != nil {
		if timedOut() {
			return nil, rec.snapshot(), &TimeoutError{Timeout: e2e, Cause: err}
		}
		return nil, rec.snapshot(), err
	}
	plan, err := c.plan(acct, nil, false)
	if err != nil {
		return nil, rec.snapshot(), err
	}
	rec.setPlan(plan)
	reason := ReasonInitial
	for n, region := range plan.targets {
		ep := endpointOf(region)
		i := rec.begin(region.Name, ep, reason)
		at := c.send(ctx, ClassMetadata, 0, ep, &cosmos.Request{Method: http.MethodGet, Path: cosmos.PKRangesPath(db, coll)})
		rec.setTimeout(i, at.timeout, at.expired)
		if at.resp != nil {
			rec.finishResponse(i, at.resp)
		} else {
			rec.finish(i, 0, 0, 0, "", at.err.Error())
		}
		if ctx.Err() != nil {
			rec.cancel(i, context.Cause(ctx).Error())
			if timedOut() {
				rec.mu.Lock()
				rec.d.TimedOut = true
				rec.mu.Unlock()
				return nil, rec.snapshot(), &TimeoutError{Timeout: e2e, Cause: at.err}
			}
			return nil, rec.snapshot(), ctx.Err()
		}
		if at.err == nil {
			ranges, perr := parseRanges(at.resp.Body, key)
			if perr != nil {
				rec.setOutcome(i, OutcomeFailed, perr.Error())
				return nil, rec.snapshot(), perr
			}
			rec.setOutcome(i, OutcomeWon, "")
			c.storeRanges(key, ranges)
			return append([]cosmos.PartitionKeyRange(nil), ranges...), rec.snapshot(), nil
		}
		if at.resp != nil && at.resp.StatusCode < 500 && at.resp.StatusCode != 408 && at.resp.StatusCode != 429 && at.resp.StatusCode != 410 {
			// A 404 (no such container) or an auth failure is the same in every region.
			rec.setOutcome(i, OutcomeFailed, statusText(at.resp)+" from "+region.Name)
			return nil, rec.snapshot(), at.err
		}
		note := statusText(at.resp) + " from " + region.Name + ": trying the next region"
		if n == len(plan.targets)-1 {
			note = statusText(at.resp) + " from " + region.Name + ": no region left to try"
		}
		rec.setOutcome(i, OutcomeFailed, note)
		err, reason = at.err, ReasonFailover
	}
	return nil, rec.snapshot(), err
}
