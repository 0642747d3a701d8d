package hedging

import (
	"testing"
)

func TestBudgetCapsExtraRequestsAtAShareOfTraffic(t *testing.T) {
	cases := []struct {
		name   string
		budget float64
		burst  float64
		ops    int
		// The bucket starts full, so the first operation's share is lost to the cap:
		// Burst + Budget×(ops−1) tokens are ever there, and every whole one is spent.
		want int
	}{
		{"10% with a burst of 10 over 1000 operations", 0.10, 10, 1000, 10 + 99},
		{"1% with a burst of 1 over 1000 operations", 0.01, 1, 1000, 1 + 9},
		{"a third with a burst of 3 over 300 operations", 1.0 / 3, 3, 300, 3 + 99},
		{"100% admits every hedge", 1, 1, 1000, 1000},
		{"a burst of 2.5 holds two whole tokens", 0.10, 2.5, 1, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := NewAdaptive(AdaptiveConfig{Budget: c.budget, Burst: c.burst})
			if err != nil {
				t.Fatal(err)
			}
			admitted := 0
			for i := 0; i < c.ops; i++ {
				p := a.Begin("read")
				for arm := 1; arm <= 3 && p.Admit(arm); arm++ { // each operation wants hedges
					admitted++
				}
				p.Done(ms, false)
			}
			if admitted != c.want {
				t.Fatalf("admitted %d extra requests over %d operations, want %d", admitted, c.ops, c.want)
			}
			if limit := c.budget*float64(c.ops) + c.burst; float64(admitted) > limit {
				t.Fatalf("admitted %d > Budget×operations + Burst = %v", admitted, limit)
			}
		})
	}
}

func TestBudgetRefillsWithTraffic(t *testing.T) {
	a, err := NewAdaptive(AdaptiveConfig{Budget: 0.10, Burst: 2})
	if err != nil {
		t.Fatal(err)
	}
	p := a.Begin("read")
	if !p.Admit(1) || !p.Admit(2) {
		t.Fatal("a full bucket of 2 refused one of 2 hedges")
	}
	if p.Admit(3) {
		t.Fatal("admitted a hedge with no token left")
	}
	if _, _, tokens := a.Stats("read"); tokens != 0 {
		t.Fatalf("tokens = %v after spending the burst", tokens)
	}
	// Nine operations earn 0.9 of a token: not enough. The tenth makes a whole one.
	for i := 0; i < 9; i++ {
		if a.Begin("read").Admit(1) {
			t.Fatalf("operation %d admitted a hedge with less than a token", i+1)
		}
	}
	if _, _, tokens := a.Stats("read"); tokens != 0.9 {
		t.Fatalf("tokens = %v after 9 operations at 10%%, want 0.9 exactly", tokens)
	}
	p = a.Begin("create") // every kind of operation fills the same bucket
	if !p.Admit(1) {
		t.Fatal("ten operations at 10% did not earn a hedge")
	}
	if p.Admit(2) {
		t.Fatal("one token paid for two hedges")
	}
	// Traffic without hedges fills the bucket up to the burst and no further.
	for i := 0; i < 1000; i++ {
		a.Begin("read")
	}
	if _, _, tokens := a.Stats("read"); tokens != 2 {
		t.Fatalf("tokens = %v after a long quiet spell, want the burst (2)", tokens)
	}
}

func TestTheFirstArmIsNeverRefused(t *testing.T) {
	a, err := NewAdaptive(AdaptiveConfig{Burst: 1})
	if err != nil {
		t.Fatal(err)
	}
	p := a.Begin("read")
	p.Admit(1)
	if !p.Admit(0) {
		t.Fatal("an empty bucket refused the first arm")
	}
}
