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
	case 410:
		// A 410 that says the partition moved (it split, or migrated) was refused by
		// routing, before the write was applied: it is retried, not ambiguous.
		return !IsRoutingGone(o.StatusCode, o.SubStatus)
	case 408, 449, 503:
		return true
	}
	return false
}

// IsRoutingGone reports the 410 substatuses that mean "the request went to the wrong
// place": the name cache is stale (1000), the partition key range is gone (1002), a
// split or a migration is completing (1007, 1008). The request was not applied; the
// client refreshes its routing and sends it again.
func IsRoutingGone(status, sub int) bool {
	return status == 410 && (sub == 1000 || sub == 1002 || sub == 1007 || sub == 1008)
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
	switch {
	case o.TimedOut:
		what = fmt.Sprintf("attempt timeout of %s expired in %s after the request was sent", o.Timeout, req.Region)
	case o.StatusCode == 0:
		what = "no answer from " + req.Region + " after the request was sent"
	}
	if !req.WriteRetries {
		return Decision{Action: Stop, Note: what + ": the write may or may not have been applied; not retried (write retries are off)"}
	}
	if st.writeRetries >= p.MaxWriteRetries {
		return Decision{Action: Stop, Note: fmt.Sprintf("%s: write retries exhausted (%d retries)", what, st.writeRetries)}
	}
	st.writeRetries++
	if req.CanFailOver {
		// Only multi-write accounts offer a write another region: there a retry with
		// write retries on is what a hedged write is, and the region that did not
		// answer is the last place to send it again.
		return Decision{Action: NextRegion, Note: fmt.Sprintf("%s: ambiguous, retrying in the next write region (write retries on)", what)}
	}
	wait := p.writeBackoff(st.writeRetries)
	return Decision{Action: RetrySameRegion, Wait: wait, Note: fmt.Sprintf("%s: ambiguous, retrying after %s (write retries on)", what, wait)}
}
