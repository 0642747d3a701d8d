package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// RequestClass is the kind of request an attempt timeout is chosen for.
type RequestClass int

const (
	// ClassPoint is an item operation: read, create, upsert, replace, delete, patch.
	ClassPoint RequestClass = iota
	// ClassMetadata is a container, partition key range or replica address read.
	ClassMetadata
	// ClassAccount is the account lookup, GET /, and the regional pings.
	ClassAccount
	// ClassQuery is one page of a query. A page can take the service longer than a
	// point read (it runs the query until the page is full or its time slice ends), so
	// its ladder starts higher; hedging, not the attempt timeout, is what answers a
	// slow region quickly.
	ClassQuery
)

func (c RequestClass) String() string {
	return [...]string{"point", "metadata", "account", "query"}[c]
}

// class is the request class of an operation's own attempts: a query plan is
// metadata-like (small, the same everywhere), a query page has its own ladder.
func (k OpKind) class() RequestClass {
	switch k {
	case OpQuery, OpChangeFeed:
		// A change feed poll is a page of changes: the service fills it as it fills a
		// query page, so it gets the query ladder.
		return ClassQuery
	case OpQueryPlan:
		return ClassMetadata
	}
	return ClassPoint
}

// AttemptTimeouts bound each attempt on its own, apart from the end-to-end timeout that
// bounds the whole operation. Each list is a ladder: the first attempt in a region uses
// the first rung, a retry in the same region the next one, the last rung repeats. A
// hedge arm and a failover start again at the first rung: they go to another region.
//
// The defaults follow the SDKs' ladders (the .NET and Java SDKs give point operations
// 6 s, 10 s, 65 s and connecting 1 s, 3 s, 5 s), with shorter ones for metadata and the
// account lookup, which are small and which a fresh process waits on before anything
// else, and longer first rungs for query pages (10 s, 20 s, 65 s: the service may spend
// seconds filling a page; the Java SDK gives every gateway query 60 s and the query
// plan 5 s). Every timeout is clamped to what is left of the end-to-end timeout.
type AttemptTimeouts struct {
	Connect  []time.Duration
	Point    []time.Duration
	Metadata []time.Duration
	Account  []time.Duration
	// Query is the ladder of query pages (the query plan request is metadata).
	Query []time.Duration
}

// DefaultAttemptTimeouts returns the ladders cosmosctl uses unless told otherwise.
func DefaultAttemptTimeouts() AttemptTimeouts {
	return AttemptTimeouts{
		Connect:  []time.Duration{1 * time.Second, 3 * time.Second, 5 * time.Second},
		Point:    []time.Duration{6 * time.Second, 10 * time.Second, 65 * time.Second},
		Metadata: []time.Duration{3 * time.Second, 6 * time.Second, 10 * time.Second},
		Account:  []time.Duration{2 * time.Second, 5 * time.Second},
		Query:    []time.Duration{10 * time.Second, 20 * time.Second, 65 * time.Second},
	}
}

// Capped returns the ladders with every rung at most d: what --attempt-timeout asks for
// ("no attempt waits longer than d"). d <= 0 returns t unchanged.
func (t AttemptTimeouts) Capped(d time.Duration) AttemptTimeouts {
	if d <= 0 {
		return t
	}
	capList := func(list []time.Duration) []time.Duration {
		out := make([]time.Duration, len(list))
		for i, x := range list {
			out[i] = min(x, d)
		}
		return out
	}
	return AttemptTimeouts{Connect: capList(t.Connect), Point: capList(t.Point), Metadata: capList(t.Metadata), Account: capList(t.Account), Query: capList(t.Query)}
}

// Validate reports a ladder that is empty or has a rung that is not positive.
func (t AttemptTimeouts) Validate() error {
	for name, list := range map[string][]time.Duration{"connect": t.Connect, "point": t.Point, "metadata": t.Metadata, "account": t.Account, "query": t.Query} {
		if len(list) == 0 {
			return fmt.Errorf("the %s attempt timeouts are empty: give at least one duration", name)
		}
		for _, d := range list {
			if d <= 0 {
				return fmt.Errorf("attempt timeouts must be more than 0 (the %s ladder has %s)", name, d)
			}
		}
	}
	return nil
}

// String is the ladders as diagnostics and `config show` print them.
func (t AttemptTimeouts) String() string {
	f := func(list []time.Duration) string {
		parts := make([]string, len(list))
		for i, d := range list {
			parts[i] = d.String()
		}
		return strings.Join(parts, "→")
	}
	return fmt.Sprintf("point %s, query %s, metadata %s, account %s, connect %s", f(t.Point), f(t.Query), f(t.Metadata), f(t.Account), f(t.Connect))
}

func rung(list []time.Duration, i int) time.Duration {
	if len(list) == 0 {
		return 0
	}
	return list[min(i, len(list)-1)]
}

// response is the response timeout of the attempt of class c at rung i.
func (t AttemptTimeouts) response(c RequestClass, i int) time.Duration {
	switch c {
	case ClassMetadata:
		return rung(t.Metadata, i)
	case ClassAccount:
		return rung(t.Account, i)
	case ClassQuery:
		return rung(t.Query, i)
	}
	return rung(t.Point, i)
}

// AttemptTimeoutError is an attempt that got no answer within its own timeout. It is
// the Err of a *cosmos.NetworkError, whose Sent says whether the request had reached
// the wire (a write that was sent may have been applied).
type AttemptTimeoutError struct {
	Timeout time.Duration
	Class   RequestClass
}

func (e *AttemptTimeoutError) Error() string {
	return fmt.Sprintf("no answer within the attempt timeout of %s", e.Timeout)
}

// IsAttemptTimeout reports whether err is (or wraps) an expired attempt timeout.
func IsAttemptTimeout(err error) bool {
	var ae *AttemptTimeoutError
	return errors.As(err, &ae)
}

// e2eDeadlineKey carries the end-to-end deadline (on the engine's clock) in a context, so
// that an attempt's timeout is clamped to what is left of it.
type e2eDeadlineKey struct{}

// sent is one attempt's result: the response or error, the timeout it was given, and
// whether that timeout expired.
type sent struct {
	resp    *cosmos.Response
	err     error
	timeout time.Duration
	expired bool
	// skipped: nothing was sent, the end-to-end timeout had run out.
	skipped bool
}

// fitTimeout is the timeout of one attempt: its ladder rung, fitted into what is left of
// the end-to-end timeout (left; hasDeadline false when the operation has none).
//
// An attempt that another region could follow if it timed out (moveOn) gets at most half
// of what is left, so that a hung region is always left in time for the next one to
// answer: with a 5 s end-to-end timeout and a 6 s point-read rung, the first region gets
// 2.5 s, the next 1.25 s if a third remains, the last all that is left. Without that, an
// end-to-end timeout shorter than the first rung would let a hung first region take the
// whole operation, and failover would never happen. The halved timeout is the attempt's
// own (it expires, is a timeout of the region, and the operation fails over);
// one that reaches the end-to-end deadline is clamped to it, and is the end-to-end
// timeout's to enforce.
func fitTimeout(rung, left time.Duration, hasDeadline, moveOn bool) (timeout time.Duration, clamped bool) {
	timeout = rung
	if !hasDeadline {
		return timeout, false
	}
	if moveOn && left/2 < timeout {
		timeout = left / 2
	}
	if left <= timeout {
		return left, true
	}
	return timeout, false
}

// send sends one attempt of class class at ladder rung i to endpoint, bounded by its
// attempt timeout on the engine's clock (fitted into what is left of the end-to-end
// timeout, see fitTimeout; moveOn says another region would follow a timeout) and, for
// new connections, by the connect timeout. An expired attempt timeout comes back as a
// *cosmos.NetworkError wrapping *AttemptTimeoutError; the caller's own cancellation (or
// the end-to-end timeout) comes back as the context's error, as before.
func (c *Client) send(ctx context.Context, class RequestClass, i int, endpoint string, req *cosmos.Request) sent {
	return c.sendFitted(ctx, class, i, endpoint, req, false)
}

func (c *Client) sendFitted(ctx context.Context, class RequestClass, i int, endpoint string, req *cosmos.Request, moveOn bool) sent {
	var left time.Duration
	dl, hasDeadline := ctx.Value(e2eDeadlineKey{}).(time.Time)
	if hasDeadline {
		left = dl.Sub(c.clock.Now())
	}
	timeout, clamped := fitTimeout(c.timeouts.response(class, i), left, hasDeadline, moveOn)
	if timeout <= 0 {
		// The end-to-end timeout is about to fire: nothing is sent.
		return sent{err: &cosmos.NetworkError{Endpoint: endpoint, Err: errE2ETimeout}, skipped: true}
	}
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var expired atomic.Bool
	if !clamped {
		// A timeout clamped to the end-to-end deadline is the end-to-end timeout's to
		// enforce: the operation ends then, and says so.
		t := c.clock.AfterFunc(timeout, func() {
			expired.Store(true)
			cancel(&AttemptTimeoutError{Timeout: timeout, Class: class})
		})
		defer t.Stop()
	}
	actx = cosmos.WithConnectTimeout(actx, min(rung(c.timeouts.Connect, i), timeout))
	resp, err := c.transport.Do(actx, endpoint, req)
	out := sent{resp: resp, err: err, timeout: timeout}
	if resp == nil && ctx.Err() == nil && expired.Load() {
		var ne *cosmos.NetworkError
		wasSent := errors.As(err, &ne) && ne.Sent
		out.err = &cosmos.NetworkError{Endpoint: endpoint, Sent: wasSent, Err: &AttemptTimeoutError{Timeout: timeout, Class: class}}
		out.expired = true
	}
	return out
}

// do sends one request of class class with the first rung's timeout: metadata reads,
// pings and the checks that follow an operation's own attempts.
func (c *Client) do(ctx context.Context, class RequestClass, endpoint string, req *cosmos.Request) (*cosmos.Response, error) {
	at := c.send(ctx, class, 0, endpoint, req)
	return at.resp, at.err
}
