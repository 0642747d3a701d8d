package faults

import "time"

// Decision tells the server what to do with one request. The zero value
// means "serve it normally, right away".
type Decision struct {
	// Delay is the base latency plus every firing delay rule. The server
	// waits this long before carrying out the rest of the decision.
	Delay time.Duration
	// Status, when non-zero, is returned instead of serving the request.
	Status     int
	SubStatus  int
	RetryAfter time.Duration
	// Hang: never answer, hold the request until the client disconnects.
	Hang bool
	// Refuse: the region is down; close the connection.
	Refuse bool
	// DropResponse: apply the write, then close without answering.
	DropResponse bool
	// Rules lists the ids of the rules that fired, in evaluation order.
	Rules []string
}

// Decide samples the base latency and evaluates the rules in order. Delay
// rules stack; the first firing rule with another effect ends the request,
// and later non-delay rules are neither rolled nor counted, so a rule's Fired
// count reflects requests it actually affected.
func (in *Injector) Decide(region, op, replica string) Decision {
	in.mu.Lock()
	defer in.mu.Unlock()

	now := in.clock.Now()
	var d Decision
	if base, ok := in.latency.lookup(region, op); ok {
		d.Delay = base.Sample(in.rng)
	}
	terminal := false
	for i := range in.rules {
		r := &in.rules[i]
		if terminal && r.Effect != EffectDelay {
			continue
		}
		if !r.appliesTo(region, op, replica) || !r.activeAt(now) || !in.roll(r.Probability) {
			continue
		}
		r.Fired++
		d.Rules = append(d.Rules, r.ID)
		switch r.Effect {
		case EffectDelay:
			d.Delay += r.Delay.Sample(in.rng)
			continue
		case EffectStatus:
			d.Status, d.SubStatus, d.RetryAfter = r.Status, r.SubStatus, time.Duration(r.RetryAfter)
			if d.Status == 429 && d.RetryAfter == 0 {
				d.RetryAfter = DefaultRetryAfter
			}
		case EffectHang:
			d.Hang = true
		case EffectRefuse:
			d.Refuse = true
		case EffectDropResponse:
			d.DropResponse = true
		}
		terminal = true
	}
	return d
}

// Refusing decides whether a new connection to region is refused. Only
// refuse rules that cover the whole region take part: a rule narrowed to
// some operations or one replica cannot be judged before a request has been
// read, so Decide handles it by closing the connection instead. A rule is
// counted only when it fires, and the first one that fires settles it.
func (in *Injector) Refusing(region string) bool {
	in.mu.Lock()
	defer in.mu.Unlock()

	now := in.clock.Now()
	for i := range in.rules {
		r := &in.rules[i]
		if r.Effect != EffectRefuse || !r.unscoped() {
			continue
		}
		if r.Region != "" && !SameRegion(r.Region, region) {
			continue
		}
		if !r.activeAt(now) || !in.roll(r.Probability) {
			continue
		}
		r.Fired++
		return true
	}
	return false
}

// roll draws against p, treating 0 as "always". Certain rules skip the draw
// so adding one does not shift the random sequence seen by the others.
func (in *Injector) roll(p float64) bool {
	if p == 0 || p >= 1 {
		return true
	}
	return in.rng.Float64() < p
}
