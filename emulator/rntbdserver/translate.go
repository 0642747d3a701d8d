package rntbdserver

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// FrameError is a request the server answers with an error frame of its own, without
// asking the handler: Status and a REST-shaped JSON error body.
type FrameError struct {
	Status  int
	Message string
}

func (e *FrameError) Error() string { return e.Message }

func badRequest(format string, args ...any) *FrameError {
	return &FrameError{Status: http.StatusBadRequest, Message: sprintf(format, args...)}
}

// ErrorBody is the REST error body, {"code":…,"message":…}.
func ErrorBody(status int, message string) []byte {
	code := strings.ReplaceAll(http.StatusText(status), " ", "")
	b, _ := json.Marshal(struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}{code, message})
	return b
}

// consistencyNames are the ConsistencyLevel token's byte values (Java
// RntbdConstants.RntbdConsistencyLevel, commit 01feecf6) as x-ms-consistency-level says them.
var consistencyNames = map[uint64]string{0: "Strong", 1: "BoundedStaleness", 2: "Session", 3: "Eventual", 4: "ConsistentPrefix"}

// indexingNames: Java RntbdConstants.RntbdIndexingDirective (commit 01feecf6).
var indexingNames = map[uint64]string{0: "Default", 1: "Include", 2: "Exclude"}

// headerTokens are request tokens carried over as REST headers one to one: the header
// each stands for in the REST API (names as cosmos/headers.go and the REST reference
// spell them). Match, ConsistencyLevel, IndexingDirective, PageSize and
// ReturnPreference need more than a copy and are handled apart.
var headerTokens = map[uint16]string{
	reqAuthorizationToken:       "Authorization",
	reqDate:                     "X-Ms-Date",
	reqSessionToken:             "X-Ms-Session-Token",
	reqContinuationToken:        "X-Ms-Continuation",
	reqPartitionKey:             "X-Ms-Documentdb-Partitionkey",
	reqPartitionKeyRangeID:      "X-Ms-Documentdb-Partitionkeyrangeid",
	reqClientVersion:            "X-Ms-Version",
	reqSDKSupportedCapabilities: "X-Ms-Cosmos-Sdk-Supportedcapabilities",
	reqCorrelatedActivityID:     "X-Ms-Cosmos-Correlated-Activityid",
}

// boolHeaderTokens are Byte tokens that stand for "true"/"false" headers.
var boolHeaderTokens = map[uint16]string{
	reqPopulateQuotaInfo:    "X-Ms-Documentdb-Populatequotainfo",
	reqPopulateQueryMetrics: "X-Ms-Documentdb-Populatequerymetrics",
	reqPopulateIndexMetrics: "X-Ms-Cosmos-Populateindexmetrics",
	reqAllowTentativeWrites: "X-Ms-Cosmos-Allow-Tentative-Writes",
}

// HTTPRequest builds the REST request a Document request frame stands for: method and
// path from the operation type and the DatabaseName/CollectionName/DocumentName tokens
// (name-based addressing, REFERENCE §1.8), under base (a replica's ReplicaPath, or "/"
// for the Gateway 2.0 proxy), headers from the tokens, the activity id from the frame
// head. version is the connection's ClientVersion (the x-ms-version string) unless the
// frame carries its own. Frames the emulator does not serve come back as *FrameError.
func HTTPRequest(ctx context.Context, r *Request, base, version string) (*http.Request, error) {
	return HTTPRequestEscaped(ctx, r, base, version, url.PathEscape)
}

// HTTPRequestEscaped is HTTPRequest with the names escaped into path segments by escape:
// a handler that decodes its path twice (a routing gateway) gets them escaped twice.
func HTTPRequestEscaped(ctx context.Context, r *Request, base, version string, escape func(string) string) (*http.Request, error) {
	if r.ResourceType != ResourceDocument {
		return nil, badRequest("the emulator serves RNTBD Document operations only, not resource type 0x%04X", r.ResourceType)
	}
	name := func(id uint16) string {
		if t, ok := r.Token(id); ok {
			return t.Text()
		}
		return ""
	}
	db, coll, doc := name(reqDatabaseName), name(reqCollectionName), name(reqDocumentName)
	if db == "" || coll == "" {
		if _, byRID := r.Token(reqResourceID); byRID {
			return nil, badRequest("the emulator addresses documents by name: send DatabaseName (0x0015) and CollectionName (0x0016), not ResourceId (0x0000)")
		}
		return nil, badRequest("request without DatabaseName (0x0015) or CollectionName (0x0016)")
	}
	var method string
	header := http.Header{}
	point := true
	switch r.OperationType {
	case OpRead:
		method = http.MethodGet
	case OpReplace:
		method = http.MethodPut
	case OpDelete:
		method = http.MethodDelete
	case OpPatch:
		method = http.MethodPatch
		header.Set("Content-Type", "application/json_patch+json")
	case OpCreate, OpUpsert:
		method, point = http.MethodPost, false
		if r.OperationType == OpUpsert {
			header.Set("X-Ms-Documentdb-Is-Upsert", "True")
		}
	case OpReadFeed:
		method, point = http.MethodGet, false
	default:
		return nil, badRequest("the emulator serves RNTBD point operations (Create, Read, Replace, Upsert, Delete, Patch) and ReadFeed, not operation type 0x%04X", r.OperationType)
	}
	if point && doc == "" {
		return nil, badRequest("operation 0x%04X without DocumentName (0x0017)", r.OperationType)
	}
	path := strings.TrimSuffix(base, "/") + "/dbs/" + escape(db) + "/colls/" + escape(coll) + "/docs"
	if point {
		path += "/" + escape(doc)
	}
	u, err := url.Parse(path)
	if err != nil {
		return nil, badRequest("names do not make a path: %v", err)
	}
	if version != "" {
		header.Set("X-Ms-Version", version)
	}
	for _, t := range r.Tokens {
		if h, ok := headerTokens[t.ID]; ok {
			header.Set(h, t.Text())
			continue
		}
		if h, ok := boolHeaderTokens[t.ID]; ok {
			if v, isUint := t.Uint(); isUint {
				header.Set(h, strconv.FormatBool(v != 0))
			}
			continue
		}
		switch t.ID {
		case reqMatch:
			// Java RntbdRequestHeaders.addMatchHeader: If-None-Match on Read/ReadFeed,
			// If-Match otherwise.
			if r.OperationType == OpRead || r.OperationType == OpReadFeed {
				header.Set("If-None-Match", t.Text())
			} else {
				header.Set("If-Match", t.Text())
			}
		case reqConsistencyLevel:
			v, _ := t.Uint()
			n, ok := consistencyNames[v]
			if !ok || t.Type != TypeByte {
				return nil, badRequest("ConsistencyLevel token (0x0010) must be a Byte 0-4, not type 0x%02X value %s", t.Type, t.Text())
			}
			header.Set("X-Ms-Consistency-Level", n)
		case reqIndexingDirective:
			v, _ := t.Uint()
			if n, ok := indexingNames[v]; ok {
				header.Set("X-Ms-Indexing-Directive", n)
			}
		case reqPageSize:
			// ULong; -1 ("no limit") is 0xFFFFFFFF on the wire.
			v, _ := t.Uint()
			if v == 0xFFFFFFFF {
				header.Set("X-Ms-Max-Item-Count", "-1")
			} else {
				header.Set("X-Ms-Max-Item-Count", strconv.FormatUint(v, 10))
			}
		case reqReturnPreference:
			// Not verified: the value meaning "minimal" is taken to be 1.
			if v, _ := t.Uint(); v == 1 {
				header.Set("Prefer", "return=minimal")
			}
		}
	}
	header.Set("X-Ms-Activity-Id", FormatGUID(r.ActivityID))
	var body []byte
	if r.PayloadPresent {
		body = r.Body
		if header.Get("Content-Type") == "" {
			header.Set("Content-Type", "application/json")
		}
	}
	hr, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, badRequest("%v", err)
	}
	if body == nil {
		hr.Body = http.NoBody
	}
	hr.ContentLength = int64(len(body))
	hr.Header = header
	hr.RequestURI = u.RequestURI()
	hr.Proto, hr.ProtoMajor, hr.ProtoMinor = "RNTBD", 1, 1
	return hr, nil
}

// responseHeaders maps the REST response headers cosmosctl reads onto response tokens
// (Java RntbdConstants.RntbdResponseHeader ids and types, commit 01feecf6; 0x0063 from
// .NET). x-ms-session-token is handled apart, and headers with no token (the
// emulator's own x-ms-cosmos-emulator-*, content-type, x-ms-activity-id, which rides in
// the frame head) are left out, as the service has nowhere to put them.
var responseHeaders = []struct {
	header string
	id     uint16
	typ    byte
}{
	{"X-Ms-Continuation", respContinuationToken, TypeString},
	{"Etag", respETag, TypeString},
	{"X-Ms-Retry-After-Ms", respRetryAfterMilliseconds, TypeULong},
	{"X-Ms-Resource-Quota", respStorageMaxQuota, TypeString},
	{"X-Ms-Resource-Usage", respStorageQuotaUsage, TypeString},
	{"Lsn", respLSN, TypeLongLong},
	{"X-Ms-Item-Count", respItemCount, TypeULong},
	{"X-Ms-Request-Charge", respRequestCharge, TypeDouble},
	{"X-Ms-Quorum-Acked-Lsn", respQuorumAckedLSN, TypeLongLong},
	{"X-Ms-Substatus", respSubStatus, TypeULong},
	{"X-Ms-Current-Write-Quorum", respCurrentWriteQuorum, TypeULong},
	{"X-Ms-Current-Replica-Set-Size", respCurrentReplicaSetSize, TypeULong},
	{"X-Ms-Documentdb-Partitionkeyrangeid", respPartitionKeyRangeID, TypeString},
	{"X-Ms-Xp-Role", respXPRole, TypeULong},
	{"X-Ms-Documentdb-Query-Metrics", respQueryMetrics, TypeString},
	{"X-Ms-Global-Committed-Lsn", respGlobalCommittedLSN, TypeLongLong},
	{"X-Ms-Number-Of-Read-Regions", respNumberOfReadRegions, TypeULong},
	{"X-Ms-Item-Lsn", respItemLSN, TypeLongLong},
	{"X-Ms-Cosmos-Llsn", respLocalLSN, TypeLongLong},
	{"X-Ms-Cosmos-Quorum-Acked-Llsn", respQuorumAckedLocalLSN, TypeLongLong},
	{"X-Ms-Cosmos-Item-Llsn", respItemLocalLSN, TypeLongLong},
	{"X-Ms-Cosmos-Index-Utilization", respIndexUtilization, TypeString},
	{"X-Ms-Request-Duration-Ms", respBackendRequestDuration, TypeDouble},
	{"X-Ms-Cosmos-Physical-Partition-Id", respPhysicalPartitionID, TypeString},
	{"X-Ms-Cosmos-Query-Advice", respQueryAdvice, TypeString},
}

// ResponseTokens turns a REST answer's headers into response tokens. Header names are
// matched without regard to case (the emulator sends them in lower case). A value that
// does not parse as its token's type is left out.
func ResponseTokens(h http.Header) []Token {
	canon := http.Header{}
	for k, v := range h {
		canon[http.CanonicalHeaderKey(k)] = v
	}
	var out []Token
	for _, m := range responseHeaders {
		v := canon.Get(m.header)
		if v == "" {
			continue
		}
		switch m.typ {
		case TypeString:
			out = append(out, stringToken(m.id, v))
		case TypeULong:
			if n, err := strconv.ParseUint(v, 10, 32); err == nil {
				out = append(out, ulongToken(m.id, uint32(n)))
			}
		case TypeLongLong:
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				out = append(out, longLongToken(m.id, n))
			}
		case TypeDouble:
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				out = append(out, doubleToken(m.id, f))
			}
		}
	}
	if v := canon.Get("X-Ms-Session-Token"); v != "" {
		out = append(out, stringToken(respSessionToken, stripRange(v)))
	}
	return out
}

// stripRange drops the "<range id>:" of a REST session token: the service's RNTBD
// answer carries the partition-local token alone ("-1#10" in the .NET vector, REFERENCE
// §1.3) and the client prepends PartitionKeyRangeId + ":" (.NET
// ThinClientTransportSerializer.ConvertProxyResponseAsync).
func stripRange(tok string) string {
	if i := strings.IndexByte(tok, ':'); i >= 0 && !strings.Contains(tok[:i], "#") {
		return tok[i+1:]
	}
	return tok
}
