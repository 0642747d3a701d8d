package output

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
)

// itemBody has its keys deliberately out of alphabetical order, a number too large for a
// float64, and characters that HTML escaping would mangle.
const itemBody = `{"id":"order-1","pk":"alice","zeta":1,"alpha":{"b":2,"a":1},"big":12345678901234567890,"note":"<b>&</b>","_etag":"\"0000d200-0000-0000-0000-65f0a1b20000\"","_ts":1710000000}`

func oneAttemptDiagnostics(status, sub int, outcome engine.Outcome) *engine.Diagnostics {
	return &engine.Diagnostics{
		Operation: engine.OpRead, Database: "shop", Container: "orders", ID: "order-1", PartitionKey: json.RawMessage(`["alice"]`),
		PreferredRegions: []string{"West US"},
		EffectiveRegions: []string{"West US"},
		HedgeConfig:      "off",
		Attempts: []engine.Attempt{{
			N: 1, Region: "West US", Endpoint: "https://acct-westus.documents.azure.com", Reason: engine.ReasonInitial,
			Start: 0, Duration: 12400 * time.Microsecond, StatusCode: status, SubStatus: sub, RequestCharge: 1,
			ActivityID: "6b1e3a52-9c0d-4f7e-8a1b-2c3d4e5f6a7b", Outcome: outcome,
		}},
		ContactedRegions: []string{"West US"},
		RespondedRegions: []string{"West US"},
		WinningRegion:    "West US", WinningAttempt: 1,
		RequestCharge: 1,
		Duration:      12400 * time.Microsecond,
	}
}

func TestResultJSONSuccess(t *testing.T) {
	res := &engine.Result{
		StatusCode: 200, Body: []byte(itemBody),
		ETag: `"0000d200-0000-0000-0000-65f0a1b20000"`, SessionToken: "0:-1#12",
		ActivityID: "6b1e3a52-9c0d-4f7e-8a1b-2c3d4e5f6a7b", RequestCharge: 1,
		Diagnostics: oneAttemptDiagnostics(200, 0, engine.OutcomeWon),
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, ResultJSON(res, nil)); err != nil {
		t.Fatal(err)
	}
	golden(t, "result_success", buf.Bytes())

	var got struct {
		Item  json.RawMessage `json:"item"`
		Error any             `json:"error"`
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, got.Item); err != nil {
		t.Fatal(err)
	}
	if compact.String() != itemBody {
		t.Errorf("the item was re-encoded (key order or numbers changed):\n got %s\nwant %s", compact.String(), itemBody)
	}
	if got.Error != nil {
		t.Errorf("error = %v, want null", got.Error)
	}
	if strings.Contains(buf.String(), `\u003c`) || strings.Contains(buf.String(), `\u0026`) {
		t.Errorf("HTML escaping in %s", buf.String())
	}
}

func TestResultJSONNotFound(t *testing.T) {
	res := &engine.Result{
		StatusCode: 404, Body: []byte(`{"code":"NotFound","message":"Entity with the specified id does not exist in the system."}`),
		ActivityID: "6b1e3a52-9c0d-4f7e-8a1b-2c3d4e5f6a7b", RequestCharge: 1,
		Diagnostics: oneAttemptDiagnostics(404, 0, engine.OutcomeWon),
	}
	err := fmt.Errorf("read order-1: %w", &cosmos.Error{
		StatusCode: 404, Code: "NotFound",
		Message:       "Entity with the specified id does not exist in the system.",
		ActivityID:    "6b1e3a52-9c0d-4f7e-8a1b-2c3d4e5f6a7b",
		RequestCharge: 1,
	})
	var buf bytes.Buffer
	if err := WriteJSON(&buf, ResultJSON(res, err)); err != nil {
		t.Fatal(err)
	}
	golden(t, "result_not_found", buf.Bytes())
	if strings.Contains(buf.String(), "exit_code") {
		t.Error("exit codes belong to the process status, not the JSON")
	}
}

func TestResultJSONErrors(t *testing.T) {
	cases := []struct {
		name string
		res  *engine.Result
		err  error
		want ErrorObject
		top  [2]int // status_code, substatus at the top level
	}{
		{"a throttled request keeps its retry-after", nil,
			&cosmos.Error{StatusCode: 429, SubStatus: 3200, Message: "Request rate is large", RetryAfter: 250 * time.Millisecond, RequestCharge: 0.5},
			ErrorObject{Kind: ErrorKindService, StatusCode: 429, SubStatus: 3200, Code: "TooManyRequests", Message: "Request rate is large", RequestCharge: 0.5, RetryAfterMs: 250},
			[2]int{429, 3200}},
		{"a 401 shows the payload the service signed on one line, and the service's whole message", nil,
			cosmos.ErrorFromResponse(401, nil, []byte(`{"code":"Unauthorized","message":"The input authorization token can't serve the request. Server used the following payload to sign: 'get\ndocs\ndbs/shop/colls/orders/docs/order-1\nmon, 30 nov 2026 03:21:17 gmt\n\n'\r\nActivityId: 6b1e3a52-9c0d-4f7e-8a1b-2c3d4e5f6a7b, Microsoft.Azure.Documents.Common/2.14.0"}`)),
			ErrorObject{Kind: ErrorKindService, StatusCode: 401, Code: "Unauthorized",
				Message:        `The input authorization token can't serve the request. Server used the following payload to sign: 'get\ndocs\ndbs/shop/colls/orders/docs/order-1\nmon, 30 nov 2026 03:21:17 gmt\n\n'`,
				ServiceMessage: "The input authorization token can't serve the request. Server used the following payload to sign: 'get\ndocs\ndbs/shop/colls/orders/docs/order-1\nmon, 30 nov 2026 03:21:17 gmt\n\n'\r\nActivityId: 6b1e3a52-9c0d-4f7e-8a1b-2c3d4e5f6a7b, Microsoft.Azure.Documents.Common/2.14.0",
				ActivityID:     "6b1e3a52-9c0d-4f7e-8a1b-2c3d4e5f6a7b"},
			[2]int{401, 0}},
		{"the end-to-end timeout is 408/20008, as the Java SDK reports it",
			&engine.Result{Diagnostics: &engine.Diagnostics{TimedOut: true}},
			&engine.TimeoutError{Timeout: 2 * time.Second, Cause: context.DeadlineExceeded},
			ErrorObject{Kind: ErrorKindTimeout, StatusCode: 408, SubStatus: 20008, Code: "OperationCancelled",
				Message:   (&engine.TimeoutError{Timeout: 2 * time.Second}).Error(),
				TimeoutMs: 2000},
			[2]int{408, 20008}},
		{"a network error says whether the request was sent", nil,
			&cosmos.NetworkError{Endpoint: "https://acct-westus.documents.azure.com", Sent: true, Err: errors.New("connection reset by peer")},
			ErrorObject{Kind: ErrorKindNetwork, Code: "NetworkError",
				Message:  "https://acct-westus.documents.azure.com: connection reset by peer (after the request was sent)",
				Endpoint: "https://acct-westus.documents.azure.com", RequestSent: ptr(true)},
			[2]int{0, 0}},
		{"anything else is a message", nil, errors.New("no partition key: pass --pk"),
			ErrorObject{Kind: ErrorKindOther, Message: "no partition key: pass --pk"},
			[2]int{0, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := ResultJSON(tc.res, tc.err).(*ResultObject)
			if obj.Error == nil {
				t.Fatal("error is null")
			}
			got, _ := json.Marshal(obj.Error)
			want, _ := json.Marshal(tc.want)
			if !bytes.Equal(got, want) {
				t.Errorf("error object\n got %s\nwant %s", got, want)
			}
			if obj.StatusCode != tc.top[0] || obj.SubStatus != tc.top[1] {
				t.Errorf("top-level status %d/%d, want %d/%d", obj.StatusCode, obj.SubStatus, tc.top[0], tc.top[1])
			}
			if obj.Item != nil {
				t.Errorf("item %s on an error, want null", obj.Item)
			}
			var m map[string]any
			if err := json.Unmarshal(mustJSON(t, obj), &m); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"status_code", "substatus", "request_charge", "activity_id", "etag", "session_token", "item", "error", "diagnostics"} {
				if _, ok := m[k]; !ok {
					t.Errorf("field %q missing: the object's shape must not depend on the outcome", k)
				}
			}
		})
	}
}

func TestResultJSONEmptyBodyIsNullItem(t *testing.T) {
	obj := ResultJSON(&engine.Result{StatusCode: 204}, nil).(*ResultObject)
	if !strings.Contains(string(mustJSON(t, obj)), `"item":null`) {
		t.Errorf("a delete's empty body must be a null item: %s", mustJSON(t, obj))
	}
}

func TestWriteItem(t *testing.T) {
	cases := []struct {
		name   string
		body   string
		pretty bool
		want   string
	}{
		{"a terminal gets it indented, keys in order", `{"z":1,"a":{"y":[1,2]},"s":"<&>"}`, true,
			"{\n  \"z\": 1,\n  \"a\": {\n    \"y\": [\n      1,\n      2\n    ]\n  },\n  \"s\": \"<&>\"\n}\n"},
		{"a pipe gets one compact line", "{\n  \"z\": 1,\n  \"a\": 2\n}\n", false, "{\"z\":1,\"a\":2}\n"},
		{"an empty body prints nothing", "", true, ""},
		{"a body that is not JSON is printed as it is", "not json", false, "not json\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteItem(&buf, []byte(tc.body), tc.pretty); err != nil {
				t.Fatal(err)
			}
			if buf.String() != tc.want {
				t.Errorf("got %q, want %q", buf.String(), tc.want)
			}
		})
	}
}

func TestWriteJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, map[string]string{"html": "<a href=\"x\">&</a>"}); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"html\": \"<a href=\\\"x\\\">&</a>\"\n}\n"
	if buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
}

func ptr[T any](v T) *T { return &v }

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
