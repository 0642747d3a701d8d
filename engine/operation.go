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
)

// IsWrite reports whether the operation changes data.
func (k OpKind) IsWrite() bool { return k != OpRead }

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
	// IfMatch makes replace, delete and patch conditional on the item's etag.
	IfMatch string
	// ExcludeRegions are removed from the preferred regions for this operation.
	ExcludeRegions []string
	// E2ETimeout bounds the whole operation, retries included; 0 means no bound.
	E2ETimeout time.Duration
	// Hedge is the availability strategy for reads; nil means no hedging.
	Hedge hedging.Strategy
	// WriteRetries says whether a write is retried after an ambiguous failure, and
	// whether creates and replaces carry a _trackingId to recognise their own success.
	WriteRetries retries.WritePolicy

	// trackingID is the _trackingId put in the document, once per logical write.
	trackingID string
	// probe is the region health probe ticket the operation was granted, if any, and
	// rangeID the partition key range region health keeps its record under ("" for the
	// region as a whole).
	probe   health.Probe
	rangeID string
	// req is the request every attempt sends (see request).
	req     *cosmos.Request
	reqOnce *sync.Once
}
