package engine

import (
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// Reason says why an attempt was sent.
type Reason string

const (
	ReasonInitial  Reason = "initial"
	ReasonHedge    Reason = "hedge"
	ReasonRetry    Reason = "retry"
	ReasonFailover Reason = "failover"
	// ReasonVerify is the read that checks a retried write's _trackingId.
	ReasonVerify Reason = "verify"
	// ReasonPage is the read of a feed's next page, with the continuation of the page
	// before it.
	ReasonPage Reason = "page"
)

// Outcome is how an attempt ended.
type Outcome string

const (
	OutcomeInFlight  Outcome = "in-flight" // still running when the diagnostics were read
	OutcomeWon       Outcome = "won"       // its answer is the operation's result
	OutcomeLost      Outcome = "lost"      // answered, but another attempt's answer was used
	OutcomeCancelled Outcome = "cancelled" // aborted before it answered
	OutcomeFailed    Outcome = "failed"    // answered with an error, or no answer, and was retried or surfaced
)

// Attempt is one request on the wire, recorded as it happened.
type Attempt struct {
	N             int           `json:"n"`
	Region        string        `json:"region"`
	Endpoint      string        `json:"endpoint"`
	Reason        Reason        `json:"reason"`
	Start         time.Duration `json:"-"`
	Duration      time.Duration `json:"-"`
	StatusCode    int           `json:"-"`
	SubStatus     int           `json:"-"`
	RequestCharge float64       `json:"request_charge"`
	ActivityID    string        `json:"activity_id,omitempty"`
	Outcome       Outcome       `json:"outcome"`
	// Error is the network or timeout error of an attempt that got no response.
	Error string `json:"error,omitempty"`
	// Note explains a retry or failover decision taken after this attempt.
	Note string `json:"note,omitempty"`
	// Replica is the replica address the attempt went to in direct mode,
	// ReplicaHealth its health in the address cache when it was chosen, and
	// ReplicaRole whether it is the partition's primary or a secondary.
	Replica       string `json:"replica,omitempty"`
	ReplicaHealth string `json:"replica_health,omitempty"`
	ReplicaRole   string `json:"replica_role,omitempty"`
	// Transport is how the attempt was carried, from its endpoint's scheme: "https" or
	// "http" (a gateway, or an emulator replica speaking HTTP), "rntbd" (a replica over
	// RNTBD/TLS); or "gateway2", an RNTBD frame in an HTTP/2 POST to a Gateway 2.0 proxy.
	Transport string `json:"transport,omitempty"`
	// Timeout is the attempt's own timeout (clamped to what was left of the end-to-end
	// timeout), and TimedOut whether it expired before an answer came.
	Timeout  time.Duration `json:"-"`
	TimedOut bool          `json:"timed_out"`
	// ServerDuration is the service's own time for the request, from the response's
	// x-ms-request-duration-ms (0: the response did not say, or there was none). The
	// rest of Duration is the network, queueing and the client.
	ServerDuration time.Duration `json:"-"`
	// Where the service says it served the attempt (cosmos.Placement): the partition key
	// range and physical partition, the partition's LSN after it and the session token
	// it returned; empty (HasLSN false) when the answer did not carry them.
	PartitionKeyRangeID string `json:"-"`
	PhysicalPartitionID string `json:"-"`
	LSN                 int64  `json:"-"`
	HasLSN              bool   `json:"-"`
	SessionToken        string `json:"-"`
	// RetryAfter is the wait a 429 asked for (x-ms-retry-after-ms), and Waited how long
	// the engine waited after this attempt before the next one (0: it did not wait).
	RetryAfter time.Duration `json:"-"`
	Waited     time.Duration `json:"-"`
	done       bool
}

// RegionNote says whether a region was in the effective list and why.
type RegionNote struct {
	Region    string `json:"region"`
	Effective bool   `json:"effective"`
	Note      string `json:"note"`
}

// Diagnostics is everything the engine did for one operation.
type Diagnostics struct {
	Operation    OpKind          `json:"operation"`
	Database     string          `json:"database"`
	Container    string          `json:"container"`
	ID           string          `json:"id,omitempty"`
	PartitionKey json.RawMessage `json:"partition_key"`
	// RangeID is the partition key range a query page was sent to.
	RangeID          string       `json:"range_id,omitempty"`
	PreferredRegions []string     `json:"preferred_regions"`
	ExcludedRegions  []string     `json:"excluded_regions"`
	EffectiveRegions []string     `json:"effective_regions"`
	Regions          []RegionNote `json:"regions"`
	// Fallback explains why an operation used a region outside its effective list
	// (every region excluded, or a write on a single-write account).
	Fallback string `json:"fallback"`
	// HealthOrder is the order the regions were used in when region health moved an
	// unavailable one last; empty when it changed nothing (see Notes for why).
	HealthOrder []string `json:"health_order,omitempty"`
	// ConnectionMode is "gateway", "direct" when the client routes to replicas, or
	// "gateway2" when it sends point operations to the Gateway 2.0 proxies.
	ConnectionMode string `json:"connection_mode"`
	// HedgeConfig describes the availability strategy ("off" until hedging is enabled).
	HedgeConfig      string        `json:"hedge_config"`
	E2ETimeout       time.Duration `json:"-"`
	Attempts         []Attempt     `json:"attempts"`
	ContactedRegions []string      `json:"contacted_regions"`
	RespondedRegions []string      `json:"responded_regions"`
	WinningRegion    string        `json:"-"`
	WinningAttempt   int           `json:"-"`
	RequestCharge    float64       `json:"request_charge"`
	Duration         time.Duration `json:"-"`
	TimedOut         bool          `json:"timed_out"`
	// WriteRetries is the write retry policy ("off", "retries", "tracking-id").
	WriteRetries string `json:"write_retries"`
	// Resolution says how a retry's 409 or 412 was resolved, if it was.
	Resolution string   `json:"resolution"`
	Notes      []string `json:"notes"`
}

// recorder builds Diagnostics while the operation runs. Attempts run concurrently once
// hedging starts, so every method takes the lock; offsets come from the engine's clock.
type recorder struct {
	mu    sync.Mutex
	start time.Time
	now   func() time.Time
	d     Diagnostics
}

func newRecorder(now func() time.Time) *recorder {
	return &recorder{start: now(), now: now}
}

// begin records an attempt being sent and returns its index.
func (r *recorder) begin(region, endpoint string, reason Reason) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.d.Attempts)
	r.d.Attempts = append(r.d.Attempts, Attempt{
		N: n + 1, Region: region, Endpoint: endpoint, Reason: reason, Transport: transportOf(endpoint),
		Start: r.now().Sub(r.start), Outcome: OutcomeInFlight,
	})
	if !contains(r.d.ContactedRegions, region) {
		r.d.ContactedRegions = append(r.d.ContactedRegions, region)
	}
	return n
}

// finish records an attempt's answer (or lack of one).
func (r *recorder) finish(i int, status, sub int, charge float64, activityID string, errText string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.finishLocked(i, status, sub, charge, activityID, errText)
}

// finishLocked is finish with r.mu held; false when the attempt was already finished.
func (r *recorder) finishLocked(i int, status, sub int, charge float64, activityID string, errText string) bool {
	a := &r.d.Attempts[i]
	if a.done {
		return false
	}
	a.done = true
	a.Duration = r.now().Sub(r.start) - a.Start
	a.StatusCode, a.SubStatus, a.RequestCharge, a.ActivityID, a.Error = status, sub, charge, activityID, errText
	r.d.RequestCharge += charge
	if status != 0 && !contains(r.d.RespondedRegions, a.Region) {
		r.d.RespondedRegions = append(r.d.RespondedRegions, a.Region)
	}
	if status == 0 {
		a.Outcome = OutcomeFailed
	}
	return true
}

// finishResponse records an attempt's HTTP answer, with the service's own time for it
// and where the service says it served it, under one hold of the lock. An attempt
// already finished (cut by its timeout) keeps what was recorded then.
func (r *recorder) finishResponse(i int, resp *cosmos.Response) {
	p := resp.Placement()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.finishLocked(i, resp.StatusCode, resp.SubStatus, resp.RequestCharge, resp.ActivityID, "") {
		return
	}
	a := &r.d.Attempts[i]
	a.ServerDuration = resp.ServerDuration
	a.PartitionKeyRangeID, a.PhysicalPartitionID, a.RetryAfter = p.PartitionKeyRangeID, p.PhysicalPartitionID, p.RetryAfter
	a.LSN, a.HasLSN = p.LSN, p.LSN >= 0
	a.SessionToken = resp.SessionToken
}

// setWaited records how long the engine waited after attempt i before the next.
func (r *recorder) setWaited(i int, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.d.Attempts[i].Waited = d
}

// setOutcome sets an attempt's outcome and, optionally, a note on what followed.
func (r *recorder) setOutcome(i int, o Outcome, note string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := &r.d.Attempts[i]
	a.Outcome = o
	if note != "" {
		a.Note = note
	}
	if o == OutcomeWon {
		r.d.WinningRegion, r.d.WinningAttempt = a.Region, a.N
	}
}

// cancel marks an unfinished attempt cancelled at the current offset.
func (r *recorder) cancel(i int, why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := &r.d.Attempts[i]
	if a.done {
		return
	}
	a.done = true
	a.Duration = r.now().Sub(r.start) - a.Start
	a.Outcome = OutcomeCancelled
	a.Error = why
}

// setTimeout records an attempt's timeout and whether it expired.
func (r *recorder) setTimeout(i int, d time.Duration, expired bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.d.Attempts[i].Timeout, r.d.Attempts[i].TimedOut = d, expired
}

// setReplica records the replica an attempt went to.
func (r *recorder) setReplica(i int, url, health string, primary bool) {
	role := RoleSecondary
	if primary {
		role = RolePrimary
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	a := &r.d.Attempts[i]
	a.Replica, a.ReplicaHealth, a.ReplicaRole = url, health, role
}

// TransportGateway2 is Attempt.Transport for an attempt sent to a Gateway 2.0 proxy.
const TransportGateway2 = "gateway2"

// setTransport records how attempt i was carried, when its endpoint's scheme does not
// say (a Gateway 2.0 proxy's endpoint is https).
func (r *recorder) setTransport(i int, transport string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.d.Attempts[i].Transport = transport
}

// Replica roles, as Attempt.ReplicaRole names them.
const (
	RolePrimary   = "primary"
	RoleSecondary = "secondary"
)

// transportOf is the transport an endpoint's scheme names ("" for none it knows).
func transportOf(endpoint string) string {
	switch {
	case strings.HasPrefix(endpoint, "https://"):
		return "https"
	case strings.HasPrefix(endpoint, "rntbd://"):
		return "rntbd"
	case strings.HasPrefix(endpoint, "http://"):
		return "http"
	}
	return ""
}

// resolve records how a conflict on a retry was resolved.
func (r *recorder) resolve(how string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.d.Resolution = how
	r.d.Notes = append(r.d.Notes, how)
}

// sent is the number of write or read attempts sent so far, verification reads aside.
func (r *recorder) sent() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, a := range r.d.Attempts {
		if a.Reason != ReasonVerify {
			n++
		}
	}
	return n
}

func (r *recorder) note(format string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.d.Notes = append(r.d.Notes, format)
}

// handOver returns the diagnostics themselves, not a copy: for an operation none of
// whose attempts can still record anything (one arm, returned), which then never
// touches the recorder again. It saves the copy snapshot makes of every slice.
func (r *recorder) handOver() *Diagnostics {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.d.Duration = r.now().Sub(r.start)
	return &r.d
}

// snapshot returns a copy of the diagnostics as they are now.
func (r *recorder) snapshot() *Diagnostics {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.d
	d.Attempts = append([]Attempt(nil), r.d.Attempts...)
	d.ContactedRegions = append([]string(nil), r.d.ContactedRegions...)
	d.RespondedRegions = append([]string(nil), r.d.RespondedRegions...)
	d.Notes = append([]string(nil), r.d.Notes...)
	d.Duration = r.now().Sub(r.start)
	return &d
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// setPlan records the regions an operation may use.
func (r *recorder) setPlan(p regionPlan) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.d.PreferredRegions = p.preferred
	r.d.ExcludedRegions = p.excluded
	r.d.EffectiveRegions = p.effective
	r.d.Regions = p.notes
	r.d.Fallback = p.fallback
}

// cancelAll marks every unfinished attempt cancelled.
func (r *recorder) cancelAll(why string) {
	r.mu.Lock()
	n := len(r.d.Attempts)
	r.mu.Unlock()
	for i := 0; i < n; i++ {
		r.cancel(i, why)
	}
}
