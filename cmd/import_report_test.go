package cmd

import (
	"encoding/json"
	"strings"
	"testing"
)

// importReport is the last line of `import -o json`.
type importReport struct {
	Event          string           `json:"event"`
	Complete       bool             `json:"complete"`
	Lines          int64            `json:"lines"`
	Created        int64            `json:"created"`
	AlreadyPresent int64            `json:"already_present"`
	Updated        int64            `json:"updated"`
	Failed         int64            `json:"failed"`
	BadLines       int64            `json:"bad_lines"`
	Reasons        map[string]int64 `json:"reasons"`
	RequestCharge  float64          `json:"request_charge"`
	Throttles      int64            `json:"throttles"`
	Runs           int              `json:"runs"`
	ThisRun        struct {
		Lines          int64   `json:"lines"`
		Skipped        int64   `json:"skipped"`
		ItemsPerSecond float64 `json:"items_per_second"`
		RUPerSecond    float64 `json:"ru_per_second"`
	} `json:"this_run"`
	RejectedFile string `json:"rejected_file"`
	Error        *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// lastReport reads the report off `import -o json`'s stdout, checking that every line
// before it is a progress event.
func lastReport(t *testing.T, out string) importReport {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, l := range lines[:len(lines)-1] {
		if !strings.HasPrefix(l, `{"event":"progress"`) {
			t.Fatalf("a line before the report is not a progress event: %q", l)
		}
	}
	var r importReport
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil || r.Event != "report" {
		t.Fatalf("last line %q: %v", lines[len(lines)-1], err)
	}
	return r
}
