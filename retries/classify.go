package retries

import "time"

// IsFinal reports whether a result ends a hedging race: any status below 400, and 400,
// 401, 405, 409, 412, 413, and 404 with substatus 0. The Java, .NET and Python SDKs share
// this list; everything else (429, 503, 408, 410, 404/1002, 449, 500 …) is transient, and
// another region may still answer.
func IsFinal(status, sub int) bool {
	switch {
	case status > 0 && status < 400:
		return true
	case status == 404:
		return sub == 0
	case status == 403:
		// An authorization failure (5301: the identity lacks a data-plane role, and
		// every other substatus) is the same in every region; only "this region does
		// not take writes" (3, 1008) sends the request elsewhere.
		return !IsWriteForbidden(status, sub)
	}
	switch status {
	case 400, 401, 405, 409, 412, 413:
		return true
	}
	return false
}

// IsWriteForbidden reports the 403 substatuses that mean "this region does not take
// writes now": the account's write region moved.
func IsWriteForbidden(status, sub int) bool {
	return status == 403 && (sub == 3 || sub == 1008)
}

// Outcome is what one attempt produced, as the policy needs to see it.
type Outcome struct {
	// StatusCode is 0 when no response arrived (a network error or a timeout).
	StatusCode int
	SubStatus  int
	// RetryAfter is the service's x-ms-retry-after-ms on a 429.
	RetryAfter float64 // milliseconds
	// Sent says whether the request reached the wire, for attempts without a response.
	Sent bool
	// TimedOut says the attempt's own timeout (Timeout) expired before an answer: for
	// a read like a 408, for a write sent an ambiguous failure.
	TimedOut bool
	Timeout  time.Duration
}
