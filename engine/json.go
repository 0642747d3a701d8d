package engine

import (
	"encoding/json"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/internal/jsonenc"
)

// The JSON of the engine's records follows cosmosctl's vocabulary (docs/json/README.md):
// durations in milliseconds with the unit in the name, and null for a figure that does
// not exist (the status of an attempt that got no answer, an end-to-end timeout that was
// not set). Each record is written through a named wire type, which is also what its
// JSON schema is generated from (JSONSchemaAlias), so that the schema and the output
// cannot drift apart.

// ms renders a duration as fractional milliseconds: JSON field names carry the unit
// (start_ms, duration_ms) so scripts never guess.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// msOrNull is ms, or null for 0 (not set).
func msOrNull(d time.Duration) *float64 {
	if d <= 0 {
		return nil
	}
	v := ms(d)
	return &v
}

// msOrZero is ms of a difference that clocks may make slightly negative, floored at 0.
func msOrZero(d time.Duration) *float64 {
	v := ms(max(d, 0))
	return &v
}

// statusOrNull is an answer's status and substatus, both null when there was none.
func statusOrNull(status, sub int) (*int, *int) {
	if status == 0 {
		return nil, nil
	}
	return &status, &sub
}

type attemptFields Attempt

// AttemptJSON is an Attempt as JSON.
type AttemptJSON struct {
	attemptFields
	// StatusCode and SubStatus are null for an attempt that got no answer.
	StatusCode *int    `json:"status_code"`
	SubStatus  *int    `json:"substatus"`
	StartMs    float64 `json:"start_ms"`
	DurationMs float64 `json:"duration_ms"`
	TimeoutMs  float64 `json:"timeout_ms"`
	// ServerDurationMs is the service's own time for the request
	// (x-ms-request-duration-ms), null when the response did not carry it or there
	// was no response; duration_ms minus it is the network, queueing and the client.
	ServerDurationMs *float64 `json:"server_duration_ms"`
	// NetworkMs is duration_ms minus server_duration_ms: the network, queueing and the
	// client; null when the service did not say its time.
	NetworkMs *float64 `json:"network_ms"`
	// StatusText is the status and substatus in words (cosmosctl help statuses), null
	// for a success or no answer.
	StatusText *string `json:"status_text"`
	// PartitionKeyRangeID, PhysicalPartitionID, LSN and SessionToken are where the
	// service says it served the attempt, null when the answer did not carry them.
	PartitionKeyRangeID *string `json:"partition_key_range_id"`
	PhysicalPartitionID *string `json:"physical_partition_id"`
	LSN                 *int64  `json:"lsn"`
	SessionToken        *string `json:"session_token"`
	// RetryAfterMs is the wait a 429 asked for; WaitedMs how long the engine waited
	// after the attempt before the next one. Null when none was asked / none waited.
	RetryAfterMs *float64 `json:"retry_after_ms"`
	WaitedMs     *float64 `json:"waited_ms"`
}

func strOrNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// MarshalJSON writes the attempt as AttemptJSON.
func (a Attempt) MarshalJSON() ([]byte, error) {
	j := AttemptJSON{attemptFields: attemptFields(a), StartMs: ms(a.Start), DurationMs: ms(a.Duration), TimeoutMs: ms(a.Timeout), ServerDurationMs: msOrNull(a.ServerDuration)}
	j.StatusCode, j.SubStatus = statusOrNull(a.StatusCode, a.SubStatus)
	if a.ServerDuration > 0 && a.done {
		j.NetworkMs = msOrZero(a.Duration - a.ServerDuration)
	}
	if a.StatusCode >= 300 {
		j.StatusText = strOrNull(cosmos.StatusWords(a.StatusCode, a.SubStatus))
	}
	j.PartitionKeyRangeID, j.PhysicalPartitionID, j.SessionToken = strOrNull(a.PartitionKeyRangeID), strOrNull(a.PhysicalPartitionID), strOrNull(a.SessionToken)
	if a.HasLSN {
		lsn := a.LSN
		j.LSN = &lsn
	}
	j.RetryAfterMs, j.WaitedMs = msOrNull(a.RetryAfter), msOrNull(a.Waited)
	return jsonenc.Marshal(j)
}

// JSONSchemaAlias is the type the attempt's JSON schema is generated from.
func (Attempt) JSONSchemaAlias() any { return AttemptJSON{} }

type diagnosticsFields Diagnostics

// DiagnosticsJSON is Diagnostics as JSON.
type DiagnosticsJSON struct {
	diagnosticsFields
	// WinningRegion and WinningAttempt are null when no attempt won (the operation
	// failed).
	WinningRegion  *string `json:"winning_region"`
	WinningAttempt *int    `json:"winning_attempt"`
	// E2ETimeoutMs is null when no end-to-end timeout was set.
	E2ETimeoutMs *float64 `json:"e2e_timeout_ms"`
	DurationMs   float64  `json:"duration_ms"`
}

// MarshalJSON writes the diagnostics as DiagnosticsJSON.
func (d Diagnostics) MarshalJSON() ([]byte, error) {
	out := DiagnosticsJSON{diagnosticsFields: diagnosticsFields(d), E2ETimeoutMs: msOrNull(d.E2ETimeout), DurationMs: ms(d.Duration)}
	if d.WinningAttempt > 0 {
		n := d.WinningAttempt
		out.WinningAttempt = &n
	}
	if d.WinningRegion != "" {
		r := d.WinningRegion
		out.WinningRegion = &r
	}
	if out.Attempts == nil {
		out.Attempts = []Attempt{}
	}
	for _, p := range []*[]string{&out.PreferredRegions, &out.ExcludedRegions, &out.EffectiveRegions, &out.ContactedRegions, &out.RespondedRegions} {
		if *p == nil {
			*p = []string{}
		}
	}
	if out.Notes == nil {
		out.Notes = []string{}
	}
	if out.PartitionKey == nil {
		out.PartitionKey = json.RawMessage("null")
	}
	if out.Regions == nil {
		out.Regions = []RegionNote{}
	}
	return jsonenc.Marshal(out)
}

// JSONSchemaAlias is the type the diagnostics' JSON schema is generated from.
func (Diagnostics) JSONSchemaAlias() any { return DiagnosticsJSON{} }

type regionInfoFields RegionInfo

// RegionInfoJSON is a RegionInfo as JSON.
type RegionInfoJSON struct {
	Region string `json:"region"`
	regionInfoFields
	// ReadRank and WriteRank are null for a region the order does not use.
	ReadRank  *int `json:"read_rank"`
	WriteRank *int `json:"write_rank"`
	// StatusCode, Substatus and LatencyMs are null when the region was not asked
	// (--no-latency) or did not answer (Error says why; TimedOut when for want of time).
	StatusCode *int     `json:"status_code"`
	SubStatus  *int     `json:"substatus"`
	LatencyMs  *float64 `json:"latency_ms"`
}

// MarshalJSON writes the region as RegionInfoJSON.
func (r RegionInfo) MarshalJSON() ([]byte, error) { return jsonenc.Marshal(r.JSON()) }

// JSON is the region as it is written.
func (r RegionInfo) JSON() RegionInfoJSON {
	j := RegionInfoJSON{Region: r.Name, regionInfoFields: regionInfoFields(r)}
	if r.ReadRank > 0 {
		n := r.ReadRank
		j.ReadRank = &n
	}
	if r.WriteRank > 0 {
		n := r.WriteRank
		j.WriteRank = &n
	}
	if r.Answered {
		status, sub := r.Status, r.SubStatus
		j.StatusCode, j.SubStatus = &status, &sub
		j.LatencyMs = msOrNull(r.Latency)
	}
	return j
}

// JSONSchemaAlias is the type the region's JSON schema is generated from.
func (RegionInfo) JSONSchemaAlias() any { return RegionInfoJSON{} }

// UnmarshalJSON reads a region written by MarshalJSON.
func (r *RegionInfo) UnmarshalJSON(b []byte) error {
	var j RegionInfoJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*r = RegionInfo(j.regionInfoFields)
	r.Name = j.Region
	if j.ReadRank != nil {
		r.ReadRank = *j.ReadRank
	}
	if j.WriteRank != nil {
		r.WriteRank = *j.WriteRank
	}
	if j.StatusCode != nil {
		r.Status, r.Answered, r.Measured = *j.StatusCode, true, true
	}
	if j.SubStatus != nil {
		r.SubStatus = *j.SubStatus
	}
	if j.LatencyMs != nil {
		r.Latency = time.Duration(*j.LatencyMs * float64(time.Millisecond))
	}
	return nil
}
