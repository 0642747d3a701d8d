package output

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/workload"
)

func probeRows() []ProbeRegion {
	return []ProbeRegion{
		{"East US", workload.Summary{Count: 600, ErrorsByStatus: map[string]int{}, P50Ms: workload.Ms(2.1), P90Ms: workload.Ms(4.5), P99Ms: workload.Ms(8.25), P999Ms: workload.Ms(12), MaxMs: workload.Ms(15.5), RequestCharge: 600}},
		{"West US", workload.Summary{Count: 600, Errors: 3, ErrorRate: 0.005, ErrorsByStatus: map[string]int{"503/0": 2, "network": 1}, P50Ms: workload.Ms(62), P90Ms: workload.Ms(80), P99Ms: workload.Ms(250.4), P999Ms: workload.Ms(1200), MaxMs: workload.Ms(2100), RequestCharge: 597}},
		{"North Europe", workload.Summary{ErrorsByStatus: map[string]int{}}},
	}
}

func TestProbeTableGolden(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ascii bool
	}{{"probe_table", false}, {"probe_table_ascii", true}} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteProbeTable(&buf, NewStyles(&buf, false, tc.ascii), probeRows()); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, buf.Bytes())
		})
	}
}

func TestErrorBreakdown(t *testing.T) {
	cases := []struct {
		name  string
		by    map[string]int
		ascii bool
		want  string
	}{
		{"no errors", nil, false, "0"},
		{"commonest first", map[string]int{"network": 1, "503/0": 2}, false, "3 (503/0×2, network×1)"},
		{"ties by name", map[string]int{"503/0": 1, "429/3200": 1}, false, "2 (429/3200×1, 503/0×1)"},
		{"at most three statuses", map[string]int{"503/0": 4, "429/3200": 3, "408/20008": 2, "network": 1}, false, "10 (503/0×4, 429/3200×3, 408/20008×2, …)"},
		{"ASCII", map[string]int{"503/0": 4, "429/3200": 3, "408/20008": 2, "network": 1}, true, "10 (503/0x4, 429/3200x3, 408/20008x2, ...)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := workload.Summary{ErrorsByStatus: tc.by}
			for _, n := range tc.by {
				s.Errors += n
			}
			if got := ErrorBreakdown(s, tc.ascii); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestProbeBreach(t *testing.T) {
	west := probeRows()[1].Summary
	rules, err := workload.ParseRules([]string{"p99>200ms,errors>0.1%,max>2s"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"West US: p99 250ms > 200ms", "West US: errors 0.5% > 0.1% (3 of 600 requests)", "West US: max 2.10s > 2.00s"}
	for i, r := range rules {
		b := NewProbeBreach("West US", r, west)
		if b.Message != want[i] {
			t.Errorf("message %q, want %q", b.Message, want[i])
		}
		raw, _ := json.Marshal(b)
		isErrors := r.Metric == workload.MetricErrors
		if strings.Contains(string(raw), "_ms") == isErrors || strings.Contains(string(raw), "_percent") != isErrors {
			t.Errorf("a breach carries the unit of its metric in its field names: %s", raw)
		}
	}
}

func TestProbeJSONLines(t *testing.T) {
	var buf bytes.Buffer
	sum := probeRows()[1].Summary
	WriteJSONLine(&buf, ProbeInterval{Type: ProbeLineInterval, Region: "West US", ElapsedMs: float64(time.Second / time.Millisecond), Summary: sum})
	WriteJSONLine(&buf, ProbeSummary{Type: ProbeLineSummary, Request: "read", EndedBy: ProbeEndedByCount,
		Regions: []ProbeRegionSummary{{Region: "West US", Summary: sum}}, Breaches: []ProbeBreach{}})
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("want two lines: %q", buf.String())
	}
	var iv map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &iv); err != nil {
		t.Fatal(err)
	}
	if iv["type"] != "interval" || iv["region"] != "West US" || iv["elapsed_ms"] != 1000.0 || iv["p99_ms"] != 250.4 || iv["errors_by_status"].(map[string]any)["503/0"] != 2.0 {
		t.Fatalf("the interval line carries the summary's fields at its top level: %s", lines[0])
	}
	if !strings.HasPrefix(lines[1], `{"type":"summary","request":"read",`) || !strings.HasSuffix(lines[1], `"breaches":[]}`) ||
		!strings.Contains(lines[1], `"regions":[{"region":"West US","count":600,`) || !strings.Contains(lines[1], `"not_sent":null`) ||
		!strings.Contains(lines[1], `"time_limit_ms":null`) {
		t.Fatalf("summary line %s: want regions as an array of objects with their region, figures that do not exist as null", lines[1])
	}
	if !strings.Contains(lines[0], `"in_flight":0,"oldest_in_flight_ms":null,"behind":null`) {
		t.Fatalf("interval line %s", lines[0])
	}
}

func TestProbeBreachOfAPercentileAmongTheTimeouts(t *testing.T) {
	// 100 requests, 3 of which got no answer in time: p99 is a timeout.
	sum := workload.Summary{Count: 100, Errors: 3, ErrorRate: 0.03, Timeouts: 3, ErrorsByStatus: map[string]int{"408/20008": 3},
		P50Ms: workload.Ms(2), P90Ms: workload.Ms(3), P99Ms: workload.Ms(4), P999Ms: workload.Ms(4), MaxMs: workload.Ms(4)}
	rules, err := workload.ParseRules([]string{"p99>200ms"})
	if err != nil {
		t.Fatal(err)
	}
	if !rules[0].Breached(sum) {
		t.Fatal("a p99 among the timeouts is not breached")
	}
	b := NewProbeBreach("East US", rules[0], sum)
	raw, _ := json.Marshal(b)
	if b.Message != "East US: p99 is a timeout (3 of 100 requests got no answer in time) > 200ms" || b.ObservedMs != nil ||
		!strings.Contains(string(raw), `"timeouts":3`) {
		t.Fatalf("breach %s", raw)
	}
}

func TestProbeTableOfARegionThatNeverAnswered(t *testing.T) {
	var buf bytes.Buffer
	hung := workload.Summary{Count: 8, Errors: 8, ErrorRate: 1, Timeouts: 8, ErrorsByStatus: map[string]int{"408/20008": 8}}
	if err := WriteProbeTable(&buf, Styles{}, []ProbeRegion{{Region: "East US", Summary: hung}}); err != nil {
		t.Fatal(err)
	}
	row := strings.Fields(strings.Split(buf.String(), "\n")[1])
	if strings.Join(row[2:], " ") != "8 8 (408/20008×8) — — — — — 0.00" {
		t.Fatalf("a hung region has no latency figure, never 0:\n%s", buf.String())
	}
}
