package rntbdserver

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"math"
	"testing"
)

// Independent vectors (REFERENCE-rntbd.md §1.10). None of these bytes were written by
// cosmosctl: the checks below read them with this package's decoder, or, for the
// server's answers, with a decoder written inside the test from the layout alone.

// dotnetMockResponse is base64MockResponse from azure-cosmos-dotnet-v3 main,
// Microsoft.Azure.Cosmos/tests/Microsoft.Azure.Cosmos.Tests/ThinClientTransportSerializerTests.cs:
// "a single base64-encoded RNTBD response representing an HTTP 201 (Created)".
const dotnetMockResponse = "9AEAAMkAAAAIvhHfD23jSaynaR+gyTZ3AAAAAQIAByFUaHUsIDEzIEZlYiAyMDI1IDE0OjI1OjI4LjAyNCBHTVQEAAgmACIwMDAwYWQzZS0wMDAwLTAyMDAtMDAwMC02N2FlNjRjMDAwMDAiDgAIVABkb2N1bWVudFNpemU9NTEyMDA7ZG9jdW1lbnRzU2l6ZT01MjQyODgwMDtkb2N1bWVudHNDb3VudD0tMTtjb2xsZWN0aW9uU2l6ZT01MjQyODgwMDsPAAhBAGRvY3VtZW50U2l6ZT0wO2RvY3VtZW50c1NpemU9MTtkb2N1bWVudHNDb3VudD04O2NvbGxlY3Rpb25TaXplPTM7EAAHBDEuMTkTAAUKAAAAAAAAABUADgzDMAzDMBxAFwAIOgBkYnMvdGhpbi1jbGllbnQtdGVzdC1kYi9jb2xscy90aGluLWNsaWVudC10ZXN0LWNvbnRhaW5lci0xGAAIDABOSDF1QUo2QU5tMD0aAAUJAAAAAAAAAB4AAgMAAAAfAAIEAAAAIQAIAQAwJgACAQAAACkABQkAAAAAAAAAMAACAAAAADUAAgEAAAA6AAUKAAAAAAAAADsABQkAAAAAAAAAPgAIBQAtMSMxMFEADkjhehSuRxBAYwAIAQAweAAF//////////89AQAAeyJpZCI6IjNiMTFiNDM2LTViMTUtNGQwZS1iZWYwLWY1MzVmNjA0MTQxYyIsInBrIjoicGsiLCJuYW1lIjoiODM2MzI0NTA2IiwiZW1haWwiOiJhYmNAZGVmLmNvbSIsImJvZHkiOiJibGFibGEiLCJfcmlkIjoiTkgxdUFKNkFObTBKQUFBQUFBQUFBQT09IiwiX3NlbGYiOiJkYnMvTkgxdUFBPT0vY29sbHMvTkgxdUFKNkFObTA9L2RvY3MvTkgxdUFKNkFObTBKQUFBQUFBQUFBQT09LyIsIl9ldGFnIjoiXCIwMDAwYWQzZS0wMDAwLTAyMDAtMDAwMC02N2FlNjRjMDAwMDBcIiIsIl9hdHRhY2htZW50cyI6ImF0dGFjaG1lbnRzLyIsIl90cyI6MTczOTQ4MjMwNH0="

// rustReadSnapshot is serialize_matches_known_good_snapshot in azure-sdk-for-rust
// sdk/cosmos/azure_data_cosmos_driver/src/driver/transport/rntbd/request.rs: a Document
// Read with PageSize 256, PayloadPresent 1 and body {}.
const rustReadSnapshot = "230000000300030078563412ab90efcd0123456789abcdef0400020001000002000001020000007b7d"

// The token reader on the .NET service-shaped 201: every token and the body line up
// with the frame length, unknown ids (0x0063 and others this server never writes) are
// kept, and the session token comes without a "<range>:" prefix.
func TestDotnetMockResponseTokens(t *testing.T) {
	b, err := base64.StdEncoding.DecodeString(dotnetMockResponse)
	if err != nil {
		t.Fatal(err)
	}
	length := binary.LittleEndian.Uint32(b)
	if length != 500 || binary.LittleEndian.Uint32(b[4:]) != 201 {
		t.Fatalf("length %d status %d, want 500 201", length, binary.LittleEndian.Uint32(b[4:]))
	}
	var act [16]byte
	copy(act[:], b[8:24])
	if got := FormatGUID(act); got != "df11be08-6d0f-49e3-aca7-691fa0c93677" {
		t.Errorf("activity id %s", got)
	}
	toks, err := decodeTokens(b[24:length])
	if err != nil {
		t.Fatal(err)
	}
	byID := map[uint16]Token{}
	for _, tk := range toks {
		byID[tk.ID] = tk
	}
	text := func(id uint16) string { return byID[id].Text() }
	checks := []struct {
		id   uint16
		typ  byte
		want string
	}{
		{respPayloadPresent, TypeByte, "1"},
		{respETag, TypeString, `"0000ad3e-0000-0200-0000-67ae64c00000"`},
		{respLSN, TypeLongLong, "10"},
		{respQuorumAckedLSN, TypeLongLong, "9"},
		{respCurrentWriteQuorum, TypeULong, "3"},
		{respCurrentReplicaSetSize, TypeULong, "4"},
		{respPartitionKeyRangeID, TypeString, "0"},
		{respXPRole, TypeULong, "1"},
		{respGlobalCommittedLSN, TypeLongLong, "9"},
		{respTransportRequestID, TypeULong, "1"},
		{respSessionToken, TypeString, "-1#10"},
		{respPhysicalPartitionID, TypeString, "0"},
		{0x0078, TypeLongLong, "-1"}, // GlobalNRegionCommittedGLSN
		{respStorageQuotaUsage, TypeString, "documentSize=0;documentsSize=1;documentsCount=8;collectionSize=3;"},
	}
	for _, c := range checks {
		tk, ok := byID[c.id]
		if !ok {
			t.Errorf("token 0x%04X missing", c.id)
			continue
		}
		if tk.Type != c.typ || tk.Text() != c.want {
			t.Errorf("token 0x%04X: type 0x%02X %q, want 0x%02X %q", c.id, tk.Type, tk.Text(), c.typ, c.want)
		}
	}
	if f, _ := byID[respRequestCharge].Float(); math.Abs(f-7.0476) > 0.001 {
		t.Errorf("request charge %v (%s)", f, text(respRequestCharge))
	}
	if f, _ := byID[respBackendRequestDuration].Float(); math.Abs(f-4.07) > 0.001 {
		t.Errorf("backend duration %v", f)
	}
	rest := b[length:]
	bodyLen := binary.LittleEndian.Uint32(rest)
	if int(bodyLen) != len(rest)-4 || bodyLen != 317 {
		t.Errorf("body length %d, %d bytes left", bodyLen, len(rest)-4)
	}
}

// GUID byte order: Java RntbdTokenTypeTests.uuidConversion, "generated with .Net
// Guid.ToByteArray".
func TestGUIDOrderJavaVector(t *testing.T) {
	wire := [16]byte{204, 34, 51, 143, 134, 23, 180, 77, 155, 151, 178, 41, 194, 198, 240, 170}
	const text = "8f3322cc-1786-4db4-9b97-b229c2c6f0aa"
	if got := FormatGUID(wire); got != text {
		t.Errorf("FormatGUID = %s, want %s", got, text)
	}
	if g, ok := ParseGUID(text); !ok || g != wire {
		t.Errorf("ParseGUID = %v %v, want %v", g, ok, wire)
	}
}

// The Rust driver's request parses as its authors describe it.
func TestParseRustReadSnapshot(t *testing.T) {
	b, _ := hex.DecodeString(rustReadSnapshot)
	r, n, err := ParseRequest(b)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(b) || r.ResourceType != ResourceDocument || r.OperationType != OpRead {
		t.Fatalf("n %d/%d resource %d op %d", n, len(b), r.ResourceType, r.OperationType)
	}
	if got := FormatGUID(r.ActivityID); got != "12345678-90ab-cdef-0123-456789abcdef" {
		t.Errorf("activity id %s", got)
	}
	if ps, _ := r.Token(reqPageSize); ps.Text() != "256" {
		t.Errorf("page size %q", ps.Text())
	}
	if !r.PayloadPresent || string(r.Body) != "{}" {
		t.Errorf("payload %v body %q", r.PayloadPresent, r.Body)
	}
	for cut := 0; cut < len(b); cut++ {
		if _, _, err := ParseRequest(b[:cut]); err != ErrShort {
			t.Errorf("cut at %d: err %v, want ErrShort", cut, err)
		}
	}
}
