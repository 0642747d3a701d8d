package rntbdmap

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/cosmosctl/cosmosctl/cosmos/rntbd"
	"github.com/google/uuid"
)

// Target is where a request frame goes: a replica over a direct TCP connection, or a
// Gateway 2.0 proxy inside an HTTP/2 POST.
type Target int

const (
	// Replica frames carry ReplicaPath and TransportRequestID.
	Replica Target = iota
	// Proxy frames carry neither (the proxy assigns its own request id; the Rust driver
	// found that sending one "triggers a routing error") but name the account
	// (GlobalDatabaseAccountName) and the item's effective partition key, routing tokens
	// first.
	Proxy
)

func (t Target) String() string {
	switch t {
	case Replica:
		return "replica"
	case Proxy:
		return "proxy"
	}
	return "Target(" + strconv.Itoa(int(t)) + ")"
}

// RequestInfo is one signed REST point operation and what its target needs beside it.
type RequestInfo struct {
	Method, Path string // Path as cosmos.Request.Path: "/dbs/d/colls/c/docs/id" (escaped)
	Header       http.Header
	Body         []byte

	ReplicaPath        string // Replica only: the replica URI's path, with its trailing '/'
	TransportRequestID uint32 // Replica only

	GlobalDatabaseAccountName string // Proxy only
	// CollectionRID is the container's resource id, which .NET sends the proxy as the
	// CollectionRid token (ThinClientTransportSerializer.SerializeProxyRequestAsync adds
	// the x-ms-documentdb-collection-rid backend header; TransportSerialization fills
	// the String token from it). Proxy only; optional.
	CollectionRID string
	// EffectivePartitionKey is the item's EPK in binary: the bytes of its hex string, as
	// .NET ThinClientTransportSerializer sends it (HexStringUtility.HexStringToBytes).
	EffectivePartitionKey []byte // Proxy only
}

// Resource and operation type ids (Java RntbdConstants RntbdResourceType and
// RntbdOperationType).
const (
	ResourceDocument uint16 = 0x0003

	OpCreate  uint16 = 0x0001
	OpPatch   uint16 = 0x0002
	OpRead    uint16 = 0x0003
	OpDelete  uint16 = 0x0005
	OpReplace uint16 = 0x0006
	OpUpsert  uint16 = 0x0013
)

// The canonical keys of the REST headers the mapping knows.
var (
	keyAuthorization   = http.CanonicalHeaderKey("authorization")
	keyDate            = http.CanonicalHeaderKey("x-ms-date")
	keyVersion         = http.CanonicalHeaderKey("x-ms-version")
	keyActivityID      = http.CanonicalHeaderKey("x-ms-activity-id")
	keyUserAgent       = http.CanonicalHeaderKey("user-agent")
	keyContentType     = http.CanonicalHeaderKey("content-type")
	keyIsUpsert        = http.CanonicalHeaderKey("x-ms-documentdb-is-upsert")
	keyPartitionKey    = http.CanonicalHeaderKey("x-ms-documentdb-partitionkey")
	keyRangeID         = http.CanonicalHeaderKey("x-ms-documentdb-partitionkeyrangeid")
	keySessionToken    = http.CanonicalHeaderKey("x-ms-session-token")
	keyConsistency     = http.CanonicalHeaderKey("x-ms-consistency-level")
	keyIfMatch         = http.CanonicalHeaderKey("if-match")
	keyIfNoneMatch     = http.CanonicalHeaderKey("if-none-match")
	keyCapabilities    = http.CanonicalHeaderKey("x-ms-cosmos-sdk-supportedcapabilities")
	keyTentativeWrites = http.CanonicalHeaderKey("x-ms-cosmos-allow-tentative-writes")
	keyPrefer          = http.CanonicalHeaderKey("prefer")
)

// headerRule says what becomes of one REST header.
type headerRule struct {
	// token maps the value onto the frame; nil means the header is deliberately not a
	// token (why says where its meaning goes).
	token func(b *builder, value string) error
	why   string
}

// headerRules is every REST header cosmosctl sets on a point operation (engine
// request.go and consistency.go; cosmos.Transport.Do) and what it becomes. Token ids and
// types: Java RntbdRequestHeader, and .NET RequestIdentifiers for the ids Java lacks.
var headerRules = map[string]headerRule{
	// AuthorizationToken 0x0001 String: exactly the REST value (.NET FillTokenFromHeader
	// of HttpHeaders.Authorization).
	keyAuthorization: {token: str(rntbd.ReqAuthorizationToken, rntbd.TypeString)},
	// Date 0x0003 SmallString: x-ms-date (.NET AddDateHeader, Java addDateHeader).
	keyDate: {token: str(rntbd.ReqDate, rntbd.TypeSmallString)},
	// PartitionKey 0x002B String: the JSON array, as the REST header.
	keyPartitionKey: {token: str(rntbd.ReqPartitionKey, rntbd.TypeString)},
	// PartitionKeyRangeId 0x002C String.
	keyRangeID: {token: str(rntbd.ReqPartitionKeyRangeID, rntbd.TypeString)},
	// SessionToken 0x0005 String: "<range>:<token>", as the REST header (.NET
	// SessionTokenHelper.SetPartitionLocalSessionToken sends it so).
	keySessionToken: {token: str(rntbd.ReqSessionToken, rntbd.TypeString)},
	// ConsistencyLevel 0x0010 Byte (.NET AddConsistencyLevelHeader).
	keyConsistency: {token: consistency},
	// Match 0x0008 String: If-None-Match on a read, If-Match otherwise (.NET
	// AddMatchHeader); the other one has nowhere to go.
	keyIfMatch:     {token: match(false)},
	keyIfNoneMatch: {token: match(true)},
	// SDKSupportedCapabilities 0x00A2 ULong: the decimal bit set (.NET FillTokenFromHeader
	// parses a ULong token's header with uint.TryParse).
	keyCapabilities: {token: ulong(rntbd.ReqSDKSupportedCapabilities)},
	// AllowTentativeWrites 0x0066 Byte: a boolean header.
	keyTentativeWrites: {token: boolean(rntbd.ReqAllowTentativeWrites)},
	// ReturnPreference 0x0082 Byte: only when Prefer was set; the Rust driver found that
	// sending it unconditionally made creates store 0-byte documents.
	keyPrefer: {token: returnPreference},
	// Replica: the version rides in the context negotiation (.NET: "will be null in case
	// of direct … BE will use the value from the connection context message"); Proxy:
	// Gateway 2.0 has no negotiation, so ClientVersion 0x0028 SmallString carries it.
	keyVersion: {token: clientVersion},

	keyIsUpsert:    {why: "the operation type (Upsert 0x0013) carries it"},
	keyActivityID:  {why: "the frame header carries the activity id"},
	keyUserAgent:   {why: "the connection's context negotiation (direct) or the POST's own header (Gateway 2.0) carries it"},
	keyContentType: {why: "the operation type says what the body is (Patch: a JSON patch document; otherwise a JSON item)"},
}

// DroppedHeaders lists the REST headers the mapping drops on purpose, with where each
// one's meaning goes instead: for documentation and tests.
func DroppedHeaders() map[string]string {
	out := map[string]string{}
	for k, r := range headerRules {
		if r.token == nil {
			out[k] = r.why
		}
	}
	return out
}

// MappedHeaders lists the REST headers that become tokens.
func MappedHeaders() []string {
	var out []string
	for k, r := range headerRules {
		if r.token != nil {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// builder collects a frame's tokens, one per id (a later one replaces an earlier);
// the order is decided at the end.
type builder struct {
	target Target
	op     uint16
	tokens []rntbd.Token
}

func (b *builder) set(t rntbd.Token) {
	for i := range b.tokens {
		if b.tokens[i].ID == t.ID {
			b.tokens[i] = t
			return
		}
	}
	b.tokens = append(b.tokens, t)
}

func str(id uint16, typ rntbd.TokenType) func(*builder, string) error {
	return func(b *builder, v string) error {
		b.set(rntbd.StringToken(id, typ, v))
		return nil
	}
}

func ulong(id uint16) func(*builder, string) error {
	return func(b *builder, v string) error {
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 32)
		if err != nil {
			return fmt.Errorf("is %q, not a decimal u32", v)
		}
		b.set(rntbd.ULongToken(id, uint32(n)))
		return nil
	}
}

func boolean(id uint16) func(*builder, string) error {
	return func(b *builder, v string) error {
		on, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("is %q, not true or false", v)
		}
		b.set(rntbd.BoolToken(id, on))
		return nil
	}
}

// consistencyLevels are the RNTBD consistency bytes (Java RntbdConsistencyLevel).
var consistencyLevels = map[string]byte{
	"strong": 0x00, "boundedstaleness": 0x01, "session": 0x02, "eventual": 0x03, "consistentprefix": 0x04,
}

func consistency(b *builder, v string) error {
	level, ok := consistencyLevels[strings.ToLower(strings.TrimSpace(v))]
	if !ok {
		return fmt.Errorf("is %q, not Strong, BoundedStaleness, Session, Eventual or ConsistentPrefix", v)
	}
	b.set(rntbd.ByteToken(rntbd.ReqConsistencyLevel, level))
	return nil
}

func match(ifNoneMatch bool) func(*builder, string) error {
	return func(b *builder, v string) error {
		if (b.op == OpRead) != ifNoneMatch {
			want := "If-Match"
			if b.op == OpRead {
				want = "If-None-Match"
			}
			return fmt.Errorf("has no token on this operation: the Match token carries %s here", want)
		}
		b.set(rntbd.StringToken(rntbd.ReqMatch, rntbd.TypeString, v))
		return nil
	}
}

func returnPreference(b *builder, v string) error {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "return=minimal":
		b.set(rntbd.ByteToken(rntbd.ReqReturnPreference, 0x01))
	case "return=representation":
		b.set(rntbd.ByteToken(rntbd.ReqReturnPreference, 0x00))
	default:
		return fmt.Errorf("is %q, not return=minimal or return=representation", v)
	}
	return nil
}

func clientVersion(b *builder, v string) error {
	if b.target == Proxy {
		b.set(rntbd.StringToken(rntbd.ReqClientVersion, rntbd.TypeSmallString, v))
	}
	return nil
}

// proxyOrder is the order a Gateway 2.0 proxy expects its routing tokens in, before
// any other (Java RntbdRequestHeader.thinClientHeadersInOrderList, as the Rust driver's
// gateway_v2_dispatch.rs quotes and tests it): EffectivePartitionKey, StartEpkHash,
// EndEpkHash, GlobalDatabaseAccountName, DatabaseName, CollectionName, CollectionRid,
// ResourceId, PayloadPresent, DocumentName, AuthorizationToken, Date. A replica frame
// uses the same leading order, with ReplicaPath and TransportRequestID after it.
var proxyOrder = []uint16{
	rntbd.ReqEffectivePartitionKey, rntbd.ReqStartEpkHash, rntbd.ReqEndEpkHash,
	rntbd.ReqGlobalDatabaseAccountName, rntbd.ReqDatabaseName, rntbd.ReqCollectionName,
	rntbd.ReqCollectionRid, rntbd.ReqResourceID, rntbd.ReqPayloadPresent,
	rntbd.ReqDocumentName, rntbd.ReqAuthorizationToken, rntbd.ReqDate,
}

// Request maps a signed REST point operation onto an RNTBD request frame for target.
// It fails, naming what it cannot carry, on anything but a document point operation
// (read, create, upsert, replace, delete, patch), on a REST header with no decision in
// the mapping, on a header value its token cannot hold, and on a RequestInfo missing
// what its target needs.
func Request(info RequestInfo, target Target) (rntbd.Request, error) {
	db, coll, doc, err := documentPath(info.Path)
	if err != nil {
		return rntbd.Request{}, err
	}
	op, err := operation(info.Method, doc, info.Header)
	if err != nil {
		return rntbd.Request{}, err
	}
	b := &builder{target: target, op: op, tokens: make([]rntbd.Token, 0, 20)}

	var activity uuid.UUID
	if v := first(info.Header, keyActivityID); v != "" {
		if activity, err = uuid.Parse(v); err != nil {
			return rntbd.Request{}, fmt.Errorf("rntbdmap: x-ms-activity-id %q is not a GUID: the frame header carries it as 16 bytes", v)
		}
	}
	for key, values := range info.Header {
		rule, ok := headerRules[key]
		if !ok {
			key = http.CanonicalHeaderKey(key)
			rule, ok = headerRules[key]
		}
		if !ok {
			return rntbd.Request{}, fmt.Errorf("rntbdmap: header %s has no RNTBD token in cosmosctl's mapping: it cannot be sent over RNTBD", key)
		}
		if rule.token == nil || len(values) == 0 {
			continue
		}
		if len(values) > 1 {
			return rntbd.Request{}, fmt.Errorf("rntbdmap: header %s has %d values; its RNTBD token holds one", key, len(values))
		}
		if err := rule.token(b, values[0]); err != nil {
			return rntbd.Request{}, fmt.Errorf("rntbdmap: header %s %v", key, err)
		}
	}

	b.set(rntbd.StringToken(rntbd.ReqDatabaseName, rntbd.TypeString, db))
	b.set(rntbd.StringToken(rntbd.ReqCollectionName, rntbd.TypeString, coll))
	if doc != "" {
		b.set(rntbd.StringToken(rntbd.ReqDocumentName, rntbd.TypeString, doc))
	}
	present := len(info.Body) > 0
	if present && (op == OpRead || op == OpDelete) {
		return rntbd.Request{}, fmt.Errorf("rntbdmap: a %s carries no body, this one has %d bytes", opName(op), len(info.Body))
	}
	if !present && op != OpRead && op != OpDelete {
		return rntbd.Request{}, fmt.Errorf("rntbdmap: a %s needs a body", opName(op))
	}
	b.set(rntbd.BoolToken(rntbd.ReqPayloadPresent, present))

	switch target {
	case Replica:
		if info.ReplicaPath == "" {
			return rntbd.Request{}, errors.New("rntbdmap: a replica request needs the replica path")
		}
		b.set(rntbd.StringToken(rntbd.ReqReplicaPath, rntbd.TypeString, info.ReplicaPath))
		b.set(rntbd.ULongToken(rntbd.ReqTransportRequestID, info.TransportRequestID))
	case Proxy:
		if info.GlobalDatabaseAccountName == "" {
			return rntbd.Request{}, errors.New("rntbdmap: a Gateway 2.0 request needs the global database account name")
		}
		if len(info.EffectivePartitionKey) == 0 {
			return rntbd.Request{}, errors.New("rntbdmap: a Gateway 2.0 point operation needs the item's effective partition key")
		}
		b.set(rntbd.StringToken(rntbd.ReqGlobalDatabaseAccountName, rntbd.TypeString, info.GlobalDatabaseAccountName))
		if info.CollectionRID != "" {
			b.set(rntbd.StringToken(rntbd.ReqCollectionRid, rntbd.TypeString, info.CollectionRID))
		}
		b.set(rntbd.BytesToken(rntbd.ReqEffectivePartitionKey, rntbd.TypeBytes, info.EffectivePartitionKey))
	default:
		return rntbd.Request{}, fmt.Errorf("rntbdmap: unknown target %d", int(target))
	}

	req := rntbd.Request{ResourceType: ResourceDocument, OperationType: op, ActivityID: activity, Tokens: b.ordered()}
	if present {
		req.Payload = info.Body
	}
	return req, nil
}

// ordered lays the tokens out: the proxy's routing order first, then the rest by id, so
// that one request always encodes to the same bytes.
func (b *builder) ordered() []rntbd.Token {
	rank := func(id uint16) int {
		for i, o := range proxyOrder {
			if o == id {
				return i
			}
		}
		return len(proxyOrder) + int(id)
	}
	slices.SortFunc(b.tokens, func(x, y rntbd.Token) int { return rank(x.ID) - rank(y.ID) })
	return b.tokens
}

// documentPath reads "/dbs/{db}/colls/{coll}/docs[/{id}]" into unescaped names.
func documentPath(p string) (db, coll, doc string, err error) {
	segs := strings.Split(strings.Trim(p, "/"), "/")
	if (len(segs) != 5 && len(segs) != 6) || segs[0] != "dbs" || segs[2] != "colls" || segs[4] != "docs" {
		return "", "", "", fmt.Errorf("rntbdmap: %q is not a document path (/dbs/{db}/colls/{coll}/docs[/{id}]): only point operations on items go over RNTBD", p)
	}
	names := make([]string, 0, 3)
	for _, i := range []int{1, 3, 5} {
		if i >= len(segs) {
			break
		}
		name, uerr := url.PathUnescape(segs[i])
		if uerr != nil || name == "" {
			return "", "", "", fmt.Errorf("rntbdmap: path segment %q of %q is not a valid escaped name", segs[i], p)
		}
		names = append(names, name)
	}
	names = append(names, "")
	return names[0], names[1], names[2], nil
}

// operation is the RNTBD operation type of a method on an item (doc set) or on the
// container's items (doc empty).
func operation(method, doc string, h http.Header) (uint16, error) {
	upsert := first(h, keyIsUpsert)
	if upsert != "" && (method != http.MethodPost || doc != "") {
		return 0, fmt.Errorf("rntbdmap: x-ms-documentdb-is-upsert on %s %s: only a POST to a container's items is an upsert", method, itemOrItems(doc))
	}
	switch {
	case method == http.MethodGet && doc != "":
		return OpRead, nil
	case method == http.MethodPost && doc == "":
		if upsert != "" {
			on, err := strconv.ParseBool(upsert)
			if err != nil {
				return 0, fmt.Errorf("rntbdmap: x-ms-documentdb-is-upsert is %q, not true or false", upsert)
			}
			if on {
				return OpUpsert, nil
			}
		}
		return OpCreate, nil
	case method == http.MethodPut && doc != "":
		return OpReplace, nil
	case method == http.MethodDelete && doc != "":
		return OpDelete, nil
	case method == http.MethodPatch && doc != "":
		return OpPatch, nil
	}
	return 0, fmt.Errorf("rntbdmap: %s %s is not a point operation cosmosctl sends over RNTBD (read, create, upsert, replace, delete, patch)", method, itemOrItems(doc))
}

func itemOrItems(doc string) string {
	if doc == "" {
		return "on a container's items"
	}
	return "on an item"
}

func opName(op uint16) string {
	switch op {
	case OpCreate:
		return "create"
	case OpPatch:
		return "patch"
	case OpRead:
		return "read"
	case OpDelete:
		return "delete"
	case OpReplace:
		return "replace"
	case OpUpsert:
		return "upsert"
	}
	return fmt.Sprintf("operation 0x%04X", op)
}

// first is h[key][0] for a canonical key.
func first(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}
