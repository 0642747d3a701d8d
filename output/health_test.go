package output

import (
	"bytes"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/health"
)

var healthNow = time.Date(2025, 3, 4, 12, 3, 4, 0, time.UTC)

// localUTC makes local clock times UTC for the test, so that the golden files do not
// depend on the machine's time zone.
func localUTC(t *testing.T) {
	saved := time.Local
	time.Local = time.UTC
	t.Cleanup(func() { time.Local = saved })
}

func healthEntries() []health.Entry {
	ago := func(d time.Duration) time.Time { return healthNow.Add(-d) }
	return []health.Entry{
		{Region: "East US", Kind: health.Read, Status: health.StatusUnavailable,
			Failures: map[health.Cause]int{health.Timeout: 2, health.Unavailable: 1}, LastFailure: ago(4 * time.Second),
			UnavailableUntil: healthNow.Add(2 * time.Second), ProbeIntervalMs: 5000, LastSuccess: ago(3 * time.Minute)},
		{Region: "East US", Kind: health.Write, Status: health.StatusAvailable,
			Failures: map[health.Cause]int{health.Unreachable: 1}, LastFailure: ago(90 * time.Second)},
		{Region: "North Europe", PartitionKeyRangeID: "3", Kind: health.Read, Status: health.StatusProbing,
			Failures: map[health.Cause]int{health.Gone: 3}, LastFailure: ago(20 * time.Second), UnavailableUntil: ago(time.Second),
			FailedProbes: 2, ProbeIntervalMs: 20000},
		{Region: "West US", Kind: health.Read, Status: health.StatusAvailable, Failures: map[health.Cause]int{},
			HedgeLossStreak: 3, LastSuccess: ago(time.Second)},
	}
}

func TestWriteHealthTable(t *testing.T) {
	localUTC(t)
	cfg := health.Config{ReadFailures: 2, WriteFailures: 5, HedgeLosses: 5}
	for _, tc := range []struct {
		name, golden string
		width        int
	}{
		{"not a terminal: every column", "health_table", 0},
		{"a wide terminal: every column", "health_table", 400},
		{"a narrow terminal: the notes move under the table, the times shorten", "health_table_narrow", 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteHealthTable(&b, Styles{ASCII: true, Width: tc.width}, healthEntries(), cfg, healthNow); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.golden, b.Bytes())
		})
	}
}

func TestRegionHealthText(t *testing.T) {
	localUTC(t)
	entries := healthEntries()
	for _, tc := range []struct {
		region, want string
	}{
		{"East US", "reads: unavailable until 12:03:06 (2 timeouts, 1 503); writes: available (1 unreachable)"},
		{"West US", "reads: available (3 hedge races lost); writes: available"},
		{"North Europe", "available, 1 partition key range unavailable; writes: available"},
		{"Brazil South", "available"},
	} {
		got := RegionHealthOf(entries, tc.region).Text(healthNow)
		if tc.region == "North Europe" {
			tc.want = "reads: " + tc.want
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.region, got, tc.want)
		}
	}
}

func TestClockTimeFrom(t *testing.T) {
	localUTC(t)
	for _, tc := range []struct {
		t    time.Time
		want string
	}{
		{time.Time{}, "-"},
		{healthNow, "12:03:04 (0s ago)"},
		{healthNow.Add(-4 * time.Second), "12:03:00 (4s ago)"},
		{healthNow.Add(5 * time.Second), "12:03:09 (in 5s)"},
		{healthNow.Add(-130 * time.Second), "12:00:54 (2m10s ago)"},
		{healthNow.Add(-25 * time.Minute), "11:38:04 (25m ago)"},
		{healthNow.Add(-26 * time.Hour), "Mar 3 10:03:04 (26h ago)"},
		{healthNow.Add(-72 * time.Hour), "Mar 1 12:03:04 (3d ago)"},
	} {
		if got := ClockTimeFrom(tc.t, healthNow, "-"); got != tc.want {
			t.Errorf("ClockTimeFrom(%s) = %q, want %q", tc.t, got, tc.want)
		}
	}
}
