package cmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// importFile writes text to a file in a scratch directory and returns its path.
func importFile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "items.ndjson")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func items(from, to int) string {
	var b strings.Builder
	for k := from; k <= to; k++ {
		fmt.Fprintf(&b, `{"id":"i%d","pk":"p%d","n":%d}`+"\n", k, k%5, k)
	}
	return b.String()
}

// reportRow checks a row of the import report's table.
func reportRow(t *testing.T, out, label, value string) {
	t.Helper()
	if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(label) + ` +` + regexp.QuoteMeta(value) + `$`).MatchString(out) {
		t.Fatalf("the report has no row %q %q:\n%s", label, value, out)
	}
}

func countItems(t *testing.T) string {
	t.Helper()
	r := cosmosctl(t, "", "query", "SELECT VALUE COUNT(1) FROM c", "-o", "ndjson")
	if r.code != 0 {
		t.Fatalf("count: %+v", r)
	}
	return strings.TrimSpace(r.out)
}

func TestImportWritesEveryLineAndRejectsBadOnesWithTheirLineNumbers(t *testing.T) {
	testAccount(t)
	input := importFile(t, items(1, 20)+"not json\n"+`{"pk":"p"}`+"\n"+`{"id":"nokey"}`+"\n\n"+items(21, 30))
	r := cosmosctl(t, "", "import", input)
	if r.code != ExitPartial {
		t.Fatalf("exit %d, want %d (lines rejected): %s %s", r.code, ExitPartial, r.out, r.errOut)
	}
	for _, row := range [][2]string{{"created", "30"}, {"bad lines", "3"}, {"  invalid JSON", "1"}, {"  no id", "1"},
		{"  no partition key value", "1"}, {"lines done", "34 (1 blank)"}, {"request charge", "150 RU, 0 requests throttled (429)"}} {
		reportRow(t, r.out, row[0], row[1])
	}
	rejected := strings.TrimSuffix(input, ".ndjson") + ".rejected.ndjson"
	if !strings.Contains(r.errOut, "3 lines rejected, with their line numbers and reasons, in "+rejected) ||
		!strings.Contains(r.errOut, "Error: the import completed, but 3 of its 34 lines were rejected or failed") {
		t.Fatalf("stderr %q", r.errOut)
	}
	b, _ := os.ReadFile(rejected)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], `{"line":21,"reason":"invalid JSON"`) || !strings.HasPrefix(lines[2], `{"line":23,"reason":"no partition key value"`) ||
		!strings.Contains(lines[2], `"item":{"id":"nokey"}`) {
		t.Fatalf("rejected lines:\n%s", b)
	}
	if n := countItems(t); n != "30" {
		t.Fatalf("%s items stored", n)
	}
	// Again: every item is already there, and not this import's.
	r = cosmosctl(t, "", "import", input, "-o", "json")
	rep := lastReport(t, r.out)
	if r.code != ExitPartial || rep.Created != 0 || rep.AlreadyPresent != 30 || rep.BadLines != 3 || rep.Error == nil {
		t.Fatalf("exit %d, report %+v", r.code, rep)
	}
}

func TestImportWithNothingRejectedExitsZeroAndLeavesNoRejectedFile(t *testing.T) {
	testAccount(t)
	input := importFile(t, items(1, 10))
	r := cosmosctl(t, "", "import", input, "--mode", "upsert")
	if r.code != 0 {
		t.Fatalf("%+v", r)
	}
	reportRow(t, r.out, "created", "10")
	reportRow(t, r.out, "updated", "0")
	if _, err := os.Stat(strings.TrimSuffix(input, ".ndjson") + ".rejected.ndjson"); !os.IsNotExist(err) {
		t.Fatalf("an empty rejected-lines file was left: %v", err)
	}
	r = cosmosctl(t, "", "import", input, "--mode", "upsert", "-o", "json")
	if rep := lastReport(t, r.out); r.code != 0 || rep.Updated != 10 || rep.Created != 0 || rep.Error != nil {
		t.Fatalf("exit %d, report %+v", r.code, rep)
	}
}

func TestImportResumesFromItsStateAndRefusesAnotherImportsState(t *testing.T) {
	testAccount(t)
	dir := t.TempDir()
	state := filepath.Join(dir, "s.state")
	input := importFile(t, items(1, 40))
	r := cosmosctl(t, "", "import", input, "--state", state, "-o", "json")
	if rep := lastReport(t, r.out); r.code != 0 || rep.Created != 40 || rep.Runs != 1 {
		t.Fatalf("exit %d: %s %s", r.code, r.out, r.errOut)
	}
	// Resuming a complete import does nothing more and reports the whole run.
	r = cosmosctl(t, "", "import", input, "--state", state, "-o", "json")
	rep := lastReport(t, r.out)
	if r.code != 0 || rep.Created != 40 || rep.ThisRun.Skipped != 40 || rep.ThisRun.Lines != 0 || rep.Runs != 2 {
		t.Fatalf("exit %d, report %+v", r.code, rep)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"another file", []string{"import", importFile(t, items(1, 41)), "--state", state}, "it is the import of another input"},
		{"another container", []string{"import", input, "--state", state, "--container", "other"}, "it is the import into app/items at "},
		{"another mode", []string{"import", input, "--state", state, "--mode", "upsert"}, "it is an import with --mode create, not upsert"},
		{"another rejected file", []string{"import", input, "--state", state, "--rejected", filepath.Join(dir, "x")}, "this import's rejected lines are in " + state + ".rejected.ndjson"},
	} {
		r := cosmosctl(t, "", tc.args...)
		if r.code != ExitUsage || !strings.Contains(r.errOut, tc.want) || strings.Count(strings.TrimSpace(r.errOut), "\n") > 1 {
			t.Fatalf("%s: exit %d, stderr %q", tc.name, r.code, r.errOut)
		}
	}
	os.WriteFile(state, []byte("not a state"), 0o600)
	if r := cosmosctl(t, "", "import", input, "--state", state); r.code != ExitUsage || !strings.Contains(r.errOut, "is not a cosmosctl import state file") {
		t.Fatalf("exit %d, stderr %q", r.code, r.errOut)
	}
}

func TestImportFromStandardInputResumesOnlyWithTheSameData(t *testing.T) {
	testAccount(t)
	state := filepath.Join(t.TempDir(), "stdin.state")
	if r := cosmosctl(t, items(1, 10), "import", "-", "--state", state); r.code != 0 {
		t.Fatalf("%+v", r)
	}
	r := cosmosctl(t, items(1, 10), "import", "-", "--state", state, "-o", "json")
	if rep := lastReport(t, r.out); r.code != 0 || rep.ThisRun.Skipped != 10 || rep.Created != 10 {
		t.Fatalf("exit %d, report %+v", r.code, rep)
	}
	if r := cosmosctl(t, items(2, 11), "import", "-", "--state", state); r.code != ExitUsage || !strings.Contains(r.errOut, "size unknown") {
		t.Fatalf("exit %d, stderr %q", r.code, r.errOut)
	}
}

func TestImportRefusesBadFlagsAndInputs(t *testing.T) {
	testAccount(t)
	input := importFile(t, items(1, 2))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"import"}, "the NDJSON file, or - for standard input"},
		{[]string{"import", input, "--mode", "merge"}, "--mode must be create or upsert"},
		{[]string{"import", input, "--concurrency", "0"}, "--concurrency must be between 1 and 256"},
		{[]string{"import", input, "--max-ru-per-second", "-5"}, "--max-ru-per-second must be 0"},
		{[]string{"import", filepath.Join(t.TempDir(), "missing.ndjson")}, "cannot read the input"},
		{[]string{"import", t.TempDir()}, "is a directory"},
	} {
		r := cosmosctl(t, "", tc.args...)
		if r.code != ExitUsage || !strings.Contains(r.errOut, tc.want) {
			t.Fatalf("%v: exit %d, stderr %q", tc.args, r.code, r.errOut)
		}
	}
}

func TestImportFailFastStopsAtTheFirstBadLineAndResumesAfterIt(t *testing.T) {
	testAccount(t)
	state := filepath.Join(t.TempDir(), "ff.state")
	input := importFile(t, items(1, 5)+"oops\n"+items(6, 10))
	r := cosmosctl(t, "", "import", input, "--state", state, "--fail-fast", "--concurrency", "1")
	if r.code != ExitUsage || !strings.Contains(r.errOut, "line 6: the line is not valid JSON") || !strings.Contains(r.errOut, "resume with the same command") {
		t.Fatalf("exit %d, stderr %q", r.code, r.errOut)
	}
	r = cosmosctl(t, "", "import", input, "--state", state, "-o", "json")
	if rep := lastReport(t, r.out); r.code != ExitPartial || rep.Created != 10 || rep.BadLines != 1 || rep.Runs != 2 {
		t.Fatalf("exit %d, report %+v", r.code, rep)
	}
}

// Ctrl-C: the import stops, saves its state, says how to resume, and exits 130; the
// resumed import stores every item once.
func TestAnInterruptedImportSavesItsStateAndSaysHowToResume(t *testing.T) {
	every := importCheckpointEvery
	importCheckpointEvery = 100 * time.Millisecond // the first checkpoint is what the test waits for
	t.Cleanup(func() { importCheckpointEvery = every })
	srv := testAccount(t)
	if _, err := srv.AddFault(faults.Rule{Operations: []string{"create"}, Effect: faults.EffectDelay, Delay: faults.Distribution{Kind: faults.KindFixed, Value: faults.Duration(20 * time.Millisecond)}}); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(t.TempDir(), "int.state")
	input := importFile(t, items(1, 400))
	io, out, errOut := testIO()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- Run(ctx, io, []string{"import", input, "--state", state, "--concurrency", "2"}) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(state); err == nil && strings.Contains(string(b), `"created": `) && !strings.Contains(string(b), `"created": 0,`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint within 30 s: %s", errOut.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != ExitInterrupted {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(errOut.String(), "resume with the same command: cosmosctl import "+input+" --state "+state+" --concurrency 2 --database app --container items\n") ||
		!strings.Contains(out.String(), "stopped: interrupted") {
		t.Fatalf("stdout %q\nstderr %q", out.String(), errOut.String())
	}
	srv.Faults().Clear()
	r := cosmosctl(t, "", "import", input, "--state", state, "-o", "json")
	if rep := lastReport(t, r.out); r.code != 0 || rep.Created != 400 || rep.AlreadyPresent != 0 || rep.Runs != 2 {
		t.Fatalf("exit %d, report %+v", r.code, rep)
	}
	if n := countItems(t); n != "400" {
		t.Fatalf("%s items stored", n)
	}
}

// On a terminal stderr shows a progress bar while the import runs, cleared before the
// report; stdout has the report only.
func TestImportShowsAProgressBarOnATerminal(t *testing.T) {
	srv := testAccount(t)
	if _, err := srv.AddFault(faults.Rule{Operations: []string{"create"}, Effect: faults.EffectDelay, Delay: faults.Distribution{Kind: faults.KindFixed, Value: faults.Duration(10 * time.Millisecond)}}); err != nil {
		t.Fatal(err)
	}
	input := importFile(t, items(1, 100))
	io, out, errOut := testIO()
	io.ErrTTY, io.ErrWidth = true, 100
	if code := Run(context.Background(), io, []string{"import", input, "--concurrency", "1"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	bar := regexp.MustCompile(`\r\x1b\[Kimport \[=*>? *\] \d+/100 items · \d+/s · [\d,]+ RU/s · ETA \d+s`)
	if !bar.MatchString(errOut.String()) || !strings.Contains(errOut.String(), "\r\x1b[K\n") && !strings.HasSuffix(errOut.String(), "\r\x1b[K") {
		t.Fatalf("stderr %q", errOut.String())
	}
	if strings.Contains(out.String(), "\r") || !strings.Contains(out.String(), "created") {
		t.Fatalf("stdout %q", out.String())
	}
}
