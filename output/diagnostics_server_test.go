package output

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/engine"
)

// The SERVER column shows the service's own time (x-ms-request-duration-ms) beside the
// round trip, when an answer carried it, and is left out when none did.
func TestDiagnosticsShowServerTimeBesideTheRoundTrip(t *testing.T) {
	attempt := engine.Attempt{N: 1, Region: "East US", Reason: engine.ReasonInitial, Duration: 42 * time.Millisecond,
		StatusCode: 200, RequestCharge: 1, Outcome: engine.OutcomeWon}
	for _, tc := range []struct {
		name   string
		server time.Duration
		want   bool
	}{
		{"an answer with the service's time", 400 * time.Microsecond, true},
		{"an answer without it", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := attempt
			a.ServerDuration = tc.server
			d := &engine.Diagnostics{Operation: "read", Attempts: []engine.Attempt{a}, WinningRegion: "East US", WinningAttempt: 1}
			var buf bytes.Buffer
			if err := WriteDiagnostics(&buf, d, NewStyles(&buf, false, true)); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if got := strings.Contains(out, "SERVER"); got != tc.want {
				t.Fatalf("SERVER column shown: %v, want %v\n%s", got, tc.want, out)
			}
			if tc.want && !strings.Contains(out, "0.4ms") {
				t.Fatalf("the server time 0.4ms is not in the table:\n%s", out)
			}
		})
	}
}
