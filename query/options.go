package query

import (
	"context"
	"encoding/json"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
)

// Options describe one query run.
type Options struct {
	Client              *engine.Client
	Database, Container string
	Spec                cosmos.QuerySpec
	// PartitionKey runs the query within one logical partition, where the service runs
	// all of it (no query plan); nil runs it across partitions.
	PartitionKey cosmos.PartitionKey
	// PartitionKeyPrefix runs the query across the partitions of a prefix of a
	// hierarchical partition key (the first values of a MultiHash key, fewer than its
	// paths): the prefix is no partition key to send, so the query runs as across
	// partitions (the plan, the client-side merge), on the ranges that hold any key of
	// the prefix's effective partition key range (cosmos.PrefixRange), each page
	// narrowed to the part of that range its range holds. Telling a prefix from a whole
	// key takes the container's definition: the caller's business. Not with PartitionKey.
	PartitionKeyPrefix cosmos.PartitionKey
	// FeedRange runs the query across the effective partition keys [Min, Max) only (one
	// shard's, --shard or --feed-range): on the ranges that hold any of them, a range the
	// interval cuts narrowed to its part by x-ms-start-epk and x-ms-end-epk, as for a
	// prefix and as the SDKs read a feed range (Java FeedRangeEpkImpl). Not with
	// PartitionKey or PartitionKeyPrefix.
	FeedRange *cosmos.EPKRange
	// PageSize is the x-ms-max-item-count of every page request and the most items one
	// Next returns; 0 leaves the page size to the service (100).
	PageSize int
	// MaxItems stops the run after this many items (0: all); Continuation then resumes
	// after them.
	MaxItems int
	// Continuation is a token from an earlier run of the same query ("" starts at the
	// beginning).
	Continuation string
	// Parallelism is how many page requests may be outstanding at once across the
	// partition key ranges (default DefaultParallelism, at most MaxParallelism).
	Parallelism int
	// Page is the template of every request's operation: ExcludeRegions, E2ETimeout
	// (per page), Hedge. Its other fields are set by the pipeline.
	Page engine.Operation
	// Clock times the run for Stats (default: the wall clock).
	Clock clock.Clock
	// ReuseItemMemory lets the items Next returns live only until the next call of
	// Next: the pages of a query that is neither ordered nor aggregated are then read
	// into buffers the iterator lends again once their items were returned, rather
	// than into a new buffer a page. For a caller that writes out or copies what each
	// Next returns before it calls Next again (export, query -o ndjson). Other queries
	// ignore it: their items outlive their pages (a merge, a GROUP BY).
	ReuseItemMemory bool
}

const (
	DefaultParallelism = 4
	MaxParallelism     = 32
	// defaultBatch is the most items one Next returns from a merge when PageSize is 0:
	// the service's default page size.
	defaultBatch = 100
	// maxPageSize is the largest page the service serves.
	maxPageSize = 1000
)

// Request kinds of PageInfo.
const (
	KindPlan   = "query-plan" // the query plan request
	KindRanges = "pkranges"   // a read of the partition key ranges
	KindPage   = "page"       // one page of the query from one range (or partition key)
)

// PageInfo is one request the pipeline sent: a page, the plan, or a read of the
// partition key ranges. Every request is reported once, by Next, in the order the
// answers arrived (also when the request failed, or its page was not used).
type PageInfo struct {
	Kind string
	// RangeID is the partition key range a page was read from ("" with a partition key).
	RangeID string
	// Items is how many items the service returned in the page (before any merge).
	Items         int
	RequestCharge float64
	Duration      time.Duration
	// Note says what happened to the request when it was not an ordinary page: a split,
	// a page discarded.
	Note        string
	Diagnostics *engine.Diagnostics
	// QueryMetrics, IndexUtilization and QueryAdvice are the page's answer's headers
	// of those names, when Page.Explain asked for them ("" otherwise).
	QueryMetrics, IndexUtilization, QueryAdvice string
}

// Totals sum up a run so far.
type Totals struct {
	RequestCharge float64
	// Requests counts every request (plan, ranges, pages); Pages the query pages.
	Requests int
	Pages    int
	Items    int
	// Splits counts ranges that split during the run, Merges ranges that were merged
	// into a wider one (their pages went on in it, narrowed to their own keys).
	Splits int
	Merges int
	// Regions lists every region contacted, in the order first contacted.
	Regions  []string
	Duration time.Duration
}

// Run starts a query. It checks the options and the continuation token and sends
// nothing; the first Next asks for the plan and the first pages. Pages are read in the
// background, at most Parallelism at once, until Close, the end of the query, or the
// end of ctx.
func Run(ctx context.Context, o Options) (*Iterator, error) {
	if o.Client == nil {
		return nil, inputErrorf("no client")
	}
	return start(ctx, o, &engineBackend{c: o.Client, db: o.Database, coll: o.Container, tmpl: o.Page})
}

func inputErrorf(format string, args ...any) error {
	return &engine.InputError{Msg: sprintf(format, args...)}
}

// validate checks options that need no I/O.
func (o *Options) validate() error {
	switch {
	case o.Database == "" || o.Container == "":
		return inputErrorf("no database or container: give --database and --container (or set them in a profile)")
	case o.Spec.Query == "":
		return inputErrorf("no query given: pass the SQL text, e.g. 'SELECT * FROM c'")
	case o.PageSize < 0 || o.PageSize > maxPageSize:
		return inputErrorf("the page size must be between 1 and %d (or 0 for the service's default), not %d", maxPageSize, o.PageSize)
	case o.MaxItems < 0:
		return inputErrorf("the maximum number of items must not be negative (0: all), not %d", o.MaxItems)
	case o.Parallelism < 0:
		return inputErrorf("the parallelism must be at least 1, not %d", o.Parallelism)
	case o.PartitionKey != nil && o.PartitionKeyPrefix != nil:
		return inputErrorf("a query runs within a partition key or within a partition key prefix, not both")
	case o.FeedRange != nil && (o.PartitionKey != nil || o.PartitionKeyPrefix != nil):
		return inputErrorf("a query of a feed range (a shard) runs across partition keys: leave out --pk, or the shard")
	}
	for _, p := range o.Spec.Parameters {
		if !json.Valid(p.Value) {
			return inputErrorf("query parameter %s has no valid JSON value: give a JSON value such as 42, \"text\" or [1,2]", p.Name)
		}
	}
	if o.Parallelism == 0 {
		o.Parallelism = DefaultParallelism
	}
	o.Parallelism = min(o.Parallelism, MaxParallelism)
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	return nil
}
