package gosuite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

const (
	// perTest bounds one test: Microsoft's take well under a second each against a
	// local emulator; two minutes leaves room for a machine loaded five times over.
	perTest = 2 * time.Minute
	// readiness bounds an emulator's start.
	readiness = time.Minute
	// budget bounds the whole run, the compile included, inside go test's 10 minutes.
	budget = 8 * time.Minute
)

// TestMicrosoftAzcosmosEmulatorSuite runs every emulator test of the azcosmos version
// the main go.mod requires against its own fresh `cosmosctl emulator` in the shape of
// Microsoft's emulator, and requires every test of the recorded baseline to pass.
//
// The results table and the suite's log are written to $COSMOSCTL_GOSUITE_OUT (else a
// directory under the system's temporary directory, named in the test's log);
// COSMOSCTL_GOSUITE_UPDATE=1 records what passed as the new baseline;
// COSMOSCTL_GOSUITE_SCENARIO=FILE runs another scenario (on port 8081, with tls), to see
// what a change of the emulator's shape would make pass.
func TestMicrosoftAzcosmosEmulatorSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the azcosmos emulator suite compiles the SDK's tests and starts an emulator per test")
	}
	// Read before Isolate clears every COSMOSCTL_ variable.
	required := os.Getenv("COSMOSCTL_SDKCOMPAT") == "required"
	update := os.Getenv("COSMOSCTL_GOSUITE_UPDATE") == "1"
	outDir := os.Getenv("COSMOSCTL_GOSUITE_OUT")
	scenario := os.Getenv("COSMOSCTL_GOSUITE_SCENARIO")
	if taken := portsTaken(); len(taken) > 0 {
		t.Skipf("port %v already taken by another process: Microsoft's azcosmos emulator tests hard-code https://localhost:8081/, so the suite runs only with it free", taken)
	}
	bin := testkit.Binary(t)
	testkit.Isolate(t)
	env := os.Environ()

	start := time.Now()
	deadline := start.Add(budget)
	if d, ok := t.Deadline(); ok && d.Add(-30*time.Second).Before(deadline) {
		deadline = d.Add(-30 * time.Second)
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()

	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	s, err := prepare(ctx, repo, t.TempDir())
	var toolchain errToolchain
	if errors.As(err, &toolchain) && !required {
		t.Skipf("%v (with COSMOSCTL_SDKCOMPAT=required this fails instead)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("azcosmos %s: %d emulator tests, compiled in %v", s.version, len(s.tests), time.Since(start).Round(time.Second))
	if scenario == "" {
		scenario = filepath.Join(repo, "examples", "microsoft-emulator.toml")
	} else if update {
		t.Fatal("COSMOSCTL_GOSUITE_UPDATE records the baseline of examples/microsoft-emulator.toml: unset COSMOSCTL_GOSUITE_SCENARIO")
	}

	var results []result
	var log strings.Builder
	for _, tc := range s.tests {
		r := runFresh(ctx, s, tc, bin, scenario, env, &log)
		t.Logf("%-60s %-7s %5.1fs %s", tc.name, r.outcome, r.duration.Seconds(), r.reason)
		results = append(results, r)
	}
	took := time.Since(start)
	t.Logf("%s; %v in all", summary(results), took.Round(time.Second))
	writeOutputs(t, outDir, s.version, results, took, log.String())

	if update {
		if err := writeBaseline(baselineFile, s.version, results); err != nil {
			t.Fatal(err)
		}
		t.Logf("recorded %d passing tests in %s", counts(results)[passed], baselineFile)
		return
	}
	checkBaseline(t, s, results)
}

// runFresh runs one test on an emulator started for it, and adds both to the log.
func runFresh(ctx context.Context, s *suite, tc test, bin, scenario string, env []string, log *strings.Builder) result {
	fmt.Fprintf(log, "=== %s (%s) on a fresh emulator\n", tc.name, tc.file)
	if ctx.Err() != nil {
		fmt.Fprintf(log, "not run: the run's %v budget is spent\n\n", budget)
		return result{test: tc, outcome: notRun, reason: "the run's time budget was spent before it"}
	}
	dir, err := os.MkdirTemp("", "cosmosctl-gosuite-emulator-")
	if err != nil {
		return result{test: tc, outcome: notRun, reason: err.Error()}
	}
	defer os.RemoveAll(dir)
	emu, err := startFresh(ctx, bin, scenario, dir, env, readiness)
	if err != nil {
		if taken := portsTaken(); len(taken) > 0 {
			err = fmt.Errorf("%v (port(s) %v taken by another process)", err, taken)
		}
		fmt.Fprintf(log, "not run: %v\n\n", err)
		return result{test: tc, outcome: notRun, reason: "no emulator: " + err.Error()}
	}
	limit := min(perTest, time.Until(deadlineOf(ctx)))
	r := runOne(ctx, s, tc, emu.certFile, limit)
	stopErr := emu.stop()
	log.WriteString(r.output)
	if emuLog := strings.TrimSpace(emu.stderr.String()); emuLog != "" {
		fmt.Fprintf(log, "--- the emulator's stderr:\n%s\n", emuLog)
	}
	if stopErr != nil {
		fmt.Fprintf(log, "--- stopping the emulator: %v\n", stopErr)
	}
	log.WriteString("\n")
	return r
}

func deadlineOf(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}

// writeOutputs writes results.md (the table) and suite.log (every test's output and its
// emulator's log).
func writeOutputs(t *testing.T, dir, version string, results []result, took time.Duration, log string) {
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "cosmosctl-gosuite-"); err != nil {
			t.Fatal(err)
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	table := filepath.Join(dir, "results.md")
	if err := os.WriteFile(table, []byte(markdown(version, results, took)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "suite.log"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("results: %s; the suite's log: %s", table, filepath.Join(dir, "suite.log"))
}

// checkBaseline fails on a test of the baseline that did not pass, and reports the
// tests that pass and are not in it yet.
func checkBaseline(t *testing.T, s *suite, results []result) {
	b, err := readBaseline(baselineFile)
	if err != nil {
		t.Fatal(err)
	}
	if b.version != s.version {
		t.Fatalf("%s was recorded with azcosmos %s and the main go.mod requires %s: refresh testdata/module/go.mod for it and record the baseline again (COSMOSCTL_GOSUITE_UPDATE=1)", baselineFile, b.version, s.version)
	}
	byName := map[string]result{}
	for _, r := range results {
		byName[r.name] = r
	}
	for _, name := range b.passing {
		r, ok := byName[name]
		switch {
		case !ok:
			t.Errorf("%s names %s, which azcosmos %s's emulator suite does not declare", baselineFile, name, s.version)
		case r.outcome != passed:
			t.Errorf("regression: %s passed before and is %s now: %s", name, r.outcome, r.reason)
		}
	}
	var newly []string
	for _, r := range results {
		if r.outcome == passed && !slices.Contains(b.passing, r.name) {
			newly = append(newly, r.name)
		}
	}
	if len(newly) > 0 {
		t.Logf("newly passing, not yet in %s (add them, or run with COSMOSCTL_GOSUITE_UPDATE=1): %s", baselineFile, strings.Join(newly, ", "))
	}
}
