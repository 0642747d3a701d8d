package workload

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Metrics a Rule can watch.
const (
	MetricP50    = "p50"
	MetricP90    = "p90"
	MetricP99    = "p99"
	MetricP999   = "p99.9"
	MetricMax    = "max"
	MetricErrors = "errors"
)

const validRuleForms = "p50>DURATION, p90>DURATION, p99>DURATION, p99.9>DURATION, max>DURATION (e.g. p99>200ms), errors>PERCENT (e.g. errors>1%)"

// Rule is one --fail-on threshold: a latency metric above a limit, or an error rate above
// a percentage.
type Rule struct {
	Metric  string        // "p50", "p90", "p99", "p99.9", "max" or "errors"
	Limit   time.Duration // for latency metrics
	Percent float64       // for "errors": 0..100
}

// ParseRules parses thresholds such as "p99>200ms", "errors>1%" and "p99.9>1s", each
// string holding one or several separated by commas. An error is one line that names
// the expression and lists the valid forms.
func ParseRules(s []string) ([]Rule, error) {
	var rules []Rule
	for _, list := range s {
		for _, expr := range strings.Split(list, ",") {
			if strings.TrimSpace(expr) == "" {
				continue
			}
			r, err := parseRule(expr)
			if err != nil {
				return nil, fmt.Errorf("%q is not a threshold: %v; valid forms: %s", strings.TrimSpace(expr), err, validRuleForms)
			}
			rules = append(rules, r)
		}
	}
	return rules, nil
}

func parseRule(expr string) (Rule, error) {
	e := strings.Join(strings.Fields(expr), "")
	metric, value, ok := strings.Cut(e, ">")
	if !ok || strings.HasPrefix(value, "=") || strings.Contains(value, ">") {
		return Rule{}, fmt.Errorf("a threshold is METRIC>LIMIT (only > is supported)")
	}
	metric = strings.ToLower(metric)
	if metric == "p999" {
		metric = MetricP999
	}
	switch metric {
	case MetricErrors:
		num, isPercent := strings.CutSuffix(value, "%")
		if !isPercent {
			return Rule{}, fmt.Errorf("the error limit is a percentage such as 1%%, not %q", value)
		}
		p, err := strconv.ParseFloat(num, 64)
		if err != nil || math.IsNaN(p) || p < 0 || p > 100 {
			return Rule{}, fmt.Errorf("the error limit must be a percentage from 0%% to 100%%, not %q", value)
		}
		return Rule{Metric: metric, Percent: p}, nil
	case MetricP50, MetricP90, MetricP99, MetricP999, MetricMax:
		d, err := time.ParseDuration(value)
		if err != nil || d < 0 {
			return Rule{}, fmt.Errorf("the limit of %s must be a duration such as 200ms or 1.5s, not %q", metric, value)
		}
		return Rule{Metric: metric, Limit: d}, nil
	case "":
		return Rule{}, fmt.Errorf("no metric before >")
	default:
		return Rule{}, fmt.Errorf("unknown metric %q", metric)
	}
}

// Observed is the rule's metric in sum: milliseconds for a latency metric, a percentage
// for errors. ok is false when the metric has no figure: a latency of a stream none of
// whose requests got an answer, or whose percentile falls among its timeouts (see
// Breached).
func (r Rule) Observed(sum Summary) (v float64, ok bool) {
	if r.Metric == MetricErrors {
		return sum.ErrorRate * 100, true
	}
	if r.inTimeouts(sum) {
		return 0, false
	}
	var p *float64
	switch r.Metric {
	case MetricP50:
		p = sum.P50Ms
	case MetricP90:
		p = sum.P90Ms
	case MetricP99:
		p = sum.P99Ms
	case MetricP999:
		p = sum.P999Ms
	case MetricMax:
		p = sum.MaxMs
	}
	if p == nil {
		return 0, false
	}
	return *p, true
}

// quantile is the fraction of requests a latency metric is the upper bound of.
func (r Rule) quantile() float64 {
	switch r.Metric {
	case MetricP50:
		return 0.5
	case MetricP90:
		return 0.9
	case MetricP99:
		return 0.99
	case MetricP999:
		return 0.999
	}
	return 1
}

// InTimeouts reports whether the rule's latency percentile falls among sum's timeouts:
// a request that got no answer in time is slower than any that did, so when more than
// (1 − q) of the requests timed out the q-th percentile is a timeout, slower than any
// limit a rule sets.
func (r Rule) InTimeouts(sum Summary) bool { return r.inTimeouts(sum) }

func (r Rule) inTimeouts(sum Summary) bool {
	if r.Metric == MetricErrors || sum.Timeouts == 0 || sum.Count == 0 {
		return false
	}
	return float64(sum.Timeouts) > (1-r.quantile())*float64(sum.Count)
}

// Threshold is the rule's limit in the unit of Observed: milliseconds, or a percentage.
func (r Rule) Threshold() float64 {
	if r.Metric == MetricErrors {
		return r.Percent
	}
	return float64(r.Limit) / float64(time.Millisecond)
}

// Breached reports whether sum is above the rule's limit. A stream with no requests
// breaches nothing; a latency percentile that falls among the timeouts breaches any
// latency limit (a timeout is slower than every answer).
func (r Rule) Breached(sum Summary) bool {
	if sum.Count == 0 {
		return false
	}
	if r.inTimeouts(sum) {
		return true
	}
	v, ok := r.Observed(sum)
	return ok && v > r.Threshold()
}

// String is the rule as it is written on the command line: "p99>200ms", "errors>1%".
func (r Rule) String() string {
	if r.Metric == MetricErrors {
		return r.Metric + ">" + strconv.FormatFloat(r.Percent, 'f', -1, 64) + "%"
	}
	return r.Metric + ">" + r.Limit.String()
}
