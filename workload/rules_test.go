package workload

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseRules(t *testing.T) {
	cases := []struct {
		name string
		in   []string
		want []Rule
	}{
		{"a latency percentile", []string{"p99>200ms"}, []Rule{{Metric: "p99", Limit: 200 * time.Millisecond}}},
		{"an error percentage", []string{"errors>1%"}, []Rule{{Metric: "errors", Percent: 1}}},
		{"p99.9 with a fractional duration", []string{"p99.9>1.5s"}, []Rule{{Metric: "p99.9", Limit: 1500 * time.Millisecond}}},
		{"p999 is p99.9", []string{"p999>1s"}, []Rule{{Metric: "p99.9", Limit: time.Second}}},
		{"comma-separated in one flag", []string{"p99>200ms,errors>0.5%"}, []Rule{{Metric: "p99", Limit: 200 * time.Millisecond}, {Metric: "errors", Percent: 0.5}}},
		{"repeated flags", []string{"p50>20ms", "max>2s"}, []Rule{{Metric: "p50", Limit: 20 * time.Millisecond}, {Metric: "max", Limit: 2 * time.Second}}},
		{"spaces and upper case are forgiven", []string{" P90 > 30ms , errors > 0% "}, []Rule{{Metric: "p90", Limit: 30 * time.Millisecond}, {Metric: "errors", Percent: 0}}},
		{"empty items are skipped", []string{"p99>1s,", ""}, []Rule{{Metric: "p99", Limit: time.Second}}},
		{"nothing", nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseRules(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestParseRulesRejectsBadExpressionsInOneLine(t *testing.T) {
	cases := []struct {
		name, in, why string
	}{
		{"another operator", "p99<200ms", "only > is supported"},
		{"greater or equal", "p99>=200ms", "only > is supported"},
		{"an unknown metric", "p95>200ms", `unknown metric "p95"`},
		{"no metric", ">200ms", "no metric"},
		{"a latency without a unit", "p99>200", "duration such as 200ms"},
		{"a negative latency", "p99>-1s", "duration such as 200ms"},
		{"an error count instead of a percentage", "errors>3", "percentage such as 1%"},
		{"an error rate above 100%", "errors>150%", "from 0% to 100%"},
		{"an error rate that is not a number", "errors>lots%", "from 0% to 100%"},
		{"a bare word", "fast", "METRIC>LIMIT"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseRules([]string{"p50>1s," + tc.in})
			if err == nil {
				t.Fatalf("%q accepted", tc.in)
			}
			msg := err.Error()
			for _, want := range []string{`"` + tc.in + `"`, tc.why, "valid forms", "p99>200ms", "errors>1%"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not say %q", msg, want)
				}
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
		})
	}
}

func TestRuleBreached(t *testing.T) {
	sum := Summary{Count: 100, Errors: 2, ErrorRate: 0.02, P50Ms: Ms(10), P90Ms: Ms(50), P99Ms: Ms(250), P999Ms: Ms(900), MaxMs: Ms(1200)}
	// 2 of 100 requests timed out; the 98 answered ones were fast.
	timeouts := Summary{Count: 100, Errors: 2, ErrorRate: 0.02, Timeouts: 2, P50Ms: Ms(1), P90Ms: Ms(1), P99Ms: Ms(2), P999Ms: Ms(2), MaxMs: Ms(2)}
	allTimedOut := Summary{Count: 5, Errors: 5, ErrorRate: 1, Timeouts: 5}
	cases := []struct {
		name string
		rule string
		sum  Summary
		want bool
	}{
		{"p99 above its limit", "p99>200ms", sum, true},
		{"p99 below its limit", "p99>300ms", sum, false},
		{"exactly at the limit is not a breach", "p99>250ms", sum, false},
		{"p50", "p50>5ms", sum, true},
		{"p90", "p90>50ms", sum, false},
		{"p99.9", "p99.9>800ms", sum, true},
		{"max", "max>1s", sum, true},
		{"an error rate above the limit", "errors>1%", sum, true},
		{"an error rate below the limit", "errors>5%", sum, false},
		{"errors>0% is any error", "errors>0%", sum, true},
		{"errors>0% with no error", "errors>0%", Summary{Count: 10}, false},
		{"a stream with no requests breaches nothing", "p99>0s", Summary{}, false},
		{"a p99 that falls among the timeouts breaches any latency limit", "p99>1s", timeouts, true},
		{"max with a timeout breaches", "max>1s", timeouts, true},
		{"a p50 below the timeouts is the answered requests'", "p50>5ms", timeouts, false},
		{"a stream whose every request timed out breaches a latency rule", "p50>1h", allTimedOut, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rules, err := ParseRules([]string{tc.rule})
			if err != nil {
				t.Fatal(err)
			}
			if got := rules[0].Breached(tc.sum); got != tc.want {
				v, ok := rules[0].Observed(tc.sum)
				t.Fatalf("%s breached = %v, want %v (observed %v %v, limit %v)", tc.rule, got, tc.want, v, ok, rules[0].Threshold())
			}
		})
	}
}

func TestRuleStringIsTheCommandLineForm(t *testing.T) {
	for _, in := range []string{"p99>200ms", "p99.9>1.5s", "errors>1%", "errors>0.5%", "max>2m0s", "p50>0s"} {
		rules, err := ParseRules([]string{in})
		if err != nil {
			t.Fatal(err)
		}
		if got := rules[0].String(); got != in {
			t.Errorf("String() = %q, want %q", got, in)
		}
		again, err := ParseRules([]string{rules[0].String()})
		if err != nil || again[0] != rules[0] {
			t.Errorf("%q does not parse back to itself: %+v %v", rules[0], again, err)
		}
	}
}
