package leases

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/query"
)

// DefaultExpiry is how long a lease may go unrenewed before the SDKs take it for
// expired: .NET ChangeFeedLeaseOptions.DefaultExpirationInterval, 60 s (owners renew
// every 17 s, DefaultRenewInterval; the Java SDK's models/ChangeFeedProcessorOptions has
// the same, DEFAULT_EXPIRATION_INTERVAL and DEFAULT_RENEW_INTERVAL). A lease whose timestamp is older than this is expired
// (EqualPartitionsBalancingStrategy.IsExpired: timestamp + expiration < now).
const DefaultExpiry = 60 * time.Second

// DefaultParallelism is how many leases are estimated at once, as the .NET estimator
// reads every lease of a page at once (Task.WhenAll).
const DefaultParallelism = 8

// States of a lease.
const (
	// StateOK is a lease its owner renewed within the expiry.
	StateOK = "ok"
	// StateStuck is a lease with an owner that has not renewed it for longer than the
	// expiry: the owner stopped (crashed, hung, lost its connection) without releasing
	// it, and until another instance takes it over, nobody reads its range.
	StateStuck = "stuck"
	// StateUnowned is a lease nobody owns: released by a processor that stopped, or not
	// yet acquired. A running processor takes it within its acquire interval (13 s).
	StateUnowned = "unowned"
)

// Options say which processor's leases to read and where its feed is.
type Options struct {
	Client *engine.Client
	// Database and Container are the monitored container, whose change feed the
	// processor reads.
	Database, Container string
	// LeaseDatabase and LeaseContainer hold the leases.
	LeaseDatabase, LeaseContainer string
	// Prefix keeps only the leases whose id starts with it: the processor's name (its
	// lease prefix), to tell one processor's leases from another's in a shared lease
	// container.
	Prefix string
	// Expiry is how long a lease may go unrenewed before it counts as expired (0:
	// DefaultExpiry).
	Expiry time.Duration
	// Now is when the ages are counted to.
	Now         time.Time
	Parallelism int
	// Page is the template of every request: end-to-end timeout, hedging, excluded
	// regions, consistency.
	Page engine.Operation
	// OnPoll, if set, is told of every change feed read, as it ends (--diagnostics). It
	// is called from several goroutines at once.
	OnPoll func(Poll)
}

// Poll is one change feed read of a lease's range.
type Poll struct {
	Lease, RangeID string
	// StatusCode is the answer's (200, 304, 410), 0 without one.
	StatusCode    int
	Items         int
	RequestCharge float64
	// Duration is the engine's, from its diagnostics.
	Duration    time.Duration
	Err         error
	Diagnostics *engine.Diagnostics
}

// Report is the estimate of every lease of the processor.
type Report struct {
	Leases []Estimate
	// Skipped are the documents of the lease container that were not estimated.
	Skipped       []Skipped
	RequestCharge float64
	// Warnings are what a person should know about the estimate: leases whose ids name
	// no container, estimated as the monitored container's.
	Warnings []string
}

// Skipped is a document of the lease container left out, and why.
type Skipped struct {
	ID     string
	Reason string
}

// Estimate is one lease's state and lag.
type Estimate struct {
	Lease Lease
	// Ranges are the partition key ranges of the monitored container that were read for
	// the lease.
	Ranges []string
	// Lag is the estimated number of changes after the lease's continuation; nil when it
	// could not be estimated (Err says why).
	Lag   *int64
	Age   time.Duration
	State string
	// Note says where a lag is the SDKs' placeholder rather than a count (a lease never
	// checkpointed, a range that split).
	Note string
	Err  error
}

// LeaseContainerError is a lease container that cannot be read: missing (404), or
// anything else its query answered.
type LeaseContainerError struct {
	Database, Container string
	Err                 error
}

func (e *LeaseContainerError) Error() string {
	if status, _, ok := cosmos.Status(e.Err); ok && status == 404 {
		return fmt.Sprintf("the lease container %s/%s does not exist: give the processor's lease container with --lease-container (and --lease-database when it is in another database)", e.Database, e.Container)
	}
	return fmt.Sprintf("reading the leases in %s/%s: %v", e.Database, e.Container, e.Err)
}

func (e *LeaseContainerError) Unwrap() error { return e.Err }

// Run reads the leases and estimates each.
func Run(ctx context.Context, o Options) (*Report, error) {
	if o.Expiry <= 0 {
		o.Expiry = DefaultExpiry
	}
	if o.Parallelism <= 0 {
		o.Parallelism = DefaultParallelism
	}
	rep := &Report{}
	docs, charge, err := readLeaseDocuments(ctx, o)
	rep.RequestCharge += charge
	if err != nil {
		return rep, &LeaseContainerError{Database: o.LeaseDatabase, Container: o.LeaseContainer, Err: err}
	}
	var mine []Lease
	var bad []Estimate
	for _, raw := range docs {
		l, err := Parse(raw)
		switch {
		case errors.Is(err, ErrNotALease):
			rep.Skipped = append(rep.Skipped, Skipped{ID: l.ID, Reason: strings.TrimPrefix(err.Error(), ErrNotALease.Error()+": ")})
			continue
		case !strings.HasPrefix(l.ID, o.Prefix):
			rep.Skipped = append(rep.Skipped, Skipped{ID: l.ID, Reason: "another processor's: its id does not start with " + strconv.Quote(o.Prefix)})
			continue
		case err != nil:
			bad = append(bad, Estimate{Lease: l, Err: err, State: state(l, o)})
			continue
		}
		mine = append(mine, l)
	}
	if len(mine)+len(bad) > 0 {
		rid, charge, err := containerRID(ctx, o)
		rep.RequestCharge += charge
		if err != nil {
			return rep, err
		}
		var skipped []Skipped
		mine, skipped, bad = ofContainer(mine, bad, o, rid)
		rep.Skipped = append(rep.Skipped, skipped...)
		if len(skipped) == 0 && len(mine)+len(bad) > 0 && !namesContainer(mine, bad, o, rid) {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("no lease id names container %s/%s (…_%s..TOKEN, or …_%s_%s..TOKEN): every lease is estimated as its; give --lease-prefix to choose a processor's",
				o.Database, o.Container, rid, o.Database, o.Container))
		}
	}
	var ranges []cosmos.PartitionKeyRange
	if len(mine) > 0 {
		if ranges, _, err = o.Client.PartitionKeyRanges(ctx, o.Database, o.Container, false, o.Page.E2ETimeout); err != nil {
			return rep, err
		}
	}
	est := make([]Estimate, len(mine))
	charges := make([]float64, len(mine))
	sem := make(chan struct{}, o.Parallelism)
	var wg sync.WaitGroup
	for i, l := range mine {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			est[i], charges[i] = estimate(ctx, o, l, ranges)
		}()
	}
	wg.Wait()
	for _, c := range charges {
		rep.RequestCharge += c
	}
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	rep.Leases = append(est, bad...)
	sort.SliceStable(rep.Leases, func(i, j int) bool { return lessLease(rep.Leases[i].Lease, rep.Leases[j].Lease) })
	return rep, nil
}

// containerRID is the monitored container's resource id, which lease ids carry.
func containerRID(ctx context.Context, o Options) (string, float64, error) {
	resp, _, err := o.Client.Metadata(ctx, engine.MetadataRequest{Method: http.MethodGet, Path: cosmos.ContainerPath(o.Database, o.Container),
		Database: o.Database, Container: o.Container, ExcludeRegions: o.Page.ExcludeRegions, E2ETimeout: o.Page.E2ETimeout})
	if err != nil {
		return "", 0, err
	}
	var c cosmos.Container
	if err := json.Unmarshal(resp.Body, &c); err != nil {
		return "", resp.RequestCharge, fmt.Errorf("the container %s/%s is not a container resource: %v", o.Database, o.Container, err)
	}
	return c.RID, resp.RequestCharge, nil
}

// leaseOf reports whether a lease id names the monitored container: the part before
// ".." ends with its resource id ("{prefix}{host}_{dbRid}_{collRid}", .NET's
// GetMonitoredDatabaseAndContainerRidAsync and Java's effective partition key range
// leases) or with its database's and its names ("{prefix}{host}_{db}_{coll}", Java's
// partition key range leases, IncrementalChangeFeedProcessorImpl.getLeasePrefix).
func leaseOf(id, db, coll, rid string) bool {
	i := strings.LastIndex(id, "..")
	if i < 0 {
		return false
	}
	head := id[:i]
	return (rid != "" && strings.HasSuffix(head, "_"+rid)) || strings.HasSuffix(head, "_"+db+"_"+coll)
}

// ofContainer keeps the leases of the monitored container when any lease id names it:
// a lease container that several processors share holds other containers' leases,
// whose ranges are not this container's. When no id names it (ids of another form),
// every lease is kept, and Run warns.
func ofContainer(mine []Lease, bad []Estimate, o Options, rid string) ([]Lease, []Skipped, []Estimate) {
	if !namesContainer(mine, bad, o, rid) {
		return mine, nil, bad
	}
	var keep []Lease
	var skipped []Skipped
	why := "another container's: its id names neither " + o.Database + "/" + o.Container + "'s resource id " + rid + " nor " + o.Database + "_" + o.Container
	for _, l := range mine {
		if leaseOf(l.ID, o.Database, o.Container, rid) {
			keep = append(keep, l)
		} else {
			skipped = append(skipped, Skipped{ID: l.ID, Reason: why})
		}
	}
	var keepBad []Estimate
	for _, e := range bad {
		if leaseOf(e.Lease.ID, o.Database, o.Container, rid) {
			keepBad = append(keepBad, e)
		} else {
			skipped = append(skipped, Skipped{ID: e.Lease.ID, Reason: why})
		}
	}
	return keep, skipped, keepBad
}

func namesContainer(mine []Lease, bad []Estimate, o Options, rid string) bool {
	for _, l := range mine {
		if leaseOf(l.ID, o.Database, o.Container, rid) {
			return true
		}
	}
	for _, e := range bad {
		if leaseOf(e.Lease.ID, o.Database, o.Container, rid) {
			return true
		}
	}
	return false
}

// readLeaseDocuments is every document of the lease container, every page of it.
func readLeaseDocuments(ctx context.Context, o Options) ([]json.RawMessage, float64, error) {
	it, err := query.Run(ctx, query.Options{Client: o.Client, Database: o.LeaseDatabase, Container: o.LeaseContainer,
		Spec: cosmos.QuerySpec{Query: "SELECT * FROM c"}, Page: o.Page})
	if err != nil {
		return nil, 0, err
	}
	defer it.Close()
	var docs []json.RawMessage
	charge := 0.0
	for {
		items, info, err := it.Next(ctx)
		if info != nil {
			charge += info.RequestCharge
		}
		if errors.Is(err, io.EOF) {
			return docs, charge, nil
		}
		if err != nil {
			return nil, charge, err
		}
		for _, it := range items {
			docs = append(docs, append(json.RawMessage(nil), it...))
		}
	}
}

// state is the lease's state by its owner and timestamp.
func state(l Lease, o Options) string {
	switch {
	case strings.TrimSpace(l.Owner) == "":
		return StateUnowned
	case l.Timestamp.Add(o.Expiry).Before(o.Now):
		return StateStuck
	}
	return StateOK
}

// estimate reads the lease's range from its continuation and computes its lag.
func estimate(ctx context.Context, o Options, l Lease, ranges []cosmos.PartitionKeyRange) (Estimate, float64) {
	e := Estimate{Lease: l, State: state(l, o), Age: o.Now.Sub(l.Timestamp)}
	if l.Timestamp.IsZero() {
		e.Age = 0
	}
	positions, err := ParseContinuation(l.Continuation)
	if err != nil {
		e.Err = err
		return e, 0
	}
	if len(positions) == 0 {
		// The .NET estimator cannot tell where a never-checkpointed lease starts
		// (beginning, now or a time) and reports 1, so that an autoscaler keyed on a lag
		// above zero wakes the processor (ChangeFeedEstimatorIterator.GetRemainingWorkAsync).
		e.Lag, e.Note = ptr(1), "never checkpointed: 1 is the SDKs' placeholder"
		return e, 0
	}
	pieces, err := piecesOf(l, ranges)
	if err != nil {
		e.Err = err
		return e, 0
	}
	var total int64
	charge := 0.0
	for _, pc := range pieces {
		pos, ok := positionFor(positions, pc.span)
		if !ok {
			e.Err = fmt.Errorf("the continuation has no position for range %s", pc.rangeID)
			return e, charge
		}
		e.Ranges = append(e.Ranges, pc.rangeID)
		lag, c, note, err := poll(ctx, o, l.ID, pc, pos.ETag)
		charge += c
		if err != nil {
			e.Err = fmt.Errorf("range %s: %w", pc.rangeID, err)
			return e, charge
		}
		if note != "" {
			e.Note = note
		}
		total += lag
	}
	e.Lag = &total
	return e, charge
}

// piece is one partition key range's part of a lease.
type piece struct {
	rangeID  string
	span     cosmos.EPKRange
	narrowed bool
}

// piecesOf are the current ranges a lease covers: the range its token names, or each
// range its feed range overlaps, narrowed to the overlap. A feed range that spans
// several ranges (its range split since the lease was written) is read in each, from
// the same continuation, which the service accepts on a parent's children.
func piecesOf(l Lease, ranges []cosmos.PartitionKeyRange) ([]piece, error) {
	if l.FeedRange == nil {
		for _, r := range ranges {
			if r.ID == l.Token {
				return []piece{{rangeID: r.ID, span: cosmos.EPKRange{Min: r.MinInclusive, Max: r.MaxExclusive}}}, nil
			}
		}
		// Gone (split or merged): the poll answers 410/1002, which the SDKs count as 1.
		return []piece{{rangeID: l.Token}}, nil
	}
	var out []piece
	for _, r := range l.FeedRange.Overlapping(ranges) {
		span, narrowed := l.FeedRange.Within(r)
		out = append(out, piece{rangeID: r.ID, span: span, narrowed: narrowed})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no partition key range of the container holds the lease's feed range %s", l.Range())
	}
	return out, nil
}

// poll reads at most one change of the piece after etag and computes its lag as the
// .NET estimator does: the LSN the session token reports, less the LSN before the first
// change (its _lsn - 1), or 0 when nothing is newer (a 304); a range that is gone (410/1002)
// counts 1, as both SDKs count it until the processor takes over its children.
func poll(ctx context.Context, o Options, lease string, pc piece, etag string) (lag int64, charge float64, note string, err error) {
	op := o.Page
	op.Kind, op.Database, op.Container = engine.OpChangeFeed, o.Database, o.Container
	op.RangeID, op.Continuation, op.MaxItemCount = pc.rangeID, etag, 1
	if pc.narrowed {
		op.StartEPK, op.EndEPK = pc.span.Min, pc.span.Max
	}
	res, err := o.Client.Execute(ctx, op)
	p := Poll{Lease: lease, RangeID: pc.rangeID, Err: err}
	if res != nil {
		charge = res.RequestCharge
		p.StatusCode, p.RequestCharge, p.Diagnostics = res.StatusCode, res.RequestCharge, res.Diagnostics
		if res.Diagnostics != nil {
			p.Duration = res.Diagnostics.Duration
		}
		if res.StatusCode == http.StatusOK {
			p.Items = 1
		}
	}
	if status, _, ok := cosmos.Status(err); ok {
		p.StatusCode = status
	}
	if o.OnPoll != nil {
		o.OnPoll(p)
	}
	if status, sub, ok := cosmos.Status(err); ok && status == http.StatusGone && sub == cosmos.SubPartitionKeyRangeGone {
		return 1, charge, "range " + pc.rangeID + " split or merged: 1 is the SDKs' placeholder until the processor takes over its successors", nil
	}
	if err != nil {
		return 0, charge, "", err
	}
	latest, ok := SessionLSN(res.SessionToken)
	if !ok {
		return 0, charge, "", fmt.Errorf("the change feed answer has no session token with an LSN (%q)", res.SessionToken)
	}
	last := latest
	if res.StatusCode != http.StatusNotModified {
		first, found, err := firstLSN(res.Body)
		if err != nil {
			return 0, charge, "", err
		}
		if found {
			last = first - 1
		}
	}
	if last < 0 {
		return 1, charge, "", nil
	}
	return max(latest-last, 0), charge, "", nil
}

// firstLSN is the _lsn of the page's first change.
func firstLSN(body []byte) (int64, bool, error) {
	var page struct {
		Documents []struct {
			LSN json.Number `json:"_lsn"`
		} `json:"Documents"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		return 0, false, fmt.Errorf("the change feed answer is not a page of documents: %v", err)
	}
	if len(page.Documents) == 0 {
		return 0, false, nil
	}
	n, err := page.Documents[0].LSN.Int64()
	if err != nil {
		return 0, false, fmt.Errorf("the change feed's first document has no _lsn (%q)", page.Documents[0].LSN)
	}
	return n, true, nil
}

func ptr(n int64) *int64 { return &n }

// lessLease orders leases by where their ranges start, then by token.
func lessLease(a, b Lease) bool {
	ka, kb := sortKey(a), sortKey(b)
	if ka != kb {
		return ka < kb
	}
	return a.ID < b.ID
}

func sortKey(l Lease) string {
	if l.FeedRange != nil {
		return "1" + l.FeedRange.Min
	}
	if n, err := strconv.Atoi(l.Token); err == nil {
		return fmt.Sprintf("0%020d", n)
	}
	return "0" + l.Token
}
