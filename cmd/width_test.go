package cmd

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
	"github.com/cosmosctl/cosmosctl/hedgetest"
	"github.com/cosmosctl/cosmosctl/output"
)

// The widths of the terminals the tables must fit, and 0: both streams piped.
var terminalWidths = []int{60, 80, 100, 120, 0}

// cosmosctlAtWidth runs one invocation in-process as if stdout and stderr were terminals
// width columns wide, or pipes when width is 0: the width IOStreams would have found.
func cosmosctlAtWidth(t *testing.T, width int, args ...string) runResult {
	t.Helper()
	io, out, errOut := testIO()
	io.OutTTY, io.ErrTTY = width > 0, width > 0
	io.OutWidth, io.ErrWidth = width, width
	code := Run(context.Background(), io, args)
	return runResult{code, out.String(), errOut.String()}
}

// tableLines are the lines of out from the one starting with header to the first blank
// line after it, escapes removed: the table and its footnote.
func tableLines(t *testing.T, out, header string) []string {
	t.Helper()
	var lines []string
	for line := range strings.Lines(ansi.Strip(out)) {
		line = strings.TrimSuffix(line, "\n")
		switch {
		case len(lines) == 0 && !strings.HasPrefix(line, header):
		case len(lines) > 0 && line == "":
			return lines
		default:
			lines = append(lines, line)
		}
	}
	if len(lines) == 0 {
		t.Fatalf("no table with a header starting %q in\n%s", header, out)
	}
	return lines
}

// assertTableFits checks that the table in out is no wider than width, keeps the key
// columns, and has a footnote exactly when it is narrower than it is piped.
func assertTableFits(t *testing.T, out, header string, width int, keys ...string) {
	t.Helper()
	lines := tableLines(t, out, header)
	for _, l := range lines {
		if w := ansi.StringWidth(l); width > 0 && w > width {
			t.Errorf("a line of %d cells on a terminal of %d: %q", w, width, l)
		}
	}
	for _, k := range keys {
		if !strings.Contains(lines[0], k) {
			t.Errorf("at width %d the header %q lacks the key column %s", width, lines[0], k)
		}
	}
	footnote := strings.Contains(strings.Join(lines, " "), "hidden: ")
	if width == 0 && footnote {
		t.Errorf("piped, yet columns are hidden:\n%s", strings.Join(lines, "\n"))
	}
}

func TestRegionsTableFitsTheTerminal(t *testing.T) {
	testAccount(t, func(c *emulator.Config) {
		c.Regions = []emulator.RegionConfig{{Name: "Southeast Asia"}, {Name: "Australia Southeast"}, {Name: "Switzerland North"}}
	})
	t.Setenv("NO_COLOR", "1")
	for _, width := range terminalWidths {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			r := cosmosctlAtWidth(t, width, "regions")
			if r.code != ExitOK {
				t.Fatalf("exit %d: %s", r.code, r.errOut)
			}
			assertTableFits(t, r.out, "REGION", width, "REGION", "HEALTH")
			if width == 0 {
				// Piped: every column, the endpoints whole.
				lines := tableLines(t, r.out, "REGION")
				if got := strings.Join(strings.Fields(lines[0]), " "); got != "REGION ROLE READ # WRITE # LATENCY HEALTH ENDPOINT NOTE" {
					t.Errorf("piped header %q", got)
				}
				if !strings.Contains(r.out, "http://127.0.0.1:") || !strings.Contains(r.out, "effective #1; write region") {
					t.Errorf("piped output lacks the full endpoint or note:\n%s", r.out)
				}
			}
		})
	}
	// At 80 the endpoint goes, and the footnote says so.
	r := cosmosctlAtWidth(t, 80, "regions")
	if lines := tableLines(t, r.out, "REGION"); !strings.Contains(strings.Join(lines, " "), "endpoint") || strings.Contains(lines[0], "ENDPOINT") {
		t.Errorf("at 80 the endpoint is hidden and named:\n%s", r.out)
	}
}

func TestDiagnosticsFitTheTerminal(t *testing.T) {
	testAccount(t, func(c *emulator.Config) {
		c.Regions = []emulator.RegionConfig{{Name: "Southeast Asia"}, {Name: "Australia Southeast"}}
	})
	t.Setenv("NO_COLOR", "1")
	if r := cosmosctl(t, `{"id":"order-0042-7731","pk":"warehouse-singapore-02"}`, "create", "-f", "-"); r.code != ExitOK {
		t.Fatalf("create: %+v", r)
	}
	for _, width := range terminalWidths {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			// --diagnostics: piped, stderr gets the table only when asked.
			r := cosmosctlAtWidth(t, width, "read", "order-0042-7731", "--pk", "warehouse-singapore-02", "--diagnostics")
			if r.code != ExitOK {
				t.Fatalf("exit %d: %s", r.code, r.errOut)
			}
			assertTableFits(t, r.errOut, "#  ", width, "REGION", "DURATION", "STATUS", "OUTCOME")
			if width == 0 && !strings.Contains(r.errOut, "ACTIVITY ID") {
				t.Errorf("piped diagnostics lack the activity id:\n%s", r.errOut)
			}
			if width > 0 {
				for line := range strings.Lines(r.errOut) {
					if w := ansi.StringWidth(strings.TrimSuffix(line, "\n")); w > width {
						t.Errorf("a diagnostics line of %d cells on a terminal of %d: %q", w, width, line)
					}
				}
			}
		})
	}
}

func TestProbeReplicasFitTheTerminal(t *testing.T) {
	testAccount(t, func(c *emulator.Config) {
		c.Regions = []emulator.RegionConfig{{Name: "Southeast Asia"}, {Name: "Australia Southeast"}}
	})
	t.Setenv("NO_COLOR", "1")
	for _, width := range terminalWidths {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			r := cosmosctlAtWidth(t, width, "probe", "--replicas", "--count", "8", "--concurrency", "1")
			if r.code != ExitOK {
				t.Fatalf("exit %d: %s", r.code, r.errOut)
			}
			// The last table is the replica table: the region table is above it.
			replicas := r.out[strings.LastIndex(r.out, "\nREGION")+1:]
			assertTableFits(t, r.out, "REGION", width, "REGION", "ERRORS", "P50", "P99")
			assertTableFits(t, replicas, "REGION", width, "REGION", "REPLICA", "HEALTH", "ERRORS", "P50", "P99")
			if width == 0 && !strings.Contains(replicas, "/partitions/") {
				t.Errorf("piped, the replica table shows whole addresses:\n%s", replicas)
			}
		})
	}
}

func TestHedgeTestTableFitsTheTerminal(t *testing.T) {
	isolate(t)
	t.Setenv("NO_COLOR", "1")
	for _, width := range []int{60, 80, 0} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			r := cosmosctlAtWidth(t, width, "hedge-test", "--count", "12", "--concurrency", "4", "--items", "4",
				"--strategies", "none,threshold=500ms/100ms,fanout,adaptive=10%", "--scenario", "throttle")
			if r.code != ExitOK {
				t.Fatalf("exit %d: %s", r.code, r.errOut)
			}
			assertTableFits(t, r.out, "STRATEGY", width, "STRATEGY", "P50", "P99")
			if width == 0 {
				if !strings.Contains(r.out, "EXTRA RU") || strings.Contains(r.out, "(latency, log scale)") {
					t.Errorf("piped: every column, and no chart:\n%s", r.out)
				}
				return
			}
			// The chart under the table fits as well.
			chart := r.out[strings.Index(r.out, "p0"):]
			for line := range strings.Lines(chart) {
				if w := ansi.StringWidth(strings.TrimSuffix(line, "\n")); w > width {
					t.Errorf("a chart line of %d cells on a terminal of %d: %q", w, width, line)
				}
			}
		})
	}
}

func TestReplicaMoveTableFitsTheTerminal(t *testing.T) {
	move := &hedgeTestReplicaMove{Region: "Southeast Asia", MovedPerRun: 1, MoveAtPct: 30, RefreshDelayMs: 2000, Runs: []hedgetest.MoveRun{
		{Strategy: "threshold=500ms/100ms", ReplicaHealth: true, ReadsInWindow: 1234, AfterFirst410: 1, AfterFirst410Pct: 0.1, InFlight: 3, P50Ms: 3, P99Ms: 812, MaxMs: 2400},
		{Strategy: "threshold=500ms/100ms" + noReplicaHealthSuffix, ReadsInWindow: 1198, AfterFirst410: 388, AfterFirst410Pct: 32.4, P50Ms: 3, P99Ms: 1900, MaxMs: 5000},
	}}
	for _, width := range terminalWidths {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			var buf bytes.Buffer
			st := output.Styles{Width: width}
			if err := (&hedgeTestOptions{}).writeReplicaMove(&buf, st, move); err != nil {
				t.Fatal(err)
			}
			// The sentence under the table is prose, for the terminal to wrap.
			table, _, _ := strings.Cut(buf.String(), "reads sent to the moved replica")
			assertTableFits(t, table, "STRATEGY", width, "STRATEGY", "HEALTH", "AFTER ITS 410", "P99")
			lines := tableLines(t, table, "STRATEGY")
			if width == 0 && (!strings.Contains(lines[0], "SENT TO A MOVED REPLICA AFTER ITS 410") || !strings.Contains(lines[2], noReplicaHealthSuffix)) {
				t.Errorf("piped: the full headers and strategy names:\n%s", buf.String())
			}
		})
	}
}

func TestEmulatorTablesFitTheTerminal(t *testing.T) {
	srv, _, _ := fakeClockEmulator(t, emulator.Config{
		Regions: []emulator.RegionConfig{{Name: "Southeast Asia"}, {Name: "Australia Southeast"}},
		Latency: []faults.LatencySpec{{Region: "Australia Southeast", Operation: "reads", Distribution: lognormal(95*time.Millisecond, 850*time.Millisecond)}},
	})
	srv.AddFault(faults.Rule{Region: "Australia Southeast", Operations: []string{"read", "query", "create"}, Effect: faults.EffectStatus,
		Status: 429, SubStatus: 3200, RetryAfter: faults.Duration(1500 * time.Millisecond), Probability: 0.25, Count: 100,
		After: faults.Duration(10 * time.Second), For: faults.Duration(time.Minute)})
	srv.AddFault(faults.Rule{Region: "Southeast Asia", Effect: faults.EffectDelay, Delay: faults.Distribution{Kind: faults.KindFixed, Value: faults.Duration(750 * time.Millisecond)}})
	for _, width := range terminalWidths {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			for _, tc := range []struct {
				args   []string
				header string
				keys   []string
			}{
				{[]string{"emulator", "fault", "list"}, "ID", []string{"ID", "REGION", "EFFECT", "FIRED"}},
				{[]string{"emulator", "latency"}, "REGION", []string{"REGION", "OPERATION", "LATENCY"}},
			} {
				r := cosmosctlAtWidth(t, width, append(tc.args, "--endpoint", srv.Endpoint())...)
				if r.code != ExitOK {
					t.Fatalf("%v: exit %d: %s", tc.args, r.code, r.errOut)
				}
				assertTableFits(t, r.out, tc.header, width, tc.keys...)
				if width == 0 && tc.header == "ID" && !strings.Contains(r.out, "status 429/3200 retry-after 1.5s") {
					t.Errorf("piped fault list lacks the whole effect:\n%s", r.out)
				}
			}
		})
	}
}

func TestConfigTablesFitTheTerminal(t *testing.T) {
	isolatedConfig(t, `default_profile = "southeast-asia-production"

[profiles.southeast-asia-production]
endpoint = "https://inventory-prod-southeastasia.documents.azure.com:443/"
database = "inventory-production"
container = "stock-levels-by-warehouse"
preferred_regions = ["Southeast Asia", "Australia Southeast", "Switzerland North", "Brazil South"]
`)
	for _, width := range terminalWidths {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			for _, tc := range []struct {
				args   []string
				header string
				keys   []string
			}{
				{[]string{"config", "list"}, "DEFAULT", []string{"PROFILE", "ENDPOINT"}},
				{[]string{"config", "show", "-o", "table"}, "SETTING", []string{"SETTING", "VALUE", "SOURCE"}},
			} {
				r := cosmosctlAtWidth(t, width, tc.args...)
				if r.code != ExitOK {
					t.Fatalf("%v: exit %d: %s", tc.args, r.code, r.errOut)
				}
				assertTableFits(t, r.out, tc.header, width, tc.keys...)
				if width == 0 && !strings.Contains(r.out, "https://inventory-prod-southeastasia.documents.azure.com:443/") {
					t.Errorf("%v piped lacks the whole endpoint:\n%s", tc.args, r.out)
				}
			}
		})
	}
}

func TestQueryTablesFitTheTerminal(t *testing.T) {
	queryAccount(t, makeQueryItems(queryTestItems))
	t.Setenv("NO_COLOR", "1")
	for _, width := range terminalWidths {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			r := cosmosctlAtWidth(t, width, "query", "SELECT * FROM c ORDER BY c.n", "--max-items", "12", "--page-size", "5", "--hedge-threshold", "1s", "--diagnostics")
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.errOut)
			}
			assertTableFits(t, r.out, "cat", width, "cat")
			assertTableFits(t, r.errOut, "#", width, "REQUEST", "RANGE", "STATUS", "RU", "ITEMS")
		})
	}
}
