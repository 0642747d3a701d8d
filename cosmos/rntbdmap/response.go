package rntbdmap

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/cosmosctl/cosmosctl/cosmos/rntbd"
)

// valueKind is how a response token's value is written as a REST header value.
type valueKind int

const (
	asString valueKind = iota
	asUint
	asInt
	asFloat
)

// responseHeaders maps response tokens to the REST headers the gateway would carry
// (names: .NET HttpConstants.HttpHeaders and WFConstants.BackendHeaders on msdata/direct;
// tokens read as .NET rntbd2/HeadersTransportSerialization reads them). Tokens not here
// are dropped: TransportRequestID, PayloadPresent and DisableRntbdChannel belong to the
// connection (rntbdconn reads them), and tokens cosmosctl does not know — the service
// adds them faster than clients learn them — have no REST name to take.
var responseHeaders = map[uint16]struct {
	key  string
	kind valueKind
}{
	rntbd.RespLastStateChangeDateTime:            {http.CanonicalHeaderKey("x-ms-last-state-change-utc"), asString},
	rntbd.RespContinuationToken:                  {http.CanonicalHeaderKey("x-ms-continuation"), asString},
	rntbd.RespETag:                               {http.CanonicalHeaderKey("etag"), asString},
	rntbd.RespRetryAfterMilliseconds:             {http.CanonicalHeaderKey("x-ms-retry-after-ms"), asUint},
	rntbd.RespStorageMaxResoureQuota:             {http.CanonicalHeaderKey("x-ms-resource-quota"), asString},
	rntbd.RespStorageResourceQuotaUsage:          {http.CanonicalHeaderKey("x-ms-resource-usage"), asString},
	rntbd.RespSchemaVersion:                      {http.CanonicalHeaderKey("x-ms-schemaversion"), asString},
	rntbd.RespLSN:                                {http.CanonicalHeaderKey("lsn"), asInt},
	rntbd.RespItemCount:                          {http.CanonicalHeaderKey("x-ms-item-count"), asUint},
	rntbd.RespRequestCharge:                      {http.CanonicalHeaderKey("x-ms-request-charge"), asFloat},
	rntbd.RespOwnerFullName:                      {http.CanonicalHeaderKey("x-ms-alt-content-path"), asString},
	rntbd.RespOwnerID:                            {http.CanonicalHeaderKey("x-ms-content-path"), asString},
	rntbd.RespQuorumAckedLSN:                     {http.CanonicalHeaderKey("x-ms-quorum-acked-lsn"), asInt},
	rntbd.RespSubStatus:                          {http.CanonicalHeaderKey("x-ms-substatus"), asUint},
	rntbd.RespCurrentWriteQuorum:                 {http.CanonicalHeaderKey("x-ms-current-write-quorum"), asUint},
	rntbd.RespCurrentReplicaSetSize:              {http.CanonicalHeaderKey("x-ms-current-replica-set-size"), asUint},
	rntbd.RespPartitionKeyRangeID:                {http.CanonicalHeaderKey("x-ms-documentdb-partitionkeyrangeid"), asString},
	rntbd.RespXPRole:                             {http.CanonicalHeaderKey("x-ms-xp-role"), asUint},
	rntbd.RespQueryMetrics:                       {http.CanonicalHeaderKey("x-ms-documentdb-query-metrics"), asString},
	rntbd.RespGlobalCommittedLSN:                 {http.CanonicalHeaderKey("x-ms-global-committed-lsn"), asInt},
	rntbd.RespNumberOfReadRegions:                {http.CanonicalHeaderKey("x-ms-number-of-read-regions"), asUint},
	rntbd.RespItemLSN:                            {http.CanonicalHeaderKey("x-ms-item-lsn"), asInt},
	rntbd.RespLocalLSN:                           {http.CanonicalHeaderKey("x-ms-cosmos-llsn"), asInt},
	rntbd.RespQuorumAckedLocalLSN:                {http.CanonicalHeaderKey("x-ms-cosmos-quorum-acked-llsn"), asInt},
	rntbd.RespItemLocalLSN:                       {http.CanonicalHeaderKey("x-ms-cosmos-item-llsn"), asInt},
	rntbd.RespSessionToken:                       {keySessionToken, asString},
	rntbd.RespIndexUtilization:                   {http.CanonicalHeaderKey("x-ms-cosmos-index-utilization"), asString},
	rntbd.RespBackendRequestDurationMilliseconds: {http.CanonicalHeaderKey("x-ms-request-duration-ms"), asFloat},
	rntbd.RespPhysicalPartitionID:                {http.CanonicalHeaderKey("x-ms-cosmos-physical-partition-id"), asString},
}

// Response maps an RNTBD response onto the status, REST headers (canonical keys) and
// body a gateway answer would have. The activity id of the frame becomes
// x-ms-activity-id. The session token comes back without its "<range>:" prefix; it is
// given the answer's PartitionKeyRangeId as .NET does for proxy answers
// (ThinClientTransportSerializer.ConvertProxyResponseAsync), so that it reads as the
// REST header does. A token whose type is not the one its id has is left out rather
// than misread. Error bodies are the REST JSON error body, unchanged.
func Response(r rntbd.Response) (status int, header http.Header, body []byte) {
	h := make(http.Header, len(r.Tokens)+1)
	// One backing array for every header's value, as net/http reads headers: a slice
	// each would be an allocation each.
	vals := make([]string, 0, len(r.Tokens)+1)
	add := func(key, v string) {
		vals = append(vals, v)
		h[key] = vals[len(vals)-1 : len(vals) : len(vals)]
	}
	var zero [16]byte
	if r.ActivityID != zero {
		add(keyActivityID, r.ActivityID.String())
	}
	for _, t := range r.Tokens {
		m, ok := responseHeaders[t.ID]
		if !ok {
			continue
		}
		if d, known := rntbd.ResponseTokens[t.ID]; known && d.Type != t.Type {
			continue
		}
		var v string
		switch m.kind {
		case asString:
			v, ok = t.Str()
		case asUint:
			var n uint64
			n, ok = t.Uint()
			v = strconv.FormatUint(n, 10)
		case asInt:
			var n int64
			n, ok = t.Int()
			v = strconv.FormatInt(n, 10)
		case asFloat:
			var f float64
			f, ok = t.Float()
			v = strconv.FormatFloat(f, 'f', -1, 64)
		}
		if ok {
			add(m.key, v)
		}
	}
	if tok := first(h, keySessionToken); tok != "" && !strings.Contains(tok, ":") {
		if rng := first(h, keyRangeID); rng != "" {
			h[keySessionToken] = []string{rng + ":" + tok}
		}
	}
	return int(r.Status), h, r.Payload
}
