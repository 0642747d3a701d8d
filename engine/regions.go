package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/health"
	"github.com/cosmosctl/cosmosctl/retries"
)

// RegionInfo is one region of the account as an operator sees it.
type RegionInfo struct {
	Name     string `json:"-"`
	Endpoint string `json:"endpoint"`
	Write    bool   `json:"write"`
	// ReadRank and WriteRank are the region's place in the effective read and write
	// order for the current settings (1 = first), 0 when it is not used.
	ReadRank  int    `json:"-"`
	WriteRank int    `json:"-"`
	Note      string `json:"note"`
	// The measurement (RegionsOptions.Measure): the time to the region's answer, its
	// status and request charge; Answered is false (and Error says why) when it gave
	// none, TimedOut when that was for want of time. Status, SubStatus and Latency are
	// written as null for a region that gave no answer (RegionInfoJSON).
	Measured      bool          `json:"-"`
	Answered      bool          `json:"-"`
	Latency       time.Duration `json:"-"`
	Status        int           `json:"-"`
	SubStatus     int           `json:"-"`
	RequestCharge float64       `json:"request_charge"`
	TimedOut      bool          `json:"timed_out"`
	Error         string        `json:"error,omitempty"`
}

// RegionsReport is the account's regions and how the current settings use them.
type RegionsReport struct {
	Account string `json:"account"`
	// Topology says where the regions and their roles come from: the account, asked by
	// this command, or (when it could not be asked) a topology saved earlier.
	Topology   TopologySource `json:"topology"`
	MultiWrite bool           `json:"multi_write"`
	// Consistency is the account's default consistency level (GET /
	// userConsistencyPolicy), which reads keep to unless they relax it.
	Consistency      string       `json:"consistency"`
	Regions          []RegionInfo `json:"regions"`
	EffectiveReads   []string     `json:"effective_read_regions"`
	EffectiveWrites  []string     `json:"effective_write_regions"`
	ReadFallback     string       `json:"read_fallback,omitempty"`
	WriteFallback    string       `json:"write_fallback,omitempty"`
	PreferredRegions []string     `json:"preferred_regions"`
	ExcludedRegions  []string     `json:"excluded_regions"`
	// Measurement says what each region's latency is the time of.
	Measurement *Measurement `json:"measurement"`
}

// TopologySource is where a regions report's topology comes from. Source is "account"
// (read from the service by this command, from Endpoint) or "saved" (the account could
// not be asked, Error says why: the topology is the one read at FetchedAt by an earlier
// command, and a failover since then is not in it).
type TopologySource struct {
	Source    string    `json:"source"`
	FetchedAt time.Time `json:"fetched_at"`
	Endpoint  string    `json:"endpoint,omitempty"`
	Error     string    `json:"error,omitempty"`
}

// Measurement is what the latency of each region measures: Request "read", a point
// read of ID in Database/Container pinned to the region (a data-plane read: a 404 is
// an answer), or "account", GET / to the regional endpoint (the account lookup, which
// says nothing of the region's data plane).
type Measurement struct {
	Request   string `json:"request"`
	Database  string `json:"database,omitempty"`
	Container string `json:"container,omitempty"`
	ID        string `json:"id,omitempty"`
	// TimeoutMs bounds each region's request (the end-to-end timeout, else the attempt
	// timeout's first rung).
	TimeoutMs float64 `json:"timeout_ms"`
	// Note says why a read was asked for and GET / measured instead (the container
	// could not be read).
	Note string `json:"note,omitempty"`
}

// RegionsOptions are what a regions report looks at.
type RegionsOptions struct {
	Exclude []string
	// Measure sends one request to each region, at once, and reports its latency: Read
	// (a point read, pinned to the region and never retried, whose outcome region
	// health records as any read's) when set, GET / otherwise. A Read without a
	// PartitionKey reads the key with its ID at every partition key path of the
	// container (the probe item's); when the container cannot be read, GET / is
	// measured and the Measurement's Note says why.
	Measure bool
	Read    *Operation
	// Timeout bounds each region's read as its end-to-end timeout: one that does not
	// answer in time counts as a timeout of the region, as the SDKs' circuit breakers
	// count an operation their end-to-end timeout cancelled. 0: the attempt timeout
	// alone bounds it.
	Timeout time.Duration
}

// Regions reports the account's regions as the account says they are now (it asks every
// endpoint at once; a saved topology is only the fallback for an account that does not
// answer, and the report says so), their effective order for reads and writes with
// these exclusions, and what one request to each, at once, measured.
func (c *Client) Regions(ctx context.Context, o RegionsOptions) (*RegionsReport, error) {
	var deadline time.Time
	lctx := ctx
	if o.Timeout > 0 {
		// The whole report, the account lookup included, is bounded by the timeout on
		// the engine's clock; each region's read gets what is left as its own end-to-end
		// timeout, so that one that does not answer in time is the region's timeout.
		deadline = c.clock.Now().Add(o.Timeout)
		var cancel context.CancelFunc
		lctx, cancel = context.WithCancel(ctx)
		defer cancel()
		t := c.clock.AfterFunc(o.Timeout, cancel)
		defer t.Stop()
	}
	acct, fresh, err := c.topology.askAll(lctx, c.clock.Now)
	if err != nil {
		if ctx.Err() == nil && lctx.Err() != nil {
			return nil, &TimeoutError{Timeout: o.Timeout, Cause: err}
		}
		return nil, err
	}
	reads, err := planRegions(acct, c.preferred, o.Exclude, false)
	if err != nil {
		return nil, err
	}
	writes, err := planRegions(acct, c.preferred, o.Exclude, true)
	if err != nil {
		return nil, err
	}
	rep := &RegionsReport{
		Account: acct.ID, MultiWrite: acct.EnableMultipleWriteLocations, Consistency: acct.UserConsistencyPolicy.DefaultConsistencyLevel,
		Topology:       TopologySource{Source: "account", FetchedAt: fresh.FetchedAt.UTC(), Endpoint: fresh.Endpoint},
		EffectiveReads: namesOf(reads.targets), EffectiveWrites: namesOf(writes.targets),
		ReadFallback: reads.fallback, WriteFallback: writes.fallback,
		PreferredRegions: nonNil(reads.preferred), ExcludedRegions: nonNil(reads.excluded),
	}
	if fresh.Saved {
		why := fresh.Err.Error()
		var le *AccountLookupError
		if errors.As(fresh.Err, &le) {
			why = strings.Join(le.Tried, "; ")
		}
		rep.Topology = TopologySource{Source: "saved", FetchedAt: fresh.FetchedAt.UTC(), Error: why}
	}
	for i, l := range acct.ReadableLocations {
		info := RegionInfo{Name: l.Name, Endpoint: endpointOf(l), Note: reads.notes[i].Note}
		for _, w := range acct.WritableLocations {
			if w.Name == l.Name {
				info.Write = true
			}
		}
		info.ReadRank = indexOf(rep.EffectiveReads, l.Name) + 1
		info.WriteRank = indexOf(rep.EffectiveWrites, l.Name) + 1
		rep.Regions = append(rep.Regions, info)
	}
	if o.Measure {
		rep.Measurement = c.measure(ctx, o, acct, rep.Regions, deadline)
	}
	return rep, nil
}

// measure sends each region its request at once and fills in what each got; deadline,
// when not zero, bounds them all.
func (c *Client) measure(ctx context.Context, o RegionsOptions, acct *cosmos.Account, regions []RegionInfo, deadline time.Time) *Measurement {
	m := &Measurement{Request: "account", TimeoutMs: ms(c.timeouts.response(ClassAccount, 0))}
	var prober *Client
	var note string
	if o.Read != nil && o.Read.PartitionKey == nil {
		read, err := c.probeItemRead(ctx, *o.Read, acct, deadline)
		if err != nil {
			note = fmt.Sprintf("the container %s/%s could not be read: %s", o.Read.Database, o.Read.Container, shortError(err))
			o.Read = nil
		} else {
			o.Read = &read
		}
	}
	if o.Read == nil {
		m.Note = note
	} else {
		m = &Measurement{Request: "read", Database: o.Read.Database, Container: o.Read.Container, ID: o.Read.ID,
			TimeoutMs: ms(c.timeouts.response(ClassPoint, 0))}
		// Never retried: a 503 or a timeout is the region's answer, not a reason to ask
		// another region.
		prober = c.Derive(nil, retries.Policy{})
	}
	var left time.Duration
	if !deadline.IsZero() {
		left = deadline.Sub(c.clock.Now())
		m.TimeoutMs = max(min(m.TimeoutMs, ms(left)), 0)
	}
	all := acct.ReadRegions()
	var wg sync.WaitGroup
	for i := range regions {
		r := &regions[i]
		r.Measured = true
		if !deadline.IsZero() && left <= 0 {
			r.TimedOut, r.Error = true, "no time was left of the end-to-end timeout after the account lookup"
			continue
		}
		wg.Go(func() {
			start := c.clock.Now()
			var resp *cosmos.Response
			var err error
			if prober != nil {
				op := *o.Read
				op.ExcludeRegions, op.E2ETimeout = without(all, r.Name), left
				var res *Result
				res, err = prober.Execute(ctx, op)
				if res != nil && res.StatusCode != 0 {
					resp = &cosmos.Response{StatusCode: res.StatusCode, SubStatus: res.SubStatus}
				}
				if res != nil && res.Diagnostics != nil {
					r.RequestCharge = res.Diagnostics.RequestCharge
				}
			} else {
				pctx := ctx
				if left > 0 {
					var cancel context.CancelCauseFunc
					pctx, cancel = context.WithCancelCause(ctx)
					defer cancel(nil)
					t := c.clock.AfterFunc(left, func() { cancel(errE2ETimeout) })
					defer t.Stop()
				}
				resp, err = c.do(pctx, ClassAccount, r.Endpoint, &cosmos.Request{Method: http.MethodGet, Path: "/"})
				if resp == nil && errors.Is(context.Cause(pctx), errE2ETimeout) {
					err = &TimeoutError{Timeout: left, Cause: err}
				}
				if resp != nil {
					r.RequestCharge = resp.RequestCharge
				}
			}
			r.Latency = c.clock.Now().Sub(start)
			if st, sub, ok := cosmos.Status(err); ok && resp == nil {
				resp = &cosmos.Response{StatusCode: st, SubStatus: sub}
			}
			if resp != nil {
				r.Answered, r.Status, r.SubStatus = true, resp.StatusCode, resp.SubStatus
			}
			var te *TimeoutError
			r.TimedOut = !r.Answered && (errors.As(err, &te) || IsAttemptTimeout(err) || errors.Is(err, context.DeadlineExceeded))
			switch {
			case r.TimedOut:
				r.Error = fmt.Sprintf("no answer within %s", time.Duration(m.TimeoutMs*float64(time.Millisecond)).Round(time.Millisecond))
			case err != nil && !r.Answered:
				r.Error = err.Error()
			}
		})
	}
	wg.Wait()
	return m
}

// probeItemRead is read with the key that has its ID at every partition key path of
// the container (one metadata read, cached), bounded by deadline when it is not zero.
func (c *Client) probeItemRead(ctx context.Context, read Operation, acct *cosmos.Account, deadline time.Time) (Operation, error) {
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		t := c.clock.AfterFunc(deadline.Sub(c.clock.Now()), cancel)
		defer t.Stop()
		// The container's definition is read region after region, each attempt fitted
		// into what is left, so that a hung first region leaves time for the next and
		// for the reads that follow.
		ctx = context.WithValue(ctx, e2eDeadlineKey{}, deadline)
	}
	def, err := c.partitionKeyDefinition(ctx, read.Database, read.Container, acct, endpointOf(acct.WritableLocations[0]))
	if err != nil {
		return read, err
	}
	values := make([]any, len(def.Paths))
	for i := range values {
		values[i] = read.ID
	}
	read.PartitionKey, err = cosmos.PK(values...)
	return read, err
}

// shortError is err's message, or its status for a service error ("404 NotFound").
func shortError(err error) string {
	if st, sub, ok := cosmos.Status(err); ok {
		return fmt.Sprintf("%d %s", st, cosmos.StatusName(st, sub))
	}
	if errors.Is(err, context.Canceled) {
		return "no answer in time"
	}
	return err.Error()
}

// without is list less s, in a new slice.
func without(list []string, s string) []string {
	out := make([]string, 0, len(list))
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

func namesOf(ls []cosmos.Location) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Name
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Derive returns a client that shares this one's endpoint, transport, clock and cached
// account topology, with its own preferred regions and retry policy. Probes use it to
// send requests that are never retried, so that every 429 and 503 is counted.
func (c *Client) Derive(preferred []string, retry retries.Policy) *Client {
	o := c.opts
	o.PreferredRegions, o.Retry, o.Direct = preferred, &retry, false
	d, _ := New(o)
	c.share(d)
	d.addr = c.addr
	return d
}

// WithHealth returns a client like this one (endpoint, transport, clock, topology,
// preferred regions, retry policy, connection mode) with its own region health store.
func (c *Client) WithHealth(h *health.Store) *Client {
	o := c.opts
	o.Retry = &c.policy
	o.Health = h
	d, _ := New(o)
	c.share(d)
	if c.addr != nil {
		d.addr.Close()
		d.addr = c.addr
	}
	return d
}

// Ping sends one GET / to a region's own endpoint, once, without retries: the cheapest
// round trip through that region's gateway. It returns what the transport does: the
// response, with a *cosmos.Error for a status of 400 or more, or a *cosmos.NetworkError.
func (c *Client) Ping(ctx context.Context, region string) (*cosmos.Response, error) {
	acct, err := c.topology.get(ctx)
	if err != nil {
		return nil, err
	}
	for _, l := range append(append([]cosmos.Location(nil), acct.ReadableLocations...), acct.WritableLocations...) {
		if cosmos.SameRegion(l.Name, region) {
			return c.do(ctx, ClassAccount, endpointOf(l), &cosmos.Request{Method: http.MethodGet, Path: "/"})
		}
	}
	return nil, inputErrorf("region %q is not a region of this account; its regions are %s", region, strings.Join(quoted(acct.ReadRegions()), ", "))
}

// PartitionKeyPaths returns a container's partition key paths ("/pk", or one per level of
// a hierarchical key), read once per process from the write region, else from the other
// regions in turn. within, when not 0, bounds the read as an end-to-end timeout does:
// each region's attempt is fitted into what is left (fitTimeout), so that a hung write
// region leaves time for the next region to answer.
func (c *Client) PartitionKeyPaths(ctx context.Context, database, container string, within time.Duration) ([]string, error) {
	if within > 0 {
		var stop func()
		ctx, _, stop = c.withE2ETimeout(ctx, within)
		defer stop()
	}
	acct, err := c.topology.get(ctx)
	if err != nil {
		return nil, err
	}
	def, err := c.partitionKeyDefinition(ctx, database, container, acct, endpointOf(acct.WritableLocations[0]))
	if err != nil {
		return nil, err
	}
	return append([]string(nil), def.Paths...), nil
}
