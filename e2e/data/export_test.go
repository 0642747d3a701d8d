package data_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"

	"github.com/cosmosctl/cosmosctl/cmd"
	"github.com/cosmosctl/cosmosctl/internal/clitest"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// exportLines parses NDJSON into items and fails on anything else.
func exportLines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for i, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		if l == "" && i == 0 {
			continue
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("line %d is not a JSON object: %q", i+1, l)
		}
		out = append(out, v)
	}
	return out
}

// exportedIDs are the ids of the exported lines, sorted, and fails the test when one is
// there twice.
func exportedIDs(t *testing.T, s string) []string {
	t.Helper()
	seen := map[string]bool{}
	var ids []string
	for _, v := range exportLines(t, s) {
		id, _ := v["id"].(string)
		if seen[id] {
			t.Fatalf("item %q is in the export twice", id)
		}
		seen[id] = true
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func qids(items []testkit.QueryItem) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.ID)
	}
	slices.Sort(out)
	return out
}

// TestExportEveryFlag: each source and flag on the emulator's four ranges.
func TestExportEveryFlag(t *testing.T) {
	items := testkit.QueryItems(testkit.QueryTestItems)
	testAccountWith(t, items)
	// One item written with write retries that leave a _trackingId in it.
	if r := clitest.Run(t, `{"id":"tracked","pk":"p1","n":1000}`, "create", "-f", "-", "--write-retries", "tracking-id"); r.Code != 0 {
		t.Fatalf("create: %+v", r)
	}
	all := append(qids(items), "tracked")
	slices.Sort(all)
	p3 := qids(testkit.Where(items, func(i testkit.QueryItem) bool { return i.PK == "p3" }))
	red := qids(testkit.Where(items, func(i testkit.QueryItem) bool { return i.Cat == "red" && i.N > 30 }))
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want []string
		// check looks at every exported item.
		check func(t *testing.T, item map[string]any)
	}{
		{"every item, on stdout, system properties kept", nil, all, func(t *testing.T, it map[string]any) {
			for _, p := range []string{"_rid", "_self", "_etag", "_ts", "_attachments"} {
				if _, ok := it[p]; !ok {
					t.Fatalf("%s missing without --strip-system: %v", p, it)
				}
			}
		}},
		{"a query with a parameter", []string{"--query", "SELECT * FROM c WHERE c.cat = @cat AND c.n > 30", "--param", "@cat=red"}, red, nil},
		{"a partition key", []string{"--pk", "p3"}, p3, nil},
		{"a query within a partition key", []string{"--query", "SELECT * FROM c WHERE c.n >= 0", "--pk", "p3"}, p3, nil},
		{"small pages, two at a time", []string{"--page-size", "7", "--parallelism", "2"}, all, nil},
		{"--strip-system", []string{"--strip-system"}, all, func(t *testing.T, it map[string]any) {
			for _, p := range []string{"_rid", "_self", "_etag", "_ts", "_attachments"} {
				if _, ok := it[p]; ok {
					t.Fatalf("%s kept with --strip-system: %v", p, it)
				}
			}
			if it["id"] == "tracked" && it["_trackingId"] == nil {
				t.Fatalf("_trackingId dropped without --strip-tracking-id: %v", it)
			}
			if it["id"] != "tracked" && it["cat"] == nil {
				t.Fatalf("a property of the item was dropped: %v", it)
			}
		}},
		{"--strip-system --strip-tracking-id", []string{"--strip-system", "--strip-tracking-id"}, all, func(t *testing.T, it map[string]any) {
			for p := range it {
				if strings.HasPrefix(p, "_") {
					t.Fatalf("%s kept: %v", p, it)
				}
			}
		}},
		{"--strip-tracking-id alone", []string{"--strip-tracking-id"}, all, func(t *testing.T, it map[string]any) {
			if _, ok := it["_trackingId"]; ok || it["_rid"] == nil {
				t.Fatalf("%v", it)
			}
		}},
		{"the change feed", []string{"--source", "change-feed"}, all, func(t *testing.T, it map[string]any) {
			if it["_lsn"] == nil || it["_rid"] == nil {
				t.Fatalf("a change feed item has _lsn and the system properties: %v", it)
			}
		}},
		{"the change feed of a partition key", []string{"--source", "change-feed", "--pk", "p3"}, p3, nil},
		{"the change feed, small pages, stripped", []string{"--source", "change-feed", "--page-size", "3", "--strip-system", "--strip-tracking-id"}, all, func(t *testing.T, it map[string]any) {
			for p := range it {
				if strings.HasPrefix(p, "_") {
					t.Fatalf("%s kept: %v", p, it)
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, toFile := range []bool{false, true} {
				args := append([]string{"export"}, tc.args...)
				path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".ndjson")
				if toFile {
					args = append(args, "--output-file", path)
				}
				r := clitest.Run(t, "", args...)
				if r.Code != 0 {
					t.Fatalf("exit %d: %s", r.Code, r.ErrOut)
				}
				got := r.Out
				if toFile {
					if r.Out != "" {
						t.Fatalf("with --output stdout must stay empty: %q", r.Out)
					}
					b, err := os.ReadFile(path)
					if err != nil {
						t.Fatal(err)
					}
					got = string(b)
				}
				if ids := exportedIDs(t, got); !slices.Equal(ids, tc.want) {
					t.Fatalf("exported %d items %v\nwant %d %v", len(ids), ids, len(tc.want), tc.want)
				}
				if tc.check != nil {
					for _, it := range exportLines(t, got) {
						tc.check(t, it)
					}
				}
			}
		})
	}
}

// testAccountWith is testkit.QueryAccount: the test account with items, four ranges.
func testAccountWith(t *testing.T, items []testkit.QueryItem, mutate ...func(*emulator.Config)) *emulator.Server {
	t.Helper()
	return testkit.QueryAccount(t, items, mutate...)
}

// TestExportBadInputIsOneLineAndExitCode2: before anything is read or written.
func TestExportBadInputIsOneLineAndExitCode2(t *testing.T) {
	testAccountWith(t, testkit.QueryItems(8))
	dir := t.TempDir()
	out := filepath.Join(dir, "out.ndjson")
	garbage := filepath.Join(dir, "garbage.state")
	os.WriteFile(garbage, []byte("not a state"), 0o600)
	// A state of another query: written by a completed export of a query.
	other := filepath.Join(dir, "other.state")
	otherOut := filepath.Join(dir, "other.ndjson")
	if r := clitest.Run(t, "", "export", "--query", "SELECT * FROM c WHERE c.n > 3", "--output-file", otherOut, "--state", other); r.Code != 0 {
		t.Fatalf("%+v", r)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"--state without --output", []string{"--state", filepath.Join(dir, "s")}, "--state needs --output-file FILE"},
		{"a format for --output", []string{"--output", "json"}, `--output must be ndjson, not "json": it is this command's only format`},
		{"--param without --query", []string{"--param", "@a=1"}, "--param is a parameter of --query"},
		{"an empty query", []string{"--query", " "}, "--query is empty"},
		{"a bad parameter", []string{"--query", "SELECT * FROM c", "--param", "a=1"}, "the name must be @"},
		{"page size", []string{"--page-size", "0"}, "--page-size must be between 1 and 1000"},
		{"parallelism", []string{"--parallelism", "99"}, "--parallelism must be between 1 and 32"},
		{"negative RU", []string{"--max-ru-per-second", "-5"}, "--max-ru-per-second must not be negative"},
		{"progress", []string{"--progress", "dots"}, "--progress must be bar, json or off"},
		{"source", []string{"--source", "backup"}, "--source must be query or change-feed"},
		{"a query of the change feed", []string{"--source", "change-feed", "--query", "SELECT * FROM c"}, "leave out --source change-feed"},
		{"another source's state", []string{"--source", "change-feed", "--output-file", otherOut, "--state", other}, "its source is"},
		{"an argument", []string{"SELECT * FROM c"}, "export takes no arguments"},
		{"a directory for --output", []string{"--output-file", dir}, "is a directory"},
		{"state and output the same file", []string{"--output-file", out, "--state", out}, "are the same file"},
		{"a state file that is not one", []string{"--output-file", out, "--state", garbage}, "is not an export's state"},
		{"another query's state", []string{"--output-file", otherOut, "--state", other}, "is for another export: its query is"},
		{"another output's state", []string{"--query", "SELECT * FROM c WHERE c.n > 3", "--output-file", out, "--state", other}, "its output file is"},
		{"bad SQL", []string{"--query", "SELEC nonsense"}, ""},
		{"an unknown flag", []string{"--bogus"}, "unknown flag"},
		{"-o is not a file", []string{"-o", "x.ndjson"}, `--output must be ndjson, not "x.ndjson"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := os.ReadFile(otherOut)
			r := clitest.Run(t, "", append([]string{"export"}, tc.args...)...)
			if r.Code != cmd.ExitUsage || r.Out != "" || strings.Count(strings.TrimSpace(r.ErrOut), "\n") != 0 || !strings.HasPrefix(r.ErrOut, "Error: ") || !strings.Contains(r.ErrOut, tc.want) {
				t.Fatalf("exit %d (want 2), stdout %q, stderr %q (want one line with %q)", r.Code, r.Out, r.ErrOut, tc.want)
			}
			if after, _ := os.ReadFile(otherOut); string(after) != string(before) {
				t.Fatal("a refused export changed another export's file")
			}
			if _, err := os.Stat(out); err == nil {
				t.Fatal("a refused export created its output file")
			}
		})
	}
}

// TestExportStateResumesAndACompleteExportDoesNothing: in-process, an export stopped
// (Ctrl-C, while later pages hang) with --state says how to resume and exits 130; the
// same command resumes; the file holds every item once; once complete, a run does
// nothing.
func TestExportStateResumesAndACompleteExportDoesNothing(t *testing.T) {
	for _, source := range []string{"query", "change-feed"} {
		t.Run(source, func(t *testing.T) { testExportStateResumes(t, source) })
	}
}

func testExportStateResumes(t *testing.T, source string) {
	items := testkit.QueryItems(testkit.QueryTestItems)
	// Pages of one item, 20 ms each until the interrupt: 2.4 s in all, far longer than
	// the test takes to make the later pages hang once the first item is in the file.
	srv := testAccountWith(t, items)
	slow, err := srv.AddFault(faults.Rule{Operations: []string{faults.OpQuery}, Effect: faults.EffectDelay,
		Delay: faults.Distribution{Kind: faults.KindFixed, Value: faults.Duration(20 * time.Millisecond)}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out, state := filepath.Join(dir, "items.ndjson"), filepath.Join(dir, "items.state")
	args := []string{"export", "--output-file", out, "--state", state, "--page-size", "1", "--parallelism", "1", "--strip-system", "--source", source}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	streams, _, errOut := clitest.IO()
	done := make(chan int, 1)
	// Hang the query's pages once an item is in the file: the export then waits on a
	// page when Ctrl-C comes.
	go func() { done <- cmd.Run(ctx, streams, args) }()
	waitFor(t, 30*time.Second, func() bool {
		b, _ := os.ReadFile(out)
		return len(b) > 0
	})
	rule, err := srv.AddFault(faults.Rule{Operations: []string{faults.OpQuery}, Effect: faults.EffectHang})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	var code int
	select {
	case code = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("export did not stop on Ctrl-C")
	}
	srv.Faults().Remove(rule.ID)
	srv.Faults().Remove(slow.ID) // the resumed runs only have to finish
	if code != cmd.ExitInterrupted || !strings.Contains(errOut.String(), "the state is saved in "+state+": run the same command to resume") ||
		!strings.Contains(errOut.String(), "Error: interrupted: export after ") {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
	first, _ := os.ReadFile(out)
	n := len(exportLines(t, string(first)))
	if n == 0 || n >= len(items) {
		t.Fatalf("%d items before the interrupt", n)
	}
	r := clitest.Run(t, "", args...)
	if r.Code != 0 || r.Out != "" {
		t.Fatalf("resume: %+v", r)
	}
	b, _ := os.ReadFile(out)
	if ids := exportedIDs(t, string(b)); !slices.Equal(ids, qids(items)) {
		t.Fatalf("after resuming the file holds %d items: %v", len(ids), ids)
	}
	r = clitest.Run(t, "", args...)
	if r.Code != 0 || !strings.Contains(r.ErrOut, "is complete (120 items in "+out+"): nothing to do") {
		t.Fatalf("a complete export again: %+v", r)
	}
	if again, _ := os.ReadFile(out); string(again) != string(b) {
		t.Fatal("a complete export's file changed")
	}
}

// waitFor polls cond every 10 ms until it holds, failing the test after timeout.
func waitFor(t *testing.T, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s", timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestExportSurvivesASickFirstRegion: the incident path. Whatever is wrong with the first
// region, the export completes from the others with every item once, each page bounded
// by the attempt timeout or a hedge.
func TestExportSurvivesASickFirstRegion(t *testing.T) {
	items := testkit.QueryItems(testkit.QueryTestItems)
	hedged := []string{"--hedge-threshold", "50ms", "--attempt-timeout", "500ms"}
	for _, tc := range []struct {
		name string
		rule faults.Rule
		args []string
	}{
		{"hung, hedged", faults.Rule{Region: "East US", Operations: []string{faults.GroupReads}, Effect: faults.EffectHang}, hedged},
		{"hung, not hedged: the attempt timeout fails pages over", faults.Rule{Region: "East US", Operations: []string{faults.GroupReads}, Effect: faults.EffectHang},
			[]string{"--attempt-timeout", "300ms"}},
		{"refusing connections", faults.Rule{Region: "East US", Effect: faults.EffectRefuse}, hedged},
		{"throttling", faults.Rule{Region: "East US", Operations: []string{faults.GroupReads}, Effect: faults.EffectStatus, Status: 429,
			RetryAfter: faults.Duration(20 * time.Millisecond)}, hedged},
		{"throttling, with an RU cap", faults.Rule{Region: "East US", Operations: []string{faults.GroupReads}, Effect: faults.EffectStatus, Status: 429,
			RetryAfter: faults.Duration(20 * time.Millisecond)}, append([]string{"--max-ru-per-second", "100000"}, hedged...)},
		{"slow", faults.Rule{Region: "East US", Operations: []string{faults.GroupReads}, Effect: faults.EffectDelay,
			Delay: faults.Distribution{Kind: faults.KindFixed, Value: faults.Duration(2 * time.Second)}}, hedged},
	} {
		for _, source := range []string{"query", "change-feed"} {
			t.Run(source+", "+tc.name, func(t *testing.T) { testExportIncident(t, items, source, tc.rule, tc.args) })
		}
	}
}

func testExportIncident(t *testing.T, items []testkit.QueryItem, source string, rule faults.Rule, args []string) {
	srv := testAccountWith(t, items)
	// A command before the incident saves the account's topology, as an
	// operator's earlier commands did.
	if r := clitest.Run(t, "", "query", "SELECT VALUE COUNT(1) FROM c"); r.Code != 0 {
		t.Fatalf("before the fault: %+v", r)
	}
	if _, err := srv.AddFault(rule); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "items.ndjson")
	start := time.Now()
	r := clitest.Run(t, "", append([]string{"export", "--source", source, "--page-size", "20", "--output-file", out, "--state", filepath.Join(dir, "s")}, args...)...)
	elapsed := time.Since(start)
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.ErrOut)
	}
	b, _ := os.ReadFile(out)
	if got := exportedIDs(t, string(b)); !slices.Equal(got, qids(items)) {
		t.Fatalf("exported %d items, want %d", len(got), len(items))
	}
	// Generous: pages of at most an attempt timeout or a hedge each, in
	// parallel over four ranges, on a loaded machine.
	if elapsed > 30*time.Second {
		t.Fatalf("took %s", elapsed)
	}
}

// TestAStrippedExportReImports: the file of --strip-system --strip-tracking-id, from
// either source, loads into another account with cosmosctl import, every line created
// and none rejected, and an export of the copy is the same file but for order.
func TestAStrippedExportReImports(t *testing.T) {
	items := testkit.QueryItems(testkit.QueryTestItems)
	for _, source := range []string{"query", "change-feed"} {
		t.Run(source, func(t *testing.T) {
			testAccountWith(t, items)
			if r := clitest.Run(t, `{"id":"tracked","pk":"p1","nested":{"_rid":"stays"}}`, "create", "-f", "-", "--write-retries", "tracking-id"); r.Code != 0 {
				t.Fatalf("create: %+v", r)
			}
			file := filepath.Join(t.TempDir(), "items.ndjson")
			if r := clitest.Run(t, "", "export", "--source", source, "--strip-system", "--strip-tracking-id", "--output-file", file); r.Code != 0 {
				t.Fatalf("export: %+v", r)
			}
			b, _ := os.ReadFile(file)
			exported := string(b)
			if n := strings.Count(exported, "\n"); n != len(items)+1 {
				t.Fatalf("%d lines", n)
			}
			if !strings.Contains(exported, `"nested":{"_rid":"stays"}`) {
				t.Fatal("a nested _rid is the item's own and must stay")
			}
			testkit.Account(t) // a new, empty account
			r := clitest.Run(t, "", "import", file, "-o", "json")
			if r.Code != 0 || !strings.Contains(r.Out, `"event": "report"`) {
				t.Fatalf("import: exit %d: %s %s", r.Code, r.Out, r.ErrOut)
			}
			r = clitest.Run(t, "", "export", "--strip-system", "--strip-tracking-id")
			if r.Code != 0 {
				t.Fatalf("export of the copy: %+v", r)
			}
			sorted := func(s string) []string {
				out := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
				slices.Sort(out)
				return out
			}
			if a, b := sorted(exported), sorted(r.Out); !slices.Equal(a, b) {
				t.Fatalf("the copy's export differs:\n%v\n%v", a[:3], b[:3])
			}
		})
	}
}

// exportReportOf is the last line of --progress json on stderr.
func exportReportOf(t *testing.T, errOut string) (report struct {
	Event         string  `json:"event"`
	Items         int64   `json:"items"`
	RequestCharge float64 `json:"request_charge"`
	Requests      int64   `json:"requests"`
	Complete      bool    `json:"complete"`
	Resumed       bool    `json:"resumed"`
	DurationMs    float64 `json:"duration_ms"`
}, progress int) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	for i, l := range lines {
		var ev struct {
			Event string `json:"event"`
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("--progress json: stderr line %d is not JSON: %q", i+1, l)
		}
		if ev.Event == "progress" {
			progress++
		}
		if i == len(lines)-1 {
			if ev.Event != "report" {
				t.Fatalf("the last line is not the report: %q", l)
			}
			json.Unmarshal([]byte(l), &report)
		}
	}
	return report, progress
}

// TestExportProgressJSONAndTheRUCap: --progress json is NDJSON on stderr (progress
// events, then a report); --max-ru-per-second holds the export to the cap: given half of
// what the whole export costs, it takes at least most of a second, where without the
// cap it takes a fraction of one.
func TestExportProgressJSONAndTheRUCap(t *testing.T) {
	items := testkit.QueryItems(testkit.QueryTestItems)
	testAccountWith(t, items)
	r := clitest.Run(t, "", "export", "--page-size", "10", "--progress", "json")
	if r.Code != 0 {
		t.Fatalf("%+v", r)
	}
	free, events := exportReportOf(t, r.ErrOut)
	if events == 0 || free.Items != int64(len(items)) || !free.Complete || free.RequestCharge <= 0 || free.Requests < 12 {
		t.Fatalf("report %+v after %d progress events", free, events)
	}
	if ids := exportedIDs(t, r.Out); len(ids) != len(items) {
		t.Fatalf("%d items on stdout", len(ids))
	}
	capRU := free.RequestCharge / 2
	start := time.Now()
	r = clitest.Run(t, "", "export", "--page-size", "10", "--progress", "json", "--max-ru-per-second", strconv.FormatFloat(capRU, 'f', 2, 64))
	took := time.Since(start)
	if r.Code != 0 {
		t.Fatalf("%+v", r)
	}
	capped, _ := exportReportOf(t, r.ErrOut)
	// The limiter lets the first page go at once and the last on credit, and spends no
	// more than the cap from its first second: at least (cost − 2 pages) / cap = 2 − 1/6 s;
	// generous below that, unbounded above only by the test's own timeout.
	if capped.Items != int64(len(items)) || took < 600*time.Millisecond {
		t.Fatalf("capped at %.2f RU/s (the export costs %.2f RU): %d items in %s", capRU, free.RequestCharge, capped.Items, took)
	}
}

// TestExportProgressBarOnATerminal: with stderr a terminal the bar is drawn there and
// cleared at the end (the data on stdout or in the file never has it); with the items
// streaming to the same terminal there is no bar, the items being the progress.
func TestExportProgressBarOnATerminal(t *testing.T) {
	items := testkit.QueryItems(testkit.QueryTestItems)
	// Pages of 4 at 20 ms: 0.6 s or more, past the bar's first redraw (200 ms) three
	// times over.
	testAccountWith(t, items, func(c *emulator.Config) {
		c.Latency = []faults.LatencySpec{{Operation: faults.OpQuery, Distribution: faults.Distribution{Kind: faults.KindFixed, Value: faults.Duration(20 * time.Millisecond)}}}
	})
	out := filepath.Join(t.TempDir(), "items.ndjson")
	streams, stdout, errOut := clitest.IO()
	streams.ErrTTY, streams.ErrWidth = true, 100
	if code := cmd.Run(context.Background(), streams, []string{"export", "--page-size", "4", "--parallelism", "1", "--output-file", out}); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	e := errOut.String()
	if !strings.Contains(e, "\r\033[Kexport ") || !strings.Contains(e, "items") || !strings.Contains(e, "cosmosctl: exported 120 items") || stdout.String() != "" {
		t.Fatalf("stderr %q", e)
	}
	if b, _ := os.ReadFile(out); strings.Contains(string(b), "\033") || len(exportedIDs(t, string(b))) != len(items) {
		t.Fatal("the file has the bar in it, or not every item")
	}
	streams, stdout, errOut = clitest.IO()
	streams.ErrTTY, streams.OutTTY = true, true
	if code := cmd.Run(context.Background(), streams, []string{"export", "--page-size", "5", "--parallelism", "1"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if strings.Contains(errOut.String(), "\r\033[K") || len(exportedIDs(t, stdout.String())) != len(items) {
		t.Fatalf("items on the terminal: no bar, got stderr %q", errOut.String())
	}
}

// seedItems writes items straight to the emulator.
func seedItems(t *testing.T, srv *emulator.Server, items []testkit.QueryItem) {
	t.Helper()
	cred, _ := cosmos.NewMasterKey(srv.Key())
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
	for _, it := range items {
		body, _ := json.Marshal(it.Doc())
		pk, _ := cosmos.PK(it.PK)
		req := &cosmos.Request{Method: http.MethodPost, Path: cosmos.ItemsPath("app", "items"), Header: http.Header{}, Body: body}
		req.Header.Set(cosmos.HeaderPartitionKey, pk.JSON())
		if resp, err := tr.Do(context.Background(), srv.Endpoint(), req); err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("seeding %s: %v %+v", it.ID, err, resp)
		}
	}
}

// TestExportUnderProvisionedThroughput: the emulator enforcing the container's 400 RU/s
// (100 a range). Capped below a range's share the export is never throttled;
// unlimited, its pages are throttled (429/3200) and it still completes with every item.
func TestExportUnderProvisionedThroughput(t *testing.T) {
	items := testkit.QueryItems(200)
	srv := testAccountWith(t, items)
	srv.SetEnforceThroughput(true) // once the items are in
	type report struct {
		Items         int64   `json:"items"`
		Throttled     int64   `json:"throttled"`
		RequestCharge float64 `json:"request_charge"`
		Complete      bool    `json:"complete"`
	}
	last := func(errOut string) report {
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		var r report
		json.Unmarshal([]byte(lines[len(lines)-1]), &r)
		return r
	}
	// Capped first: an unlimited export leaves the ranges' budgets spent for a while.
	r := clitest.Run(t, "", "export", "--page-size", "20", "--progress", "json", "--max-ru-per-second", "80")
	capped := last(r.ErrOut)
	if r.Code != 0 || !capped.Complete || capped.Items != 200 || capped.Throttled != 0 {
		t.Fatalf("capped at 80 RU/s: exit %d, report %+v", r.Code, capped)
	}
	// Unlimited over 1,200 items: about 500 RU, over a range's share in the ranges of
	// four of the thirteen keys or more, read in a fraction of a second.
	srv.SetEnforceThroughput(false)
	more := testkit.QueryItems(1200)[200:]
	for i := range more {
		more[i].ID = fmt.Sprintf("more-%04d", i)
	}
	seedItems(t, srv, more)
	srv.SetEnforceThroughput(true)
	r = clitest.Run(t, "", "export", "--page-size", "100", "--parallelism", "4", "--progress", "json")
	free := last(r.ErrOut)
	if r.Code != 0 || !free.Complete || free.Items != 1200 || len(exportedIDs(t, r.Out)) != 1200 {
		t.Fatalf("unlimited: exit %d, report %+v: %s", r.Code, free, r.ErrOut)
	}
	if free.Throttled == 0 {
		t.Fatalf("unlimited, %.0f RU in pages of 100 at once were never throttled by 100 RU/s a range", free.RequestCharge)
	}
	t.Logf("unlimited: %.0f RU, %d throttled; capped: %.0f RU, %d throttled", free.RequestCharge, free.Throttled, capped.RequestCharge, capped.Throttled)
}
