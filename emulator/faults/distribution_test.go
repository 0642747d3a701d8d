package faults

import (
	"slices"
	"testing"
	"time"
)

func TestFixedDistributionAlwaysReturnsItsValue(t *testing.T) {
	r := seeded()
	d := fixed(ms(20))
	for range 1000 {
		if got := d.Sample(r); got != ms(20) {
			t.Fatalf("got %v, want 20ms", got)
		}
	}
}

func TestNoneDistributionIsZero(t *testing.T) {
	r := seeded()
	for _, kind := range []string{"", KindNone} {
		if got := (Distribution{Kind: kind}).Sample(r); got != 0 {
			t.Fatalf("kind %q: got %v, want 0", kind, got)
		}
	}
}

func TestUniformDistributionStaysWithinBoundsAndCoversThem(t *testing.T) {
	r := seeded()
	d := Distribution{Kind: KindUniform, Min: Duration(ms(5)), Max: Duration(ms(10))}
	lo, hi := time.Duration(1<<62), time.Duration(0)
	for range 20000 {
		got := d.Sample(r)
		if got < ms(5) || got > ms(10) {
			t.Fatalf("sample %v outside [5ms, 10ms]", got)
		}
		lo, hi = min(lo, got), max(hi, got)
	}
	// The samples should spread over the range, not cluster at one end.
	if lo > ms(5)+ms(1)/10 || hi < ms(10)-ms(1)/10 {
		t.Fatalf("samples span only %v..%v", lo, hi)
	}
}

func TestUniformDistributionWithEqualBoundsIsFixed(t *testing.T) {
	d := Distribution{Kind: KindUniform, Min: Duration(ms(7)), Max: Duration(ms(7))}
	if got := d.Sample(seeded()); got != ms(7) {
		t.Fatalf("got %v, want 7ms", got)
	}
}

func TestLognormalDistributionMatchesItsMedianAndP99(t *testing.T) {
	r := seeded()
	d := Distribution{Kind: KindLognormal, P50: Duration(ms(5)), P99: Duration(ms(40))}
	const n = 20000
	samples := make([]time.Duration, n)
	for i := range samples {
		samples[i] = d.Sample(r)
	}
	slices.Sort(samples)
	within := func(name string, got, want time.Duration) {
		t.Helper()
		if diff := float64(got-want) / float64(want); diff < -0.10 || diff > 0.10 {
			t.Errorf("%s: got %v, want %v ±10%%", name, got, want)
		}
	}
	within("p50", samples[n/2], ms(5))
	within("p99", samples[n*99/100], ms(40))
}

func TestLognormalDistributionCapsOutliersAtHundredTimesP99(t *testing.T) {
	r := seeded()
	// A spread this wide puts about 0.1% of raw samples beyond 100×p99.
	d := Distribution{Kind: KindLognormal, P50: Duration(time.Nanosecond), P99: Duration(ms(1))}
	limit := 100 * ms(1)
	hitCap := false
	for range 20000 {
		got := d.Sample(r)
		if got > limit {
			t.Fatalf("sample %v exceeds cap %v", got, limit)
		}
		hitCap = hitCap || got == limit
	}
	if !hitCap {
		t.Fatalf("expected some samples to be capped at %v", limit)
	}
}

func TestLognormalWithEqualQuantilesIsFixed(t *testing.T) {
	d := Distribution{Kind: KindLognormal, P50: Duration(ms(8)), P99: Duration(ms(8))}
	if got := d.Sample(seeded()); got != ms(8) {
		t.Fatalf("got %v, want 8ms", got)
	}
}

func TestDistributionValidationExplainsTheProblem(t *testing.T) {
	tests := []struct {
		name    string
		d       Distribution
		wantErr string
	}{
		{"zero value is none", Distribution{}, ""},
		{"explicit none", Distribution{Kind: KindNone}, ""},
		{"fixed", fixed(ms(20)), ""},
		{"uniform", Distribution{Kind: KindUniform, Min: Duration(ms(5)), Max: Duration(ms(10))}, ""},
		{"lognormal", Distribution{Kind: KindLognormal, P50: Duration(ms(5)), P99: Duration(ms(40))}, ""},
		{"uniform min above max", Distribution{Kind: KindUniform, Min: Duration(ms(10)), Max: Duration(ms(5))},
			"uniform distribution min 10ms is greater than max 5ms"},
		{"lognormal p99 below p50", Distribution{Kind: KindLognormal, P50: Duration(ms(40)), P99: Duration(ms(5))},
			"lognormal distribution p99 5ms is less than p50 40ms"},
		{"lognormal without p50", Distribution{Kind: KindLognormal, P99: Duration(ms(5))},
			"lognormal distribution needs p50 greater than 0"},
		{"unknown kind lists valid ones", Distribution{Kind: "gaussian"},
			`unknown distribution kind "gaussian"; valid kinds: fixed, uniform, lognormal, none`},
		{"negative value", Distribution{Kind: KindFixed, Value: Duration(-ms(5))},
			"value must not be negative: -5ms"},
		{"field of another kind", Distribution{Kind: KindFixed, Value: Duration(ms(5)), Max: Duration(ms(9))},
			"fixed distribution uses only value; remove max"},
		{"fields without a kind", Distribution{Min: Duration(ms(5)), Max: Duration(ms(9))},
			"distribution without a kind sets min, max; set kind to fixed, uniform or lognormal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantErrContaining(t, tt.d.Validate(), tt.wantErr)
		})
	}
}

func TestDistributionStringIsCompact(t *testing.T) {
	tests := []struct {
		d    Distribution
		want string
	}{
		{Distribution{}, "none"},
		{Distribution{Kind: KindNone}, "none"},
		{fixed(ms(20)), "fixed(20ms)"},
		{Distribution{Kind: KindUniform, Min: Duration(ms(5)), Max: Duration(ms(10))}, "uniform(5ms..10ms)"},
		{Distribution{Kind: KindLognormal, P50: Duration(ms(5)), P99: Duration(ms(40))}, "lognormal(p50=5ms,p99=40ms)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.d.String(); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}
