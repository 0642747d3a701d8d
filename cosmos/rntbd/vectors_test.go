package rntbd

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math"
	"testing"

	"github.com/google/uuid"
)

// The independent vectors: bytes written by other implementations, quoted as data.

// dotnetThinClient201 is base64MockResponse, "a single base64-encoded RNTBD response
// representing an HTTP 201 (Created) in RNTBD format", from
// Azure/azure-cosmos-dotnet-v3 Microsoft.Azure.Cosmos/tests/Microsoft.Azure.Cosmos.Tests/ThinClientTransportSerializerTests.cs
// at commit 5a66a86279d464b7f8c938c114502e82dd82f075 (the same string is in that
// repository's ThinClientStoreClientTests.cs). The test file does not say how it was
// recorded; its quorum, replica-set and quota tokens look service-produced.
const dotnetThinClient201 = "9AEAAMkAAAAIvhHfD23jSaynaR+gyTZ3AAAAAQIAByFUaHUsIDEzIEZlYiAyMDI1IDE0OjI1OjI4LjAyNCBHTVQEAAgmACIwMDAwYWQzZS0wMDAwLTAyMDAtMDAwMC02N2FlNjRjMDAwMDAiDgAIVABkb2N1bWVudFNpemU9NTEyMDA7ZG9jdW1lbnRzU2l6ZT01MjQyODgwMDtkb2N1bWVudHNDb3VudD0tMTtjb2xsZWN0aW9uU2l6ZT01MjQyODgwMDsPAAhBAGRvY3VtZW50U2l6ZT0wO2RvY3VtZW50c1NpemU9MTtkb2N1bWVudHNDb3VudD04O2NvbGxlY3Rpb25TaXplPTM7EAAHBDEuMTkTAAUKAAAAAAAAABUADgzDMAzDMBxAFwAIOgBkYnMvdGhpbi1jbGllbnQtdGVzdC1kYi9jb2xscy90aGluLWNsaWVudC10ZXN0LWNvbnRhaW5lci0xGAAIDABOSDF1QUo2QU5tMD0aAAUJAAAAAAAAAB4AAgMAAAAfAAIEAAAAIQAIAQAwJgACAQAAACkABQkAAAAAAAAAMAACAAAAADUAAgEAAAA6AAUKAAAAAAAAADsABQkAAAAAAAAAPgAIBQAtMSMxMFEADkjhehSuRxBAYwAIAQAweAAF//////////89AQAAeyJpZCI6IjNiMTFiNDM2LTViMTUtNGQwZS1iZWYwLWY1MzVmNjA0MTQxYyIsInBrIjoicGsiLCJuYW1lIjoiODM2MzI0NTA2IiwiZW1haWwiOiJhYmNAZGVmLmNvbSIsImJvZHkiOiJibGFibGEiLCJfcmlkIjoiTkgxdUFKNkFObTBKQUFBQUFBQUFBQT09IiwiX3NlbGYiOiJkYnMvTkgxdUFBPT0vY29sbHMvTkgxdUFKNkFObTA9L2RvY3MvTkgxdUFKNkFObTBKQUFBQUFBQUFBQT09LyIsIl9ldGFnIjoiXCIwMDAwYWQzZS0wMDAwLTAyMDAtMDAwMC02N2FlNjRjMDAwMDBcIiIsIl9hdHRhY2htZW50cyI6ImF0dGFjaG1lbnRzLyIsIl90cyI6MTczOTQ4MjMwNH0="

// javaGUIDText and javaGUIDWire are the uuidConversion vector ("Guid and expected
// byte-array generated with .Net Guid.ToByteArray is the expected binary format in the
// backend") from Azure/azure-sdk-for-java
// sdk/cosmos/azure-cosmos-tests/src/test/java/com/azure/cosmos/implementation/directconnectivity/rntbd/RntbdTokenTypeTests.java
// at commit 18908b634c941591c4e1548aaac4ca5d190953b3.
const javaGUIDText = "8f3322cc-1786-4db4-9b97-b229c2c6f0aa"

var javaGUIDWire = [16]byte{204, 34, 51, 143, 134, 23, 180, 77, 155, 151, 178, 41, 194, 198, 240, 170}

// rustReadSnapshot is the expected hex of serialize_matches_known_good_snapshot — a
// Document Read with activity id 12345678-90ab-cdef-0123-456789abcdef, tokens PageSize
// (0x0004 ULong 256) then PayloadPresent (0x0002 Byte 1), body "{}" — from
// Azure/azure-sdk-for-rust sdk/cosmos/azure_data_cosmos_driver/src/driver/transport/rntbd/request.rs
// at commit dc436a70ab8f1be54924380a8daf7c356ebd189b.
const rustReadSnapshot = "230000000300030078563412ab90efcd0123456789abcdef0400020001000002000001020000007b7d"

func dotnet201(t testing.TB) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(dotnetThinClient201)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func rustRead(t testing.TB) []byte {
	t.Helper()
	b, err := hex.DecodeString(rustReadSnapshot)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDotNetThinClient201DecodesAndReencodes(t *testing.T) {
	raw := dotnet201(t)
	if len(raw) != 821 {
		t.Fatalf("vector is %d bytes, want 821", len(raw))
	}
	r, n, err := DecodeResponse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(raw) {
		t.Errorf("consumed %d of %d bytes", n, len(raw))
	}
	if r.Status != 201 {
		t.Errorf("status %d, want 201", r.Status)
	}
	// The raw bytes 08be11df 0f6d e349 aca7… read as a .NET Guid.
	if want := uuid.MustParse("df11be08-6d0f-49e3-aca7-691fa0c93677"); r.ActivityID != want {
		t.Errorf("activity id %s, want %s", r.ActivityID, want)
	}

	uints := map[uint16]uint64{
		RespPayloadPresent: 1, RespCurrentWriteQuorum: 3, RespCurrentReplicaSetSize: 4,
		RespXPRole: 1, RespTransportRequestID: 1, RespNumberOfReadRegions: 0,
	}
	for id, want := range uints {
		if got, ok := mustToken(t, r.Tokens, id).Uint(); !ok || got != want {
			t.Errorf("token 0x%04X = %d, %v; want %d", id, got, ok, want)
		}
	}
	ints := map[uint16]int64{
		RespLSN: 10, RespQuorumAckedLSN: 9, RespGlobalCommittedLSN: 9,
		RespLocalLSN: 10, RespQuorumAckedLocalLSN: 9,
		0x0078: -1, // not in Java's list; .NET calls it GlobalNRegionCommittedGLSN
	}
	for id, want := range ints {
		if got, ok := mustToken(t, r.Tokens, id).Int(); !ok || got != want {
			t.Errorf("token 0x%04X = %d, %v; want %d", id, got, ok, want)
		}
	}
	strs := map[uint16]string{
		RespLastStateChangeDateTime:   "Thu, 13 Feb 2025 14:25:28.024 GMT",
		RespETag:                      `"0000ad3e-0000-0200-0000-67ae64c00000"`,
		RespStorageMaxResoureQuota:    "documentSize=51200;documentsSize=52428800;documentsCount=-1;collectionSize=52428800;",
		RespStorageResourceQuotaUsage: "documentSize=0;documentsSize=1;documentsCount=8;collectionSize=3;",
		RespSchemaVersion:             "1.19",
		RespOwnerFullName:             "dbs/thin-client-test-db/colls/thin-client-test-container-1",
		RespOwnerID:                   "NH1uAJ6ANm0=",
		RespPartitionKeyRangeID:       "0",
		RespSessionToken:              "-1#10",
		0x0063:                        "0", // unknown to Java; .NET's PhysicalPartitionId
	}
	for id, want := range strs {
		if got, ok := mustToken(t, r.Tokens, id).Str(); !ok || got != want {
			t.Errorf("token 0x%04X = %q, %v; want %q", id, got, ok, want)
		}
	}
	floats := map[uint16]float64{RespRequestCharge: 7.0476, RespBackendRequestDurationMilliseconds: 4.07}
	for id, want := range floats {
		if got, ok := mustToken(t, r.Tokens, id).Float(); !ok || math.Abs(got-want) > 0.0001 {
			t.Errorf("token 0x%04X = %v, %v; want about %v", id, got, ok, want)
		}
	}
	if len(r.Tokens) != 24 {
		t.Errorf("%d tokens, want 24", len(r.Tokens))
	}

	if len(r.Payload) != 317 {
		t.Fatalf("payload is %d bytes, want 317", len(r.Payload))
	}
	var doc struct {
		ID string `json:"id"`
		TS int64  `json:"_ts"`
	}
	if err := json.Unmarshal(r.Payload, &doc); err != nil {
		t.Fatalf("payload is not JSON: %v", err)
	}
	if doc.ID != "3b11b436-5b15-4d0e-bef0-f535f604141c" || doc.TS != 1739482304 {
		t.Errorf("payload id %q _ts %d", doc.ID, doc.TS)
	}

	again, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, raw) {
		t.Errorf("re-encoded response differs from the vector:\n got %x\nwant %x", again, raw)
	}
}

func mustToken(t *testing.T, tokens []Token, id uint16) Token {
	t.Helper()
	tok, ok := Find(tokens, id)
	if !ok {
		t.Errorf("token 0x%04X missing", id)
	}
	return tok
}

func TestJavaPinnedDotNetGUIDByteOrder(t *testing.T) {
	id := uuid.MustParse(javaGUIDText)
	if got := GUIDToWire(id); got != javaGUIDWire {
		t.Errorf("GUIDToWire(%s) = %v, want %v", id, got, javaGUIDWire)
	}
	if got := GUIDFromWire(javaGUIDWire); got != id {
		t.Errorf("GUIDFromWire = %s, want %s", got, id)
	}
	// The same bytes as an activity id in a frame and as a Guid token.
	r := Response{Status: 200, ActivityID: id, Tokens: []Token{BoolToken(RespPayloadPresent, false), GUIDToken(0x7777, id)}}
	b, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b[8:24], javaGUIDWire[:]) {
		t.Errorf("activity id on the wire %v, want %v", b[8:24], javaGUIDWire)
	}
	if !bytes.Equal(b[len(b)-16:], javaGUIDWire[:]) {
		t.Errorf("Guid token on the wire %v, want %v", b[len(b)-16:], javaGUIDWire)
	}
}

func TestRustKnownGoodRequestSnapshot(t *testing.T) {
	raw := rustRead(t)
	r, n, err := DecodeRequest(raw)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(raw) {
		t.Errorf("consumed %d of %d bytes", n, len(raw))
	}
	want := Request{
		ResourceType:  0x0003, // Document
		OperationType: 0x0003, // Read
		ActivityID:    uuid.MustParse("12345678-90ab-cdef-0123-456789abcdef"),
		Tokens:        []Token{ULongToken(ReqPageSize, 256), BoolToken(ReqPayloadPresent, true)},
		Payload:       []byte("{}"),
	}
	if r.ResourceType != want.ResourceType || r.OperationType != want.OperationType || r.ActivityID != want.ActivityID {
		t.Errorf("header = %#04x %#04x %s", r.ResourceType, r.OperationType, r.ActivityID)
	}
	if len(r.Tokens) != 2 {
		t.Fatalf("%d tokens, want 2", len(r.Tokens))
	}
	if v, _ := r.Tokens[0].Uint(); r.Tokens[0].ID != ReqPageSize || v != 256 {
		t.Errorf("first token %+v", r.Tokens[0])
	}
	if string(r.Payload) != "{}" {
		t.Errorf("payload %q", r.Payload)
	}
	for name, req := range map[string]Request{"decoded": r, "built from its fields": want} {
		b, err := req.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(b); got != rustReadSnapshot {
			t.Errorf("%s request encodes to\n %s\nwant\n %s", name, got, rustReadSnapshot)
		}
	}
}
