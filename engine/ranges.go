package engine

import (
	"context"
	"encoding/json"
	"fmt"
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
		ranges, at, i, err := c.readRanges(ctx, rec, region.Name, ep, reason, db, coll)
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
			if err != nil {
				rec.setOutcome(i, OutcomeFailed, err.Error())
				return nil, rec.snapshot(), err
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
		// The next region reads the feed from its first page: a continuation is the
		// answering region's, and the SDKs too restart the read after a failed page.
		note := statusText(at.resp) + " from " + region.Name + ": trying the next region"
		if n == len(plan.targets)-1 {
			note = statusText(at.resp) + " from " + region.Name + ": no region left to try"
		}
		rec.setOutcome(i, OutcomeFailed, note)
		err, reason = at.err, ReasonFailover
	}
	return nil, rec.snapshot(), err
}

// readRanges reads a container's partition key ranges from one region, every page of
// the feed: the service pages it on a container with many physical partitions, and the
// ranges of the first page alone would leave the others' items out of every
// cross-partition query, change feed and export. It follows x-ms-continuation until an
// answer has none, as the JS and Python SDKs read the feed (the Go SDK's fix for the
// same loss: azcosmos 1.5.0-beta.6, PR 26777). The end-to-end deadline in ctx bounds
// the whole read, since every page is sent under it.
//
// rec, when not nil, records each page as an attempt (the first with reason, the others
// as ReasonPage). It returns the ranges, the last page's attempt and its index in rec,
// and an error when the pages that were read are not a partition key range feed
// (at.err is then nil) or at.err when a page failed.
func (c *Client) readRanges(ctx context.Context, rec *recorder, region, ep string, reason Reason, db, coll string) ([]cosmos.PartitionKeyRange, sent, int, error) {
	key := db + "/" + coll
	var all []cosmos.PartitionKeyRange
	cont := ""
	for page := 1; ; page++ {
		req := &cosmos.Request{Method: http.MethodGet, Path: cosmos.PKRangesPath(db, coll), Header: http.Header{}}
		if cont != "" {
			req.Header.Set(cosmos.HeaderContinuation, cont)
		}
		i := -1
		if rec != nil {
			i = rec.begin(region, ep, reason)
		}
		at := c.send(ctx, ClassMetadata, 0, ep, req)
		if rec != nil {
			rec.setTimeout(i, at.timeout, at.expired)
			if at.resp != nil {
				rec.finishResponse(i, at.resp)
			} else {
				rec.finish(i, 0, 0, 0, "", at.err.Error())
			}
		}
		if at.err != nil || ctx.Err() != nil {
			return nil, at, i, at.err
		}
		ranges, err := parseRangesPage(at.resp.Body, key)
		if err != nil {
			return nil, at, i, err
		}
		all = append(all, ranges...)
		next := at.resp.Header.Get(cosmos.HeaderContinuation)
		if next == "" {
			out, err := completeRanges(all, key, page)
			return out, at, i, err
		}
		if next == cont {
			return nil, at, i, fmt.Errorf("could not read the partition key ranges of %s: page %d of the feed gave back the continuation it was sent, so the feed would never end", key, page)
		}
		if rec != nil {
			rec.setOutcome(i, OutcomeWon, fmt.Sprintf("page %d of the partition key ranges; the feed continues", page))
		}
		cont, reason = next, ReasonPage
	}
}
