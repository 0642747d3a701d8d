package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cosmosctl/cosmosctl/changefeed"
	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/leases"
	"github.com/cosmosctl/cosmosctl/output"
)

// changesLagOptions are the flags of `cosmosctl changes lag`.
type changesLagOptions struct {
	conn           connFlags
	leaseContainer string
	leaseDatabase  string
	leasePrefix    string
	expiry         time.Duration
	failOnStuck    bool
}

const changesLagLong = `Report how far a change feed processor (the .NET or Java SDK's) is behind, from its
lease container, read-only: per lease, its owner, how long ago it was last renewed or
checkpointed, and its estimated lag, as the SDKs' estimators compute it
(ChangeFeedEstimator in .NET, getEstimatedLag in Java).

The monitored container is --container (--database); the leases are in
--lease-container (in --lease-database, by default the same database). Every lease
document is read (every page); the lease store's own .info and .lock documents are
skipped. With --lease-prefix only the leases whose id starts with the processor's
name are read: give it when processors share the lease container. A lease id names
the monitored container ("{prefix}{host}_{dbRid}_{collRid}..{token}", or with the
database's and container's names in Java's partition key range leases): when any
id names it, the leases of other containers are skipped too; when none does, every
lease is estimated as the monitored container's, with a warning.

The lag of a lease is read as the SDKs read it: the monitored container's change feed
from the lease's continuation, one change at most, and then the range's latest LSN
(from the session token) less the LSN before that change: the number of writes to the
range after the checkpoint (deletes and overwritten versions included, which the
processor will not see as changes). Nothing newer is 0. A lease never checkpointed
counts 1, and so does one whose range split or merged, as the SDKs count them. An
effective partition key range lease is read in every range it overlaps.

The state of a lease, by its owner and timestamp:
  ok        owned, and renewed within --expiry
  stuck     owned, but not renewed for longer than --expiry (the SDKs' 60 s by
            default): its owner stopped without releasing it, and until another
            instance takes it nobody reads its range
  unowned   no owner: released by a processor that stopped, or not acquired yet

A lease that cannot be estimated (a continuation neither SDK writes, a range that
could not be read) is reported on its row with the reason, and the others still are.
Every read goes through the engine: the effective regions, --exclude and --region,
the attempt timeouts and --e2e-timeout (each read), failover, hedging. --diagnostics
prints every change feed read on stderr (range, lease, status, RU, duration, the
regions tried); --diagnostics=json as poll events.

Output: a table of the leases and one line of totals (leases, total lag, the oldest
checkpoint, how many are stuck); -o json, one object (docs/json/changes-lag.schema.json);
-o tsv, the table alone.

Exit status: 0 when every lease was estimated, stuck or not; with --fail-on-stuck 10
when any lease is stuck (after the report); when a lease could not be estimated, the
code of the first failure (6 timed out, 8 unavailable, 1 other), after the report; 3
when the lease container does not exist.
` + "Exit codes: cosmosctl help exit-codes."

func newChangesLagCmd(io *IOStreams) *cobra.Command {
	o := &changesLagOptions{}
	c := &cobra.Command{
		Use:   "lag --lease-container NAME [--lease-prefix PREFIX] [--expiry DURATION]",
		Short: "Report a change feed processor's leases: owner, checkpoint age, estimated lag, and which are stuck",
		Long:  changesLagLong,
		Example: `  cosmosctl changes lag --lease-container leases
  cosmosctl changes lag --lease-container leases --lease-prefix orders-processor
  cosmosctl changes lag --lease-container leases --lease-database ops --expiry 2m
  cosmosctl changes lag --lease-container leases --fail-on-stuck || page-oncall
  cosmosctl changes lag --lease-container leases -o json --jq .total_lag`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return o.run(c.Context(), io)
		},
	}
	o.conn.register(c)
	o.conn.withHedging(c.Flags())
	o.conn.withConsistency(c.Flags())
	o.conn.format.add(config.OutputTSV)
	f := c.Flags()
	f.Lookup("container").Usage = "the monitored container, whose change feed the processor reads ($COSMOSCTL_CONTAINER)"
	f.Lookup("e2e-timeout").Usage = "end-to-end timeout of each read (a page of the leases, a lease's change feed read), retries and hedges included, e.g. 2s ($COSMOSCTL_E2E_TIMEOUT; default none)"
	f.Lookup("diagnostics").Usage = "print every change feed read (range, lease, status, RU, duration, regions) on stderr; --diagnostics=json: as poll events (docs/json/diagnostics.schema.json)"
	f.StringVar(&o.leaseContainer, "lease-container", "", "the processor's lease container (required)")
	f.StringVar(&o.leaseDatabase, "lease-database", "", "the lease container's database (default: the monitored container's, --database)")
	f.StringVar(&o.leasePrefix, "lease-prefix", "", "only the leases whose id starts with this: the processor's name, when processors share the lease container")
	f.DurationVar(&o.expiry, "expiry", leases.DefaultExpiry, "a lease not renewed for longer than this is stuck: the processor's lease expiration interval")
	f.BoolVar(&o.failOnStuck, "fail-on-stuck", false, "exit 10 when any lease is stuck, after printing the report")
	return c
}

// validate checks the flags that need no I/O.
func (o *changesLagOptions) validate() error {
	switch {
	case strings.TrimSpace(o.leaseContainer) == "":
		return usageErrorf("changes lag needs the processor's lease container: give --lease-container NAME")
	case o.expiry <= 0:
		return usageErrorf("--expiry must be more than 0 (got %s); give the processor's lease expiration interval, such as 60s", o.expiry)
	case o.conn.flags.Changed("lease-database") && strings.TrimSpace(o.leaseDatabase) == "":
		return usageErrorf("--lease-database needs a database name")
	}
	return nil
}

func (o *changesLagOptions) run(ctx context.Context, io *IOStreams) error {
	if err := o.validate(); err != nil {
		return err
	}
	sess, err := o.conn.open(ctx, io)
	if err != nil {
		return err
	}
	defer sess.Close()
	page, err := o.conn.readTemplate(ctx, sess)
	if err != nil {
		return err
	}
	db, coll := sess.settings.Database, sess.settings.Container
	if db == "" || coll == "" {
		return usageErrorf("changes lag needs the monitored container: give --database and --container (or set them in a profile)")
	}
	leaseDB := o.leaseDatabase
	if leaseDB == "" {
		leaseDB = db
	}
	rep, err := leases.Run(ctx, leases.Options{Client: sess.client, Database: db, Container: coll,
		LeaseDatabase: leaseDB, LeaseContainer: o.leaseContainer, Prefix: o.leasePrefix, Expiry: o.expiry,
		Now: time.Now(), Page: page, OnPoll: o.diagnose(io)})
	if err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			return &InterruptedError{What: "changes lag"}
		}
		return asUsage(err)
	}
	r := newLagReport(rep, db, coll, leaseDB, o)
	if len(rep.Leases) == 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("no lease in %s/%s%s (%s skipped): is it the processor's lease container, and its prefix?",
			leaseDB, o.leaseContainer, prefixClause(o.leasePrefix), output.HumanCount(len(rep.Skipped), "document")))
	}
	// The warnings are in -o json's "warnings" too; stderr under --diagnostics=json
	// carries events only.
	if !o.conn.diagnosticsJSON {
		for _, w := range r.Warnings {
			io.notice("cosmosctl: warning: " + w)
		}
	}
	if err := o.print(io, sess, r); err != nil {
		return err
	}
	for _, e := range rep.Leases {
		if e.Err != nil {
			return &LeaseEstimateError{Lease: e.Lease.ID, Err: e.Err}
		}
	}
	if o.failOnStuck && r.Stuck > 0 {
		return &StuckLeasesError{Stuck: r.Stuck, Expiry: o.expiry}
	}
	return nil
}

// diagnose reports every change feed read with --diagnostics: one line on stderr, or
// with --diagnostics=json a poll event (docs/json/diagnostics.schema.json) whose note
// names the lease. nil without --diagnostics.
func (o *changesLagOptions) diagnose(io *IOStreams) func(leases.Poll) {
	if !o.conn.diagnostics {
		return nil
	}
	events := o.conn.eventsTo(io)
	return func(p leases.Poll) {
		if o.conn.diagnosticsJSON {
			note := "lease " + p.Lease
			b := &changefeed.Batch{RangeID: p.RangeID, Items: make([]json.RawMessage, p.Items), Info: changefeed.PageInfo{Kind: changefeed.KindPoll,
				StatusCode: p.StatusCode, CaughtUp: p.StatusCode == http.StatusNotModified, RequestCharge: p.RequestCharge, Duration: p.Duration,
				Err: p.Err, Diagnostics: p.Diagnostics}}
			ev := newPollEvent(b)
			ev.Note, ev.RetryInMs = &note, nil // read once: nothing is retried after the engine's own retries
			events.emit(ev)
			return
		}
		var line strings.Builder
		fmt.Fprintf(&line, "poll %s for lease %s: ", rangeLabel(p.RangeID), p.Lease)
		switch {
		case p.Err != nil:
			fmt.Fprintf(&line, "failed (%v)", p.Err)
		case p.StatusCode == http.StatusNotModified:
			line.WriteString("304 nothing new")
		default:
			fmt.Fprintf(&line, "%d, %s", p.StatusCode, output.HumanCount(p.Items, "change"))
		}
		fmt.Fprintf(&line, ", %.2f RU, %s", p.RequestCharge, output.HumanDuration(p.Duration))
		if d := p.Diagnostics; d != nil {
			var regions []string
			for _, a := range d.Attempts {
				regions = append(regions, fmt.Sprintf("%s %s", a.Region, a.Outcome))
			}
			if len(regions) > 0 {
				line.WriteString(" [" + strings.Join(regions, ", ") + "]")
			}
		}
		events.mu.Lock()
		defer events.mu.Unlock()
		fmt.Fprintln(io.ErrOut, line.String())
	}
}

func prefixClause(prefix string) string {
	if prefix == "" {
		return ""
	}
	return " whose id starts with " + strconv.Quote(prefix)
}

// LeaseEstimateError is a lease whose lag could not be estimated; the report was printed.
// Its exit code is its cause's (a timeout 6, a region unavailable 8).
type LeaseEstimateError struct {
	Lease string
	Err   error
}

func (e *LeaseEstimateError) Error() string {
	return fmt.Sprintf("the lag of lease %s could not be estimated: %v", e.Lease, e.Err)
}

func (e *LeaseEstimateError) Unwrap() error { return e.Err }

// StuckLeasesError is `changes lag --fail-on-stuck` finding stuck leases: a breached
// threshold, exit 10 like probe's --fail-on.
type StuckLeasesError struct {
	Stuck  int
	Expiry time.Duration
}

func (e *StuckLeasesError) Unwrap() error { return &ThresholdBreachError{Breaches: e.Stuck} }

func (e *StuckLeasesError) Error() string {
	return fmt.Sprintf("%s stuck: owned but not renewed for more than %s (--fail-on-stuck)", output.HumanCount(e.Stuck, "lease"), e.Expiry)
}

// lagReport is `changes lag -o json`.
type lagReport struct {
	Database       string  `json:"database"`
	Container      string  `json:"container"`
	LeaseDatabase  string  `json:"lease_database"`
	LeaseContainer string  `json:"lease_container"`
	LeasePrefix    *string `json:"lease_prefix"`
	// ExpiryMs is the expiry a lease was judged stuck by.
	ExpiryMs float64    `json:"expiry_ms"`
	Leases   []lagLease `json:"leases"`
	// TotalLag is the sum of the leases' estimated lags (those estimated).
	TotalLag int64 `json:"total_lag"`
	// OldestCheckpointAgeMs and OldestLease are the lease least recently renewed or
	// checkpointed; null without leases.
	OldestCheckpointAgeMs *float64 `json:"oldest_checkpoint_age_ms"`
	OldestLease           *string  `json:"oldest_lease"`
	Stuck                 int      `json:"stuck"`
	Unowned               int      `json:"unowned"`
	// Errors counts the leases that could not be estimated.
	Errors int `json:"errors"`
	// Skipped are the lease container's documents left out: the store's .info and .lock,
	// documents that are no lease, other processors' leases (--lease-prefix).
	Skipped       []lagSkipped `json:"skipped"`
	RequestCharge float64      `json:"request_charge"`
	// Warnings are what stderr said of the estimate: leases whose ids name no container,
	// estimated as the monitored container's.
	Warnings []string `json:"warnings"`
}

// lagLease is one lease of the report.
type lagLease struct {
	ID string `json:"id"`
	// LeaseToken is the lease's token: a partition key range id, or "min-max" of an
	// effective partition key range lease.
	LeaseToken string `json:"lease_token"`
	// FeedRange is an effective partition key range lease's range, null for a partition
	// key range lease.
	FeedRange *cosmos.EPKRange `json:"feed_range"`
	// PartitionKeyRanges are the monitored container's ranges read for the lease.
	PartitionKeyRanges []string `json:"partition_key_ranges"`
	Owner              *string  `json:"owner"`
	Continuation       *string  `json:"continuation"`
	// RenewedAt is the lease's timestamp: when its owner last renewed or checkpointed it.
	RenewedAt       *string  `json:"renewed_at"`
	CheckpointAgeMs *float64 `json:"checkpoint_age_ms"`
	// EstimatedLag is the number of changes after the lease's continuation, as the SDKs
	// estimate it; null when it could not be estimated (error says why).
	EstimatedLag *int64 `json:"estimated_lag"`
	// State is ok, stuck or unowned.
	State string `json:"state"`
	// Note says when the lag is the SDKs' placeholder (never checkpointed, range gone).
	Note  *string             `json:"note"`
	Error *output.ErrorObject `json:"error"`
}

type lagSkipped struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

func newLagReport(rep *leases.Report, db, coll, leaseDB string, o *changesLagOptions) lagReport {
	r := lagReport{Database: db, Container: coll, LeaseDatabase: leaseDB, LeaseContainer: o.leaseContainer,
		ExpiryMs: ms(o.expiry), Leases: []lagLease{}, Skipped: []lagSkipped{}, RequestCharge: rep.RequestCharge, Warnings: append([]string{}, rep.Warnings...)}
	if o.leasePrefix != "" {
		r.LeasePrefix = &o.leasePrefix
	}
	var oldest time.Duration
	for _, e := range rep.Leases {
		l := lagLease{ID: e.Lease.ID, LeaseToken: e.Lease.Token, FeedRange: e.Lease.FeedRange, PartitionKeyRanges: e.Ranges,
			Owner: nonEmpty(e.Lease.Owner), Continuation: nonEmpty(e.Lease.Continuation), EstimatedLag: e.Lag, State: e.State, Note: nonEmpty(e.Note)}
		if l.PartitionKeyRanges == nil {
			l.PartitionKeyRanges = []string{}
		}
		if !e.Lease.Timestamp.IsZero() {
			at, age := e.Lease.Timestamp.UTC().Format(time.RFC3339Nano), ms(e.Age)
			l.RenewedAt, l.CheckpointAgeMs = &at, &age
			if r.OldestLease == nil || e.Age > oldest {
				oldest, r.OldestLease, r.OldestCheckpointAgeMs = e.Age, &l.ID, &age
			}
		}
		if e.Err != nil {
			l.Error = failureJSON(e.Err, ExitCode(e.Err)).Error
			r.Errors++
		}
		if e.Lag != nil {
			r.TotalLag += *e.Lag
		}
		switch e.State {
		case leases.StateStuck:
			r.Stuck++
		case leases.StateUnowned:
			r.Unowned++
		}
		r.Leases = append(r.Leases, l)
	}
	for _, s := range rep.Skipped {
		r.Skipped = append(r.Skipped, lagSkipped{ID: s.ID, Reason: s.Reason})
	}
	return r
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// print writes the report: one JSON object, or the table and its line of totals (under
// -o tsv the table alone, the totals on stderr).
func (o *changesLagOptions) print(io *IOStreams, sess *session, r lagReport) error {
	if o.conn.wantJSON(sess.settings) {
		return output.WriteJSON(io.Out, r)
	}
	st := io.outStyles(o.conn.noColor)
	t := output.NewTableOf(io.Out, st,
		output.Column{Header: "LEASE", Key: true, Min: 8},
		output.Column{Header: "RANGE", Priority: 5, Min: 6},
		output.Column{Header: "OWNER", Key: true, Min: 8},
		output.Column{Header: "CHECKPOINT AGE", Short: "AGE", Key: true, Right: true},
		output.Column{Header: "LAG", Key: true, Right: true},
		output.Column{Header: "STATE", Key: true},
		output.Column{Header: "NOTE", Priority: 3, Min: 12},
	)
	for _, l := range r.Leases {
		owner, age, lag, note := st.None(), st.None(), st.None(), st.None()
		if l.Owner != nil {
			owner = *l.Owner
		}
		if l.CheckpointAgeMs != nil {
			age = ageText(time.Duration(*l.CheckpointAgeMs * float64(time.Millisecond)))
		}
		if l.EstimatedLag != nil {
			lag = strconv.FormatInt(*l.EstimatedLag, 10)
		}
		switch {
		case l.Error != nil:
			note = l.Error.Message
		case l.Note != nil:
			note = *l.Note
		}
		t.Append(l.LeaseToken, strings.Join(l.PartitionKeyRanges, ","), owner, age, lag, l.State, note)
	}
	if err := t.Render(); err != nil {
		return err
	}
	line := r.summary(o.expiry)
	if st.TSV {
		fmt.Fprintln(io.ErrOut, line)
		return nil
	}
	_, err := fmt.Fprintln(io.Out, line)
	return err
}

// summary is the report's line of totals.
func (r lagReport) summary(expiry time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, total lag %d", output.HumanCount(len(r.Leases), "lease"), r.TotalLag)
	if r.OldestLease != nil {
		fmt.Fprintf(&b, ", oldest checkpoint %s ago (%s)", ageText(time.Duration(*r.OldestCheckpointAgeMs*float64(time.Millisecond))), *r.OldestLease)
	}
	fmt.Fprintf(&b, "; %d stuck (not renewed for more than %s)", r.Stuck, expiry)
	if r.Unowned > 0 {
		fmt.Fprintf(&b, ", %d unowned", r.Unowned)
	}
	if r.Errors > 0 {
		fmt.Fprintf(&b, ", %s not estimated", output.HumanCount(r.Errors, "lease"))
	}
	return b.String()
}

// ageText is an age for a person: seconds under a minute, minutes and hours under two
// days, then days and hours.
func ageText(d time.Duration) string {
	switch {
	case d < 0:
		d = 0
	case d >= 48*time.Hour:
		return fmt.Sprintf("%dd%dh", d/(24*time.Hour), d%(24*time.Hour)/time.Hour)
	}
	if d < time.Minute {
		return fmt.Sprintf("%ds", int(d.Round(time.Second)/time.Second))
	}
	return d.Round(time.Second).String()
}
