package engine

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"time"

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
	res := &Result{}
	finish := func(err error) (*Result, error) {
		res.Diagnostics = rec.snapshot()
		return res, err
	}
	if op.E2ETimeout < 0 {
		return finish(inputErrorf("the end-to-end timeout must not be negative (got %s)", op.E2ETimeout))
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var timedOut atomic.Bool
	if op.E2ETimeout > 0 {
		t := c.clock.AfterFunc(op.E2ETimeout, func() {
			timedOut.Store(true)
			cancel(errE2ETimeout)
		})
		defer t.Stop()
	}
	timeout := func(cause error) (*Result, error) {
		rec.cancelAll("end-to-end timeout expired")
		rec.mu.Lock()
		rec.d.TimedOut = true
		rec.mu.Unlock()
		return finish(&TimeoutError{Timeout: op.E2ETimeout, Cause: cause})
	}

	acct, err := c.topology.get(ctx)
	if err != nil {
		if timedOut.Load() {
			return timeout(err)
		}
		return finish(err)
	}
	plan, err := planRegions(acct, c.preferred, op.ExcludeRegions, op.Kind.IsWrite())
	if err != nil {
		return finish(err)
	}
	rec.setPlan(plan)
	if err := c.prepare(ctx, &op, endpointOf(plan.targets[0])); err != nil {
		if timedOut.Load() {
			return timeout(err)
		}
		return finish(err)
	}
	rec.mu.Lock()
	rec.d.ID, rec.d.PartitionKey = op.ID, json.RawMessage(op.PartitionKey.JSON())
	rec.mu.Unlock()

	err = c.runArm(ctx, rec, res, &op, acct, plan)
	if timedOut.Load() {
		return timeout(err)
	}
	return finish(err)
}

// errE2ETimeout is the cancellation cause recorded on attempts the timeout cut short.
var errE2ETimeout = errors.New("end-to-end timeout expired")

func endpointOf(l cosmos.Location) string { return strings.TrimRight(l.Endpoint, "/") }

// runArm sends an operation to its first effective region and follows the retry
// policy: waits, failovers to the next effective region, and account refreshes.
func (c *Client) runArm(ctx context.Context, rec *recorder, res *Result, op *Operation, acct *cosmos.Account, plan regionPlan) error {
	var st retries.State
	idx := 0
	reason := ReasonInitial
	for {
		region := plan.targets[idx]
		req := buildRequest(op, acct.EnableMultipleWriteLocations)
		i := rec.begin(region.Name, endpointOf(region), reason)
		resp, err := c.transport.Do(ctx, endpointOf(region), req)
		if ctx.Err() != nil && resp == nil {
			rec.cancel(i, context.Cause(ctx).Error())
			return ctx.Err()
		}
		out := retries.Outcome{}
		var errText string
		if resp != nil {
			out.StatusCode, out.SubStatus = resp.StatusCode, resp.SubStatus
			out.RetryAfter = retryAfterMs(err)
			rec.finish(i, resp.StatusCode, resp.SubStatus, resp.RequestCharge, resp.ActivityID, "")
		} else {
			var ne *cosmos.NetworkError
			if errors.As(err, &ne) {
				out.Sent = ne.Sent
			}
			errText = err.Error()
			rec.finish(i, 0, 0, 0, "", errText)
		}
		d := c.policy.Decide(&st, retries.Request{Write: op.Kind.IsWrite(), Region: region.Name, CanFailOver: !op.Kind.IsWrite() && idx+1 < len(plan.targets)}, out)
		switch d.Action {
		case retries.Stop:
			if resp != nil && retries.IsFinal(resp.StatusCode, resp.SubStatus) {
				rec.setOutcome(i, OutcomeWon, d.Note)
				res.fill(resp)
				return err
			}
			rec.setOutcome(i, OutcomeFailed, d.Note)
			if resp != nil {
				res.fill(resp)
			}
			return err
		case retries.RetrySameRegion:
			rec.setOutcome(i, OutcomeFailed, d.Note)
			if !c.sleep(ctx, d.Wait) {
				return ctx.Err()
			}
			reason = ReasonRetry
		case retries.NextRegion:
			rec.setOutcome(i, OutcomeFailed, d.Note)
			idx++
			reason = ReasonFailover
		case retries.RefreshAccount:
			rec.setOutcome(i, OutcomeFailed, d.Note)
			fresh, ferr := c.topology.refresh(ctx)
			if ferr != nil {
				return err
			}
			acct = fresh
			next, perr := planRegions(acct, c.preferred, op.ExcludeRegions, op.Kind.IsWrite())
			if perr != nil {
				return err
			}
			plan = next
			rec.setPlan(plan)
			idx = 0
			reason = ReasonRetry
		}
	}
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
	}
}
