package faults

import (
	"slices"
	"testing"
)

func ids(rules []Rule) []string {
	out := make([]string, len(rules))
	for i, r := range rules {
		out[i] = r.ID
	}
	return out
}

func TestAddAssignsSequentialIDsSkippingTakenOnes(t *testing.T) {
	in, _ := newTestInjector(t)
	hang := Rule{Effect: EffectHang}
	steps := []struct {
		id, want string
	}{
		{"", "f1"},
		{"f2", "f2"},
		{"", "f3"},
		{"custom", "custom"},
		{"", "f4"},
	}
	for _, s := range steps {
		r := hang
		r.ID = s.id
		got, err := in.Add(r)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != s.want {
			t.Fatalf("Add(id=%q) assigned %q, want %q", s.id, got.ID, s.want)
		}
	}
	if got, want := ids(in.Rules()), []string{"f1", "f2", "f3", "custom", "f4"}; !slices.Equal(got, want) {
		t.Fatalf("Rules() ids = %v, want %v (insertion order)", got, want)
	}
}

func TestAddRejectsDuplicateAndInvalidRulesWithoutSideEffects(t *testing.T) {
	in, _ := newTestInjector(t, Rule{ID: "f1", Effect: EffectHang})

	_, err := in.Add(Rule{ID: "f1", Effect: EffectHang})
	wantErrContaining(t, err, `fault "f1": id is already in use`)

	_, err = in.Add(Rule{Effect: EffectStatus, Status: 42})
	wantErrContaining(t, err, `fault "f2": effect "status" needs status between 400 and 599`)

	got, err := in.Add(Rule{Effect: EffectHang})
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != "f2" {
		t.Fatalf("a rejected rule must not use up its id: got %q, want f2", got.ID)
	}
	if n := len(in.Rules()); n != 2 {
		t.Fatalf("%d rules stored, want 2", n)
	}
}

func TestAddIgnoresCallerSuppliedFiredCount(t *testing.T) {
	in, _ := newTestInjector(t)
	got, err := in.Add(Rule{Effect: EffectHang, Fired: 7})
	if err != nil {
		t.Fatal(err)
	}
	if got.Fired != 0 || in.Rules()[0].Fired != 0 {
		t.Fatal("Fired must start at zero")
	}
}

func TestRulesReturnsIndependentCopies(t *testing.T) {
	ops := []string{"read"}
	in, _ := newTestInjector(t, Rule{ID: "x", Effect: EffectHang, Operations: ops})
	ops[0] = "query" // the caller's slice must not reach into the injector

	listed := in.Rules()
	listed[0].Operations[0] = "create"
	listed[0].Fired = 99

	if !in.Decide("", "read", "").Hang {
		t.Fatal("rule no longer matches reads after callers mutated their copies")
	}
	if n := in.Rules()[0].Fired; n != 1 {
		t.Fatalf("Fired = %d, want 1", n)
	}
}

func TestRemoveDeletesOnlyTheNamedRule(t *testing.T) {
	in, _ := newTestInjector(t,
		Rule{ID: "a", Effect: EffectHang},
		Rule{ID: "b", Effect: EffectHang},
		Rule{ID: "c", Effect: EffectHang},
	)
	if !in.Remove("b") {
		t.Fatal("Remove(b) = false, want true")
	}
	if in.Remove("b") {
		t.Fatal("second Remove(b) = true, want false")
	}
	if got := ids(in.Rules()); !slices.Equal(got, []string{"a", "c"}) {
		t.Fatalf("remaining ids = %v, want [a c]", got)
	}
}

func TestRemovedIDsAreNotReusedUntilClear(t *testing.T) {
	in, _ := newTestInjector(t, Rule{Effect: EffectHang})
	in.Remove("f1")
	if r, _ := in.Add(Rule{Effect: EffectHang}); r.ID != "f2" {
		t.Fatalf("after Remove got id %q, want f2", r.ID)
	}
	in.Clear()
	if n := len(in.Rules()); n != 0 {
		t.Fatalf("%d rules after Clear, want 0", n)
	}
	if r, _ := in.Add(Rule{Effect: EffectHang}); r.ID != "f1" {
		t.Fatalf("after Clear got id %q, want f1", r.ID)
	}
}

func TestClearKeepsLatency(t *testing.T) {
	in, _ := newTestInjector(t, delayRule("x", ms(100)))
	mustSetLatency(t, in, "", "all", fixed(ms(5)))
	in.Clear()
	if got := in.Decide("", "read", "").Delay; got != ms(5) {
		t.Fatalf("Delay after Clear = %v, want base latency 5ms", got)
	}
}

func TestLoadReplacesLatencyAndRules(t *testing.T) {
	in, _ := newTestInjector(t, Rule{ID: "old", Effect: EffectHang})
	mustSetLatency(t, in, "Old Region", "all", fixed(ms(1)))

	err := in.Load(
		[]LatencySpec{{Region: "West US", Operation: "reads", Distribution: fixed(ms(7))}},
		[]Rule{
			{Effect: EffectDelay, Delay: fixed(ms(3))},
			{ID: "f2", Effect: EffectStatus, Status: 503},
			{Effect: EffectHang, Fired: 5},
		},
	)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(in.Rules()); !slices.Equal(got, []string{"f1", "f2", "f3"}) {
		t.Fatalf("ids = %v, want [f1 f2 f3]", got)
	}
	if lat := in.Latency(); len(lat) != 1 || lat[0].Region != "West US" {
		t.Fatalf("Latency() = %+v, want only the loaded entry", lat)
	}
	d := in.Decide("westus", "query", "")
	if d.Delay != ms(10) || d.Status != 503 || d.Hang {
		t.Fatalf("Decide = %+v, want 10ms delay and 503", d)
	}
	if n := in.Rules()[2].Fired; n != 0 {
		t.Fatalf("loaded Fired = %d, want 0", n)
	}
}

func TestLoadIsAllOrNothing(t *testing.T) {
	tests := []struct {
		name    string
		lat     []LatencySpec
		rules   []Rule
		wantErr string
	}{
		{"invalid rule", nil, []Rule{{Effect: EffectHang}, {Effect: "boom"}},
			`fault "f2": unknown effect "boom"`},
		{"duplicate rule ids", nil, []Rule{{ID: "a", Effect: EffectHang}, {ID: "a", Effect: EffectHang}},
			`fault "a": id is used by more than one fault`},
		{"invalid latency", []LatencySpec{{Operation: "reads", Distribution: Distribution{Kind: "normal"}}}, nil,
			`latency for all regions, operation "reads": unknown distribution kind "normal"`},
		{"duplicate latency", []LatencySpec{
			{Region: "East US", Distribution: fixed(ms(1))},
			{Region: "eastus", Operation: "all", Distribution: fixed(ms(2))},
		}, nil, `latency for region "eastus", operation "all" is given twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, _ := newTestInjector(t, Rule{ID: "keep", Effect: EffectHang})
			mustSetLatency(t, in, "", "all", fixed(ms(9)))
			wantErrContaining(t, in.Load(tt.lat, tt.rules), tt.wantErr)
			if got := ids(in.Rules()); !slices.Equal(got, []string{"keep"}) {
				t.Fatalf("rules changed to %v after failed Load", got)
			}
			if lat := in.Latency(); len(lat) != 1 || lat[0].Distribution != fixed(ms(9)) {
				t.Fatalf("latency changed to %+v after failed Load", lat)
			}
		})
	}
}

func TestLoadAutoIDsSkipExplicitOnes(t *testing.T) {
	in, _ := newTestInjector(t)
	err := in.Load(nil, []Rule{
		{Effect: EffectHang},
		{ID: "f2", Effect: EffectHang},
		{Effect: EffectHang},
		{ID: "f1x", Effect: EffectHang},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(in.Rules()); !slices.Equal(got, []string{"f1", "f2", "f3", "f1x"}) {
		t.Fatalf("ids = %v", got)
	}
	if r, _ := in.Add(Rule{Effect: EffectHang}); r.ID != "f4" {
		t.Fatalf("next Add id = %q, want f4", r.ID)
	}
}
