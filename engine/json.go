package engine

import (
	"encoding/json"
	"time"
)

// ms renders a duration as fractional milliseconds: JSON field names carry the unit
// (start_ms, duration_ms) so scripts never guess.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// MarshalJSON adds the timing fields with their units.
func (a Attempt) MarshalJSON() ([]byte, error) {
	type plain Attempt
	return json.Marshal(struct {
		plain
		StartMs    float64 `json:"start_ms"`
		DurationMs float64 `json:"duration_ms"`
		TimeoutMs  float64 `json:"timeout_ms"`
	}{plain(a), ms(a.Start), ms(a.Duration), ms(a.Timeout)})
}

// MarshalJSON adds the timing fields with their units.
func (d Diagnostics) MarshalJSON() ([]byte, error) {
	type plain Diagnostics
	out := struct {
		plain
		E2ETimeoutMs float64 `json:"e2e_timeout_ms"`
		DurationMs   float64 `json:"duration_ms"`
	}{plain: plain(d), E2ETimeoutMs: ms(d.E2ETimeout), DurationMs: ms(d.Duration)}
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
	return json.Marshal(out)
}

func marshalJSON(v any) ([]byte, error) { return json.Marshal(v) }
