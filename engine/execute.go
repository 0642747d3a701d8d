package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/retries"
)

// Execute runs one operation. It returns a Result with diagnostics even when it also
// returns an error: *cosmos.Error for a service error, *cosmos.NetworkError when no
// region answered, *TimeoutError when the end-to-end timeout expired, *InputError for
// an operation that could not be sent.
func (c *Client) Execute(ctx context.Context, op Operation) (*Result, error) {
	rec := newRecorder(c.clock.Now)
	rec.d.Operation, rec.d.Database, rec.d.Container, rec.d.ID = op.Kind, op.Database, op.Container, op.ID
	rec.d.HedgeConfig = "off"
	rec.d.E2ETimeout = op.E2ETimeout
	rec.d.ConnectionMode = "gateway"
	if c.addr != nil {
		rec.d.ConnectionMode = "direct"
		if op.Kind.IsQuery() {
			rec.note("direct mode: queries go through the gateway (cosmosctl sends only point operations to replicas)")
		}
		if op.Kind == OpChangeFeed {
			rec.note("direct mode: change feed reads go through the gateway (cosmosctl sends only point operations to replicas)")
		}
	}
	if c.opts.ThinClient {
		rec.d.ConnectionMode = "gateway2"
	}
	rec.d.RangeID = op.RangeID
	res := &Result{}
	// settled: nothing records into rec any more (no hedged arm still running), so
	// its diagnostics are handed over rather than copied.
	settled := false
	finish := func(err error) (*Result, error) {
		if settled {
			res.Diagnostics = rec.handOver()
		} else {
			res.Diagnostics = rec.snapshot()
		}
		return res, err
	}
	if op.E2ETimeout < 0 {
		return finish(inputErrorf("the end-to-end timeout must not be negative (got %s)", op.E2ETimeout))
	}

	ctx, timedOut, stop := c.withE2ETimeout(ctx, op.E2ETimeout)
	defer stop()
	timeout := func(cause error) (*Result, error) {
		rec.cancelAll("end-to-end timeout expired")
		rec.mu.Lock()
		rec.d.TimedOut = true
		rec.mu.Unlock()
		return finish(&TimeoutError{Timeout: op.E2ETimeout, Cause: cause})
	}

	acct, err := c.topology.get(ctx)
	for _, n := range c.topology.takeNotes() {
		rec.note("account lookup: " + n)
	}
	if err != nil {
		if timedOut() {
			return timeout(err)
		}
		return finish(err)
	}
	if err := checkConsistency(&op, acct); err != nil {
		return finish(err)
	}
	if c.addr != nil {
		if err := checkDirectConsistency(&op, acct); err != nil {
			return finish(err)
		}
	}
	plan, err := c.plan(acct, op.ExcludeRegions, op.Kind.IsWrite())
	if err != nil {
		return finish(err)
	}
	rec.setPlan(plan)
	op.rangeID = c.knownRange(ctx, &op, plan)
	plan, op.probe = c.orderByHealth(rec, plan, &op)
	// A probe ticket that no attempt settled (the operation never got to its region)
	// frees the slot for the next operation.
	defer op.probe.Abandoned()
	if err := c.prepare(ctx, &op, acct, endpointOf(plan.targets[0])); err != nil {
		op.beside.Abandoned()
		if timedOut() {
			return timeout(err)
		}
		return finish(err)
	}
	op.reqOnce = new(sync.Once)
	op.pkText = op.PartitionKey.JSON() // before anything else reads op concurrently
	if op.beside.Granted() {
		c.probeBeside(&op, acct.EnableMultipleWriteLocations)
	}
	rec.mu.Lock()
	rec.d.ID, rec.d.PartitionKey = op.ID, json.RawMessage(op.pkText)
	if op.PartitionKey == nil && op.Kind.viaGateway() {
		rec.d.PartitionKey = json.RawMessage("null") // cross-partition, or one range
	}
	if op.Kind.IsWrite() {
		rec.d.WriteRetries = op.WriteRetries.String()
		rec.d.Notes = append(rec.d.Notes, writePolicyNote(op.WriteRetries))
	}
	rec.mu.Unlock()

	var ar armResult
	if strategy, pl := c.hedgeStrategy(rec, &op, acct, plan); strategy != nil {
		ar = c.runHedged(ctx, rec, &op, acct, plan, strategy, pl)
	} else {
		ar = c.runArm(ctx, rec, &op, acct, plan, arm{pinned: -1, reason: ReasonInitial})
		if ar.final {
			rec.setOutcome(ar.last, OutcomeWon, "")
		}
		settled = true // the one arm returned: its attempts are over
	}
	if ar.resp != nil {
		res.fill(ar.resp)
	}
	if timedOut() {
		return timeout(ar.err)
	}
	if op.Kind.IsWrite() && !acct.EnableMultipleWriteLocations {
		if err := writeRegionDown(acct, rec, ar); err != nil {
			return finish(err)
		}
	}
	return finish(ar.err)
}

// WriteRegionDownError is a write to a single-write account whose write region did not
// take it: it answered 503 or 500, timed out, or refused the connection. Nothing else can
// take the write, so the error says so, and what still works.
type WriteRegionDownError struct {
	Region      string
	ReadRegions []string
	// Ambiguous says the request was sent and its outcome is unknown.
	Ambiguous bool
	Err       error
}

func (e *WriteRegionDownError) Error() string {
	msg := fmt.Sprintf("the write region %s did not take the write (%v)", e.Region, e.Err)
	if e.Ambiguous {
		msg += "; it may or may not have been applied"
	}
	msg += fmt.Sprintf(": this account takes writes in %s only, so writes resume when it recovers or the account fails over to another write region", e.Region)
	if len(e.ReadRegions) > 0 {
		msg += fmt.Sprintf("; reads still work from %s (cosmosctl read --exclude %q …)", strings.Join(e.ReadRegions, ", "), e.Region)
	}
	return msg
}

func (e *WriteRegionDownError) Unwrap() error { return e.Err }

func writeRegionDown(acct *cosmos.Account, rec *recorder, ar armResult) error {
	if ar.err == nil || ar.final {
		return nil
	}
	ambiguous := false
	var ne *cosmos.NetworkError
	switch {
	case errors.As(ar.err, &ne):
		ambiguous = ne.Sent
	case ar.resp != nil && (ar.resp.StatusCode == 503 || ar.resp.StatusCode == 500 || ar.resp.StatusCode == 408):
		ambiguous = ar.resp.StatusCode != 500
	default:
		return nil
	}
	region := acct.WritableLocations[0].Name
	var reads []string
	for _, l := range acct.ReadableLocations {
		if l.Name != region {
			reads = append(reads, l.Name)
		}
	}
	rec.note("the write region " + region + " is down for writes; reads can still go to the read regions")
	return &WriteRegionDownError{Region: region, ReadRegions: reads, Ambiguous: ambiguous, Err: ar.err}
}

// errE2ETimeout is the cancellation cause recorded on attempts the timeout cut short.
var errE2ETimeout = errors.New("end-to-end timeout expired")

func endpointOf(l cosmos.Location) string { return strings.TrimRight(l.Endpoint, "/") }

// armResult is how one arm ended: its last response (or error), whether that is a final
// result, and which attempt produced it.
type armResult struct {
	resp  *cosmos.Response
	err   error
	final bool
	last  int // index of the arm's last attempt, -1 if it sent none
}

// arm says how an arm of an operation runs.
type arm struct {
	// pinned is the index of the effective region the arm is pinned to, or -1 for the
	// first arm, which starts in the first effective region and may fail over.
	pinned int
	reason Reason
	// transient is called after each attempt that got a transient result (hedging
	// starts the next region at once); nil without hedging.
	transient func()
	// free reports whether an effective region is not yet claimed by an arm, and claim
	// takes it for the first arm's failover, so that a failover never goes where a
	// hedge arm already is; both nil without hedging.
	free  func(idx int) bool
	claim func(idx int) bool
}

// runArm sends an operation to its region and follows the retry policy: waits,
// failover to the next effective region (first arm only), and account refreshes.
func (c *Client) runArm(ctx context.Context, rec *recorder, op *Operation, acct *cosmos.Account, plan regionPlan, a arm) armResult {
	var st retries.State
	idx, reason := 0, a.reason
	if a.pinned >= 0 {
		idx = a.pinned
	}
	res := armResult{last: -1}
	tried := map[string]bool{} // replicas that failed this operation (direct mode)
	// tries counts the arm's attempts in its current region: the rung of the attempt
	// timeout ladder the next one uses.
	tries := 0
	for {
		region := plan.targets[idx]
		req := op.request(acct.EnableMultipleWriteLocations)
		target := endpointOf(region)
		key, replica, direct, derr := c.replicaTarget(ctx, op, region, tried)
		switch {
		case derr != nil:
			rec.note("direct mode: " + derr.Error() + "; the attempt goes through the gateway")
		case direct:
			target = strings.TrimRight(replica.URL, "/")
		}
		proxy, tc, viaProxy, perr := c.thinClientTarget(ctx, op, acct, region)
		switch {
		case perr != nil:
			rec.note(perr.Error() + "; the attempt goes through the gateway")
		case viaProxy:
			target = proxy
			r := *req
			r.ThinClient = tc
			req = &r
		}
		i := rec.begin(region.Name, target, reason)
		if viaProxy {
			rec.setTransport(i, TransportGateway2)
		}
		if direct {
			rec.setReplica(i, replica.URL, replica.Health.String(), replica.Primary)
		}
		res.last = i
		// With an end-to-end timeout, an attempt that another region could follow gets
		// at most half of what is left (fitTimeout): reads fail over on a timeout, and so
		// do writes on a multi-write account whose write retries are on (a timed-out
		// write may have been applied: only the policy sends it again). A hedged
		// operation (a.free set) is not fitted: its hedges reach the other regions at
		// their scheduled times, whatever the first attempt waits.
		moveOn := a.pinned < 0 && a.free == nil && (!op.Kind.IsWrite() || (acct.EnableMultipleWriteLocations && op.WriteRetries.Enabled())) &&
			nextRegion(plan, idx, nil) >= 0
		at := c.sendFitted(ctx, op.Kind.class(), tries, target, req, moveOn)
		tries++
		resp, err := at.resp, at.err
		res.resp, res.err = resp, err
		rec.setTimeout(i, at.timeout, at.expired)
		c.recordHealth(ctx, op, region.Name, at, direct)
		if ctx.Err() != nil && resp == nil {
			rec.cancel(i, context.Cause(ctx).Error())
			res.err = ctx.Err()
			return res
		}
		out := retries.Outcome{TimedOut: at.expired, Timeout: at.timeout}
		if resp != nil {
			out.StatusCode, out.SubStatus = resp.StatusCode, resp.SubStatus
			out.RetryAfter = retryAfterMs(err)
			rec.finishResponse(i, resp)
			if resp.StatusCode == 429 && op.Throttled != nil {
				op.Throttled(time.Duration(out.RetryAfter * float64(time.Millisecond)))
			}
		} else {
			var ne *cosmos.NetworkError
			if errors.As(err, &ne) {
				out.Sent = ne.Sent
			}
			rec.finish(i, 0, 0, 0, "", err.Error())
		}
		if direct {
			if replicaGone(resp, err) && !partitionGone(resp) {
				// The replica moved or died: route around it while its partition's
				// addresses refresh, and try another replica of the same region now.
				tried[replica.URL] = true
				how := "an address refresh is already in flight"
				if c.addr.Gone(key, replica.URL) {
					how = "address refresh started"
				}
				rec.setOutcome(i, OutcomeFailed, fmt.Sprintf("%s from replica %s: marked unhealthy, %s; trying another replica", statusText(resp), replica.URL, how))
				reason = ReasonRetry
				continue
			}
			if resp != nil {
				c.addr.Succeeded(key, replica.URL)
			}
		}
		if ownConflict(op, resp, rec.sent()) {
			rec.setOutcome(i, OutcomeFailed, fmt.Sprintf("%d after an earlier attempt of this write: checking the stored item's _trackingId", resp.StatusCode))
			if resolved, vi, ok := c.verifyTrackingID(ctx, rec, op, region, resp); ok {
				res.resp, res.err, res.final, res.last = resolved, nil, true, vi
				return res
			}
		}
		if rangeGone(op, resp) {
			what := "the query"
			if op.Kind == OpChangeFeed {
				what = "the change feed"
			}
			rec.setOutcome(i, OutcomeFailed, fmt.Sprintf("410/1002 from %s: partition key range %s is gone (split); %s goes on from its children", region.Name, op.RangeID, what))
			res.final = true
			return res
		}
		if resp != nil && retries.IsFinal(resp.StatusCode, resp.SubStatus) {
			if op.Kind == OpDelete && resp.StatusCode == 404 && rec.sent() > 1 {
				rec.note("404 on a retried delete: an earlier attempt, whose answer was lost, may have deleted the item")
			}
			res.final = true
			return res
		}
		// Reads fail over; so do writes on a multi-write account, where every region
		// takes them (the policy moves a write on only when it was not applied).
		next := -1
		if a.pinned < 0 && (!op.Kind.IsWrite() || acct.EnableMultipleWriteLocations) {
			next = nextRegion(plan, idx, a.free)
		}
		d := c.policy.Decide(&st, retries.Request{Write: op.Kind.IsWrite(), WriteRetries: op.WriteRetries.Enabled(), Region: region.Name, CanFailOver: next >= 0}, out)
		rec.setOutcome(i, OutcomeFailed, d.Note)
		if d.Action == retries.RetrySameRegion && a.transient != nil {
			// The arm waits to try its region again; hedging starts the next region now
			// rather than at its scheduled time. A failover already moves on to the next
			// region, and an arm that stops is itself the signal.
			a.transient()
		}
		switch d.Action {
		case retries.Stop:
			return res
		case retries.RetrySameRegion:
			if d.RefreshRouting {
				c.forgetRouting(op.Database, op.Container)
			}
			slept := c.clock.Now()
			ok := c.sleep(ctx, d.Wait)
			if d.Wait > 0 {
				rec.setWaited(i, c.clock.Now().Sub(slept))
			}
			if !ok {
				res.err = ctx.Err()
				return res
			}
			reason = ReasonRetry
		case retries.NextRegion:
			// Claim the region; a hedge arm may have taken it meanwhile, so take the
			// next free one then.
			for a.claim != nil && next >= 0 && !a.claim(next) {
				next = nextRegion(plan, next, a.free)
			}
			if next < 0 {
				return res
			}
			idx, tries = next, 0
			reason = ReasonFailover
		case retries.RefreshAccount:
			if a.pinned >= 0 {
				return res
			}
			fresh, ferr := c.topology.refresh(ctx)
			if ferr != nil {
				return res
			}
			nextPlan, perr := c.plan(fresh, op.ExcludeRegions, op.Kind.IsWrite())
			if perr != nil {
				return res
			}
			acct, plan = fresh, nextPlan
			rec.setPlan(plan)
			idx, tries = 0, 0
			reason = ReasonRetry
		}
	}
}

// nextRegion is the effective region the first arm would fail over to: the next one in
// order that is free (no hedge arm has claimed it), or -1.
func nextRegion(plan regionPlan, idx int, free func(int) bool) int {
	for j := idx + 1; j < len(plan.targets); j++ {
		if free == nil || free(j) {
			return j
		}
	}
	return -1
}

// sleep waits d on the engine's clock, or until ctx ends.
func (c *Client) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := c.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-ctx.Done():
		return false
	}
}

func retryAfterMs(err error) float64 {
	var ce *cosmos.Error
	if errors.As(err, &ce) {
		return float64(ce.RetryAfter) / float64(time.Millisecond)
	}
	return 0
}

func (r *Result) fill(resp *cosmos.Response) {
	r.StatusCode, r.SubStatus = resp.StatusCode, resp.SubStatus
	r.ETag, r.SessionToken, r.ActivityID, r.RequestCharge = resp.ETag, resp.SessionToken, resp.ActivityID, resp.RequestCharge
	if resp.StatusCode < 400 {
		r.Body = resp.Body
		if resp.Header != nil {
			r.Continuation = resp.Header.Get(cosmos.HeaderContinuation)
			r.QueryMetrics = resp.Header.Get(cosmos.HeaderQueryMetrics)
			r.IndexUtilization = resp.Header.Get(cosmos.HeaderIndexUtilization)
			r.QueryAdvice = resp.Header.Get(cosmos.HeaderQueryAdvice)
		}
	}
}

// replicaGone reports a replica that is no longer serving: a 410, or no answer at all
// (refused or reset connections).
func replicaGone(resp *cosmos.Response, err error) bool {
	if resp != nil {
		return resp.StatusCode == 410
	}
	var ne *cosmos.NetworkError
	return errors.As(err, &ne)
}

// partitionGone reports a 410 that is about the partition, not the replica that sent
// it: the range split or was merged (1002), is completing a split or a migration
// (1007, 1008), or the container's name now means another container (1000). Trying the
// range's other replicas is useless; the retry policy refreshes the routing and sends
// the request to the range that holds the key now, as the SDKs' PartitionKeyRangeGone
// handling re-reads the routing map rather than the addresses.
func partitionGone(resp *cosmos.Response) bool {
	return resp != nil && retries.IsRoutingGone(resp.StatusCode, resp.SubStatus)
}

func statusText(resp *cosmos.Response) string {
	if resp == nil {
		return "no answer"
	}
	if resp.SubStatus != 0 {
		return fmt.Sprintf("%d/%d", resp.StatusCode, resp.SubStatus)
	}
	return fmt.Sprint(resp.StatusCode)
}

// withE2ETimeout bounds ctx by an operation's end-to-end timeout on the engine's clock.
// timedOut reports whether the timeout, rather than the caller, ended ctx; stop releases
// the timer.
func (c *Client) withE2ETimeout(ctx context.Context, timeout time.Duration) (bounded context.Context, timedOut func() bool, stop func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	var expired atomic.Bool
	var t clock.Timer
	if timeout > 0 {
		ctx = context.WithValue(ctx, e2eDeadlineKey{}, c.clock.Now().Add(timeout))
		t = c.clock.AfterFunc(timeout, func() {
			expired.Store(true)
			cancel(errE2ETimeout)
		})
	}
	return ctx, expired.Load, func() {
		if t != nil {
			t.Stop()
		}
		cancel(nil)
	}
}
