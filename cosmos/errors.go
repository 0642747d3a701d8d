package cosmos

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Substatus codes that change what a client should do.
const (
	SubNone                         = 0
	SubWriteForbidden               = 3    // 403: this region does not take writes (any more)
	SubPartitionKeyMismatch         = 1001 // 400
	SubReadSessionNotAvailable      = 1002 // 404: this replica has not caught up with the session
	SubDatabaseAccountNotFound      = 1008 // 403
	SubNameCacheIsStale             = 1000 // 410
	SubPartitionKeyRangeGone        = 1002 // 410
	SubCompletingSplit              = 1007 // 410
	SubCompletingPartitionMigration = 1008 // 410
	SubClientE2ETimeout             = 20008
)

// Error is a failed Cosmos DB response: the status and substatus clients act on, the
// service's own code and message, and the headers an operator needs to follow it up.
type Error struct {
	StatusCode    int
	SubStatus     int
	Code          string
	Message       string
	ActivityID    string
	RequestCharge float64
	RetryAfter    time.Duration
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d", e.StatusCode)
	if e.SubStatus != 0 {
		fmt.Fprintf(&b, "/%d", e.SubStatus)
	}
	code := e.Code
	if code == "" {
		code = StatusName(e.StatusCode, e.SubStatus)
	}
	if code != "" {
		b.WriteString(" " + code)
	}
	msg := ParseServiceMessage(e.Message)
	if msg.Text != "" {
		b.WriteString(": " + msg.Text)
	}
	if id := e.activityID(msg); id != "" {
		b.WriteString(" (activity id " + id + ")")
	}
	return b.String()
}

// activityID is the response's activity id, or the one the message names when the
// response had no header (a proxy that drops it, an error built from the body alone).
func (e *Error) activityID(msg ServiceMessage) string {
	if e.ActivityID != "" {
		return e.ActivityID
	}
	return msg.ActivityID
}

// Status returns the status and substatus of err when it is (or wraps) a *Error.
func Status(err error) (status, substatus int, ok bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.StatusCode, e.SubStatus, true
	}
	return 0, 0, false
}

// StatusName is the Cosmos code name of a status (and substatus), as used in error bodies.
func StatusName(status, sub int) string {
	switch {
	case status == 400 && sub == SubPartitionKeyMismatch:
		return "PartitionKeyMismatch"
	case status == 403 && sub == SubWriteForbidden:
		return "WriteForbidden"
	case status == 403 && sub == SubDatabaseAccountNotFound:
		return "DatabaseAccountNotFound"
	case status == 404 && sub == SubReadSessionNotAvailable:
		return "ReadSessionNotAvailable"
	case status == 408 && sub == SubClientE2ETimeout:
		return "OperationCancelled"
	}
	switch status {
	case 400:
		return "BadRequest"
	case 401:
		return "Unauthorized"
	case 403:
		return "Forbidden"
	case 404:
		return "NotFound"
	case 405:
		return "MethodNotAllowed"
	case 408:
		return "RequestTimeout"
	case 409:
		return "Conflict"
	case 410:
		return "Gone"
	case 412:
		return "PreconditionFailed"
	case 413:
		return "RequestEntityTooLarge"
	case 415:
		return "UnsupportedMediaType"
	case 429:
		return "TooManyRequests"
	case 449:
		return "RetryWith"
	case 500:
		return "InternalServerError"
	case 503:
		return "ServiceUnavailable"
	}
	if t := http.StatusText(status); t != "" {
		return strings.ReplaceAll(t, " ", "")
	}
	return ""
}

// ErrorBody is the JSON body of every Cosmos DB error response.
type ErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ErrorFromResponse builds an *Error from a failed response's status, headers and body.
// A body that is not a Cosmos error (a proxy's HTML page, say) still yields a useful error.
func ErrorFromResponse(status int, h http.Header, body []byte) *Error {
	e := &Error{
		StatusCode:    status,
		ActivityID:    h.Get(HeaderActivityID),
		RequestCharge: parseFloat(h.Get(HeaderRequestCharge)),
	}
	e.SubStatus, _ = strconv.Atoi(h.Get(HeaderSubStatus))
	if ms := parseFloat(h.Get(HeaderRetryAfterMs)); ms > 0 {
		e.RetryAfter = time.Duration(ms * float64(time.Millisecond))
	}
	var eb ErrorBody
	if len(body) > 0 && json.Unmarshal(body, &eb) == nil {
		e.Code, e.Message = eb.Code, eb.Message
	} else if len(body) > 0 {
		e.Message = truncate(strings.TrimSpace(string(body)), 200)
	}
	return e
}

func parseFloat(s string) float64 {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0
	}
	return f
}

// ShortMessage is the service's message made readable on one line: its Errors
// unwrapped, the payload the service signed kept, the diagnostic lines real accounts
// append ("ActivityId: …, Request URI: …", request statistics) left out.
func (e *Error) ShortMessage() string { return ParseServiceMessage(e.Message).Text }

// ServiceActivityID is the activity id of the failed request: the response header's,
// or else the one in the service's message.
func (e *Error) ServiceActivityID() string { return e.activityID(ParseServiceMessage(e.Message)) }
