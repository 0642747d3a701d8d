package health

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/cosmosctl/cosmosctl/internal/jsonenc"
)

// EntryJSON is an Entry as JSON, in cosmosctl's vocabulary (docs/json/README.md): times
// in RFC 3339 in fields named *_at, and null for what is not known or does not apply.
type EntryJSON struct {
	Region string `json:"region"`
	// PartitionKeyRangeID is null for the record of the region as a whole.
	PartitionKeyRangeID *string `json:"partition_key_range_id"`
	Kind                Kind    `json:"kind"`
	Status              Status  `json:"status"`
	// Failures counts the failures of the current counting window, by cause
	// (CauseCounts).
	Failures map[string]int `json:"failures"`
	// FirstFailureAt is when the current counting window's first failure came.
	FirstFailureAt   *time.Time `json:"first_failure_at"`
	LastFailureAt    *time.Time `json:"last_failure_at"`
	LastFailureCause *string    `json:"last_failure_cause"`
	// HedgeLossStreak is how many hedge races in a row the region lost as first region.
	HedgeLossStreak int        `json:"hedge_loss_streak"`
	LastHedgeLossAt *time.Time `json:"last_hedge_loss_at"`
	LastSuccessAt   *time.Time `json:"last_success_at"`
	// UnavailableAt and UnavailableUntilAt are set while the status is not available;
	// after UnavailableUntilAt, one probe request at a time may go to the region.
	UnavailableAt      *time.Time `json:"unavailable_at"`
	UnavailableUntilAt *time.Time `json:"unavailable_until_at"`
	// ProbeIntervalMs is the current unavailable period, doubled by each failed probe;
	// null while the region is available.
	ProbeIntervalMs *float64   `json:"probe_interval_ms"`
	FailedProbes    int        `json:"failed_probes"`
	ProbeStartedAt  *time.Time `json:"probe_started_at"`
	// Note is the diagnostics note of an unavailable region.
	Note *string `json:"note"`
}

// JSON is the entry as it is written.
func (e Entry) JSON() EntryJSON {
	j := EntryJSON{Region: e.Region, Kind: e.Kind, Status: e.Status, Failures: CauseCounts(e.Failures), HedgeLossStreak: e.HedgeLossStreak,
		FailedProbes: e.FailedProbes, FirstFailureAt: TimeOrNull(e.FailuresSince), LastFailureAt: TimeOrNull(e.LastFailure),
		LastHedgeLossAt: TimeOrNull(e.LastHedgeLoss), LastSuccessAt: TimeOrNull(e.LastSuccess),
		UnavailableAt: TimeOrNull(e.UnavailableSince), UnavailableUntilAt: TimeOrNull(e.UnavailableUntil),
		ProbeStartedAt: TimeOrNull(e.ProbeSince)}
	if e.PartitionKeyRangeID != "" {
		id := e.PartitionKeyRangeID
		j.PartitionKeyRangeID = &id
	}
	if e.LastFailureCause.valid() {
		c := e.LastFailureCause.JSONName()
		j.LastFailureCause = &c
	}
	if e.ProbeIntervalMs > 0 {
		v := e.ProbeIntervalMs
		j.ProbeIntervalMs = &v
	}
	if e.Note != "" {
		n := e.Note
		j.Note = &n
	}
	return j
}

// MarshalJSON writes the entry as EntryJSON.
func (e Entry) MarshalJSON() ([]byte, error) { return jsonenc.Marshal(e.JSON()) }

// JSONSchemaAlias is the type the entry's JSON schema is generated from.
func (Entry) JSONSchemaAlias() any { return EntryJSON{} }

// TimeOrNull is t in UTC, or null for the zero time (not known).
func TimeOrNull(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// JSONName is the cause as cosmosctl's JSON names it: snake_case ("server_error"), as
// every name in it (the state files keep String's).
func (c Cause) JSONName() string { return strings.ReplaceAll(c.String(), "-", "_") }

// CauseCounts are failure counts keyed by JSONName, never nil.
func CauseCounts(m map[Cause]int) map[string]int {
	out := make(map[string]int, len(m))
	for c, n := range m {
		out[c.JSONName()] = n
	}
	return out
}

// CausesOf reads failure counts keyed by JSONName (CauseCounts' inverse).
func CausesOf(m map[string]int) (map[Cause]int, error) {
	out := make(map[Cause]int, len(m))
	for name, n := range m {
		var c Cause
		if err := c.UnmarshalText([]byte(strings.ReplaceAll(name, "_", "-"))); err != nil {
			return nil, err
		}
		out[c] = n
	}
	return out, nil
}

// UnmarshalJSON reads an entry written by MarshalJSON.
func (e *Entry) UnmarshalJSON(b []byte) error {
	var j EntryJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	failures, err := CausesOf(j.Failures)
	if err != nil {
		return err
	}
	at := func(t *time.Time) time.Time {
		if t == nil {
			return time.Time{}
		}
		return *t
	}
	*e = Entry{Region: j.Region, Kind: j.Kind, Status: j.Status, Failures: failures, HedgeLossStreak: j.HedgeLossStreak,
		FailedProbes: j.FailedProbes, FailuresSince: at(j.FirstFailureAt), LastFailure: at(j.LastFailureAt),
		LastHedgeLoss: at(j.LastHedgeLossAt), LastSuccess: at(j.LastSuccessAt), UnavailableSince: at(j.UnavailableAt),
		UnavailableUntil: at(j.UnavailableUntilAt), ProbeSince: at(j.ProbeStartedAt)}
	if j.PartitionKeyRangeID != nil {
		e.PartitionKeyRangeID = *j.PartitionKeyRangeID
	}
	if j.LastFailureCause != nil {
		if err := e.LastFailureCause.UnmarshalText([]byte(strings.ReplaceAll(*j.LastFailureCause, "_", "-"))); err != nil {
			return err
		}
	}
	if j.ProbeIntervalMs != nil {
		e.ProbeIntervalMs = *j.ProbeIntervalMs
	}
	if j.Note != nil {
		e.Note = *j.Note
	}
	return nil
}
