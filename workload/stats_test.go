package workload

import (
	"encoding/json"
	"math"
	"reflect"
	"sync"
	"testing"
	"time"
)

type sample struct {
	latency   time.Duration
	status    int
	substatus int
	charge    float64
	failed    bool
}

func ok(d time.Duration) sample { return sample{latency: d, status: 200, charge: 1} }

func fill(s *Stats, samples ...sample) *Stats {
	for _, x := range samples {
		s.Record(x.latency, x.status, x.substatus, x.charge, x.failed)
	}
	return s
}

// ramp is n successful requests of 1ms, 2ms, … n ms.
func ramp(n int) []sample {
	out := make([]sample, n)
	for i := range out {
		out[i] = ok(time.Duration(i+1) * time.Millisecond)
	}
	return out
}

// near reports whether got is within 0.1% (the histogram's 3 significant digits) of want.
func near(got, want float64) bool { return math.Abs(got-want) <= want*0.001+1e-9 }

func TestStatsSummary(t *testing.T) {
	cases := []struct {
		name    string
		samples []sample
		want    Summary
	}{
		{
			name: "nothing recorded is all zeros, with an empty error map and no latency figure",
			want: Summary{ErrorsByStatus: map[string]int{}},
		},
		{
			name: "a timeout counts, as an error and a timeout, with no latency: with no answer there is no latency figure",
			want: Summary{Count: 2, Errors: 2, ErrorRate: 1, Timeouts: 2, ErrorsByStatus: map[string]int{"408/20008": 2}},
		},
		{
			name:    "the percentiles are of the answered requests only",
			samples: []sample{ok(3 * time.Millisecond)},
			want: Summary{Count: 3, Errors: 2, ErrorRate: 2.0 / 3, Timeouts: 2, ErrorsByStatus: map[string]int{"408/20008": 2},
				P50Ms: Ms(3), P90Ms: Ms(3), P99Ms: Ms(3), P999Ms: Ms(3), MaxMs: Ms(3), RequestCharge: 1},
		},
		{
			name:    "429s are counted as throttled",
			samples: []sample{{latency: time.Millisecond, status: 429, substatus: 3200, failed: true}, ok(time.Millisecond)},
			want: Summary{Count: 2, Errors: 1, ErrorRate: 0.5, Throttled: 1, ErrorsByStatus: map[string]int{"429/3200": 1},
				P50Ms: Ms(1), P90Ms: Ms(1), P99Ms: Ms(1), P999Ms: Ms(1), MaxMs: Ms(1), RequestCharge: 1},
		},
		{
			name:    "percentiles of 1ms to 1000ms are the matching ranks",
			samples: ramp(1000),
			want:    Summary{Count: 1000, ErrorsByStatus: map[string]int{}, P50Ms: Ms(500), P90Ms: Ms(900), P99Ms: Ms(990), P999Ms: Ms(999), MaxMs: Ms(1000), RequestCharge: 1000},
		},
		{
			name: "errors are counted by status/substatus, and network for no status",
			samples: []sample{
				ok(time.Millisecond),
				{latency: time.Millisecond, status: 503, failed: true},
				{latency: time.Millisecond, status: 503, failed: true},
				{latency: time.Millisecond, status: 429, substatus: 3200, failed: true},
				{latency: time.Millisecond, failed: true},
			},
			want: Summary{Count: 5, Errors: 4, ErrorRate: 0.8, Throttled: 1, ErrorsByStatus: map[string]int{"503/0": 2, "429/3200": 1, "network": 1}, P50Ms: Ms(1), P90Ms: Ms(1), P99Ms: Ms(1), P999Ms: Ms(1), MaxMs: Ms(1), RequestCharge: 1},
		},
		{
			name:    "a 404 that is a success to the caller is not an error",
			samples: []sample{{latency: 2 * time.Millisecond, status: 404, charge: 1}},
			want:    Summary{Count: 1, ErrorsByStatus: map[string]int{}, P50Ms: Ms(2), P90Ms: Ms(2), P99Ms: Ms(2), P999Ms: Ms(2), MaxMs: Ms(2), RequestCharge: 1},
		},
		{
			name:    "a latency beyond a minute is recorded as a minute in the histogram but the max is exact",
			samples: []sample{ok(2 * time.Minute)},
			want:    Summary{Count: 1, ErrorsByStatus: map[string]int{}, P50Ms: Ms(60000), P90Ms: Ms(60000), P99Ms: Ms(60000), P999Ms: Ms(60000), MaxMs: Ms(120000), RequestCharge: 1},
		},
		{
			name:    "sub-microsecond and negative latencies count as zero",
			samples: []sample{ok(-time.Millisecond), ok(300 * time.Nanosecond)},
			want:    Summary{Count: 2, ErrorsByStatus: map[string]int{}, P50Ms: Ms(0), P90Ms: Ms(0), P99Ms: Ms(0), P999Ms: Ms(0), MaxMs: Ms(0), RequestCharge: 2},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := fill(NewStats(), tc.samples...)
			for range tc.want.Timeouts {
				st.RecordTimeout(0)
			}
			got := st.Summary()
			for _, f := range []struct {
				name      string
				got, want *float64
			}{{"p50", got.P50Ms, tc.want.P50Ms}, {"p90", got.P90Ms, tc.want.P90Ms}, {"p99", got.P99Ms, tc.want.P99Ms}, {"p99.9", got.P999Ms, tc.want.P999Ms}, {"max", got.MaxMs, tc.want.MaxMs}} {
				switch {
				case (f.got == nil) != (f.want == nil):
					t.Errorf("%s = %v, want %v (nil: no latency figure)", f.name, f.got, f.want)
				case f.got != nil && !near(*f.got, *f.want):
					t.Errorf("%s = %vms, want %vms", f.name, *f.got, *f.want)
				}
			}
			got.P50Ms, got.P90Ms, got.P99Ms, got.P999Ms, got.MaxMs = nil, nil, nil, nil, nil
			tc.want.P50Ms, tc.want.P90Ms, tc.want.P99Ms, tc.want.P999Ms, tc.want.MaxMs = nil, nil, nil, nil, nil
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("summary\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestStatsQuantile(t *testing.T) {
	s := fill(NewStats(), ramp(1000)...)
	cases := []struct {
		name string
		q    float64
		want time.Duration
	}{
		{"the median", 0.5, 500 * time.Millisecond},
		{"p99.9 is 0.999", 0.999, 999 * time.Millisecond},
		{"1 is the maximum", 1, time.Second},
		{"above 1 is clamped to the maximum", 7, time.Second},
		{"0 is the minimum", 0, time.Millisecond},
		{"below 0 is clamped to the minimum", -1, time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := s.Quantile(tc.q); !near(float64(got), float64(tc.want)) || got > time.Second {
				t.Fatalf("Quantile(%v) = %s, want %s (never above the max)", tc.q, got, tc.want)
			}
		})
	}
	if got := NewStats().Quantile(0.5); got != 0 {
		t.Fatalf("an empty record's quantile is %s, want 0", got)
	}
	if got := s.Quantile(math.NaN()); got != 0 {
		t.Fatalf("Quantile(NaN) = %s, want 0", got)
	}
}

func TestStatsMergeAddsEverything(t *testing.T) {
	cases := []struct {
		name string
		a, b []sample
	}{
		{"two halves make the whole", ramp(500), ramp(1000)[500:]},
		{"merging an empty record changes nothing", ramp(10), nil},
		{"errors and charges add up", []sample{{latency: time.Millisecond, status: 503, failed: true}}, []sample{{latency: 3 * time.Millisecond, status: 503, charge: 2.5, failed: true}, ok(time.Millisecond)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, b := fill(NewStats(), tc.a...), fill(NewStats(), tc.b...)
			a.Merge(b)
			want := fill(NewStats(), append(append([]sample(nil), tc.a...), tc.b...)...).Summary()
			if got := a.Summary(); !reflect.DeepEqual(got, want) {
				t.Fatalf("merged\n got %+v\nwant %+v", got, want)
			}
			if b.Count() != len(tc.b) {
				t.Fatalf("Merge changed its argument: count %d", b.Count())
			}
		})
	}
	t.Run("merging a record into itself doubles it", func(t *testing.T) {
		s := fill(NewStats(), ramp(10)...)
		s.Merge(s)
		if s.Count() != 20 || s.Summary().RequestCharge != 20 {
			t.Fatalf("self-merge: %+v", s.Summary())
		}
	})
}

func TestStatsAreSafeForConcurrentUse(t *testing.T) {
	s, other := NewStats(), fill(NewStats(), ramp(10)...)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				s.Record(time.Duration(i)*time.Millisecond, 503, w, 1, i%2 == 0)
				if i%50 == 0 {
					s.Merge(other)
					other.Merge(NewStats())
					_ = s.Summary()
					_ = s.Quantile(0.99)
				}
			}
		}()
	}
	wg.Wait()
	if got := s.Count(); got != 800+8*2*10 {
		t.Fatalf("count %d after concurrent records and merges", got)
	}
}

func TestSummaryJSONFieldNamesCarryTheirUnits(t *testing.T) {
	b, err := json.Marshal(fill(NewStats(), sample{latency: time.Millisecond, status: 503, failed: true}).Summary())
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	json.Unmarshal(b, &got)
	for _, k := range []string{"count", "errors", "error_rate", "timeouts", "throttled", "errors_by_status", "p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms", "request_charge",
		"server_p50_ms", "server_p99_ms", "network_p50_ms", "network_p99_ms"} {
		if _, ok := got[k]; !ok {
			t.Errorf("summary JSON lacks %q: %s", k, b)
		}
	}
	if len(got) != 16 {
		t.Errorf("summary JSON has unexpected fields: %s", b)
	}
	// A stream with no answer has no latency figure: null, never 0.
	st := NewStats()
	st.RecordTimeout(0)
	b, _ = json.Marshal(st.Summary())
	json.Unmarshal(b, &got)
	for _, k := range []string{"p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms", "server_p50_ms", "server_p99_ms", "network_p50_ms", "network_p99_ms"} {
		if v, ok := got[k]; !ok || v != nil {
			t.Errorf("%s of a stream that only timed out is %v, want null: %s", k, v, b)
		}
	}
}

func TestRecorderIntervalsAddUpToTheTotal(t *testing.T) {
	r := NewRecorder()
	merged := NewStats()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 1000 {
			r.Record(time.Duration(i)*time.Microsecond, 503, 0, 1, i%10 == 0)
		}
	}()
	for range 20 {
		merged.Merge(r.CutInterval())
	}
	wg.Wait()
	merged.Merge(r.CutInterval())
	if got, want := merged.Summary(), r.Total().Summary(); !reflect.DeepEqual(got, want) {
		t.Fatalf("intervals\n %+v\ndo not add up to the total\n %+v", got, want)
	}
	if r.Total().Count() != 1000 || r.CutInterval().Count() != 0 {
		t.Fatalf("total %d; a fresh interval must be empty", r.Total().Count())
	}
}
