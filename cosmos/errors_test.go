package cosmos

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestErrorFromResponseReadsEveryField(t *testing.T) {
	h := http.Header{}
	h.Set(HeaderSubStatus, "3")
	h.Set(HeaderActivityID, "a1")
	h.Set(HeaderRequestCharge, "1.24")
	h.Set(HeaderRetryAfterMs, "150")
	body := []byte(`{"code":"Forbidden","message":"The requested operation cannot be performed at this region\r\nActivityId: a1, Microsoft.Azure.Documents.Common/2.14.0"}`)
	e := ErrorFromResponse(403, h, body)
	if e.StatusCode != 403 || e.SubStatus != 3 || e.ActivityID != "a1" || e.RequestCharge != 1.24 || e.RetryAfter != 150*time.Millisecond || e.Code != "Forbidden" {
		t.Fatalf("decoded %+v", e)
	}
	want := "403/3 Forbidden: The requested operation cannot be performed at this region (activity id a1)"
	if got := e.Error(); got != want {
		t.Fatalf("Error() = %q\nwant      %q", got, want)
	}
	st, sub, ok := Status(fmt.Errorf("wrapped: %w", e))
	if !ok || st != 403 || sub != 3 {
		t.Fatalf("Status through wrapping = %d/%d %v", st, sub, ok)
	}
}

func TestErrorFromResponseToleratesNonCosmosBodies(t *testing.T) {
	e := ErrorFromResponse(502, http.Header{}, []byte("<html>Bad Gateway</html>"))
	if e.Message != "<html>Bad Gateway</html>" || e.Code != "" {
		t.Fatalf("decoded %+v", e)
	}
	if got := e.Error(); got != "502 BadGateway: <html>Bad Gateway</html>" {
		t.Fatalf("Error() = %q", got)
	}
}

// Bodies as real accounts and emulators send them (ids and dates changed).
func TestErrorMessagesAreWholeAndReadable(t *testing.T) {
	const activity = "5f8c2a1e-9b3d-4c7a-8e21-0d6f4b9a7c13"
	cases := []struct {
		name       string
		status     int
		header     string // x-ms-activity-id; empty: none
		body       string
		want       string // Error()
		wantActID  string
		rawKeepsIn string // the full message still holds this
	}{
		{
			name:   "a 401 keeps the payload the service signed, its line feeds shown",
			status: 401, header: activity,
			body:       `{"code":"Unauthorized","message":"The input authorization token can't serve the request. The wrong key is being used or the expected payload is not built as per the protocol. For more info: https://aka.ms/cosmosdb-tsg-401. Server used the following payload to sign: 'get\ndocs\ndbs/app/colls/items/docs/o1\nmon, 30 nov 2026 03:21:17 gmt\n\n'\r\nActivityId: ` + activity + `, Microsoft.Azure.Documents.Common/2.14.0"}`,
			want:       `401 Unauthorized: The input authorization token can't serve the request. The wrong key is being used or the expected payload is not built as per the protocol. For more info: https://aka.ms/cosmosdb-tsg-401. Server used the following payload to sign: 'get\ndocs\ndbs/app/colls/items/docs/o1\nmon, 30 nov 2026 03:21:17 gmt\n\n' (activity id ` + activity + `)`,
			wantActID:  activity,
			rawKeepsIn: "Microsoft.Azure.Documents.Common/2.14.0",
		},
		{
			name:   "a 400 has its Errors unwrapped and the request statistics left out",
			status: 400, header: activity,
			body:       `{"code":"BadRequest","message":"Message: {\"Errors\":[\"PartitionKey extracted from document doesn't match the one specified in the header. Learn more: https:\\/\\/aka.ms\\/CosmosDB\\/sql\\/errors\\/wrong-pk-value\"]}\r\nActivityId: ` + activity + `, Request URI: /apps/2c2b/services/8e1f/partitions/4a7c/replicas/1331p/, RequestStats: \r\nRequestStartTime: 2026-11-30T03:21:17.1234567Z, RequestEndTime: 2026-11-30T03:21:17.1334567Z,  Number of regions attempted:1\r\n{\"systemHistory\":[{\"dateUtc\":\"2026-11-30T03:20:17.1234567Z\",\"cpu\":1.2}]}\r\n, SDK: Microsoft.Azure.Documents.Common/2.14.0"}`,
			want:       "400 BadRequest: PartitionKey extracted from document doesn't match the one specified in the header. Learn more: https://aka.ms/CosmosDB/sql/errors/wrong-pk-value (activity id " + activity + ")",
			wantActID:  activity,
			rawKeepsIn: "RequestStartTime: 2026-11-30T03:21:17.1234567Z",
		},
		{
			name:   "several Errors are all shown",
			status: 400, header: activity,
			body:      `{"code":"BadRequest","message":"Message: {\"Errors\":[\"One of the specified inputs is invalid\",\"The partition key path '/pk' is missing\"]}\r\nActivityId: ` + activity + `, Request URI: /dbs/app/colls/items/docs, RequestStats: , SDK: Windows/10.0.19045 cosmos-netstandard-sdk/3.18.0"}`,
			want:      "400 BadRequest: One of the specified inputs is invalid; The partition key path '/pk' is missing (activity id " + activity + ")",
			wantActID: activity,
		},
		{
			name:   "a query the service cannot parse has its errors unwrapped, with where they are",
			status: 400, header: activity,
			body:      `{"code":"BadRequest","message":"Message: {\"errors\":[{\"severity\":\"Error\",\"location\":{\"start\":14,\"end\":18},\"code\":\"SC1001\",\"message\":\"Syntax error, incorrect syntax near 'FORM'.\"}]}\r\nActivityId: ` + activity + `, Microsoft.Azure.Documents.Common/2.14.0"}`,
			want:      "400 BadRequest: SC1001: Syntax error, incorrect syntax near 'FORM'. (at characters 14–18 of the query) (activity id " + activity + ")",
			wantActID: activity,
		},
		{
			name:   "the gateway's words before a query plan's errors are kept",
			status: 400, header: activity,
			body:       `{"code":"BadRequest","message":"Gateway Failed to Retrieve Query Plan: Message: {\"errors\":[{\"severity\":\"Error\",\"location\":{\"start\":36,\"end\":36},\"code\":\"SC1002\",\"message\":\"Syntax error, unexpected end-of-file.\"}]}\r\nActivityId: ` + activity + `, Microsoft.Azure.Documents.Common/2.11.0, Microsoft.Azure.Documents.Common/2.11.0"}`,
			want:       "400 BadRequest: Gateway Failed to Retrieve Query Plan: SC1002: Syntax error, unexpected end-of-file. (at character 36 of the query) (activity id " + activity + ")",
			wantActID:  activity,
			rawKeepsIn: "Microsoft.Azure.Documents.Common/2.11.0",
		},
		{
			name:      "a 404 without an activity id header names the one in the message",
			status:    404,
			body:      `{"code":"NotFound","message":"Entity with the specified id does not exist in the system. More info: https://aka.ms/cosmosdb-tsg-not-found, \r\nRequestStartTime: 2026-11-30T03:21:17.5678901Z, RequestEndTime: 2026-11-30T03:21:17.5698901Z,  Number of regions attempted:1\r\n{\"systemHistory\":[]}\r\nActivityId: ` + activity + `, Microsoft.Azure.Documents.Common/2.14.0"}`,
			want:      "404 NotFound: Entity with the specified id does not exist in the system. More info: https://aka.ms/cosmosdb-tsg-not-found (activity id " + activity + ")",
			wantActID: activity,
		},
		{
			name:   "the local Azure Cosmos DB emulator's Errors are unwrapped",
			status: 409, header: activity,
			body:      `{"code":"Conflict","message":"Message: {\"Errors\":[\"Resource with specified id, name, or unique index already exists.\"]}\r\nActivityId: ` + activity + `, Request URI: /apps/DocDbApp/services/DocDbServer3/partitions/a4cb4962-38c8-11e6-8106-8cdcd42c33be/replicas/1p/, RequestStats: , SDK: Microsoft.Azure.Documents.Common/2.14.0"}`,
			want:      "409 Conflict: Resource with specified id, name, or unique index already exists. (activity id " + activity + ")",
			wantActID: activity,
		},
		{
			name:   "the cosmosctl emulator's plain message is kept as it is",
			status: 400, header: "e1",
			body:      `{"code":"BadRequest","message":"document id \"a b \" ends with a space, which the service does not allow"}`,
			want:      `400 BadRequest: document id "a b " ends with a space, which the service does not allow (activity id e1)`,
			wantActID: "e1",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{}
			if c.header != "" {
				h.Set(HeaderActivityID, c.header)
			}
			e := ErrorFromResponse(c.status, h, []byte(c.body))
			got := e.Error()
			if got != c.want {
				t.Fatalf("Error() = %q\nwant      %q", got, c.want)
			}
			if strings.ContainsAny(got, "\r\n") {
				t.Fatalf("Error() is not one line: %q", got)
			}
			if id := e.ServiceActivityID(); id != c.wantActID {
				t.Fatalf("ServiceActivityID() = %q, want %q", id, c.wantActID)
			}
			if !strings.Contains(got, ": "+e.ShortMessage()+" (activity id") {
				t.Fatalf("ShortMessage() %q is not the message of Error() %q", e.ShortMessage(), got)
			}
			if c.rawKeepsIn != "" && !strings.Contains(e.Message, c.rawKeepsIn) {
				t.Fatalf("Message lost %q: %q", c.rawKeepsIn, e.Message)
			}
		})
	}
}
