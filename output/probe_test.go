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
		{"East US", workload.Summary{Count: 600, ErrorsByStatus: map[string]int{}, P50Ms: 2.1, P90Ms: 4.5, P99Ms: 8.25, P999Ms: 12, MaxMs: 15.5, RequestCharge: 600}},
		{"West US", workload.Summary{Count: 600, Errors: 3, ErrorRate: 0.005, ErrorsByStatus: map[string]int{"503/0": 2, "network": 1}, P50Ms: 62, P90Ms: 80, P99Ms: 250.4, P999Ms: 1200, MaxMs: 2100, RequestCharge: 597}},
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
	WriteJSONLine(&buf, ProbeSummary{Type: ProbeLineSummary, Request: "read", Regions: map[string]workload.Summary{"West US": sum}, Breaches: []ProbeBreach{}})
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
	if !strings.HasPrefix(lines[1], `{"type":"summary","request":"read",`) || !strings.HasSuffix(lines[1], `"breaches":[]}`) {
		t.Fatalf("summary line %s", lines[1])
	}
}
