package engine

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// OpMetadata names the database, container and offer requests of Metadata in their
// diagnostics; Execute does not run it.
const OpMetadata OpKind = "metadata"

// MetadataRequest is one request for a database, container or offer resource (or their
// feeds). ResourceType and ResourceLink are what it is signed with when the path does not
// say (an offer is signed with its id in lower case).
type MetadataRequest struct {
	Method       string
	Path         string
	ResourceType string
	ResourceLink string
	Query        url.Values
	Header       http.Header
	Body         []byte
	// Database and Container are what the diagnostics name.
	Database, Container string
	ExcludeRegions      []string
	// E2ETimeout bounds the whole request, every region it tries (0: no bound).
	E2ETimeout time.Duration
	// Read marks a POST that only reads, a query of a metadata feed (the offers of one
	// resource): it is routed and failed over like a GET.
	Read bool
}

// Metadata sends a resource request through the effective regions. A GET is a read of
// metadata that is the same in every region: it goes to the effective read regions in
// turn until one gives a final answer, each attempt bounded by the metadata attempt
// timeout, so that a region that hangs or is down does not stop `db ls`; so does a query
// of a metadata feed (Read). Any other method is a write, sent once to the first effective write region: a create or replace
// whose answer is lost may have been applied, and is not sent again. An answer of 400 or
// more comes back as the error (a *cosmos.Error) with the response.
func (c *Client) Metadata(ctx context.Context, r MetadataRequest) (*cosmos.Response, *Diagnostics, error) {
	rec := newRecorder(c.clock.Now)
	rec.d.Operation, rec.d.Database, rec.d.Container = OpMetadata, r.Database, r.Container
	rec.d.HedgeConfig, rec.d.E2ETimeout, rec.d.ConnectionMode = "off", r.E2ETimeout, "gateway"
	rec.d.PartitionKey = json.RawMessage("null")
	ctx, timedOut, stop := c.withE2ETimeout(ctx, r.E2ETimeout)
	defer stop()
	acct, err := c.topology.get(ctx)
	if err != nil {
		if timedOut() {
			return nil, rec.snapshot(), &TimeoutError{Timeout: r.E2ETimeout, Cause: err}
		}
		return nil, rec.snapshot(), err
	}
	write := r.Method != http.MethodGet && !r.Read
	plan, err := c.plan(acct, r.ExcludeRegions, write)
	if err != nil {
		return nil, rec.snapshot(), err
	}
	rec.setPlan(plan)
	targets := plan.targets
	if write && len(targets) > 1 {
		targets = targets[:1]
	}
	reason := ReasonInitial
	for n, region := range targets {
		ep := endpointOf(region)
		i := rec.begin(region.Name, ep, reason)
		req := &cosmos.Request{Method: r.Method, Path: r.Path, ResourceType: r.ResourceType, ResourceLink: r.ResourceLink,
			Query: r.Query, Header: r.Header.Clone(), Body: r.Body}
		at := c.send(ctx, ClassMetadata, 0, ep, req)
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
				return nil, rec.snapshot(), &TimeoutError{Timeout: r.E2ETimeout, Cause: at.err}
			}
			return nil, rec.snapshot(), ctx.Err()
		}
		if at.err == nil {
			rec.setOutcome(i, OutcomeWon, "")
			return at.resp, rec.snapshot(), nil
		}
		if write || (at.resp != nil && at.resp.StatusCode < 500 && at.resp.StatusCode != 408 && at.resp.StatusCode != 429 && at.resp.StatusCode != 410) {
			// A 404, 409 or auth failure is the same in every region; a write is sent once.
			rec.setOutcome(i, OutcomeFailed, statusText(at.resp)+" from "+region.Name)
			return at.resp, rec.snapshot(), at.err
		}
		note := statusText(at.resp) + " from " + region.Name + ": trying the next region"
		if n == len(targets)-1 {
			note = statusText(at.resp) + " from " + region.Name + ": no region left to try"
		}
		rec.setOutcome(i, OutcomeFailed, note)
		err, reason = at.err, ReasonFailover
	}
	return nil, rec.snapshot(), err
}
