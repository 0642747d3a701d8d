package output

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
)

// WriteJSON writes v as JSON for a script: indented by two spaces, newline-terminated,
// and without HTML escaping ("<", ">" and "&" in items stay as they are).
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// ResultObject is the JSON object of an item command with -o json. Its field names are
// an API: scripts read them, so they only ever grow. Units are in the names.
//
// It is written as ResultJSON: what does not exist (the status of a request that got no
// answer, an etag of a delete) is null.
type ResultObject struct {
	StatusCode    int
	SubStatus     int
	RequestCharge float64
	ActivityID    string
	ETag          string
	SessionToken  string
	// Item is the item exactly as the service returned it (key order included), or null
	// when there is none (an error, a delete).
	Item        json.RawMessage
	Error       *ErrorObject
	Diagnostics *engine.Diagnostics
}

// Error kinds tell a script which fields of an ErrorObject mean something.
const (
	ErrorKindService = "service" // the service answered with an error status
	ErrorKindNetwork = "network" // no HTTP response
	ErrorKindTimeout = "timeout" // the end-to-end timeout expired
	ErrorKindOther   = "other"   // anything else: the message says what
)

// ErrorObject is the "error" member of ResultObject, and of every JSON object that
// reports a failure. It is written as ErrorJSON: every field is there, null where it
// does not apply. Exit codes are not here: the process exit status carries them (and a
// failure object's exit_code).
type ErrorObject struct {
	Kind       string
	StatusCode int
	SubStatus  int
	Code       string
	Message    string
	// ServiceMessage is the service's message as it sent it, diagnostics and all
	// (several lines on a real account), when it says more than Message, its readable
	// part on one line.
	ServiceMessage string
	ActivityID     string
	RequestCharge  float64
	RetryAfterMs   float64
	// Endpoint and RequestSent describe a network error: a write whose request was sent
	// may have been applied.
	Endpoint    string
	RequestSent *bool
	// TimeoutMs is the end-to-end timeout that expired.
	TimeoutMs float64
}

// ResultJSON builds the object printed by item commands with -o json, for success and
// failure alike (Execute returns a Result with diagnostics even when it fails). When the
// result carries no status of its own, the top-level status, activity id and charge come
// from the error, so a script can always branch on .status_code.
func ResultJSON(res *engine.Result, err error) any {
	out := &ResultObject{}
	if res != nil {
		out.StatusCode, out.SubStatus = res.StatusCode, res.SubStatus
		out.RequestCharge, out.ActivityID = res.RequestCharge, res.ActivityID
		out.ETag, out.SessionToken = res.ETag, res.SessionToken
		out.Diagnostics = res.Diagnostics
		if err == nil {
			out.Item = rawItem(res.Body)
		}
	}
	if err != nil {
		out.Error = errorObject(err)
		if out.StatusCode == 0 {
			out.StatusCode, out.SubStatus = out.Error.StatusCode, out.Error.SubStatus
		}
		if out.ActivityID == "" {
			out.ActivityID = out.Error.ActivityID
		}
		if out.RequestCharge == 0 {
			out.RequestCharge = out.Error.RequestCharge
		}
	}
	return out
}

// rawItem embeds the body without decoding it, so keys keep the service's order and
// numbers their exact text. A body that is not JSON (it should never happen) is kept as
// a JSON string rather than dropped.
func rawItem(body []byte) json.RawMessage {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil
	}
	if json.Valid(body) {
		return json.RawMessage(body)
	}
	s, _ := json.Marshal(string(body))
	return s
}

func errorObject(err error) *ErrorObject {
	var (
		te *engine.TimeoutError
		ce *cosmos.Error
		ne *cosmos.NetworkError
	)
	switch {
	case errors.As(err, &te):
		return &ErrorObject{
			Kind:       ErrorKindTimeout,
			StatusCode: 408, SubStatus: cosmos.SubClientE2ETimeout,
			Code:      cosmos.StatusName(408, cosmos.SubClientE2ETimeout),
			Message:   err.Error(),
			TimeoutMs: float64(te.Timeout.Microseconds()) / 1000,
		}
	case errors.As(err, &ce):
		code := ce.Code
		if code == "" {
			code = cosmos.StatusName(ce.StatusCode, ce.SubStatus)
		}
		msg := ce.ShortMessage()
		if msg == "" {
			msg = err.Error()
		}
		full := ce.Message
		if full == msg {
			full = "" // nothing more to show
		}
		return &ErrorObject{
			Kind:       ErrorKindService,
			StatusCode: ce.StatusCode, SubStatus: ce.SubStatus,
			Code: code, Message: msg,
			ServiceMessage: full,
			ActivityID:     ce.ServiceActivityID(),
			RequestCharge:  ce.RequestCharge,
			RetryAfterMs:   float64(ce.RetryAfter.Microseconds()) / 1000,
		}
	case errors.As(err, &ne):
		sent := ne.Sent
		return &ErrorObject{
			Kind: ErrorKindNetwork, Code: "NetworkError", Message: err.Error(),
			Endpoint: ne.Endpoint, RequestSent: &sent,
		}
	case errors.Is(err, context.DeadlineExceeded):
		return &ErrorObject{
			Kind:       ErrorKindTimeout,
			StatusCode: 408, SubStatus: cosmos.SubClientE2ETimeout,
			Code:    cosmos.StatusName(408, cosmos.SubClientE2ETimeout),
			Message: err.Error(),
		}
	default:
		return &ErrorObject{Kind: ErrorKindOther, Message: err.Error()}
	}
}

// WriteItem prints an item's JSON: indented for a terminal with the service's key order
// kept (json.Indent works on the raw bytes), compact when piped so that one item is one
// line. Output always ends with a newline; an empty body prints nothing. A body that is
// not JSON is printed as it is rather than lost.
func WriteItem(w io.Writer, body []byte, pretty bool) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil
	}
	var buf bytes.Buffer
	var err error
	if pretty {
		err = json.Indent(&buf, body, "", "  ")
	} else {
		err = json.Compact(&buf, body)
	}
	if err != nil {
		buf.Reset()
		buf.Write(body)
	}
	buf.WriteByte('\n')
	_, err = w.Write(buf.Bytes())
	return err
}
