package changefeed

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/internal/shardscope"
)

// StartKind is where a feed without a State starts.
type StartKind int

const (
	// Beginning reads every change the container holds (the latest version of each item).
	Beginning StartKind = iota
	// Now reads the changes made after Open.
	Now
	// AtTime reads the changes made at or after StartFrom.Time (whole seconds).
	AtTime
)

// StartFrom is where a feed without a State starts.
type StartFrom struct {
	Kind StartKind
	Time time.Time // AtTime only
}

// Until is when a feed ends: Next returns io.EOF once every range has reached it.
type Until int

const (
	// Forever polls every range until the caller stops (cosmosctl changes --follow).
	Forever Until = iota
	// CaughtUp ends each range at its first 304: everything changed by then is read.
	CaughtUp
	// StartPoint ends each range once it delivered every change up to the position the
	// range had when Open ran (a snapshot of the feed at Open: export's consistent point).
	// Changes after that point are not delivered. Mind what the latest version mode
	// means for it: an item changed after Open has only its new version in the feed,
	// past the point, so the snapshot does not hold it at all. A reader that must see
	// every item that existed at Open reads CaughtUp instead (which may also deliver
	// items created while it reads).
	StartPoint
)

// Options describe one change feed read.
type Options struct {
	Client              *engine.Client
	Database, Container string
	// PartitionKey reads the changes of one logical partition; nil reads every partition
	// key range.
	PartitionKey cosmos.PartitionKey
	// PartitionKeyPrefix reads the changes of the keys that start with a prefix of a
	// hierarchical partition key (the first values of a MultiHash key, fewer than its
	// paths), as the JS SDK reads a prefix (a ChangeFeedForEpkRange over
	// getEPKRangeForPrefixPartitionKey): every range that holds any key of the prefix's
	// effective partition key range (cosmos.PrefixRange), each poll narrowed to the part
	// of that range its range holds. Telling a prefix from a whole key takes the
	// container's definition: the caller's business. Not with PartitionKey.
	PartitionKeyPrefix cosmos.PartitionKey
	// Scope reads the changes of one shard's effective partition keys only (--shard,
	// --feed-range): every range that holds any of them, a range the interval cuts
	// narrowed to its part, as for a prefix. The state records it, and a state of another
	// scope is refused. Not with PartitionKey or PartitionKeyPrefix.
	Scope *shardscope.Scope
	From  StartFrom
	Until Until
	// State holds positions to resume from (LoadState); nil starts at From. A State of
	// another account, database, container or partition key is refused.
	State *State
	// PageSize is the x-ms-max-item-count of every poll (1..1000); 0 leaves it to the
	// service (100).
	PageSize int
	// Parallelism is how many polls may be outstanding at once across the ranges
	// (default DefaultParallelism, at most MaxParallelism).
	Parallelism int
	// PollDelay is how long a range that answered 304 waits before it is polled again
	// (Forever); default DefaultPollDelay.
	PollDelay time.Duration
	// MaxFailures is how many polls of one range in a row may fail with an error that
	// another poll may not see (throttling, timeouts, unavailable regions) before Next
	// returns the error; 0: never for Forever, 3 otherwise. Between failed polls a range
	// waits the service's retry-after (429) or a back-off from PollDelay up to a minute.
	MaxFailures int
	// Page is the template of every poll's operation: ExcludeRegions, E2ETimeout (per
	// poll), Hedge. Its other fields are set by the feed.
	Page engine.Operation
	// Clock times poll delays and back-offs (default: the wall clock).
	Clock clock.Clock
	// ReuseItemMemory lets the items of a Batch live only until the next call of Next:
	// polls are then read into buffers lent again once their batch was followed by
	// another Next, rather than into a new buffer a poll. For a caller that writes out
	// or copies each batch's items before it calls Next again (export, changes -o
	// ndjson).
	ReuseItemMemory bool
}

const (
	DefaultParallelism = 8
	MaxParallelism     = 64
	DefaultPollDelay   = time.Second
	maxPageSize        = 1000
	maxBackoff         = time.Minute
)

// validate checks options that need no I/O and fills in the defaults.
func (o *Options) validate() error {
	switch {
	case o.Database == "" || o.Container == "":
		return inputErrorf("no database or container: give --database and --container (or set them in a profile)")
	case o.PageSize < 0 || o.PageSize > maxPageSize:
		return inputErrorf("the page size must be between 1 and %d (or 0 for the service's default), not %d", maxPageSize, o.PageSize)
	case o.Parallelism < 0:
		return inputErrorf("the parallelism must be at least 1, not %d", o.Parallelism)
	case o.PollDelay < 0:
		return inputErrorf("the poll delay must not be negative, not %s", o.PollDelay)
	case o.MaxFailures < 0:
		return inputErrorf("the number of failed polls tolerated must not be negative, not %d", o.MaxFailures)
	case o.From.Kind == AtTime && o.From.Time.IsZero():
		return inputErrorf("a change feed from a point in time needs the time")
	case o.From.Kind < Beginning || o.From.Kind > AtTime:
		return inputErrorf("unknown start of the change feed (%d)", o.From.Kind)
	case o.Until < Forever || o.Until > StartPoint:
		return inputErrorf("unknown end of the change feed (%d)", o.Until)
	case o.PartitionKey != nil && o.PartitionKeyPrefix != nil:
		return inputErrorf("a change feed is read for a partition key or for a partition key prefix, not both")
	case o.Scope != nil && (o.PartitionKey != nil || o.PartitionKeyPrefix != nil):
		return inputErrorf("a shard of the change feed is read across partition keys: leave out --pk, or the shard")
	}
	if o.Parallelism == 0 {
		o.Parallelism = DefaultParallelism
	}
	o.Parallelism = min(o.Parallelism, MaxParallelism)
	if o.PollDelay == 0 {
		o.PollDelay = DefaultPollDelay
	}
	if o.MaxFailures == 0 && o.Until != Forever {
		o.MaxFailures = 3
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	return nil
}

func inputErrorf(format string, args ...any) error {
	return &engine.InputError{Msg: fmt.Sprintf(format, args...)}
}

// Batch is what one poll of one range delivered: its changed items (none for a 304),
// or the news that the range split, or a poll that failed and will be tried again.
type Batch struct {
	// RangeID is the partition key range polled ("" with Options.PartitionKey).
	RangeID string
	// Items are the changed items in the order the service returned them (by _lsn), each
	// with the service's _lsn.
	Items []json.RawMessage
	Info  PageInfo

	rs   *rangeState
	prev string // the range's continuation before this batch
	next string // and after it
	// body is the lent buffer Items are slices of (nil when none was lent), given back
	// at the Next after the one that returned the batch.
	body []byte
}

// PageInfo is the request behind a Batch.
type PageInfo struct {
	// Kind says what the request was: KindPoll, or KindRanges (a re-read of the ranges
	// after a split).
	Kind string
	// StatusCode is the final answer's status: 200, 304, 410 (a split); 0 without one.
	StatusCode int
	// CaughtUp: the range answered 304, nothing newer to read now.
	CaughtUp bool
	// Done: the range reached Options.Until and is polled no more.
	Done bool
	// Continuation is the range's position after this batch (the etag to poll with).
	Continuation  string
	RequestCharge float64
	Duration      time.Duration
	// Err is a failed poll the feed will try again after Wait (the Batch has no items).
	Err  error
	Wait time.Duration
	// Note says what happened when it was not an ordinary poll: a split, a retry.
	Note        string
	Diagnostics *engine.Diagnostics
}

// Request kinds of PageInfo.
const (
	KindPoll   = "poll"
	KindRanges = "pkranges"
)
