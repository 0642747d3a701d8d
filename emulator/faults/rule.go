package faults

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Effects a rule can have.
const (
	// EffectDelay adds latency on top of the base latency; the request then
	// proceeds normally.
	EffectDelay = "delay"
	// EffectStatus answers with an error status instead of serving the request.
	EffectStatus = "status"
	// EffectHang never answers; the server holds the request until the client
	// gives up and disconnects.
	EffectHang = "hang"
	// EffectRefuse simulates a region that is down: connections are refused,
	// and a request already in flight has its connection closed.
	EffectRefuse = "refuse"
	// EffectDropResponse applies the write and then drops the connection
	// without answering, leaving the client with an ambiguous write.
	EffectDropResponse = "drop-response"
)

const validEffects = "delay, status, hang, refuse, drop-response"

// DefaultRetryAfter is sent with a 429 whose rule sets no retry_after. Real
// throttling always carries a retry hint, and SDKs behave oddly without one.
const DefaultRetryAfter = 100 * time.Millisecond

// Rule is one fault. Everything except the effect narrows where and when it
// applies; unset fields mean "no restriction".
type Rule struct {
	ID          string   `toml:"id,omitempty" json:"id"`
	Region      string   `toml:"region,omitempty" json:"region,omitempty"`
	Operations  []string `toml:"operations,omitempty" json:"operations,omitempty"`
	Replica     string   `toml:"replica,omitempty" json:"replica,omitempty"`
	Probability float64  `toml:"probability,omitzero" json:"probability,omitempty"`
	Count       int      `toml:"count,omitzero" json:"count,omitempty"`
	// After and For are the rule's time window, counted from Since.
	After Duration `toml:"after,omitzero" json:"after,omitempty"`
	For   Duration `toml:"for,omitzero" json:"for,omitempty"`
	// Since is what After and For count from, set by the Injector: the emulator's
	// start for a scenario's rules (Load), so that a scenario replays the same way
	// each run, and the time the rule was added for rules added while it runs (Add),
	// so that "--after 10s" means ten seconds from now whenever the emulator started.
	// Whatever a caller puts here is replaced when the rule is added.
	Since time.Time `toml:"-" json:"since,omitzero"`

	Effect     string       `toml:"effect" json:"effect"`
	Delay      Distribution `toml:"delay,omitempty" json:"delay,omitzero"`
	Status     int          `toml:"status,omitzero" json:"status,omitempty"`
	SubStatus  int          `toml:"substatus,omitzero" json:"substatus,omitempty"`
	RetryAfter Duration     `toml:"retry_after,omitzero" json:"retry_after,omitempty"`

	// Fired is maintained by the Injector and reported by Rules; whatever a
	// caller puts here is discarded when the rule is added.
	Fired int `toml:"-" json:"fired"`
}

// Validate checks the rule on its own; uniqueness of the ID is the
// Injector's concern. Each error is one line that names the rule, the field
// and how to fix it, because it is usually read off a scenario-loading
// failure by someone mid-rehearsal.
func (r *Rule) Validate() error {
	if err := r.validate(); err != nil {
		if r.ID == "" {
			return fmt.Errorf("fault: %w", err)
		}
		return fmt.Errorf("fault %q: %w", r.ID, err)
	}
	return nil
}

func (r *Rule) validate() error {
	switch r.Effect {
	case EffectDelay, EffectStatus, EffectHang, EffectRefuse, EffectDropResponse:
	case "":
		return fmt.Errorf("effect is required; valid effects: %s", validEffects)
	default:
		return fmt.Errorf("unknown effect %q; valid effects: %s", r.Effect, validEffects)
	}
	for _, op := range r.Operations {
		if !ValidOperation(op) {
			return fmt.Errorf("unknown operation %q; valid operations: %s", op, validOperations)
		}
	}
	if p := r.Probability; math.IsNaN(p) || p < 0 || p > 1 {
		return fmt.Errorf("probability %v is out of range; use a value in (0, 1], or leave it unset to always fire", p)
	}
	if r.Count < 0 {
		return fmt.Errorf("count %d must not be negative; use 0 for unlimited", r.Count)
	}
	if r.After < 0 {
		return fmt.Errorf("after must not be negative: %s", r.After)
	}
	if r.For < 0 {
		return fmt.Errorf("for must not be negative: %s; use 0 to stay active forever", r.For)
	}
	return r.validateEffect()
}

// validateEffect also rejects settings that belong to another effect: a
// "hang" rule carrying a status was most likely meant to be a status rule,
// and quietly ignoring the status would rehearse the wrong incident.
func (r *Rule) validateEffect() error {
	if r.Effect != EffectDelay && r.Delay != (Distribution{}) {
		return fmt.Errorf("delay is only used by effect %q; remove it or change the effect", EffectDelay)
	}
	if r.Effect != EffectStatus {
		for _, f := range []struct {
			name string
			set  bool
		}{{"status", r.Status != 0}, {"substatus", r.SubStatus != 0}, {"retry_after", r.RetryAfter != 0}} {
			if f.set {
				return fmt.Errorf("%s is only used by effect %q; remove it or change the effect", f.name, EffectStatus)
			}
		}
	}

	switch r.Effect {
	case EffectDelay:
		if r.Delay.isNone() {
			if err := r.Delay.Validate(); err != nil {
				return fmt.Errorf("delay: %w", err)
			}
			return errors.New(`effect "delay" needs delay, e.g. delay = { kind = "fixed", value = "500ms" }`)
		}
		if err := r.Delay.Validate(); err != nil {
			return fmt.Errorf("delay: %w", err)
		}
	case EffectStatus:
		if r.Status < 400 || r.Status > 599 {
			return errors.New(`effect "status" needs status between 400 and 599`)
		}
		if r.SubStatus < 0 {
			return fmt.Errorf("substatus %d must not be negative", r.SubStatus)
		}
		if r.RetryAfter < 0 {
			return fmt.Errorf("retry_after must not be negative: %s", r.RetryAfter)
		}
	case EffectDropResponse:
		if bad, ok := onlyWrites(r.Operations); !ok {
			return fmt.Errorf(`effect "drop-response" only applies to writes; replace operation %q with create, upsert, replace, delete, patch or writes`, bad)
		}
	}
	return nil
}

// appliesTo is the static part of matching: where a request goes and what it
// does. A rule pinned to a replica only hits callers that name that replica,
// so a fault aimed at one replica never leaks onto gateway traffic.
func (r *Rule) appliesTo(region, op, replica string) bool {
	if r.Region != "" && !SameRegion(r.Region, region) {
		return false
	}
	if r.Replica != "" && r.Replica != replica {
		return false
	}
	if len(r.Operations) > 0 && !r.coversOperation(op) {
		return false
	}
	return r.Effect != EffectDropResponse || isWrite(op)
}

func (r *Rule) coversOperation(op string) bool {
	for _, p := range r.Operations {
		if OperationMatches(p, op) {
			return true
		}
	}
	return false
}

// unscoped reports whether the rule applies to every request in its region,
// which is what deciding on a bare connection (before any request has been
// read) requires.
func (r *Rule) unscoped() bool {
	if r.Replica != "" {
		return false
	}
	if len(r.Operations) == 0 {
		return true
	}
	for _, p := range r.Operations {
		if p == GroupAll {
			return true
		}
	}
	return false
}

// activeAt is the dynamic part of matching: the time window and the budget.
func (r *Rule) activeAt(now time.Time) bool {
	from := r.Since.Add(time.Duration(r.After))
	if now.Before(from) {
		return false
	}
	if r.For > 0 && !now.Before(from.Add(time.Duration(r.For))) {
		return false
	}
	return r.Count == 0 || r.Fired < r.Count
}

func (r Rule) clone() Rule {
	if r.Operations != nil {
		r.Operations = append([]string(nil), r.Operations...)
	}
	return r
}
