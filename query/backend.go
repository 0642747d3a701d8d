package query

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/internal/docfeed"
)

// pageRequest is one query page to read: the query, where it runs (a partition key, or
// one partition key range) and where the page starts.
type pageRequest struct {
	spec    cosmos.QuerySpec
	pk      cosmos.PartitionKey
	rangeID string
	// startEPK and endEPK narrow the page to part of the range (a range merged into it).
	startEPK, endEPK string
	continuation     string
	maxItems         int
	// buffers, when set, lends the buffer the page is read into (page.body).
	buffers *cosmos.BodyBuffers
}

// page is a page as the service answered it.
type page struct {
	items        []json.RawMessage
	continuation string
	// body is the buffer lent by pageRequest.buffers that items are slices of (nil when
	// none was lent): to give back once they are no longer read.
	body []byte
}

// backend is what the pipeline asks of the service; engineBackend sends it through the
// engine, tests use in-memory ones. Every call reports its request in a PageInfo, also
// when it fails.
type backend interface {
	plan(ctx context.Context, spec cosmos.QuerySpec) (*queryPlan, PageInfo, error)
	ranges(ctx context.Context, refresh bool) ([]cosmos.PartitionKeyRange, PageInfo, error)
	page(ctx context.Context, req pageRequest) (page, PageInfo, error)
}

// engineBackend runs every request as an engine operation built from the Options' page
// template, so each one gets the effective regions, exclusions, timeouts, retries,
// failover and hedging of a read.
type engineBackend struct {
	c        *engine.Client
	db, coll string
	tmpl     engine.Operation
}

func (b *engineBackend) op(kind engine.OpKind, spec cosmos.QuerySpec) engine.Operation {
	op := b.tmpl
	op.Kind, op.Database, op.Container = kind, b.db, b.coll
	op.ID, op.Body, op.IfMatch, op.PartitionKey = "", nil, "", nil
	op.Query = &spec
	return op
}

func (b *engineBackend) plan(ctx context.Context, spec cosmos.QuerySpec) (*queryPlan, PageInfo, error) {
	op := b.op(engine.OpQueryPlan, spec)
	op.QueryFeatures = supportedFeatures
	res, err := b.c.Execute(ctx, op)
	info := infoOf(KindPlan, "", res)
	if err != nil {
		return nil, info, err
	}
	p, err := parsePlan(res.Body)
	return p, info, err
}

func (b *engineBackend) ranges(ctx context.Context, refresh bool) ([]cosmos.PartitionKeyRange, PageInfo, error) {
	rs, d, err := b.c.PartitionKeyRanges(ctx, b.db, b.coll, refresh, b.tmpl.E2ETimeout)
	info := PageInfo{Kind: KindRanges, Diagnostics: d}
	if d != nil {
		info.RequestCharge, info.Duration = d.RequestCharge, d.Duration
	}
	return rs, info, err
}

func (b *engineBackend) page(ctx context.Context, req pageRequest) (page, PageInfo, error) {
	op := b.op(engine.OpQuery, req.spec)
	op.PartitionKey, op.RangeID, op.Continuation, op.MaxItemCount = req.pk, req.rangeID, req.continuation, req.maxItems
	op.StartEPK, op.EndEPK = req.startEPK, req.endEPK
	op.BodyBuffers = req.buffers
	res, err := b.c.Execute(ctx, op)
	info := infoOf(KindPage, req.rangeID, res)
	if err != nil {
		return page{}, info, err
	}
	// The items are split from the body, not decoded: the feed needs none of their
	// fields, and they are written out as the service sent them.
	docs, err := docfeed.Items(res.Body)
	if err != nil {
		return page{}, info, fmt.Errorf("the query page is not a document feed: %v", err)
	}
	info.Items = len(docs)
	p := page{items: docs, continuation: res.Continuation}
	if req.buffers != nil {
		p.body = res.Body
	}
	return p, info, nil
}

func infoOf(kind, rangeID string, res *engine.Result) PageInfo {
	info := PageInfo{Kind: kind, RangeID: rangeID}
	if res != nil && res.Diagnostics != nil {
		info.Diagnostics = res.Diagnostics
		info.RequestCharge, info.Duration = res.Diagnostics.RequestCharge, res.Diagnostics.Duration
	}
	if res != nil {
		info.QueryMetrics, info.IndexUtilization, info.QueryAdvice = res.QueryMetrics, res.IndexUtilization, res.QueryAdvice
	}
	return info
}

// isRangeGone reports the 410/1002 of a page sent to a partition key range that split or
// was merged.
func isRangeGone(err error) bool {
	var ce *cosmos.Error
	return errors.As(err, &ce) && ce.StatusCode == 410 && ce.SubStatus == cosmos.SubPartitionKeyRangeGone
}
