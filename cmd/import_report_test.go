package cmd

import (
	"encoding/json"
	"testing"
)

// importReport is what `import -o json` prints: the report, one object.
type importReport struct {
	Event          string `json:"event"`
	Complete       bool   `json:"complete"`
	Lines          int64  `json:"lines"`
	Created        int64  `json:"created"`
	AlreadyPresent int64  `json:"already_present"`
	Updated        int64  `json:"updated"`
	Failed         int64  `json:"failed"`
	BadLines       int64  `json:"bad_lines"`
	ReasonList     []struct {
		Reason string `json:"reason"`
		Lines  int64  `json:"lines"`
	} `json:"reasons"`
	Reasons       map[string]int64 `json:"-"`
	RequestCharge float64          `json:"request_charge"`
	Throttles     int64            `json:"throttled"`
	Runs          int              `json:"runs"`
	ThisRun       struct {
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

// lastReport reads the report off `import -o json`'s stdout: one object, the progress
// being on stderr.
func lastReport(t *testing.T, out string) importReport {
	t.Helper()
	var r importReport
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Event != "report" {
		t.Fatalf("stdout %q is not the report: %v", out, err)
	}
	r.Reasons = map[string]int64{}
	for _, rc := range r.ReasonList {
		r.Reasons[rc.Reason] = rc.Lines
	}
	return r
}
