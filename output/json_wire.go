package output

import (
	"encoding/json"
	"github.com/cosmosctl/cosmosctl/cosmos"

	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/internal/jsonenc"
)

// The JSON of the objects in this package follows cosmosctl's vocabulary
// (docs/json/README.md): every field is always there, and what does not exist (the status
// of a request that got no answer, a retry-after the service did not send) is null, never
// 0 or "". Each object is written through a named wire type, which is also what its JSON
// schema is generated from (JSONSchemaAlias), so that schema and output cannot drift.

func intOrNull(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}

func floatOrNull(v float64) *float64 {
	if v == 0 {
		return nil
	}
	return &v
}

func stringOrNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// statusOrNull is a status and its substatus, both null when there is no status.
func statusOrNull(status, sub int) (*int, *int) {
	if status == 0 {
		return nil, nil
	}
	return &status, &sub
}

// ResultWire is a ResultObject as JSON (ResultJSON builds the object).
type ResultWire struct {
	// StatusCode and SubStatus are the answer's, null when no request got one.
	StatusCode    *int    `json:"status_code"`
	SubStatus     *int    `json:"substatus"`
	RequestCharge float64 `json:"request_charge"`
	ActivityID    *string `json:"activity_id"`
	ETag          *string `json:"etag"`
	SessionToken  *string `json:"session_token"`
	// Item is the item exactly as the service returned it (key order included), or null
	// when there is none (an error, a delete).
	Item        json.RawMessage     `json:"item"`
	Error       *ErrorObject        `json:"error"`
	Diagnostics *engine.Diagnostics `json:"diagnostics"`
}

// MarshalJSON writes the result as ResultWire.
func (r ResultObject) MarshalJSON() ([]byte, error) {
	j := ResultWire{RequestCharge: r.RequestCharge, ActivityID: stringOrNull(r.ActivityID), ETag: stringOrNull(r.ETag),
		SessionToken: stringOrNull(r.SessionToken), Item: r.Item, Error: r.Error, Diagnostics: r.Diagnostics}
	j.StatusCode, j.SubStatus = statusOrNull(r.StatusCode, r.SubStatus)
	if len(j.Item) == 0 {
		j.Item = json.RawMessage("null")
	}
	return jsonenc.Marshal(j)
}

// JSONSchemaAlias is the type the result's JSON schema is generated from.
func (ResultObject) JSONSchemaAlias() any { return ResultWire{} }

// ErrorJSON is an ErrorObject as JSON.
type ErrorJSON struct {
	// Kind says what failed: service, network, timeout, usage, auth, interrupted,
	// threshold_breach, partial or other.
	Kind string `json:"kind"`
	// StatusCode and SubStatus are the service's answer (408/20008 for an end-to-end
	// timeout), null when there was none.
	StatusCode *int   `json:"status_code"`
	SubStatus  *int   `json:"substatus"`
	Code       string `json:"code"`
	// StatusText is the status and substatus in words (cosmosctl help statuses), null
	// when there was no status.
	StatusText *string `json:"status_text"`
	Message    string  `json:"message"`
	// ServiceMessage is the service's message as it sent it, diagnostics and all, when
	// it says more than Message.
	ServiceMessage *string  `json:"service_message"`
	ActivityID     *string  `json:"activity_id"`
	RequestCharge  *float64 `json:"request_charge"`
	RetryAfterMs   *float64 `json:"retry_after_ms"`
	// Endpoint and RequestSent describe a network error: a write whose request was sent
	// may have been applied.
	Endpoint    *string `json:"endpoint"`
	RequestSent *bool   `json:"request_sent"`
	// TimeoutMs is the end-to-end timeout that expired.
	TimeoutMs *float64 `json:"timeout_ms"`
}

// MarshalJSON writes the error as ErrorJSON.
func (e ErrorObject) MarshalJSON() ([]byte, error) {
	j := ErrorJSON{Kind: e.Kind, Code: e.Code, Message: e.Message, ServiceMessage: stringOrNull(e.ServiceMessage),
		ActivityID: stringOrNull(e.ActivityID), RequestCharge: floatOrNull(e.RequestCharge), RetryAfterMs: floatOrNull(e.RetryAfterMs),
		Endpoint: stringOrNull(e.Endpoint), RequestSent: e.RequestSent, TimeoutMs: floatOrNull(e.TimeoutMs)}
	j.StatusCode, j.SubStatus = statusOrNull(e.StatusCode, e.SubStatus)
	if e.StatusCode != 0 {
		j.StatusText = stringOrNull(cosmos.StatusWords(e.StatusCode, e.SubStatus))
	}
	return jsonenc.Marshal(j)
}

// JSONSchemaAlias is the type the error's JSON schema is generated from.
func (ErrorObject) JSONSchemaAlias() any { return ErrorJSON{} }

type queryPageFields QueryPage

// QueryPageJSON is a QueryPage as JSON.
type QueryPageJSON struct {
	queryPageFields
	// RangeID is the partition key range read, null for the plan and the ranges' read.
	RangeID *string `json:"range_id"`
	// StatusCode and SubStatus are the answer used, null when no attempt got one.
	StatusCode    *int    `json:"status_code"`
	SubStatus     *int    `json:"substatus"`
	WinningRegion *string `json:"winning_region"`
	Note          *string `json:"note"`
}

// MarshalJSON writes the page as QueryPageJSON.
func (p QueryPage) MarshalJSON() ([]byte, error) {
	j := QueryPageJSON{queryPageFields: queryPageFields(p), RangeID: stringOrNull(p.RangeID),
		WinningRegion: stringOrNull(p.WinningRegion), Note: stringOrNull(p.Note)}
	j.StatusCode, j.SubStatus = statusOrNull(p.StatusCode, p.SubStatus)
	return jsonenc.Marshal(j)
}

// JSONSchemaAlias is the type the page's JSON schema is generated from.
func (QueryPage) JSONSchemaAlias() any { return QueryPageJSON{} }
