package output

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/health"
	"github.com/cosmosctl/cosmosctl/workload"
)

// Rows as a production account gives them, wider than the tidy ones of the golden
// files: long region names, full endpoints and replica addresses, UUID activity ids,
// large request charges and error breakdowns.

func realisticDiagnostics() *engine.Diagnostics {
	return &engine.Diagnostics{
		Operation: engine.OpRead, Database: "inventory-production", Container: "stock-levels-by-warehouse",
		ID: "sku-0042-7731-blue-xl", PartitionKey: json.RawMessage(`["warehouse-singapore-02"]`),
		EffectiveRegions: []string{"Southeast Asia", "Australia Southeast", "Switzerland North"},
		ExcludedRegions:  []string{"East Asia"},
		HedgeConfig:      "threshold 300ms, step 100ms",
		E2ETimeout:       5 * time.Second,
		Attempts: []engine.Attempt{{
			N: 1, Region: "Southeast Asia", Endpoint: "https://inventory-prod-southeastasia.documents.azure.com:443/", Reason: engine.ReasonInitial,
			Start: 0, Duration: 1200 * ms, Outcome: engine.OutcomeCancelled,
			Error: "cancelled: Australia Southeast answered first",
		}, {
			N: 2, Region: "Australia Southeast", Endpoint: "https://inventory-prod-australiasoutheast.documents.azure.com:443/", Reason: engine.ReasonHedge,
			Start: 300 * ms, Duration: 900 * ms, StatusCode: 200, RequestCharge: 12345.67,
			ActivityID: "3f2504e0-4f89-41d3-9a0c-0305e82c3301", Outcome: engine.OutcomeWon,
		}, {
			N: 3, Region: "Switzerland North", Endpoint: "https://inventory-prod-switzerlandnorth.documents.azure.com:443/", Reason: engine.ReasonHedge,
			Start: 400 * ms, Duration: 650 * ms, StatusCode: 404, SubStatus: 1002, RequestCharge: 2.86,
			ActivityID: "9b8f6c1e-27d4-4c55-b0e3-6a1d2f4e8c90", Outcome: engine.OutcomeLost,
		}},
		ContactedRegions: []string{"Southeast Asia", "Australia Southeast", "Switzerland North"},
		RespondedRegions: []string{"Australia Southeast", "Switzerland North"},
		WinningRegion:    "Australia Southeast", WinningAttempt: 2,
		RequestCharge: 12348.53,
		Duration:      1200 * ms,
		Notes:         []string{"region health: Southeast Asia: 3 timeouts in 40s, unavailable until 12:03:06, then one probe request; moved last"},
	}
}

func realisticProbeRows() []ProbeRegion {
	return []ProbeRegion{
		{"Southeast Asia", workload.Summary{Count: 123456, Errors: 1234, ErrorRate: 0.01, P50Ms: workload.Ms(2.1), P90Ms: workload.Ms(4.5), P99Ms: workload.Ms(8.25), P999Ms: workload.Ms(1250), MaxMs: workload.Ms(4812),
			RequestCharge: 1234567.89, ErrorsByStatus: map[string]int{"503/0": 1000, "429/3200": 200, "network": 30, "408/0": 4}}},
		{"Australia Southeast", workload.Summary{Count: 120001, ErrorsByStatus: map[string]int{}, P50Ms: workload.Ms(95), P90Ms: workload.Ms(120), P99Ms: workload.Ms(310), P999Ms: workload.Ms(1900), MaxMs: workload.Ms(2100), RequestCharge: 120001}},
		{"Switzerland North", workload.Summary{ErrorsByStatus: map[string]int{}}},
	}
}

// realisticServerProbeRows are realisticProbeRows whose answers carried the service's
// time: Australia Southeast's mostly network.
func realisticServerProbeRows() []ProbeRegion {
	rows := realisticProbeRows()
	rows[0].Summary = withServerTimes(rows[0].Summary, 1.2, 6.1, 0.9, 2.15)
	rows[1].Summary = withServerTimes(rows[1].Summary, 2.4, 11.5, 92.7, 298.6)
	return rows
}

func realisticServerReplicaRows() []ProbeReplica {
	rows := realisticReplicaRows()
	for i := range rows[:4] {
		p50 := *rows[i].Summary.P50Ms
		rows[i].Summary = withServerTimes(rows[i].Summary, p50/4, p50, p50*3/4, p50*2)
	}
	return rows
}

func realisticReplicaRows() []ProbeReplica {
	addr := func(region, id string) string {
		return "rntbd://cdb-ms-prod-" + region + "1-be12.documents.azure.com:14070/apps/9a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d/services/" +
			"5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9/partitions/0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0/replicas/13284555137412861" + id + "/"
	}
	sum := func(n int, p50 float64, errs map[string]int) workload.Summary {
		e := 0
		for _, v := range errs {
			e += v
		}
		return workload.Summary{Count: n, Errors: e, ErrorsByStatus: errs, P50Ms: workload.Ms(p50), P90Ms: workload.Ms(p50 * 2), P99Ms: workload.Ms(p50 * 3), P999Ms: workload.Ms(p50 * 5), MaxMs: workload.Ms(p50 * 9), RequestCharge: float64(n) * 1.24}
	}
	return []ProbeReplica{
		{Region: "Southeast Asia", Range: "0", Address: addr("southeastasia", "2p"), Role: RolePrimary, Health: "connected", InReplicaSet: true, Summary: sum(30871, 2, map[string]int{})},
		{Region: "Southeast Asia", Range: "0", Address: addr("southeastasia", "3s"), Role: RoleSecondary, Health: healthUnhealthy, InReplicaSet: false,
			Summary: sum(30864, 1.5, map[string]int{"410/1000": 30000, "503/0": 864})},
		{Region: "Southeast Asia", Range: "0", Address: addr("southeastasia", "4s"), Role: RoleSecondary, Health: healthUnhealthyPending, InReplicaSet: true, Summary: sum(30860, 2.2, map[string]int{"410/0": 3})},
		{Region: "Australia Southeast", Range: "0", Address: addr("australiasoutheast", "5p"), Role: RolePrimary, Health: "connected", InReplicaSet: true, Summary: sum(40000, 96, map[string]int{})},
		{Region: "Switzerland North", Range: "0", Address: addr("switzerlandnorth", "6s"), Role: RoleSecondary, Health: "unknown", InReplicaSet: true, Summary: workload.Summary{ErrorsByStatus: map[string]int{}}},
	}
}

var realisticHealthConfig = health.Config{ReadFailures: 2, WriteFailures: 5, HedgeLosses: 5}

func realisticHealthEntries() []health.Entry {
	ago := func(d time.Duration) time.Time { return healthNow.Add(-d) }
	return append(healthEntries(),
		health.Entry{Region: "Southeast Asia", PartitionKeyRangeID: "1207", Kind: health.Write, Status: health.StatusUnavailable,
			Failures:    map[health.Cause]int{health.Timeout: 12, health.Unavailable: 3, health.Unreachable: 1, health.Gone: 1},
			LastFailure: ago(26 * time.Hour), UnavailableUntil: healthNow.Add(90 * time.Second), ProbeIntervalMs: 30000, FailedProbes: 7,
			HedgeLossStreak: 12, LastSuccess: ago(72 * time.Hour)},
		health.Entry{Region: "Australia Southeast", Kind: health.Read, Status: health.StatusAvailable,
			Failures: map[health.Cause]int{health.ServerError: 1}, LastFailure: ago(130 * time.Second), LastSuccess: ago(2 * time.Second)},
	)
}

// fittedTable is one of the tables the commands print, for the width tests.
type fittedTable struct {
	name   string
	render func(w io.Writer, st Styles) error
	// header is how the table's header line starts.
	header string
	cols   []fittedColumn
	// full are values that piped output carries whole.
	full []string
	// goldens are the widths whose output is kept in testdata/NAME_wWIDTH.golden.
	goldens []int
}

type fittedColumn struct {
	header, short, name string
	key                 bool
	elsewhere           string // a value shown under the table when the column is hidden
}

// diagnosticsColumns are the columns of the diagnostics table of d.
func diagnosticsColumns(d *engine.Diagnostics) []fittedColumn {
	span := "0–" + HumanDuration(timelineSpan(d))
	cols := []fittedColumn{
		{header: "#", key: true}, {header: "REGION", key: true}, {header: "REASON"}, {header: "START"},
		{header: "DURATION", key: true},
	}
	if serverColumn(d) {
		cols = append(cols, fittedColumn{header: "SERVER"}, fittedColumn{header: "NET"})
	}
	cols = append(cols, fittedColumn{header: "STATUS", key: true})
	if replicaColumn(d) {
		cols = append(cols, fittedColumn{header: "REPLICA"})
	}
	if rangeColumn(d) {
		cols = append(cols, fittedColumn{header: "RANGE"})
	}
	return append(cols, fittedColumn{header: "RU"}, fittedColumn{header: "OUTCOME", key: true},
		fittedColumn{header: "TIMELINE " + span, short: span, name: "timeline"}, fittedColumn{header: "ACTIVITY ID"})
}

func fittedTables() []fittedTable {
	var tables []fittedTable
	for _, tc := range diagnosticsCases {
		tables = append(tables, fittedTable{
			name:   "diagnostics_" + tc.name,
			render: func(w io.Writer, st Styles) error { return WriteDiagnostics(w, tc.d, st) },
			header: "#  ",
			cols:   diagnosticsColumns(tc.d),
		})
	}
	tables = append(tables, changesFitted())
	return append(tables, fittedTable{
		name:    "diagnostics_realistic",
		render:  func(w io.Writer, st Styles) error { return WriteDiagnostics(w, realisticDiagnostics(), st) },
		header:  "#  ",
		cols:    diagnosticsColumns(realisticDiagnostics()),
		full:    []string{"Australia Southeast", "12345.67", "3f2504e0", "404/1002", "━━━━━━━━━━━━━━━━━━━━━━●"},
		goldens: []int{80, 120},
	}, fittedTable{
		name:   "probe_table_realistic",
		render: func(w io.Writer, st Styles) error { return WriteProbeTable(w, st, realisticProbeRows()) },
		header: "REGION",
		cols: []fittedColumn{
			{header: "REGION", key: true}, {header: "COUNT"}, {header: "ERRORS", key: true}, {header: "P50", key: true},
			{header: "P90"}, {header: "P99", key: true}, {header: "P99.9"}, {header: "MAX"}, {header: "RU"},
		},
		full:    []string{"1234 (503/0×1000, 429/3200×200, network×30, …)", "1234567.89", "123456"},
		goldens: []int{80},
	}, fittedTable{
		name:   "probe_table_server_realistic",
		render: func(w io.Writer, st Styles) error { return WriteProbeTable(w, st, realisticServerProbeRows()) },
		header: "REGION",
		cols: []fittedColumn{
			{header: "REGION", key: true}, {header: "COUNT"}, {header: "ERRORS", key: true}, {header: "P50", key: true},
			{header: "P90"}, {header: "P99", key: true}, {header: "SRV P50", name: "server p50"}, {header: "SRV P99", name: "server p99"},
			{header: "NET P99", name: "network p99"}, {header: "P99.9"}, {header: "MAX"}, {header: "RU"},
		},
		full:    []string{"1234 (503/0×1000, 429/3200×200, network×30, …)", "1234567.89", "123456", "299ms"},
		goldens: []int{80, 120},
	}, fittedTable{
		name:   "probe_replicas_server_realistic",
		render: func(w io.Writer, st Styles) error { return WriteProbeReplicas(w, st, realisticServerReplicaRows()) },
		header: "REGION",
		cols: []fittedColumn{
			{header: "REGION", key: true}, {header: "RANGE"}, {header: "REPLICA", key: true}, {header: "ROLE"},
			{header: "HEALTH", key: true}, {header: "COUNT"}, {header: "ERRORS", key: true}, {header: "P50", key: true},
			{header: "P90"}, {header: "P99", key: true}, {header: "SRV P50", name: "server p50"}, {header: "SRV P99", name: "server p99"},
			{header: "NET P99", name: "network p99"}, {header: "P99.9"}, {header: "MAX"}, {header: "RU"},
		},
		full:    []string{realisticReplicaRows()[0].Address, "unhealthy (removed)", "30864 (410/1000×30000, 503/0×864)", "38280.04"},
		goldens: []int{100},
	}, fittedTable{
		name:   "probe_replicas_realistic",
		render: func(w io.Writer, st Styles) error { return WriteProbeReplicas(w, st, realisticReplicaRows()) },
		header: "REGION",
		cols: []fittedColumn{
			{header: "REGION", key: true}, {header: "RANGE"}, {header: "REPLICA", key: true}, {header: "ROLE"},
			{header: "HEALTH", key: true}, {header: "COUNT"}, {header: "ERRORS", key: true}, {header: "P50", key: true},
			{header: "P90"}, {header: "P99", key: true}, {header: "P99.9"}, {header: "MAX"}, {header: "RU"},
		},
		full:    []string{realisticReplicaRows()[0].Address, "unhealthy (removed)", "30864 (410/1000×30000, 503/0×864)", "38280.04"},
		goldens: []int{80, 100},
	}, fittedTable{
		name: "health_table_realistic",
		render: func(w io.Writer, st Styles) error {
			return WriteHealthTable(w, st, realisticHealthEntries(), realisticHealthConfig, healthNow)
		},
		header: "REGION",
		cols: []fittedColumn{
			{header: "REGION", key: true}, {header: "RANGE", key: true}, {header: "KIND", key: true}, {header: "STATUS", key: true},
			{header: "FAILURES", key: true}, {header: "LAST FAILURE"}, {header: "UNAVAILABLE UNTIL", short: "UNTIL"},
			{header: "HEDGE LOSSES", short: "LOSSES"}, {header: "LAST SUCCESS"},
			{header: "NOTE", elsewhere: "period 30s"},
		},
		full:    []string{"12 timeouts, 3 503s, 1 unreachable, 1 410", "Mar 3 10:03:04 (26h ago)", "12:04:34 (in 1m30s)"},
		goldens: []int{80, 100},
	})
}

// TestEveryTableFitsTheTerminal renders each table at the widths of common terminals
// and piped, with and without colour: no line is wider than the terminal, the key
// columns are always there, the footnote names exactly the columns that are not, and
// piped output has every column with every value whole.
func TestEveryTableFitsTheTerminal(t *testing.T) {
	localUTC(t)
	for _, tt := range fittedTables() {
		for _, width := range []int{60, 80, 100, 120, 0} {
			for _, colour := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s at %d, colour %v", tt.name, width, colour), func(t *testing.T) {
					var buf bytes.Buffer
					st := NewStyles(&buf, colour, false)
					st.Width = width
					if err := tt.render(&buf, st); err != nil {
						t.Fatal(err)
					}
					out := stripANSI(buf.String())
					assertFits(t, out, width)
					if colour {
						var plain bytes.Buffer
						if err := tt.render(&plain, Styles{Width: width}); err != nil {
							t.Fatal(err)
						}
						if out != plain.String() {
							t.Errorf("colour changed the layout at %d:\n%s\nvs\n%s", width, out, plain.String())
						}
					}
					if !colour && slices.Contains(tt.goldens, width) {
						golden(t, fmt.Sprintf("%s_w%d", tt.name, width), buf.Bytes())
					}
					checkColumns(t, tt, out, width)
				})
			}
		}
	}
}

// checkColumns checks which of tt's columns out shows against its footnote.
func checkColumns(t *testing.T, tt fittedTable, out string, width int) {
	t.Helper()
	var header string
	lines := strings.Split(out, "\n")
	for _, l := range lines {
		if strings.HasPrefix(l, tt.header) {
			header = l
			break
		}
	}
	if header == "" {
		t.Fatalf("no header line starting %q in\n%s", tt.header, out)
	}
	shown := map[string]bool{}
	for _, h := range regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(header), -1) {
		shown[h] = true
	}
	var hidden []string
	for _, c := range tt.cols {
		switch {
		case shown[c.header] || (c.short != "" && shown[c.short]):
		case c.key:
			t.Errorf("key column %s missing at width %d:\n%s", c.header, width, out)
		case c.elsewhere != "":
			if !strings.Contains(out, c.elsewhere) {
				t.Errorf("column %s hidden at width %d, but %q is not under the table:\n%s", c.header, width, c.elsewhere, out)
			}
		default:
			hidden = append(hidden, cmp.Or(c.name, strings.ToLower(c.header)))
		}
	}
	note := footnoteOf(out)
	if width == 0 {
		if note != "" || len(hidden) > 0 {
			t.Errorf("piped output hides %v (footnote %q)", hidden, note)
		}
		for _, v := range tt.full {
			if !strings.Contains(out, v) {
				t.Errorf("piped output lacks %q:\n%s", v, out)
			}
		}
		return
	}
	if len(hidden) == 0 {
		if note != "" {
			t.Errorf("nothing hidden at width %d, yet the footnote %q", width, note)
		}
		return
	}
	want := fmt.Sprintf("(%d column", len(hidden))
	if !strings.HasPrefix(note, want) || !strings.Contains(note, "hidden: "+strings.Join(hidden, ", ")+";") {
		t.Errorf("at width %d columns %v are hidden, but the footnote says %q", width, hidden, note)
	}
}

// footnoteOf is the footnote in out, its lines joined; "" when there is none.
func footnoteOf(out string) string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "(") && strings.Contains(l+" "+strings.Join(lines[i+1:min(i+3, len(lines))], " "), "hidden:") {
			var b []string
			for _, l := range lines[i:] {
				b = append(b, l)
				if strings.HasSuffix(l, ")") {
					break
				}
			}
			return strings.Join(b, " ")
		}
	}
	return ""
}
