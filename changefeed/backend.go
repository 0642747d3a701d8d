package changefeed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/internal/docfeed"
)

// pollRequest is one poll of one range (or of a partition key).
type pollRequest struct {
	rangeID string
	// startEPK and endEPK narrow the poll to part of the range (a range merged into it).
	startEPK, endEPK string
	pk               cosmos.PartitionKey
	continuation     string
	since            time.Time
	maxItems         int
	// buffers, when set, lends the buffer the answer is read into (poll.body).
	buffers *cosmos.BodyBuffers
}

// poll is a poll as the service answered it: the items, and the etag to poll with next.
type poll struct {
	items       []json.RawMessage
	etag        string
	notModified bool
	// body is the buffer lent by pollRequest.buffers that items are slices of (nil
	// when none was lent).
	body []byte
}

// backend is what the feed asks of the service; engineBackend sends it through the
// engine, tests use in-memory ones. Every call reports its request in a PageInfo, also
// when it fails.
type backend interface {
	endpoint() string
	ranges(ctx context.Context, refresh bool) ([]cosmos.PartitionKeyRange, PageInfo, error)
	poll(ctx context.Context, req pollRequest) (poll, PageInfo, error)
}

type engineBackend struct {
	c        *engine.Client
	db, coll string
	tmpl     engine.Operation
}

func (b *engineBackend) endpoint() string { return b.c.Endpoint() }

func (b *engineBackend) ranges(ctx context.Context, refresh bool) ([]cosmos.PartitionKeyRange, PageInfo, error) {
	rs, d, err := b.c.PartitionKeyRanges(ctx, b.db, b.coll, refresh, b.tmpl.E2ETimeout)
	info := PageInfo{Kind: KindRanges, Diagnostics: d}
	if d != nil {
		info.RequestCharge, info.Duration = d.RequestCharge, d.Duration
	}
	return rs, info, err
}

func (b *engineBackend) poll(ctx context.Context, req pollRequest) (poll, PageInfo, error) {
	op := b.tmpl
	op.Kind, op.Database, op.Container = engine.OpChangeFeed, b.db, b.coll
	op.ID, op.Body, op.IfMatch, op.Query, op.CrossPartition = "", nil, "", nil, false
	op.PartitionKey, op.RangeID, op.Continuation, op.ModifiedSince, op.MaxItemCount = req.pk, req.rangeID, req.continuation, req.since, req.maxItems
	op.StartEPK, op.EndEPK = req.startEPK, req.endEPK
	op.BodyBuffers = req.buffers
	res, err := b.c.Execute(ctx, op)
	info := PageInfo{Kind: KindPoll}
	if res != nil {
		info.StatusCode = res.StatusCode
		if res.Diagnostics != nil {
			info.Diagnostics = res.Diagnostics
			info.RequestCharge, info.Duration = res.Diagnostics.RequestCharge, res.Diagnostics.Duration
		}
	}
	if err != nil {
		return poll{}, info, err
	}
	if res.StatusCode == http.StatusNotModified {
		return poll{etag: res.ETag, notModified: true}, info, nil
	}
	// The items are split from the body, not decoded: the feed needs none of their
	// fields, and they are written out as the service sent them.
	docs, err := docfeed.Items(res.Body)
	if err != nil {
		return poll{}, info, fmt.Errorf("the change feed page is not a document feed: %v", err)
	}
	p := poll{items: docs, etag: res.ETag}
	if req.buffers != nil {
		p.body = res.Body
	}
	return p, info, nil
}

// isRangeGone reports the 410/1002 of a poll sent to a partition key range that split or
// was merged.
func isRangeGone(err error) bool {
	var ce *cosmos.Error
	return errors.As(err, &ce) && ce.StatusCode == 410 && ce.SubStatus == cosmos.SubPartitionKeyRangeGone
}

// isFinal reports an error no later poll will get past: bad input, a container that is
// not there, a key without access, a service that refuses the request.
func isFinal(err error) bool {
	var ie *engine.InputError
	if errors.As(err, &ie) {
		return true
	}
	var ce *cosmos.Error
	if errors.As(err, &ce) {
		switch ce.StatusCode {
		case 400, 401, 403, 404, 405, 409, 412, 413:
			return true
		}
	}
	return false
}

// retryAfter is the service's x-ms-retry-after-ms of a 429 the engine gave up on.
func retryAfter(err error) time.Duration {
	var ce *cosmos.Error
	if errors.As(err, &ce) && ce.StatusCode == 429 {
		return ce.RetryAfter
	}
	return 0
}
