package leases

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// The lease documents, as both SDKs write them:
//
//   - .NET v3, a partition key range lease (DocumentServiceLeaseCore, "version" 0 or
//     absent): "id", "_etag", "LeaseToken" (the range id; "PartitionId" in leases a v2
//     processor wrote), "Owner", "ContinuationToken" (the etag of the range's last change
//     feed answer, such as "\"42\""), "timestamp" (the owner's explicit time; without it
//     the server's "_ts"), "properties", "Mode", and in leases of recent versions
//     "FeedRange" with the range's bounds (DocumentServiceLeaseManagerCosmos
//     CreateLeaseIfNotExistAsync), which the estimator does not read the lease by.
//   - .NET v3, an effective partition key range lease (DocumentServiceLeaseCoreEpk,
//     "version" 1): the same, and "FeedRange": {"Range": {"min": "", "max": "FF"}}.
//     (azure-cosmos-dotnet-v3, Microsoft.Azure.Cosmos/src/ChangeFeedProcessor/
//     LeaseManagement/DocumentServiceLeaseCore.cs, DocumentServiceLeaseCoreEpk.cs,
//     DocumentServiceLeaseConverter.cs picks the class by "version";
//     Serializer/FeedRange/FeedRangeInternalConverter.cs names "Range", "PK", "PKRangeId".)
//   - Java, a partition key range lease (ServiceItemLease): "id", "_etag", "LeaseToken",
//     "ContinuationToken" (an etag), "timestamp" (Instant.toString), "Owner".
//   - Java, an effective partition key range lease (epkversion/ServiceItemLeaseV1):
//     "id", "_etag", "LeaseToken", "ContinuationToken" (base64 of the whole change feed
//     state, ChangeFeedStateV1), "timestamp", "Owner", "version": 1, "feedRange":
//     {"Range": {"min": …, "max": …}}.
//     (azure-sdk-for-java, sdk/cosmos/azure-cosmos/src/main/java/com/azure/cosmos/
//     implementation/changefeed/Lease.java names the properties; ServiceItemLease.java,
//     epkversion/ServiceItemLeaseV1.java write them.)
//
// Their ids are the processor's prefix, the account host and the monitored database's
// and container's resource ids (or, in Java's partition key range leases, their names),
// then ".." and the lease token: "{prefix}{host}_{dbRid}_{collRid}..{token}"
// (.NET CosmosContainerExtensions.GetLeasePrefix and
// DocumentServiceLeaseStoreManagerOptions.GetPartitionLeasePrefix; Java
// LeaseStoreManagerImpl's LEASE_STORE_MANAGER_LEASE_SUFFIX ".."). Beside them the store
// keeps "{prefix}{host}_{dbRid}_{collRid}.info" (initialized) and ".lock" (the
// initialization lock): not leases (.NET DocumentServiceLeaseStoreCosmos.cs).

// Lease is one lease of a change feed processor.
type Lease struct {
	ID string
	// Token is the lease token: a partition key range id, or in an effective partition
	// key range lease the name the processor gave its range.
	Token string
	// FeedRange is the effective partition keys the lease covers; nil for a partition
	// key range lease, which covers the range named Token.
	FeedRange *cosmos.EPKRange
	Owner     string
	// Continuation is the ContinuationToken as stored ("" before the first checkpoint).
	Continuation string
	// Timestamp is when the owner last renewed or checkpointed the lease: its explicit
	// "timestamp", or the server's _ts without one, as both SDKs read it.
	Timestamp time.Time
	// Version is the lease document's version: 0 partition key range, 1 effective
	// partition key range.
	Version int
}

// ErrNotALease is a document of the lease container that is no lease: the store's
// ".info" and ".lock" documents, or anything without a lease token.
var ErrNotALease = errors.New("not a lease")

// leaseDoc is a lease document in either SDK's shape. encoding/json matches names
// without regard to case, so "FeedRange" (.NET) and "feedRange" (Java) both land.
type leaseDoc struct {
	ID           *string         `json:"id"`
	LeaseToken   *string         `json:"LeaseToken"`
	PartitionID  *string         `json:"PartitionId"`
	Owner        *string         `json:"Owner"`
	Continuation *string         `json:"ContinuationToken"`
	Timestamp    *string         `json:"timestamp"`
	TS           json.Number     `json:"_ts"`
	Version      *int            `json:"version"`
	FeedRange    json.RawMessage `json:"FeedRange"`
}

// feedRangeDoc is a serialized feed range: an effective partition key range, a
// partition key range id, or a partition key (which no processor's lease holds).
type feedRangeDoc struct {
	Range     *cosmos.EPKRange `json:"Range"`
	PKRangeID *string          `json:"PKRangeId"`
}

// Parse reads one document of a lease container. A document that is no lease returns
// an error wrapping ErrNotALease; a lease with a malformed part returns another error.
func Parse(raw json.RawMessage) (Lease, error) {
	var d leaseDoc
	if err := json.Unmarshal(raw, &d); err != nil {
		return Lease{}, fmt.Errorf("%w: %v", ErrNotALease, err)
	}
	if d.ID == nil {
		return Lease{}, fmt.Errorf("%w: no id", ErrNotALease)
	}
	l := Lease{ID: *d.ID}
	if strings.HasSuffix(l.ID, ".info") || strings.HasSuffix(l.ID, ".lock") {
		return l, fmt.Errorf("%w: the lease store's own %s document", ErrNotALease, l.ID[strings.LastIndexByte(l.ID, '.'):])
	}
	switch {
	case d.LeaseToken != nil:
		l.Token = *d.LeaseToken
	case d.PartitionID != nil:
		l.Token = *d.PartitionID
	default:
		return l, fmt.Errorf("%w: no LeaseToken", ErrNotALease)
	}
	if d.Owner != nil {
		l.Owner = *d.Owner
	}
	if d.Continuation != nil {
		l.Continuation = *d.Continuation
	}
	if d.Version != nil {
		l.Version = *d.Version
	}
	// A partition key range lease (version 0) is read by its token, the range id, even
	// when it records its range's bounds in FeedRange, as .NET's do: the estimator reads
	// "lease is DocumentServiceLeaseCoreEpk ? lease.FeedRange : new
	// FeedRangePartitionKeyRange(lease.CurrentLeaseToken)"
	// (ChangeFeed/ChangeFeedPartitionKeyResultSetIteratorCore.cs).
	if l.Version >= 1 && len(d.FeedRange) > 0 && string(d.FeedRange) != "null" {
		var fr feedRangeDoc
		if err := json.Unmarshal(d.FeedRange, &fr); err != nil {
			return l, fmt.Errorf("lease %s: its feed range is not one either SDK writes: %v", l.ID, err)
		}
		switch {
		case fr.Range != nil:
			r := cosmos.EPKRange{Min: strings.ToUpper(fr.Range.Min), Max: strings.ToUpper(fr.Range.Max)}
			l.FeedRange = &r
		case fr.PKRangeID != nil:
			l.Token = *fr.PKRangeID
		default:
			return l, fmt.Errorf("lease %s: its feed range %s is neither an effective partition key range nor a partition key range", l.ID, d.FeedRange)
		}
	}
	if l.Version >= 1 && l.FeedRange == nil {
		return l, fmt.Errorf("lease %s: version %d (an effective partition key range lease) without a feed range", l.ID, l.Version)
	}
	var err error
	if l.Timestamp, err = leaseTime(d.Timestamp, d.TS); err != nil {
		return l, fmt.Errorf("lease %s: %v", l.ID, err)
	}
	return l, nil
}

// leaseTime is the lease's explicit timestamp, or its _ts. .NET writes a DateTime
// ("2026-12-06T09:00:00.1234567Z"), Java an Instant ("2026-12-06T09:00:00.123Z") or,
// from a lease it has just built, a ZonedDateTime ("…Z[UTC]"). A time without a zone is
// UTC: .NET writes DateTime.UtcNow.
func leaseTime(explicit *string, ts json.Number) (time.Time, error) {
	if explicit != nil && *explicit != "" {
		s := *explicit
		if i := strings.IndexByte(s, '['); i > 0 {
			s = s[:i]
		}
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999"} {
			if t, err := time.Parse(layout, s); err == nil {
				return t.UTC(), nil
			}
		}
		return time.Time{}, fmt.Errorf("its timestamp %q is not a time either SDK writes", *explicit)
	}
	if ts == "" {
		return time.Time{}, nil
	}
	sec, err := ts.Int64()
	if err != nil {
		return time.Time{}, fmt.Errorf("its _ts %q is not a number of seconds", ts)
	}
	return time.Unix(sec, 0).UTC(), nil
}

// Range names what the lease covers: its feed range's bounds, or its partition key
// range id.
func (l Lease) Range() string {
	if l.FeedRange == nil {
		return l.Token
	}
	return fmt.Sprintf("[%s,%s)", quoteEmpty(l.FeedRange.Min), quoteEmpty(l.FeedRange.Max))
}

func quoteEmpty(s string) string {
	if s == "" {
		return `""`
	}
	return s
}
