package output

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cosmosctl/cosmosctl/workload"
)

// ProbeRegion is one region's row of a probe report.
type ProbeRegion struct {
	Region  string
	Summary workload.Summary
}

// WriteProbeTable writes the per-region latency table of `cosmosctl probe`: REGION, COUNT,
// ERRORS (with the commonest statuses), P50, P90, P99, then, when some answer carried
// the service's own time, SRV P50, SRV P99 and NET P99, then P99.9, MAX and the request
// charge.
func WriteProbeTable(w io.Writer, st Styles, regions []ProbeRegion) error {
	server := false
	for _, r := range regions {
		server = server || r.Summary.HasServerTime()
	}
	t := NewTableOf(w, st, append([]Column{{Header: "REGION", Key: true, Priority: 9, Min: 10}}, summaryColumns(server)...)...)
	for _, r := range regions {
		t.Append(append([]string{r.Region}, summaryCells(st, r.Summary, server)...)...)
	}
	return t.Render()
}

// summaryColumns are the COUNT, ERRORS, P50, P90, P99, P99.9, MAX and RU columns of the
// region and replica tables, with server the SRV P50, SRV P99 and NET P99 columns after
// the P99. On a narrow terminal the server p50 goes first, then the network and server
// p99s (the verdicts under the probe's table say what they would), then the request
// charge, then the p99.9; then the error breakdown is cut (its count and commonest
// statuses come first); then the p90 goes (the p50 and p99 bracket it), the count and
// the maximum. The p50 and p99 always stay.
func summaryColumns(server bool) []Column {
	cols := []Column{
		{Header: "COUNT", Priority: 5, Right: true},
		{Header: "ERRORS", Key: true, Priority: 3, Min: 8},
		{Header: "P50", Key: true, Right: true},
		{Header: "P90", Priority: 4, Right: true},
		{Header: "P99", Key: true, Right: true},
	}
	if server {
		cols = append(cols,
			Column{Header: "SRV P50", Name: "server p50", Priority: -1, Right: true},
			Column{Header: "SRV P99", Name: "server p99", Priority: 0, Right: true},
			Column{Header: "NET P99", Name: "network p99", Priority: 0, Right: true})
	}
	return append(cols,
		Column{Header: "P99.9", Priority: 2, Right: true},
		Column{Header: "MAX", Priority: 6, Right: true},
		Column{Header: "RU", Priority: 1, Right: true})
}

// summaryCells are the cells of summaryColumns(server) for one stream of probe
// requests, shared by the region and replica tables.
func summaryCells(st Styles, s workload.Summary, server bool) []string {
	lat := func(v *float64) string {
		if v == nil {
			return st.None() // no request answered (or none said its server time)
		}
		return HumanDuration(msDuration(*v))
	}
	errs := ErrorBreakdown(s, st.ASCII)
	if s.Errors > 0 {
		errs = st.Bad(errs)
	}
	cells := []string{strconv.Itoa(s.Count), errs, lat(s.P50Ms), lat(s.P90Ms), lat(s.P99Ms)}
	if server {
		cells = append(cells, lat(s.ServerP50Ms), lat(s.ServerP99Ms), lat(s.NetworkP99Ms))
	}
	return append(cells, lat(s.P999Ms), lat(s.MaxMs), fmt.Sprintf("%.2f", s.RequestCharge))
}

// maxStatusesShown bounds the error breakdown so that the column stays readable.
const maxStatusesShown = 3

// ErrorBreakdown is the error count with its commonest statuses, most frequent first:
// "0", "3 (503/0×2, network×1)".
func ErrorBreakdown(s workload.Summary, ascii bool) string {
	if s.Errors == 0 {
		return "0"
	}
	keys := make([]string, 0, len(s.ErrorsByStatus))
	for k := range s.ErrorsByStatus {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := s.ErrorsByStatus[keys[i]], s.ErrorsByStatus[keys[j]]
		if a != b {
			return a > b
		}
		return keys[i] < keys[j]
	})
	times := "×"
	if ascii {
		times = "x"
	}
	parts := make([]string, 0, maxStatusesShown+1)
	for i, k := range keys {
		if i == maxStatusesShown {
			parts = append(parts, "…")
			if ascii {
				parts[len(parts)-1] = "..."
			}
			break
		}
		parts = append(parts, fmt.Sprintf("%s%s%d", k, times, s.ErrorsByStatus[k]))
	}
	return fmt.Sprintf("%d (%s)", s.Errors, strings.Join(parts, ", "))
}

// BreachMessage is one line saying how a region breached a --fail-on rule:
// "East US: p99 250ms > 200ms", "West US: errors 3.2% > 1%".
func BreachMessage(region string, r workload.Rule, s workload.Summary) string {
	obs, ok := r.Observed(s)
	switch {
	case r.Metric == workload.MetricErrors:
		return fmt.Sprintf("%s: errors %s%% > %s%% (%d of %s)", region,
			strconv.FormatFloat(math.Round(obs*100)/100, 'f', -1, 64),
			strconv.FormatFloat(r.Percent, 'f', -1, 64), s.Errors, HumanCount(s.Count, "request"))
	case !ok:
		// The percentile falls among the requests that got no answer in time.
		return fmt.Sprintf("%s: %s is a timeout (%d of %s got no answer in time) > %s", region, r.Metric, s.Timeouts, HumanCount(s.Count, "request"), HumanDuration(r.Limit))
	}
	return fmt.Sprintf("%s: %s %s > %s", region, r.Metric, HumanDuration(msDuration(obs)), HumanDuration(r.Limit))
}

func msDuration(ms float64) time.Duration {
	return time.Duration(math.Round(ms * float64(time.Millisecond)))
}

// The NDJSON stream of `cosmosctl probe -o json`: while it runs, one ProbeInterval per
// region per second; at the end one ProbeSummary. Every line has a "type". The field
// names follow the JSON vocabulary of docs/json: units in the names, a region is
// "region", per-region records are arrays of objects, a figure that does not exist is
// null.
const (
	ProbeLineInterval = "interval"
	ProbeLineSummary  = "summary"
)

// ProbeInterval is one region's record of one interval (a second, or the shorter last
// one): the requests that ended in it (answered or timed out) — the intervals of a
// region add up to its summary — and the requests still in flight at its end.
type ProbeInterval struct {
	Type      string  `json:"type"`
	Region    string  `json:"region"`
	ElapsedMs float64 `json:"elapsed_ms"` // from the start of the probe to the end of the interval
	workload.Summary
	// InFlight are the requests sent and not answered at the end of the interval, and
	// OldestInFlightMs how long the oldest of them has waited since it was due (null
	// when none is in flight): a hung region's seconds show them, not an empty record.
	InFlight         int      `json:"in_flight"`
	OldestInFlightMs *float64 `json:"oldest_in_flight_ms"`
	// Behind are the requests of an open loop (--rate) due by the end of the interval
	// and not yet sent, every worker being busy (null without --rate).
	Behind *int `json:"behind"`
}

// ProbeRegionSummary is one region's record of the whole run, an element of the
// summary's regions.
type ProbeRegionSummary struct {
	Region string `json:"region"`
	workload.Summary
	// NotSent are the requests of an open loop (--rate) that were due and never sent:
	// every worker was busy until the probe ended (null without --rate).
	NotSent *int `json:"not_sent"`
}

// Probe ends: how a probe's run came to its end, the summary's ended_by.
const (
	ProbeEndedByCount     = "count"      // every region sent its --count
	ProbeEndedByDuration  = "duration"   // --duration ran out
	ProbeEndedByTimeLimit = "time_limit" // the default time limit ran out before the --count
	ProbeEndedByInterrupt = "interrupt"  // Ctrl-C (or SIGTERM)
)

// What a probe reads, the summary's probed.
const (
	ProbedItem = "item" // the probe item, found or created, or the item --id names
	// ProbedMissingItem is the probe item when the set-up could neither find nor create
	// it: a read of it goes to the partition's replicas like any point read, and a
	// 404/0 (not found) is the region's answer, counted as one.
	ProbedMissingItem = "missing_item"
	ProbedEndpoint    = "endpoint" // --account-only: GET / of each regional endpoint
)

// ProbeSummary is the last line of the stream: every region's record of the whole run and
// the --fail-on thresholds they breached.
type ProbeSummary struct {
	Type    string `json:"type"`
	Request string `json:"request"` // "read" (the probe item) or "account" (GET /)
	// Probed is what the requests read (Probed…): "item", the probe item or --id's;
	// "missing_item", the probe item when it could be neither found nor created (the
	// write region down, say), whose 404/0 (not found) is each region's answer and
	// counts as one, not as an error; "endpoint", GET / with --account-only.
	Probed    string  `json:"probed" jsonschema:"enum=item,enum=missing_item,enum=endpoint"`
	ElapsedMs float64 `json:"elapsed_ms"`
	// EndedBy is how the run ended (ProbeEndedBy…); TimeLimitMs the wall-clock bound it
	// ran under (--duration, or the default time limit), null when it had none.
	EndedBy     string               `json:"ended_by"`
	TimeLimitMs *float64             `json:"time_limit_ms"`
	Regions     []ProbeRegionSummary `json:"regions"`
	// Replicas is present with --replicas: every probed region's replicas of the probe
	// item's partition key range, each with its region.
	Replicas []ProbeReplica `json:"replicas,omitempty"`
	Breaches []ProbeBreach  `json:"breaches"`
}

// ProbeBreach is one region (or, with --replicas, one replica) above one --fail-on
// threshold. A latency rule has observed_ms and limit_ms, an error rule observed_percent
// and limit_percent.
type ProbeBreach struct {
	Region          string   `json:"region"`
	Replica         string   `json:"replica,omitempty"` // the replica's address
	Rule            string   `json:"rule"`
	Metric          string   `json:"metric"`
	ObservedMs      *float64 `json:"observed_ms,omitempty"`
	LimitMs         *float64 `json:"limit_ms,omitempty"`
	ObservedPercent *float64 `json:"observed_percent,omitempty"`
	LimitPercent    *float64 `json:"limit_percent,omitempty"`
	// Timeouts is set, instead of observed_ms, when the latency percentile falls among
	// the requests that got no answer in time (a timeout is slower than any limit).
	Timeouts *int   `json:"timeouts,omitempty"`
	Message  string `json:"message"`
}

// NewProbeBreach describes region's breach of r.
func NewProbeBreach(region string, r workload.Rule, s workload.Summary) ProbeBreach {
	obs, ok := r.Observed(s)
	limit := r.Threshold()
	b := ProbeBreach{Region: region, Rule: r.String(), Metric: r.Metric, Message: BreachMessage(region, r, s)}
	switch {
	case r.Metric == workload.MetricErrors:
		b.ObservedPercent, b.LimitPercent = &obs, &limit
	case !ok:
		// The percentile is a timeout: no figure, and the timeouts that made it so.
		b.LimitMs, b.Timeouts = &limit, &s.Timeouts
	default:
		b.ObservedMs, b.LimitMs = &obs, &limit
	}
	return b
}

// WriteJSONLine writes v as one line of JSON (NDJSON), without HTML escaping.
func WriteJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
