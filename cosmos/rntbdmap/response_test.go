package rntbdmap_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/cosmos/rntbd"
	"github.com/cosmosctl/cosmosctl/cosmos/rntbdmap"
	"github.com/google/uuid"
)

// dotnetThinClient201 is base64MockResponse, "a single base64-encoded RNTBD response
// representing an HTTP 201 (Created) in RNTBD format", from
// Azure/azure-cosmos-dotnet-v3 Microsoft.Azure.Cosmos/tests/Microsoft.Azure.Cosmos.Tests/ThinClientTransportSerializerTests.cs
// at commit 5a66a86279d464b7f8c938c114502e82dd82f075 (quoted as data, as in
// cosmos/rntbd/vectors_test.go).
const dotnetThinClient201 = "9AEAAMkAAAAIvhHfD23jSaynaR+gyTZ3AAAAAQIAByFUaHUsIDEzIEZlYiAyMDI1IDE0OjI1OjI4LjAyNCBHTVQEAAgmACIwMDAwYWQzZS0wMDAwLTAyMDAtMDAwMC02N2FlNjRjMDAwMDAiDgAIVABkb2N1bWVudFNpemU9NTEyMDA7ZG9jdW1lbnRzU2l6ZT01MjQyODgwMDtkb2N1bWVudHNDb3VudD0tMTtjb2xsZWN0aW9uU2l6ZT01MjQyODgwMDsPAAhBAGRvY3VtZW50U2l6ZT0wO2RvY3VtZW50c1NpemU9MTtkb2N1bWVudHNDb3VudD04O2NvbGxlY3Rpb25TaXplPTM7EAAHBDEuMTkTAAUKAAAAAAAAABUADgzDMAzDMBxAFwAIOgBkYnMvdGhpbi1jbGllbnQtdGVzdC1kYi9jb2xscy90aGluLWNsaWVudC10ZXN0LWNvbnRhaW5lci0xGAAIDABOSDF1QUo2QU5tMD0aAAUJAAAAAAAAAB4AAgMAAAAfAAIEAAAAIQAIAQAwJgACAQAAACkABQkAAAAAAAAAMAACAAAAADUAAgEAAAA6AAUKAAAAAAAAADsABQkAAAAAAAAAPgAIBQAtMSMxMFEADkjhehSuRxBAYwAIAQAweAAF//////////89AQAAeyJpZCI6IjNiMTFiNDM2LTViMTUtNGQwZS1iZWYwLWY1MzVmNjA0MTQxYyIsInBrIjoicGsiLCJuYW1lIjoiODM2MzI0NTA2IiwiZW1haWwiOiJhYmNAZGVmLmNvbSIsImJvZHkiOiJibGFibGEiLCJfcmlkIjoiTkgxdUFKNkFObTBKQUFBQUFBQUFBQT09IiwiX3NlbGYiOiJkYnMvTkgxdUFBPT0vY29sbHMvTkgxdUFKNkFObTA9L2RvY3MvTkgxdUFKNkFObTBKQUFBQUFBQUFBQT09LyIsIl9ldGFnIjoiXCIwMDAwYWQzZS0wMDAwLTAyMDAtMDAwMC02N2FlNjRjMDAwMDBcIiIsIl9hdHRhY2htZW50cyI6ImF0dGFjaG1lbnRzLyIsIl90cyI6MTczOTQ4MjMwNH0="

func TestDotNet201VectorMapsToRESTHeaders(t *testing.T) {
	raw, err := base64.StdEncoding.DecodeString(dotnetThinClient201)
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := rntbd.DecodeResponse(raw)
	if err != nil {
		t.Fatal(err)
	}
	status, h, body := rntbdmap.Response(r)
	if status != 201 {
		t.Errorf("status %d, want 201", status)
	}
	want := map[string]string{
		"x-ms-activity-id":                    "df11be08-6d0f-49e3-aca7-691fa0c93677",
		"etag":                                `"0000ad3e-0000-0200-0000-67ae64c00000"`,
		"lsn":                                 "10",
		"x-ms-quorum-acked-lsn":               "9",
		"x-ms-global-committed-lsn":           "9",
		"x-ms-cosmos-llsn":                    "10",
		"x-ms-cosmos-quorum-acked-llsn":       "9",
		"x-ms-current-write-quorum":           "3",
		"x-ms-current-replica-set-size":       "4",
		"x-ms-xp-role":                        "1",
		"x-ms-number-of-read-regions":         "0",
		"x-ms-documentdb-partitionkeyrangeid": "0",
		"x-ms-cosmos-physical-partition-id":   "0",
		// The token is "-1#10"; the range id is prepended as .NET does for proxy answers.
		"x-ms-session-token":         "0:-1#10",
		"x-ms-request-duration-ms":   "4.07",
		"x-ms-schemaversion":         "1.19",
		"x-ms-last-state-change-utc": "Thu, 13 Feb 2025 14:25:28.024 GMT",
		"x-ms-resource-usage":        "documentSize=0;documentsSize=1;documentsCount=8;collectionSize=3;",
		"x-ms-resource-quota":        "documentSize=51200;documentsSize=52428800;documentsCount=-1;collectionSize=52428800;",
		"x-ms-alt-content-path":      "dbs/thin-client-test-db/colls/thin-client-test-container-1",
		"x-ms-content-path":          "NH1uAJ6ANm0=",
	}
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	// The charge is a double on the wire; the header is its shortest decimal form.
	charge, err := strconv.ParseFloat(h.Get("x-ms-request-charge"), 64)
	if err != nil || charge < 7.04 || charge > 7.06 {
		t.Errorf("x-ms-request-charge = %q, want about 7.05", h.Get("x-ms-request-charge"))
	}
	for _, k := range []string{"X-Ms-Transport-Request-Id", "X-Ms-Payload-Present"} {
		if _, ok := h[k]; ok {
			t.Errorf("connection token leaked as header %s", k)
		}
	}
	// Every key is canonical, as http.Header.Get expects.
	for k := range h {
		if k != http.CanonicalHeaderKey(k) {
			t.Errorf("header key %q is not canonical", k)
		}
	}
	var doc struct {
		ID string `json:"id"`
		TS int64  `json:"_ts"`
	}
	if err := json.Unmarshal(body, &doc); err != nil || doc.ID != "3b11b436-5b15-4d0e-bef0-f535f604141c" || doc.TS != 1739482304 {
		t.Errorf("body %q (%v), want the created item", body, err)
	}

	// And the REST reading cosmosctl makes of it: placement and parsed headers.
	resp := &cosmos.Response{StatusCode: status, Header: h, SessionToken: h.Get(cosmos.HeaderSessionToken)}
	p := resp.Placement()
	if p.PartitionKeyRangeID != "0" || p.PhysicalPartitionID != "0" || p.LSN != 10 {
		t.Errorf("placement %+v, want range 0, physical partition 0, LSN 10", p)
	}
	if d := cosmos.ParseRequestDuration(h.Get(cosmos.HeaderRequestDuration)); d.Microseconds() != 4070 {
		t.Errorf("request duration %s, want 4.07ms", d)
	}
}

func TestResponseMapping(t *testing.T) {
	act := uuid.MustParse("8f3322cc-1786-4db4-9b97-b229c2c6f0aa")
	tests := []struct {
		name   string
		tokens []rntbd.Token
		want   map[string]string
		absent []string
	}{
		{
			name: "a 429 says its substatus and how long to wait",
			tokens: []rntbd.Token{
				rntbd.BoolToken(rntbd.RespPayloadPresent, false),
				rntbd.ULongToken(rntbd.RespSubStatus, 3200),
				rntbd.ULongToken(rntbd.RespRetryAfterMilliseconds, 250),
			},
			want: map[string]string{"x-ms-substatus": "3200", "x-ms-retry-after-ms": "250", "x-ms-activity-id": act.String()},
		},
		{
			name: "a session token without a range id stays as it came",
			tokens: []rntbd.Token{
				rntbd.BoolToken(rntbd.RespPayloadPresent, false),
				rntbd.StringToken(rntbd.RespSessionToken, rntbd.TypeString, "-1#7"),
			},
			want: map[string]string{"x-ms-session-token": "-1#7"},
		},
		{
			name: "a session token that already names its range is not prefixed twice",
			tokens: []rntbd.Token{
				rntbd.BoolToken(rntbd.RespPayloadPresent, false),
				rntbd.StringToken(rntbd.RespPartitionKeyRangeID, rntbd.TypeString, "3"),
				rntbd.StringToken(rntbd.RespSessionToken, rntbd.TypeString, "3:-1#7"),
			},
			want: map[string]string{"x-ms-session-token": "3:-1#7"},
		},
		{
			name: "a known token with another type than its own is left out, not misread",
			tokens: []rntbd.Token{
				rntbd.BoolToken(rntbd.RespPayloadPresent, false),
				rntbd.StringToken(rntbd.RespLSN, rntbd.TypeString, "12"),
			},
			absent: []string{"lsn"},
		},
		{
			name: "unknown tokens and connection tokens are dropped",
			tokens: []rntbd.Token{
				rntbd.BoolToken(rntbd.RespPayloadPresent, false),
				rntbd.ULongToken(rntbd.RespTransportRequestID, 9),
				rntbd.BoolToken(rntbd.RespDisableRntbdChannel, true),
				rntbd.StringToken(0x7777, rntbd.TypeString, "future"),
				rntbd.ULongToken(rntbd.RespItemCount, 1),
			},
			want: map[string]string{"x-ms-item-count": "1"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, h, _ := rntbdmap.Response(rntbd.Response{Status: 429, ActivityID: act, Tokens: tc.tokens})
			if status != 429 {
				t.Errorf("status %d", status)
			}
			for k, v := range tc.want {
				if got := h.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			for _, k := range tc.absent {
				if v, ok := h[http.CanonicalHeaderKey(k)]; ok {
					t.Errorf("%s = %q, want absent", k, v)
				}
			}
		})
	}
}
