package faults

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// Distribution kinds. The empty kind means the same as "none" so that an
// omitted table in a scenario file costs nothing.
const (
	KindNone      = "none"
	KindFixed     = "fixed"
	KindUniform   = "uniform"
	KindLognormal = "lognormal"
)

const validKinds = "fixed, uniform, lognormal, none"

// z99 is the standard normal quantile at 0.99. Authors describe lognormal
// latency by its median and p99 because that is what dashboards show; this
// converts the spread between the two into sigma.
const z99 = 2.3263479

// lognormalCapFactor bounds the lognormal tail. Without it a rare sample can
// be hours long and turn a latency rehearsal into a hung test run.
const lognormalCapFactor = 100

// Distribution describes a latency. Only the fields of its kind are used:
// fixed uses Value, uniform uses Min and Max, lognormal uses P50 and P99.
type Distribution struct {
	Kind  string   `toml:"kind" json:"kind"`
	Value Duration `toml:"value,omitzero" json:"value,omitempty"`
	Min   Duration `toml:"min,omitzero" json:"min,omitempty"`
	Max   Duration `toml:"max,omitzero" json:"max,omitempty"`
	P50   Duration `toml:"p50,omitzero" json:"p50,omitempty"`
	P99   Duration `toml:"p99,omitzero" json:"p99,omitempty"`
}

func (d Distribution) isNone() bool { return d.Kind == "" || d.Kind == KindNone }

// Validate also rejects fields the kind ignores: `kind = "fixed"` with a
// `max` is almost always a half-edited uniform, and silently ignoring max
// would make the scenario behave differently from how it reads.
func (d Distribution) Validate() error {
	fields := []struct {
		name string
		v    Duration
	}{{"value", d.Value}, {"min", d.Min}, {"max", d.Max}, {"p50", d.P50}, {"p99", d.P99}}
	for _, f := range fields {
		if f.v < 0 {
			return fmt.Errorf("%s must not be negative: %s", f.name, f.v)
		}
	}

	var uses []string
	switch d.Kind {
	case "", KindNone:
	case KindFixed:
		uses = []string{"value"}
	case KindUniform:
		uses = []string{"min", "max"}
	case KindLognormal:
		uses = []string{"p50", "p99"}
	default:
		return fmt.Errorf("unknown distribution kind %q; valid kinds: %s", d.Kind, validKinds)
	}
	var stray []string
	for _, f := range fields {
		if f.v != 0 && !slices.Contains(uses, f.name) {
			stray = append(stray, f.name)
		}
	}
	if len(stray) > 0 {
		if d.isNone() {
			return fmt.Errorf("distribution without a kind sets %s; set kind to fixed, uniform or lognormal", strings.Join(stray, ", "))
		}
		return fmt.Errorf("%s distribution uses only %s; remove %s", d.Kind, strings.Join(uses, " and "), strings.Join(stray, ", "))
	}

	switch d.Kind {
	case KindUniform:
		if d.Min > d.Max {
			return fmt.Errorf("uniform distribution min %s is greater than max %s; swap them", d.Min, d.Max)
		}
	case KindLognormal:
		if d.P50 <= 0 {
			return fmt.Errorf("lognormal distribution needs p50 greater than 0")
		}
		if d.P99 < d.P50 {
			return fmt.Errorf("lognormal distribution p99 %s is less than p50 %s; p99 must be at least p50", d.P99, d.P50)
		}
	}
	return nil
}

// Sample draws one latency. It assumes the distribution is valid; invalid
// input degrades to something harmless rather than panicking in the request
// path.
func (d Distribution) Sample(r *rand.Rand) time.Duration {
	switch d.Kind {
	case KindFixed:
		return time.Duration(d.Value)
	case KindUniform:
		lo, hi := time.Duration(d.Min), time.Duration(d.Max)
		if hi <= lo {
			return lo
		}
		span := int64(hi - lo)
		if span == math.MaxInt64 {
			return lo + time.Duration(r.Int64N(span))
		}
		return lo + time.Duration(r.Int64N(span+1))
	case KindLognormal:
		return d.sampleLognormal(r)
	}
	return 0
}

func (d Distribution) sampleLognormal(r *rand.Rand) time.Duration {
	if d.P50 <= 0 {
		return 0
	}
	if d.P99 <= d.P50 {
		return time.Duration(d.P50)
	}
	p50, p99 := float64(d.P50), float64(d.P99)
	sigma := (math.Log(p99) - math.Log(p50)) / z99
	x := p50 * math.Exp(sigma*r.NormFloat64())

	limit := time.Duration(math.MaxInt64)
	if d.P99 <= math.MaxInt64/lognormalCapFactor {
		limit = time.Duration(d.P99) * lognormalCapFactor
	}
	if x >= float64(limit) {
		return limit
	}
	return time.Duration(x)
}

func (d Distribution) String() string {
	switch d.Kind {
	case "", KindNone:
		return "none"
	case KindFixed:
		return fmt.Sprintf("fixed(%s)", d.Value)
	case KindUniform:
		return fmt.Sprintf("uniform(%s..%s)", d.Min, d.Max)
	case KindLognormal:
		return fmt.Sprintf("lognormal(p50=%s,p99=%s)", d.P50, d.P99)
	}
	return fmt.Sprintf("unknown(%q)", d.Kind)
}
