package rntbdmap_test

import (
	"bytes"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/cosmos/rntbd"
	"github.com/cosmosctl/cosmosctl/cosmos/rntbdmap"
	"github.com/google/uuid"
)

const activity = "12345678-90ab-cdef-0123-456789abcdef"

// signed is the header set cosmos.Transport.Do gives a point operation, plus extra.
func signed(extra ...string) http.Header {
	h := http.Header{}
	h.Set("Authorization", "type%3dmaster%26ver%3d1.0%26sig%3dabc")
	h.Set("x-ms-date", "Sun, 06 Dec 2026 22:00:00 GMT")
	h.Set("x-ms-version", cosmos.APIVersion)
	h.Set("x-ms-cosmos-sdk-supportedcapabilities", cosmos.SupportedCapabilities)
	h.Set("x-ms-activity-id", activity)
	h.Set("User-Agent", "cosmosctl/test")
	h.Set("x-ms-documentdb-partitionkey", `["tenant-1"]`)
	for i := 0; i+1 < len(extra); i += 2 {
		h.Set(extra[i], extra[i+1])
	}
	return h
}

func replicaInfo(method, path string, body []byte, h http.Header) rntbdmap.RequestInfo {
	return rntbdmap.RequestInfo{
		Method: method, Path: path, Header: h, Body: body,
		ReplicaPath: "/apps/acct/services/coll/partitions/0/replicas/1p/", TransportRequestID: 7,
	}
}

func tokenStr(t *testing.T, r rntbd.Request, id uint16) string {
	t.Helper()
	tok, ok := r.Token(id)
	if !ok {
		t.Fatalf("token 0x%04X missing", id)
	}
	s, ok := tok.Str()
	if !ok {
		t.Fatalf("token 0x%04X is %s, not a string", id, tok.Type)
	}
	return s
}

func tokenUint(t *testing.T, r rntbd.Request, id uint16) uint64 {
	t.Helper()
	tok, ok := r.Token(id)
	if !ok {
		t.Fatalf("token 0x%04X missing", id)
	}
	v, ok := tok.Uint()
	if !ok {
		t.Fatalf("token 0x%04X is %s, not unsigned", id, tok.Type)
	}
	return v
}

func TestPointReadForReplica(t *testing.T) {
	h := signed("x-ms-consistency-level", "Eventual", "x-ms-session-token", "0:-1#12", "If-None-Match", `"etag-1"`)
	r, err := rntbdmap.Request(replicaInfo(http.MethodGet, "/dbs/my%20db/colls/c1/docs/a%2Fb", nil, h), rntbdmap.Replica)
	if err != nil {
		t.Fatal(err)
	}
	if r.ResourceType != 0x0003 || r.OperationType != 0x0003 {
		t.Errorf("resource/operation 0x%04X/0x%04X, want Document/Read", r.ResourceType, r.OperationType)
	}
	if r.ActivityID != uuid.MustParse(activity) {
		t.Errorf("activity id %s", r.ActivityID)
	}
	for id, want := range map[uint16]string{
		rntbd.ReqAuthorizationToken: "type%3dmaster%26ver%3d1.0%26sig%3dabc",
		rntbd.ReqDate:               "Sun, 06 Dec 2026 22:00:00 GMT",
		rntbd.ReqDatabaseName:       "my db", // names unescaped
		rntbd.ReqCollectionName:     "c1",
		rntbd.ReqDocumentName:       "a/b",
		rntbd.ReqPartitionKey:       `["tenant-1"]`,
		rntbd.ReqSessionToken:       "0:-1#12",
		rntbd.ReqMatch:              `"etag-1"`,
		rntbd.ReqReplicaPath:        "/apps/acct/services/coll/partitions/0/replicas/1p/",
	} {
		if got := tokenStr(t, r, id); got != want {
			t.Errorf("token 0x%04X = %q, want %q", id, got, want)
		}
	}
	for id, want := range map[uint16]uint64{
		rntbd.ReqPayloadPresent:           0,
		rntbd.ReqTransportRequestID:       7,
		rntbd.ReqConsistencyLevel:         3, // Eventual
		rntbd.ReqSDKSupportedCapabilities: 1,
	} {
		if got := tokenUint(t, r, id); got != want {
			t.Errorf("token 0x%04X = %d, want %d", id, got, want)
		}
	}
	// The version and user agent travel in the context negotiation on a direct
	// connection, not in each request.
	for _, id := range []uint16{rntbd.ReqClientVersion, rntbd.ReqGlobalDatabaseAccountName, rntbd.ReqEffectivePartitionKey} {
		if _, ok := r.Token(id); ok {
			t.Errorf("token 0x%04X set on a replica request", id)
		}
	}
	// It encodes, and decodes to the same request.
	wire, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, n, err := rntbd.DecodeRequest(wire)
	if err != nil || n != len(wire) {
		t.Fatalf("decode: %v (%d of %d bytes)", err, n, len(wire))
	}
	again, _ := back.Encode()
	if !bytes.Equal(wire, again) {
		t.Error("re-encoding differs")
	}
}

func TestOperationTypes(t *testing.T) {
	body := []byte(`{"id":"x","pk":"tenant-1"}`)
	tests := []struct {
		name   string
		method string
		path   string
		body   []byte
		extra  []string
		want   uint16
	}{
		{"GET on an item is a read", http.MethodGet, "/dbs/d/colls/c/docs/x", nil, nil, rntbdmap.OpRead},
		{"POST to the items is a create", http.MethodPost, "/dbs/d/colls/c/docs", body, nil, rntbdmap.OpCreate},
		{"POST with is-upsert is an upsert", http.MethodPost, "/dbs/d/colls/c/docs", body, []string{"x-ms-documentdb-is-upsert", "true"}, rntbdmap.OpUpsert},
		{"PUT on an item is a replace", http.MethodPut, "/dbs/d/colls/c/docs/x", body, []string{"If-Match", `"e"`}, rntbdmap.OpReplace},
		{"DELETE on an item is a delete", http.MethodDelete, "/dbs/d/colls/c/docs/x", nil, nil, rntbdmap.OpDelete},
		{"PATCH on an item is a patch", http.MethodPatch, "/dbs/d/colls/c/docs/x", []byte(`{"operations":[]}`), []string{"Content-Type", "application/json_patch+json"}, rntbdmap.OpPatch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := rntbdmap.Request(replicaInfo(tc.method, tc.path, tc.body, signed(tc.extra...)), rntbdmap.Replica)
			if err != nil {
				t.Fatal(err)
			}
			if r.OperationType != tc.want {
				t.Errorf("operation 0x%04X, want 0x%04X", r.OperationType, tc.want)
			}
			present := tokenUint(t, r, rntbd.ReqPayloadPresent)
			if (present == 1) != (len(tc.body) > 0) || !bytes.Equal(r.Payload, tc.body) {
				t.Errorf("PayloadPresent %d with payload %q, want the body %q", present, r.Payload, tc.body)
			}
			_, hasDoc := r.Token(rntbd.ReqDocumentName)
			if hasDoc == (tc.method == http.MethodPost) {
				t.Errorf("DocumentName present = %v on %s", hasDoc, tc.method)
			}
			if _, err := r.Encode(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestWriteHeaders(t *testing.T) {
	h := signed("Prefer", cosmos.PreferMinimal, "x-ms-cosmos-allow-tentative-writes", "true", "If-Match", `"e1"`, "Content-Type", "application/json")
	r, err := rntbdmap.Request(replicaInfo(http.MethodPut, "/dbs/d/colls/c/docs/x", []byte(`{"id":"x"}`), h), rntbdmap.Replica)
	if err != nil {
		t.Fatal(err)
	}
	if got := tokenUint(t, r, rntbd.ReqReturnPreference); got != 1 {
		t.Errorf("ReturnPreference %d, want 1 (minimal)", got)
	}
	if got := tokenUint(t, r, rntbd.ReqAllowTentativeWrites); got != 1 {
		t.Errorf("AllowTentativeWrites %d, want 1", got)
	}
	if got := tokenStr(t, r, rntbd.ReqMatch); got != `"e1"` {
		t.Errorf("Match %q", got)
	}
	// Without Prefer, no ReturnPreference: sent unconditionally it made 0-byte documents.
	r, err = rntbdmap.Request(replicaInfo(http.MethodPost, "/dbs/d/colls/c/docs", []byte(`{"id":"x"}`), signed()), rntbdmap.Replica)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Token(rntbd.ReqReturnPreference); ok {
		t.Error("ReturnPreference sent without Prefer")
	}
}

func TestRequestRefusals(t *testing.T) {
	body := []byte(`{"id":"x"}`)
	tests := []struct {
		name   string
		info   rntbdmap.RequestInfo
		target rntbdmap.Target
		want   string
	}{
		{"a header with no token is named", replicaInfo(http.MethodGet, "/dbs/d/colls/c/docs/x", nil, signed("x-ms-max-item-count", "10")), rntbdmap.Replica, "X-Ms-Max-Item-Count has no RNTBD token"},
		{"a query is not a point operation", replicaInfo(http.MethodPost, "/dbs/d/colls/c/docs", body, signed("x-ms-documentdb-isquery", "true")), rntbdmap.Replica, "X-Ms-Documentdb-Isquery has no RNTBD token"},
		{"a container read is not a document path", replicaInfo(http.MethodGet, "/dbs/d/colls/c", nil, signed()), rntbdmap.Replica, "not a document path"},
		{"a feed read is not a point operation", replicaInfo(http.MethodGet, "/dbs/d/colls/c/docs", nil, signed()), rntbdmap.Replica, "GET on a container's items is not a point operation"},
		{"If-None-Match on a write has nowhere to go", replicaInfo(http.MethodPut, "/dbs/d/colls/c/docs/x", body, signed("If-None-Match", "*")), rntbdmap.Replica, "the Match token carries If-Match here"},
		{"If-Match on a read has nowhere to go", replicaInfo(http.MethodGet, "/dbs/d/colls/c/docs/x", nil, signed("If-Match", `"e"`)), rntbdmap.Replica, "the Match token carries If-None-Match here"},
		{"an unknown consistency level", replicaInfo(http.MethodGet, "/dbs/d/colls/c/docs/x", nil, signed("x-ms-consistency-level", "Linearizable")), rntbdmap.Replica, "not Strong, BoundedStaleness"},
		{"capabilities that are not a number", replicaInfo(http.MethodGet, "/dbs/d/colls/c/docs/x", nil, signed("x-ms-cosmos-sdk-supportedcapabilities", "merge")), rntbdmap.Replica, "not a decimal u32"},
		{"a read with a body", replicaInfo(http.MethodGet, "/dbs/d/colls/c/docs/x", body, signed()), rntbdmap.Replica, "a read carries no body"},
		{"a create without a body", replicaInfo(http.MethodPost, "/dbs/d/colls/c/docs", nil, signed()), rntbdmap.Replica, "a create needs a body"},
		{"is-upsert on a replace", replicaInfo(http.MethodPut, "/dbs/d/colls/c/docs/x", body, signed("x-ms-documentdb-is-upsert", "true")), rntbdmap.Replica, "only a POST to a container's items is an upsert"},
		{"an activity id that is not a GUID", replicaInfo(http.MethodGet, "/dbs/d/colls/c/docs/x", nil, signed("x-ms-activity-id", "nope")), rntbdmap.Replica, "is not a GUID"},
		{"a replica request without its path", rntbdmap.RequestInfo{Method: http.MethodGet, Path: "/dbs/d/colls/c/docs/x", Header: signed()}, rntbdmap.Replica, "needs the replica path"},
		{"a proxy request without the account", rntbdmap.RequestInfo{Method: http.MethodGet, Path: "/dbs/d/colls/c/docs/x", Header: signed(), EffectivePartitionKey: []byte{1}}, rntbdmap.Proxy, "global database account name"},
		{"a proxy request without the EPK", rntbdmap.RequestInfo{Method: http.MethodGet, Path: "/dbs/d/colls/c/docs/x", Header: signed(), GlobalDatabaseAccountName: "acct"}, rntbdmap.Proxy, "effective partition key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rntbdmap.Request(tc.info, tc.target)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestProxyRequestOrdersRoutingTokensFirst(t *testing.T) {
	epk := []byte{0x2D, 0x1C, 0x9E}
	info := rntbdmap.RequestInfo{
		Method: http.MethodGet, Path: "/dbs/d/colls/c/docs/x", Header: signed("x-ms-consistency-level", "Session"),
		GlobalDatabaseAccountName: "acct", EffectivePartitionKey: epk,
	}
	r, err := rntbdmap.Request(info, rntbdmap.Proxy)
	if err != nil {
		t.Fatal(err)
	}
	// Java thinClientHeadersInOrderList, restricted to the tokens a point read has.
	lead := []uint16{
		rntbd.ReqEffectivePartitionKey, rntbd.ReqGlobalDatabaseAccountName, rntbd.ReqDatabaseName,
		rntbd.ReqCollectionName, rntbd.ReqPayloadPresent, rntbd.ReqDocumentName,
		rntbd.ReqAuthorizationToken, rntbd.ReqDate,
	}
	var ids []uint16
	for _, tok := range r.Tokens {
		ids = append(ids, tok.ID)
	}
	if len(ids) < len(lead) || !slices.Equal(ids[:len(lead)], lead) {
		t.Errorf("token order %04X, want it to start %04X", ids, lead)
	}
	for _, id := range []uint16{rntbd.ReqTransportRequestID, rntbd.ReqReplicaPath} {
		if _, ok := r.Token(id); ok {
			t.Errorf("token 0x%04X on a proxy request: the proxy assigns its own", id)
		}
	}
	tok, _ := r.Token(rntbd.ReqEffectivePartitionKey)
	if tok.Type != rntbd.TypeBytes || !bytes.Equal(tok.Value, epk) {
		t.Errorf("EffectivePartitionKey %s %x, want Bytes %x", tok.Type, tok.Value, epk)
	}
	// Gateway 2.0 has no context negotiation: the version rides in each request.
	if got := tokenStr(t, r, rntbd.ReqClientVersion); got != cosmos.APIVersion {
		t.Errorf("ClientVersion %q, want %q", got, cosmos.APIVersion)
	}
	if _, err := r.Encode(); err != nil {
		t.Fatal(err)
	}
}

// Every header the engine and the transport put on a point operation has a decision:
// a token, or a documented drop. A header added to either later fails here first.
func TestEveryPointOperationHeaderHasADecision(t *testing.T) {
	engineHeaders := []string{
		// cosmos.Transport.Do
		cosmos.HeaderDate, cosmos.HeaderVersion, cosmos.HeaderSDKSupportedCapabilities,
		cosmos.HeaderActivityID, cosmos.HeaderAuthorization, "User-Agent", "Content-Type",
		// engine request.go buildKindRequest and consistency.go setConsistency
		cosmos.HeaderPartitionKey, cosmos.HeaderIsUpsert, cosmos.HeaderPrefer,
		cosmos.HeaderAllowTentativeWrites, cosmos.HeaderIfMatch, cosmos.HeaderConsistencyLevel,
		// what a session-aware caller would add, and the REST range header
		cosmos.HeaderSessionToken, cosmos.HeaderIfNoneMatch, cosmos.HeaderPartitionKeyRangeID,
	}
	mapped := rntbdmap.MappedHeaders()
	dropped := rntbdmap.DroppedHeaders()
	for _, h := range engineHeaders {
		k := http.CanonicalHeaderKey(h)
		if !slices.Contains(mapped, k) && dropped[k] == "" {
			t.Errorf("header %s has no decision in rntbdmap", k)
		}
	}
}
