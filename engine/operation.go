package engine

import (
	"sync"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/health"
	"github.com/cosmosctl/cosmosctl/hedging"
	"github.com/cosmosctl/cosmosctl/retries"
)

// OpKind is what an operation does.
type OpKind string

const (
	OpRead    OpKind = "read"
	OpCreate  OpKind = "create"
	OpUpsert  OpKind = "upsert"
	OpReplace OpKind = "replace"
	OpDelete  OpKind = "delete"
	OpPatch   OpKind = "patch"
	// OpQuery is one page of a query: a read, routed, retried, failed over and hedged
	// like a point read, with its own attempt timeouts (ClassQuery) and its own
	// adaptive hedging samples ("query").
	OpQuery OpKind = "query"
	// OpQueryPlan asks the gateway for a query's plan (partitioned query execution
	// info): metadata-like, small, and the same in every region.
	OpQueryPlan OpKind = "query-plan"
	// OpChangeFeed is one poll of the change feed of a partition key range (or of one
	// partition key): a read like a query page (the same attempt timeouts, its own
	// adaptive hedging samples, "changefeed"). A 304 (nothing new) is a final, successful
	// answer; a 410/1002 (the range split) ends the operation at once, as for OpQuery.
	OpChangeFeed OpKind = "changefeed"
	// OpDeletePartition deletes every item of one logical partition with the
	// service's delete-by-partition-key operation: POST
	// dbs/{db}/colls/{coll}/operations/partitionkeydelete with the key in
	// x-ms-documentdb-partitionkey, signed for resource type "partitionkey" and the
	// container's link, as the Python SDK (DeleteAllItemsByPartitionKey) and the .NET
	// SDK (ResourceType.PartitionKey, OperationType.Delete) send it. The service
	// answers 200 and removes the items in the background. A write, never retried
	// when its outcome is unknown unless the write retry policy says so; sending it
	// twice is harmless (the second finds fewer items).
	OpDeletePartition OpKind = "delete-partition"
)

// IsWrite reports whether the operation changes data.
func (k OpKind) IsWrite() bool {
	switch k {
	case OpRead, OpQuery, OpQueryPlan, OpChangeFeed:
		return false
	}
	return true
}

// IsQuery reports whether the operation is a query page or a query plan request.
func (k OpKind) IsQuery() bool { return k == OpQuery || k == OpQueryPlan }

// viaGateway reports the operations direct mode still sends through the gateway, as the
// SDKs' gateway-only features: queries, change feed reads and the partition delete.
func (k OpKind) viaGateway() bool {
	return k.IsQuery() || k == OpChangeFeed || k == OpDeletePartition
}

// Operation is one item operation as a command asks for it.
type Operation struct {
	Kind      OpKind
	Database  string
	Container string
	// ID of the item; for create and upsert it is read from Body when empty.
	ID string
	// PartitionKey of the item; nil means "read it from Body with the container's
	// partition key paths" (writes with a document only).
	PartitionKey cosmos.PartitionKey
	// Body is the document (create, upsert, replace) or the patch request (patch).
	Body []byte
	// Document is Body already scanned by ScanDocument, for a caller that scanned it to
	// read its id and partition key (an import, each line): the engine then takes the id
	// and the place of the _trackingId from it rather than scanning Body again. It must
	// be the scan of Body itself (the same bytes, not a copy), else it is ignored; nil
	// lets the engine scan Body.
	Document *Document
	// MinimalResponse asks the service not to send a create's, upsert's, replace's or
	// patch's document back (Prefer: return=minimal): the answer is the status and the
	// headers, for a caller that prints no document (an import). The Go SDK sends it on
	// every write unless asked for the content (azcosmos ItemOptions
	// EnableContentResponseOnWrite), the .NET SDK when EnableContentResponseOnWrite is
	// false.
	MinimalResponse bool
	// BodyBuffers lends the buffer a query page's or change feed poll's response is
	// read into (cosmos.BodyBuffers): the Result's Body is then the caller's to give
	// back once it is done with it and every slice of it. Those two operations only.
	BodyBuffers *cosmos.BodyBuffers
	// IfMatch makes replace, delete and patch conditional on the item's etag.
	IfMatch string
	// ExcludeRegions are removed from the preferred regions for this operation.
	ExcludeRegions []string
	// E2ETimeout bounds the whole operation, retries included; 0 means no bound.
	E2ETimeout time.Duration
	// Consistency is the consistency level a read asks for (x-ms-consistency-level on
	// point reads, query pages and change feed polls): Strong, BoundedStaleness,
	// Session, ConsistentPrefix or Eventual; "" reads at the account's level. It may
	// relax the account's level, never strengthen it: Execute refuses a stronger one
	// before sending anything, as the SDKs do (.NET RequestInvokerHandler, Java
	// GatewayServiceConfigurationReader), since the service answers it with a 400.
	// Writes take no level of their own: the SDKs ignore one on a write.
	Consistency string
	// Hedge is the availability strategy for reads; nil means no hedging.
	Hedge hedging.Strategy
	// WriteRetries says whether a write is retried after an ambiguous failure, and
	// whether creates and replaces carry a _trackingId to recognise their own success.
	WriteRetries retries.WritePolicy
	// TrackingID is the _trackingId a create or replace carries under
	// WriteRetriesWithTrackingID; "" lets the engine make a random one. A caller that may
	// send the same logical write again from another Execute, or another process (a
	// resumed import), gives the same id each time, so that the stored item can say it
	// was this write.
	TrackingID string
	// SentBefore says that an earlier Execute, perhaps in an earlier process, may have
	// sent this write with the same TrackingID and lost its answer: a 409 to a create or
	// a 412 to a replace is then checked against the stored item's _trackingId on the
	// first attempt too, not only on a retry. It needs TrackingID.
	SentBefore bool
	// Throttled, if set, is called for every 429 an attempt of the operation gets, with
	// the service's retry-after (0 when it sent none), before the engine waits it out
	// and retries: a bulk loader pauses and slows all its senders at once rather than
	// learning of the throttling only when the operation ends. It may be called from
	// several goroutines (hedged attempts) and must not block.
	Throttled func(retryAfter time.Duration)

	// Query is the query of OpQuery and OpQueryPlan.
	Query *cosmos.QuerySpec
	// Continuation is the service's continuation of the page to read (OpQuery; "" for
	// the first page). For OpChangeFeed it is the etag of the range's previous answer,
	// sent as If-None-Match: "" reads from the beginning (or from ModifiedSince),
	// ChangeFeedFromNow from the range's current position.
	Continuation string
	// ModifiedSince starts an OpChangeFeed without a Continuation at the changes made at
	// or after it (If-Modified-Since; whole seconds); zero: from the beginning.
	ModifiedSince time.Time
	// MaxItemCount is the page size asked for (x-ms-max-item-count); 0 leaves it to the
	// service (100 items), -1 asks for the largest page the service serves.
	MaxItemCount int
	// RangeID sends an OpQuery (or OpChangeFeed) to one partition key range (the per-range execution of a
	// query plan). With neither RangeID nor PartitionKey the query is cross-partition,
	// and CrossPartition must say so (x-ms-documentdb-query-enablecrosspartition). A
	// range that split answers 410/1002, which ends the operation at once: re-reading
	// the ranges and going on from the children is the query pipeline's business.
	RangeID        string
	CrossPartition bool
	// StartEPK and EndEPK narrow an OpQuery or OpChangeFeed sent to RangeID to the
	// effective partition keys [StartEPK, EndEPK) of that range (upper-case hex, "" the
	// lowest key): the feed range of a range that was merged into RangeID, or of a
	// hierarchical partition key prefix. Both or neither, and only with RangeID. Sent as
	// x-ms-start-epk, x-ms-end-epk and x-ms-read-key-type: EffectivePartitionKeyRange,
	// as the JS SDK sends a feed range (@azure/cosmos 4.10 ClientContext.queryFeed).
	StartEPK, EndEPK string
	// QueryFeatures is what the caller's query pipeline can run, sent with OpQueryPlan
	// (x-ms-cosmos-supported-query-features, e.g. "OrderBy, Top, Aggregate").
	QueryFeatures string
	// Explain asks an OpQuery page for the service's query metrics, index metrics and
	// query advice (x-ms-documentdb-populatequerymetrics,
	// x-ms-cosmos-populateindexmetrics, x-ms-cosmos-populatequeryadvice); the answer's
	// are in Result.QueryMetrics, IndexUtilization and QueryAdvice.
	Explain bool

	// trackingID is the _trackingId put in the document, once per logical write.
	trackingID string
	// probe is the region health probe ticket the operation was granted, if any, and
	// rangeID the partition key range region health keeps its record under ("" for the
	// region as a whole).
	probe   health.Probe
	rangeID string
	// beside is the probe ticket of a region this operation checks with a request of its
	// own, sent beside its attempts (see probeBeside), and besideRegion that region.
	beside       health.Probe
	besideRegion cosmos.Location
	// req is the request every attempt sends (see request).
	req     *cosmos.Request
	reqOnce *sync.Once
	// pkText is PartitionKey.JSON(), worked out once by Execute for the diagnostics and
	// every header that carries the key ("" before: partitionKeyJSON works it out).
	pkText string
}

// partitionKeyJSON is the operation's partition key as its header carries it.
func (op *Operation) partitionKeyJSON() string {
	if op.pkText != "" {
		return op.pkText
	}
	return op.PartitionKey.JSON()
}
