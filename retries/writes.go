package retries

import (
	"fmt"
	"time"
)

// WritePolicy says whether a write whose outcome is unknown (the request was sent, then
// the answer was a timeout, a reset connection, 408, 503, 449 or 410) is sent again.
// Such a retry may hit the write's own earlier success: a create then sees 409, a
// conditional replace 412. With tracking ids the engine recognises those and reports
// the write as the success it was.
type WritePolicy int

const (
	// NoWriteRetries: ambiguous write failures surface to the caller (the default).
	NoWriteRetries WritePolicy = iota
	// WriteRetries: ambiguous failures are retried; a retry's 409 or 412 stands.
	WriteRetries
	// WriteRetriesWithTrackingID: creates and replaces carry a _trackingId, and a 409
	// or 412 on a retry is checked against it.
	WriteRetriesWithTrackingID
)

func (p WritePolicy) String() string {
	switch p {
	case WriteRetries:
		return "retries"
	case WriteRetriesWithTrackingID:
		return "tracking-id"
	}
	return "off"
}

// Enabled reports whether ambiguous write failures are retried.
func (p WritePolicy) Enabled() bool { return p != NoWriteRetries }

// isAmbiguous reports the outcomes after which a write may or may not have been applied.
func isAmbiguous(o Outcome) bool {
	switch o.StatusCode {
	case 0:
		return o.Sent
	case 408, 410, 449, 503:
		return true
	}
	return false
}

// writeBackoff is the wait before the n-th retry of an ambiguous write: 100 ms, doubling,
// at most 1 s, so that a region in trouble is not hammered.
func (p Policy) writeBackoff(n int) time.Duration {
	d := p.WriteRetryBaseWait << (n - 1)
	if d > p.WriteRetryMaxWait || d <= 0 {
		d = p.WriteRetryMaxWait
	}
	return d
}

func (p Policy) decideAmbiguousWrite(st *State, req Request, o Outcome) Decision {
	what := transientNote(o.StatusCode, o.SubStatus, req.Region)
	if o.StatusCode == 0 {
		what = "no answer from " + req.Region + " after the request was sent"
	}
	if !req.WriteRetries {
		return Decision{Action: Stop, Note: what + ": the write may or may not have been applied; not retried (write retries are off)"}
	}
	if st.writeRetries >= p.MaxWriteRetries {
		return Decision{Action: Stop, Note: fmt.Sprintf("%s: write retries exhausted (%d retries)", what, st.writeRetries)}
	}
	st.writeRetries++
	wait := p.writeBackoff(st.writeRetries)
	return Decision{Action: RetrySameRegion, Wait: wait, Note: fmt.Sprintf("%s: ambiguous, retrying after %s (write retries on)", what, wait)}
}
