package output

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/bulk"
	"github.com/cosmosctl/cosmosctl/workload"
)

// A count agrees with its noun: "1 line", "2 lines", "1,234 lines", never "1 lines".
func TestHumanCountThousandsAgreesWithItsNumber(t *testing.T) {
	for n, want := range map[int64]string{0: "0 lines", 1: "1 line", 2: "2 lines", 1234: "1,234 lines"} {
		if got := HumanCountThousands(n, "line"); got != want {
			t.Errorf("HumanCountThousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// An import of one line, resumed once, reports "1 line in …" and "1 line skipped".
func TestTheImportReportSaysOneLineNotOneLines(t *testing.T) {
	rep := &bulk.Report{Runs: 2, Skipped: 1, Duration: time.Second, Complete: true}
	rep.Lines, rep.Created = 2, 2
	rep.ThisRun.Lines = 1
	var b bytes.Buffer
	if err := WriteImportReport(&b, Styles{}, NewImportReport(rep, "one.ndjson", bulk.Target{Database: "app", Container: "items"}, bulk.Create, nil)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "1 line in 1.00s") || !strings.Contains(out, "; 1 line skipped, done before") || strings.Contains(out, "1 lines") {
		t.Errorf("the report:\n%s\nwant \"1 line in 1.00s\" and \"1 line skipped\"", out)
	}
}

// A probe of one request a region that breaches says "1 of 1 request", not "requests".
func TestABreachOfOneRequestSaysRequest(t *testing.T) {
	one := workload.Summary{Count: 1, Errors: 1, ErrorRate: 1, Timeouts: 1}
	if got := BreachMessage("East US", workload.Rule{Metric: workload.MetricErrors, Percent: 1}, one); !strings.HasSuffix(got, "(1 of 1 request)") {
		t.Errorf("errors: %q, want it to end (1 of 1 request)", got)
	}
	if got := BreachMessage("East US", workload.Rule{Metric: "p99", Limit: time.Second}, one); !strings.Contains(got, "(1 of 1 request got no answer in time)") {
		t.Errorf("a timeout: %q, want (1 of 1 request got no answer in time)", got)
	}
}
