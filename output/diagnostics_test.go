package output

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/engine"
)

const ms = time.Millisecond

// Diagnostics as the engine records them, built by hand for the scenarios the table
// must make obvious.
var diagnosticsCases = []struct {
	name string
	d    *engine.Diagnostics
}{
	{"one_attempt_read", &engine.Diagnostics{
		Operation: engine.OpRead, Database: "shop", Container: "orders", ID: "order-1", PartitionKey: json.RawMessage(`["alice"]`),
		PreferredRegions: []string{"West US", "North Europe"},
		EffectiveRegions: []string{"West US", "North Europe"},
		HedgeConfig:      "off",
		Attempts: []engine.Attempt{{
			N: 1, Region: "West US", Endpoint: "https://acct-westus.documents.azure.com", Reason: engine.ReasonInitial,
			Start: 0, Duration: 12400 * time.Microsecond, StatusCode: 200, RequestCharge: 1,
			ActivityID: "6b1e3a52-9c0d-4f7e-8a1b-2c3d4e5f6a7b", Outcome: engine.OutcomeWon,
		}},
		ContactedRegions: []string{"West US"},
		RespondedRegions: []string{"West US"},
		WinningRegion:    "West US", WinningAttempt: 1,
		RequestCharge: 1,
		Duration:      12400 * time.Microsecond,
	}},
	{"direct_read_rntbd", &engine.Diagnostics{
		Operation: engine.OpRead, Database: "shop", Container: "orders", ID: "order-1", PartitionKey: json.RawMessage(`["alice"]`),
		EffectiveRegions: []string{"West US"},
		HedgeConfig:      "off",
		ConnectionMode:   "direct",
		Attempts: []engine.Attempt{{
			N: 1, Region: "West US", Endpoint: "rntbd://cdb-ms-prod-westus1-fd1.documents.azure.com:14012/apps/a/services/s/partitions/p/replicas/132s",
			Replica: "rntbd://cdb-ms-prod-westus1-fd1.documents.azure.com:14012/apps/a/services/s/partitions/p/replicas/132s/", ReplicaHealth: "Connected",
			ReplicaRole: engine.RoleSecondary, Transport: "rntbd", Reason: engine.ReasonInitial,
			Start: 0, Duration: 2 * ms, StatusCode: 410, Outcome: engine.OutcomeFailed,
			Note: "410 from replica 132s: marked unhealthy, address refresh started; trying another replica",
		}, {
			N: 2, Region: "West US", Endpoint: "rntbd://cdb-ms-prod-westus1-fd1.documents.azure.com:14012/apps/a/services/s/partitions/p/replicas/131p",
			Replica: "rntbd://cdb-ms-prod-westus1-fd1.documents.azure.com:14012/apps/a/services/s/partitions/p/replicas/131p/", ReplicaHealth: "Unknown",
			ReplicaRole: engine.RolePrimary, Transport: "rntbd", Reason: engine.ReasonRetry,
			Start: 2 * ms, Duration: 3 * ms, StatusCode: 200, RequestCharge: 1,
			ActivityID: "6b1e3a52-9c0d-4f7e-8a1b-2c3d4e5f6a7b", Outcome: engine.OutcomeWon,
		}},
		ContactedRegions: []string{"West US"},
		RespondedRegions: []string{"West US"},
		WinningRegion:    "West US", WinningAttempt: 2,
		RequestCharge: 1,
		Duration:      5 * ms,
	}},
	{"failover_read", &engine.Diagnostics{
		Operation: engine.OpRead, Database: "shop", Container: "orders", ID: "order-1", PartitionKey: json.RawMessage(`["alice"]`),
		PreferredRegions: []string{"West US", "North Europe", "East Asia"},
		ExcludedRegions:  []string{"East Asia"},
		EffectiveRegions: []string{"West US", "North Europe"},
		HedgeConfig:      "off",
		Attempts: []engine.Attempt{{
			N: 1, Region: "West US", Reason: engine.ReasonInitial,
			Start: 0, Duration: 80 * ms, StatusCode: 503, RequestCharge: 0,
			ActivityID: "0f3c9a11-2b4d-4e6f-8a0b-1c2d3e4f5a6b", Outcome: engine.OutcomeFailed,
			Note: "503 from West US: failing over to North Europe",
		}, {
			N: 2, Region: "North Europe", Reason: engine.ReasonFailover,
			Start: 81 * ms, Duration: 19 * ms, StatusCode: 200, RequestCharge: 1,
			ActivityID: "a4d2e6f8-1b3c-4d5e-9f0a-b1c2d3e4f5a6", Outcome: engine.OutcomeWon,
		}},
		ContactedRegions: []string{"West US", "North Europe"},
		RespondedRegions: []string{"West US", "North Europe"},
		WinningRegion:    "North Europe", WinningAttempt: 2,
		RequestCharge: 1,
		Duration:      100 * ms,
	}},
	{"hedged_read", &engine.Diagnostics{
		Operation: engine.OpRead, Database: "shop", Container: "orders", ID: "order-1", PartitionKey: json.RawMessage(`["alice"]`),
		PreferredRegions: []string{"West US", "North Europe", "East Asia"},
		EffectiveRegions: []string{"West US", "North Europe", "East Asia"},
		HedgeConfig:      "threshold 300ms, step 100ms",
		Attempts: []engine.Attempt{{
			N: 1, Region: "West US", Reason: engine.ReasonInitial,
			Start: 0, Duration: 1000 * ms, Outcome: engine.OutcomeCancelled,
			Error: "cancelled: North Europe answered first",
		}, {
			N: 2, Region: "North Europe", Reason: engine.ReasonHedge,
			Start: 300 * ms, Duration: 700 * ms, StatusCode: 200, RequestCharge: 1,
			ActivityID: "c7e9a1b3-5d6f-4a8b-9c0d-e1f2a3b4c5d6", Outcome: engine.OutcomeWon,
		}},
		ContactedRegions: []string{"West US", "North Europe"},
		RespondedRegions: []string{"North Europe"},
		WinningRegion:    "North Europe", WinningAttempt: 2,
		RequestCharge: 1,
		Duration:      1000 * ms,
	}},
	{"hedged_read_lost_answer", &engine.Diagnostics{
		Operation: engine.OpRead, Database: "shop", Container: "orders", ID: "order-1", PartitionKey: json.RawMessage(`["alice"]`),
		PreferredRegions: []string{"West US", "North Europe", "East Asia"},
		EffectiveRegions: []string{"West US", "North Europe", "East Asia"},
		HedgeConfig:      "threshold 50ms, step 25ms",
		Attempts: []engine.Attempt{{
			N: 1, Region: "West US", Reason: engine.ReasonInitial,
			Start: 0, Duration: 120 * ms, Outcome: engine.OutcomeCancelled,
			Error: "cancelled: North Europe answered first",
		}, {
			N: 2, Region: "North Europe", Reason: engine.ReasonHedge,
			Start: 50 * ms, Duration: 70 * ms, StatusCode: 200, RequestCharge: 1,
			ActivityID: "c7e9a1b3-5d6f-4a8b-9c0d-e1f2a3b4c5d6", Outcome: engine.OutcomeWon,
		}, {
			N: 3, Region: "East Asia", Reason: engine.ReasonHedge,
			Start: 75 * ms, Duration: 45 * ms, StatusCode: 404, SubStatus: 1002, RequestCharge: 1.24,
			ActivityID: "d1e2f3a4-b5c6-4d7e-8f9a-0b1c2d3e4f5a", Outcome: engine.OutcomeLost,
		}},
		ContactedRegions: []string{"West US", "North Europe", "East Asia"},
		RespondedRegions: []string{"North Europe", "East Asia"},
		WinningRegion:    "North Europe", WinningAttempt: 2,
		RequestCharge: 2.24,
		Duration:      120 * ms,
	}},
	{"timeout", &engine.Diagnostics{
		Operation: engine.OpRead, Database: "shop", Container: "orders", ID: "order-1", PartitionKey: json.RawMessage(`["alice"]`),
		PreferredRegions: []string{"West US", "North Europe"},
		EffectiveRegions: []string{"West US", "North Europe"},
		HedgeConfig:      "threshold 300ms, step 100ms",
		E2ETimeout:       2 * time.Second,
		Attempts: []engine.Attempt{{
			N: 1, Region: "West US", Reason: engine.ReasonInitial,
			Start: 0, Duration: 2 * time.Second, Outcome: engine.OutcomeCancelled,
			Error: "end-to-end timeout",
		}, {
			N: 2, Region: "North Europe", Reason: engine.ReasonHedge,
			Start: 300 * ms, Duration: 1700 * ms, Outcome: engine.OutcomeCancelled,
			Error: "end-to-end timeout",
		}},
		ContactedRegions: []string{"West US", "North Europe"},
		RequestCharge:    0,
		Duration:         2 * time.Second,
		TimedOut:         true,
		Notes:            []string{"end-to-end timeout of 2s expired: cancelled 2 attempts in flight"},
	}},
	{"attempt_timeout_and_region_health", &engine.Diagnostics{
		Operation: engine.OpRead, Database: "shop", Container: "orders", ID: "order-1", PartitionKey: json.RawMessage(`["alice"]`),
		EffectiveRegions: []string{"East US", "West US", "North Europe"},
		HealthOrder:      []string{"West US", "North Europe", "East US"},
		HedgeConfig:      "off",
		Attempts: []engine.Attempt{{
			N: 1, Region: "West US", Reason: engine.ReasonInitial,
			Start: 0, Duration: 6 * time.Second, Outcome: engine.OutcomeFailed, Timeout: 6 * time.Second, TimedOut: true,
			Error: "http://west: no answer within the attempt timeout of 6s (after the request was sent)",
			Note:  "no answer from West US (attempt timeout of 6s expired): failing over",
		}, {
			N: 2, Region: "North Europe", Reason: engine.ReasonFailover, Timeout: 6 * time.Second,
			Start: 6 * time.Second, Duration: 75 * ms, StatusCode: 200, RequestCharge: 1,
			ActivityID: "6b1e3a52-9c0d-4f7e-8a1b-2c3d4e5f6a7b", Outcome: engine.OutcomeWon,
		}},
		ContactedRegions: []string{"West US", "North Europe"},
		RespondedRegions: []string{"North Europe"},
		WinningRegion:    "North Europe", WinningAttempt: 2,
		RequestCharge: 1,
		Duration:      6075 * ms,
		Notes:         []string{"region health: East US: 3 timeouts in 40s, unavailable until 12:03:06, then one probe request; moved last"},
	}},
	{"throttled_then_served_anatomy", &engine.Diagnostics{
		Operation: engine.OpRead, Database: "shop", Container: "orders", ID: "order-1", PartitionKey: json.RawMessage(`["alice"]`),
		EffectiveRegions: []string{"West US"},
		HedgeConfig:      "off",
		Attempts: []engine.Attempt{{
			N: 1, Region: "West US", Reason: engine.ReasonInitial,
			Start: 0, Duration: 9 * ms, ServerDuration: 2 * ms, StatusCode: 429, SubStatus: 3200,
			PartitionKeyRangeID: "3", RetryAfter: 40 * ms, Waited: 41 * ms, Outcome: engine.OutcomeFailed,
			Note: "429 from West US: waiting 40ms as asked",
		}, {
			N: 2, Region: "West US", Reason: engine.ReasonRetry,
			Start: 50 * ms, Duration: 7 * ms, ServerDuration: 1500 * time.Microsecond, StatusCode: 200, RequestCharge: 1,
			PartitionKeyRangeID: "3", LSN: 812, HasLSN: true, SessionToken: "3:-1#812", Outcome: engine.OutcomeWon,
		}},
		ContactedRegions: []string{"West US"},
		RespondedRegions: []string{"West US"},
		WinningRegion:    "West US", WinningAttempt: 2,
		RequestCharge: 1,
		Duration:      57 * ms,
	}},
	{"all_regions_excluded", &engine.Diagnostics{
		Operation: engine.OpRead, Database: "shop", Container: "orders", ID: "order-1", PartitionKey: json.RawMessage(`["alice"]`),
		PreferredRegions: []string{"West US", "North Europe"},
		ExcludedRegions:  []string{"West US", "North Europe"},
		Fallback:         "every region is excluded: reading from the first write region, West US",
		HedgeConfig:      "off",
		Attempts: []engine.Attempt{{
			N: 1, Region: "West US", Reason: engine.ReasonInitial,
			Start: 0, Duration: 400 * time.Microsecond, StatusCode: 404, RequestCharge: 1,
			ActivityID: "6b1e3a52-9c0d-4f7e-8a1b-2c3d4e5f6a7b", Outcome: engine.OutcomeWon,
		}},
		ContactedRegions: []string{"West US"},
		RespondedRegions: []string{"West US"},
		WinningRegion:    "West US", WinningAttempt: 1,
		RequestCharge: 1,
		Duration:      400 * time.Microsecond,
	}},
}

func TestDiagnosticsGolden(t *testing.T) {
	for _, tc := range diagnosticsCases {
		for _, ascii := range []bool{false, true} {
			name := "diagnostics_" + tc.name
			if ascii {
				name += "_ascii"
			}
			t.Run(name, func(t *testing.T) {
				var buf bytes.Buffer
				if err := WriteDiagnostics(&buf, tc.d, NewStyles(&buf, false, ascii)); err != nil {
					t.Fatal(err)
				}
				golden(t, name, buf.Bytes())
				if ascii {
					for i, r := range buf.String() {
						if r > 0x7e || (r < 0x20 && r != '\n') {
							t.Fatalf("non-ASCII %q at byte %d with ASCII styles", r, i)
						}
					}
				}
			})
		}
	}
}

func TestDiagnosticsEscapeCodesOnlyWithColour(t *testing.T) {
	for _, tc := range diagnosticsCases {
		t.Run(tc.name, func(t *testing.T) {
			var off, on bytes.Buffer
			if err := WriteDiagnostics(&off, tc.d, NewStyles(&off, false, false)); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(off.String(), "\x1b[") {
				t.Errorf("colour off, but the output has escape codes:\n%q", off.String())
			}
			if err := WriteDiagnostics(&on, tc.d, NewStyles(&on, true, false)); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(on.String(), "\x1b[") {
				t.Errorf("colour on, but the output has no escape codes:\n%s", on.String())
			}
		})
	}
}

func TestDiagnosticsColourKeepsLayout(t *testing.T) {
	// Colour must not shift a column: stripped of escape codes, the coloured table is
	// the plain one.
	for _, tc := range diagnosticsCases {
		t.Run(tc.name, func(t *testing.T) {
			var off, on bytes.Buffer
			if err := WriteDiagnostics(&off, tc.d, NewStyles(&off, false, false)); err != nil {
				t.Fatal(err)
			}
			if err := WriteDiagnostics(&on, tc.d, NewStyles(&on, true, false)); err != nil {
				t.Fatal(err)
			}
			if got := stripANSI(on.String()); got != off.String() {
				t.Errorf("coloured output differs from plain once escapes are removed:\n%s\nvs\n%s", got, off.String())
			}
		})
	}
}

func TestWriteDiagnosticsNil(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteDiagnostics(&buf, nil, Styles{}); err != nil || buf.Len() != 0 {
		t.Fatalf("nil diagnostics: err %v, output %q", err, buf.String())
	}
}

func TestTimeline(t *testing.T) {
	sym := Styles{}.sym()
	asc := Styles{ASCII: true}.sym()
	bar := func(s string) string { return s }
	cases := []struct {
		name  string
		a     engine.Attempt
		total time.Duration
		sym   symbols
		want  string
	}{
		{"an attempt spanning the whole operation fills the bar",
			engine.Attempt{Start: 0, Duration: time.Second, Outcome: engine.OutcomeWon}, time.Second, sym,
			bar("━━━━━━━━━━━━━━━━━━━━━━━━━━━━━●")},
		{"a hedge starts part-way along",
			engine.Attempt{Start: 300 * ms, Duration: 700 * ms, Outcome: engine.OutcomeWon}, time.Second, sym,
			bar("         ━━━━━━━━━━━━━━━━━━━━●")},
		{"a cancelled attempt ends with a cross",
			engine.Attempt{Start: 0, Duration: 500 * ms, Outcome: engine.OutcomeCancelled}, time.Second, sym,
			bar("━━━━━━━━━━━━━━✕               ")},
		{"an attempt still in flight runs to the end without a mark",
			engine.Attempt{Start: 500 * ms, Outcome: engine.OutcomeInFlight}, time.Second, sym,
			bar("               ━━━━━━━━━━━━━━━")},
		{"an instant answer is a lone mark",
			engine.Attempt{Start: 0, Duration: 0, Outcome: engine.OutcomeWon}, time.Second, sym,
			bar("●                             ")},
		{"ASCII fallback",
			engine.Attempt{Start: 300 * ms, Duration: 700 * ms, Outcome: engine.OutcomeFailed}, time.Second, asc,
			bar("         ====================x")},
		{"a zero-length operation does not divide by zero",
			engine.Attempt{Outcome: engine.OutcomeWon}, 0, sym,
			bar("●                             ")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := timeline(tc.a, tc.total, tc.sym, TimelineWidth)
			if got != tc.want {
				t.Errorf("timeline\n got %q\nwant %q", got, tc.want)
			}
			if n := len([]rune(got)); n != TimelineWidth {
				t.Errorf("width %d, want %d", n, TimelineWidth)
			}
		})
	}
}

func TestTimelineAtTheWidthItIsGiven(t *testing.T) {
	sym := Styles{}.sym()
	hedge := engine.Attempt{Start: 300 * ms, Duration: 700 * ms, Outcome: engine.OutcomeWon}
	for _, tc := range []struct {
		width int
		want  string
	}{
		{12, "   ━━━━━━━━●"},
		{20, "      ━━━━━━━━━━━━━●"},
	} {
		if got := timeline(hedge, time.Second, sym, tc.width); got != tc.want {
			t.Errorf("a hedge at 300ms of 1s in %d cells: %q, want %q", tc.width, got, tc.want)
		}
	}
}

func stripANSI(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
