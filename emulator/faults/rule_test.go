package faults

import (
	"math"
	"testing"
)

func TestRuleValidationNamesFieldAndFix(t *testing.T) {
	delay := Distribution{Kind: KindFixed, Value: Duration(ms(500))}
	tests := []struct {
		name    string
		rule    Rule
		wantErr string
	}{
		{"valid delay", Rule{ID: "f1", Effect: EffectDelay, Delay: delay}, ""},
		{"valid status", Rule{ID: "f1", Effect: EffectStatus, Status: 429, SubStatus: 3200}, ""},
		{"valid hang", Rule{ID: "f1", Effect: EffectHang, Operations: []string{"query"}}, ""},
		{"valid refuse", Rule{ID: "f1", Effect: EffectRefuse, Region: "East US", Probability: 1}, ""},
		{"valid drop-response on writes", Rule{ID: "f1", Effect: EffectDropResponse, Operations: []string{"create", "writes"}}, ""},
		{"valid drop-response without operations", Rule{ID: "f1", Effect: EffectDropResponse}, ""},
		{"status out of range", Rule{ID: "f3", Effect: EffectStatus, Status: 200},
			`fault "f3": effect "status" needs status between 400 and 599`},
		{"status missing", Rule{ID: "f3", Effect: EffectStatus},
			`fault "f3": effect "status" needs status between 400 and 599`},
		{"missing effect", Rule{ID: "f1"},
			`fault "f1": effect is required; valid effects: delay, status, hang, refuse, drop-response`},
		{"unknown effect lists valid ones", Rule{ID: "f1", Effect: "slow"},
			`fault "f1": unknown effect "slow"; valid effects: delay, status, hang, refuse, drop-response`},
		{"unknown operation lists valid ones", Rule{ID: "f1", Effect: EffectHang, Operations: []string{"reed"}},
			`fault "f1": unknown operation "reed"; valid operations: read, query, create, upsert, replace, delete, patch, account, pkranges, metadata, addresses, all, reads, writes`},
		{"probability above one", Rule{ID: "f1", Effect: EffectHang, Probability: 1.5},
			`fault "f1": probability 1.5 is out of range; use a value in (0, 1]`},
		{"negative probability", Rule{ID: "f1", Effect: EffectHang, Probability: -0.1},
			`probability -0.1 is out of range`},
		{"NaN probability", Rule{ID: "f1", Effect: EffectHang, Probability: math.NaN()},
			`probability NaN is out of range`},
		{"negative count", Rule{ID: "f1", Effect: EffectHang, Count: -1},
			`fault "f1": count -1 must not be negative; use 0 for unlimited`},
		{"negative after", Rule{ID: "f1", Effect: EffectHang, After: Duration(-ms(5))},
			`fault "f1": after must not be negative: -5ms`},
		{"negative for", Rule{ID: "f1", Effect: EffectHang, For: Duration(-ms(5))},
			`fault "f1": for must not be negative: -5ms`},
		{"drop-response on reads", Rule{ID: "f2", Effect: EffectDropResponse, Operations: []string{"create", "read"}},
			`fault "f2": effect "drop-response" only applies to writes; replace operation "read"`},
		{"drop-response on all", Rule{ID: "f2", Effect: EffectDropResponse, Operations: []string{"all"}},
			`replace operation "all"`},
		{"delay without distribution", Rule{ID: "f1", Effect: EffectDelay},
			`fault "f1": effect "delay" needs delay, e.g. delay = { kind = "fixed", value = "500ms" }`},
		{"delay with invalid distribution", Rule{ID: "f1", Effect: EffectDelay,
			Delay: Distribution{Kind: KindUniform, Min: Duration(ms(9)), Max: Duration(ms(1))}},
			`fault "f1": delay: uniform distribution min 9ms is greater than max 1ms`},
		{"status on a hang rule", Rule{ID: "f1", Effect: EffectHang, Status: 503},
			`fault "f1": status is only used by effect "status"`},
		{"delay on a status rule", Rule{ID: "f1", Effect: EffectStatus, Status: 503, Delay: delay},
			`fault "f1": delay is only used by effect "delay"`},
		{"unnamed rule", Rule{Effect: "nope"}, `fault: unknown effect "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantErrContaining(t, tt.rule.Validate(), tt.wantErr)
		})
	}
}
