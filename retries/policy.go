package retries

import (
	"fmt"
	"time"
)

// Action is what the engine does after an attempt.
type Action int

const (
	// Stop: the attempt's result is the operation's result.
	Stop Action = iota
	// RetrySameRegion after Decision.Wait.
	RetrySameRegion
	// NextRegion: fail over to the next effective region (reads only).
	NextRegion
	// RefreshAccount: re-read the account topology, then retry in the (new) write
	// region, or the same read region.
	RefreshAccount
)

func (a Action) String() string {
	return [...]string{"stop", "retry", "failover", "refresh-account"}[a]
}

// Decision is the policy's answer, with a note for the diagnostics.
type Decision struct {
	Action Action
	Wait   time.Duration
	Note   string
	// RefreshRouting asks the engine to forget what it cached of the container's
	// partition key ranges and replica addresses before the retry.
	RefreshRouting bool
}

// Policy holds the retry limits. The defaults match the SDKs': 9 throttling retries
// within 30 s of accumulated waiting, and a couple of write-region refreshes.
type Policy struct {
	MaxThrottleRetries   int
	MaxThrottleWait      time.Duration
	DefaultThrottleWait  time.Duration
	MaxAccountRefreshes  int
	MaxNotSentRetries    int
	MaxSameRegionRetries int
	SameRegionRetryWait  time.Duration
	// MaxRoutingRetries caps the retries after a 410 that says the partition moved
	// (IsRoutingGone), reads and writes alike: such a request was not applied.
	MaxRoutingRetries int
	// MaxWriteRetries caps the retries of one write after ambiguous failures, with a
	// back-off from WriteRetryBaseWait doubling up to WriteRetryMaxWait.
	MaxWriteRetries    int
	WriteRetryBaseWait time.Duration
	WriteRetryMaxWait  time.Duration
}

// DefaultPolicy is the policy cosmosctl uses unless told otherwise.
func DefaultPolicy() Policy {
	return Policy{
		MaxThrottleRetries:   9,
		MaxThrottleWait:      30 * time.Second,
		DefaultThrottleWait:  100 * time.Millisecond,
		MaxAccountRefreshes:  2,
		MaxNotSentRetries:    3,
		MaxSameRegionRetries: 1,
		SameRegionRetryWait:  50 * time.Millisecond,
		MaxRoutingRetries:    2,
		MaxWriteRetries:      3,
		WriteRetryBaseWait:   100 * time.Millisecond,
		WriteRetryMaxWait:    time.Second,
	}
}

// State counts what one operation (or one hedge arm) has already spent.
type State struct {
	throttleRetries   int
	throttleWaited    time.Duration
	accountRefreshes  int
	notSentRetries    int
	sameRegionRetries int
	routingRetries    int
	writeRetries      int
}

// Request describes the operation the policy is deciding for.
type Request struct {
	Write bool
	// WriteRetries says whether this write may be retried after an ambiguous failure.
	WriteRetries bool
	// Region the attempt went to, for notes.
	Region string
	// CanFailOver says whether another effective region is left to try.
	CanFailOver bool
}

// Decide returns what to do after an attempt with outcome o.
func (p Policy) Decide(st *State, req Request, o Outcome) Decision {
	status, sub := o.StatusCode, o.SubStatus
	where := req.Region
	switch {
	case status != 0 && IsFinal(status, sub):
		return Decision{Action: Stop}

	case status == 429:
		wait := time.Duration(o.RetryAfter * float64(time.Millisecond))
		if wait <= 0 {
			wait = p.DefaultThrottleWait
		}
		if st.throttleRetries >= p.MaxThrottleRetries || st.throttleWaited+wait > p.MaxThrottleWait {
			if !req.Write && req.CanFailOver {
				// Throughput is provisioned per region: a read that one region keeps
				// throttling can still be served by the next.
				return Decision{Action: NextRegion, Note: fmt.Sprintf("429 from %s: throttling retries exhausted (%d retries, %s waited); failing over", where, st.throttleRetries, st.throttleWaited)}
			}
			return Decision{Action: Stop, Note: fmt.Sprintf("429 from %s: throttling retries exhausted (%d retries, %s waited)", where, st.throttleRetries, st.throttleWaited)}
		}
		st.throttleRetries++
		st.throttleWaited += wait
		return Decision{Action: RetrySameRegion, Wait: wait, Note: fmt.Sprintf("429 from %s: retrying after %s (retry-after)", where, wait)}

	case IsWriteForbidden(status, sub):
		if st.accountRefreshes >= p.MaxAccountRefreshes {
			return Decision{Action: Stop, Note: fmt.Sprintf("%d/%d from %s again after %d account refreshes", status, sub, where, st.accountRefreshes)}
		}
		st.accountRefreshes++
		return Decision{Action: RefreshAccount, Note: fmt.Sprintf("%d/%d from %s: the write region moved; re-reading the account", status, sub, where)}

	case status == 0 && !o.Sent:
		// Nothing reached the service, so even a write is safe to send again.
		if st.notSentRetries < p.MaxNotSentRetries {
			st.notSentRetries++
			// A write that never left is safe to send elsewhere too (the engine offers
			// a failover to writes on multi-write accounts only).
			if req.CanFailOver {
				return Decision{Action: NextRegion, Note: fmt.Sprintf("%s unreachable: failing over", where)}
			}
			return Decision{Action: RetrySameRegion, Wait: p.SameRegionRetryWait, Note: fmt.Sprintf("%s unreachable before the request was sent: retrying", where)}
		}
		return Decision{Action: Stop, Note: fmt.Sprintf("%s unreachable after %d retries", where, st.notSentRetries)}
	}

	if IsRoutingGone(status, sub) {
		// The partition split or moved: the engine refreshes what it knows of the
		// container's routing and sends the request again, a write too (it was not
		// applied), as the SDKs do.
		if st.routingRetries < p.MaxRoutingRetries {
			st.routingRetries++
			return Decision{Action: RetrySameRegion, Wait: p.SameRegionRetryWait, RefreshRouting: true,
				Note: transientNote(status, sub, where) + ": the partition moved; refreshing routing and retrying (the request was not applied)"}
		}
		if !req.Write && req.CanFailOver {
			return Decision{Action: NextRegion, Note: transientNote(status, sub, where) + " again after a routing refresh: failing over"}
		}
		return Decision{Action: Stop, Note: transientNote(status, sub, where) + fmt.Sprintf(" after %d routing refreshes", st.routingRetries)}
	}

	// Transient results: 503, 500, 408, 410, 449, 404/1002, an attempt timeout, and a
	// request that got no answer after it was sent.
	if o.TimedOut && status == 0 {
		where = fmt.Sprintf("%s (attempt timeout of %s expired)", where, o.Timeout)
	}
	if req.Write {
		if isAmbiguous(o) {
			return p.decideAmbiguousWrite(st, req, o)
		}
		return Decision{Action: Stop, Note: transientNote(status, sub, where) + ": not retried"}
	}
	if req.CanFailOver {
		return Decision{Action: NextRegion, Note: transientNote(status, sub, where) + ": failing over"}
	}
	// A region's only chance (a pinned hedge arm's, or the last region's) gets one more
	// try where a retry can help: after a 410 or 449, and after an attempt timeout, with
	// the ladder's next, longer timeout.
	if (status == 410 || status == 449 || (status == 0 && o.TimedOut)) && st.sameRegionRetries < p.MaxSameRegionRetries {
		st.sameRegionRetries++
		return Decision{Action: RetrySameRegion, Wait: p.SameRegionRetryWait, Note: transientNote(status, sub, where) + ": retrying"}
	}
	return Decision{Action: Stop, Note: transientNote(status, sub, where) + ": no region left to try"}
}

func transientNote(status, sub int, where string) string {
	if status == 0 {
		return "no answer from " + where
	}
	if sub != 0 {
		return fmt.Sprintf("%d/%d from %s", status, sub, where)
	}
	return fmt.Sprintf("%d from %s", status, where)
}
