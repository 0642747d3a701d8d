package engine

import (
	"net/http"
	"strconv"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// ChangeFeedFromNow is the Continuation of an OpChangeFeed that starts at the range's
// current position: the first poll answers 304 with the etag to continue from.
const ChangeFeedFromNow = "*"

// changeFeedIncremental is the A-IM value of the latest version mode, the one both SDKs
// default to: each changed item once, in its latest version, deletions not included.
const changeFeedIncremental = "Incremental Feed"

// prepareChangeFeed validates one change feed poll: exactly one target (a partition key
// range or a partition key) and a page size the service accepts.
func prepareChangeFeed(op *Operation) error {
	if op.MaxItemCount < -1 {
		return inputErrorf("the page size must be positive (or -1 for the largest page the service serves), not %d", op.MaxItemCount)
	}
	switch {
	case op.PartitionKey == nil && op.RangeID == "":
		return inputErrorf("a change feed poll needs a partition key range or a partition key")
	case op.PartitionKey != nil && op.RangeID != "":
		return inputErrorf("a change feed poll reads one partition key range or one partition key, not both")
	}
	return checkEPKScope(op)
}

// buildChangeFeedRequest is the gateway request of one change feed poll, as both SDKs
// send it: GET …/docs with A-IM, the continuation (the etag of the range's previous
// answer) in If-None-Match, or, for a first poll from a point in time, If-Modified-Since.
func buildChangeFeedRequest(op *Operation) *cosmos.Request {
	req := &cosmos.Request{Method: http.MethodGet, Path: cosmos.ItemsPath(op.Database, op.Container), Header: http.Header{}, BodyBuffers: op.BodyBuffers}
	h := req.Header
	h.Set(cosmos.HeaderAIM, changeFeedIncremental)
	switch {
	case op.PartitionKey != nil:
		h.Set(cosmos.HeaderPartitionKey, op.partitionKeyJSON())
	default:
		h.Set(cosmos.HeaderPartitionKeyRangeID, op.RangeID)
		setEPKScope(h, op)
	}
	if op.MaxItemCount != 0 {
		h.Set(cosmos.HeaderMaxItemCount, strconv.Itoa(op.MaxItemCount))
	}
	switch {
	case op.Continuation != "":
		h.Set(cosmos.HeaderIfNoneMatch, op.Continuation)
	case !op.ModifiedSince.IsZero():
		h.Set("If-Modified-Since", op.ModifiedSince.UTC().Format(http.TimeFormat))
	}
	return req
}
