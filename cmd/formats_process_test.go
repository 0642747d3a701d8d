package cmd

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// Issue 20, section 3, items 10, 11, 12 and 13, as a script sees them: the real binary,
// its exit codes and its streams.

// formatsAccount starts an emulator with app/items (partition key /pk), three items in it,
// and returns the environment that points the binary at it.
func formatsAccount(t *testing.T) (*emulator.Server, []string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	srv := testAccount(t)
	for _, doc := range []string{`{"id":"o1","pk":"t1","total":42,"note":"West US"}`, `{"id":"o2","pk":"t2","total":7}`, `{"id":"o3","pk":"t3","total":9}`} {
		if r := cosmosctl(t, doc, "create", "-f", "-"); r.code != 0 {
			t.Fatalf("create: %+v", r)
		}
	}
	env := []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "COSMOSCTL_") {
			env = append(env, kv)
		}
	}
	return srv, env
}

func addFault(t *testing.T, srv *emulator.Server, r faults.Rule) {
	t.Helper()
	ctl, err := emulator.NewControlClient(srv.Endpoint(), srv.Key())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ctl.AddFault(context.Background(), r); err != nil {
		t.Fatal(err)
	}
}

// listenerNobodyAnswers is an endpoint that counts the connections made to it: a usage
// error must be found before any.
func listenerNobodyAnswers(t *testing.T) (endpoint string, connections *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	connections = &atomic.Int64{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			connections.Add(1)
			c.Close()
		}
	}()
	return "http://" + ln.Addr().String(), connections
}

// Item 11: a bad --jq expression, or --jq with a table format, is a usage error (exit 2)
// on one line before any request is sent.
func TestABadJQIsAUsageErrorBeforeAnyRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := cosmosctlBinary(t)
	isolate(t)
	endpoint, connections := listenerNobodyAnswers(t)
	env := append(os.Environ(), "COSMOSCTL_ENDPOINT="+endpoint, "COSMOSCTL_KEY=C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==",
		"COSMOSCTL_DATABASE=app", "COSMOSCTL_CONTAINER=items")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"read", "o1", "--pk", "t1", "--jq", ".item["}, "--jq \".item[\""},
		{[]string{"query", "SELECT * FROM c", "-o", "ndjson", "--jq", ".id |"}, "--jq"},
		{[]string{"changes", "--jq", "nosuchfunction(1)"}, "nosuchfunction"},
		{[]string{"regions", "--jq", ""}, "--jq is empty"},
		{[]string{"regions", "-o", "tsv", "--jq", ".regions"}, "-o tsv prints none"},
		{[]string{"db", "ls", "-o", "json", "--no-headers"}, "--no-headers"},
		{[]string{"emulator", "status", "--endpoint", endpoint, "--jq", "{"}, "--jq"},
		{[]string{"export", "--jq", ".["}, "--jq"},
	}
	for _, tc := range cases {
		code, out, errOut := runBinary(t, bin, env, "", tc.args...)
		if code != ExitUsage || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v → exit %d, stderr %q; want exit 2 and one line with %q", tc.args, code, errOut, tc.want)
		}
		if jqArg(tc.args) && out != "" {
			t.Errorf("%v: with --jq stdout holds only what the expression printed, here nothing: %q", tc.args, out)
		}
	}
	if n := connections.Load(); n != 0 {
		t.Fatalf("%d connections to the account: a usage error is found before anything is sent", n)
	}
}

// Item 11: --jq prints what the expression makes of the JSON output, implies -o json over
// the table default, and runs on each line of a stream.
func TestJQFiltersTheJSONOutputAndEachLineOfAStream(t *testing.T) {
	_, env := formatsAccount(t)
	bin := cosmosctlBinary(t)
	run := func(args ...string) (string, string) {
		t.Helper()
		code, out, errOut := runBinary(t, bin, env, "", args...)
		if code != 0 {
			t.Fatalf("%v → exit %d: %s", args, code, errOut)
		}
		return out, errOut
	}
	sorted := func(s string) string {
		lines := strings.Split(strings.TrimSpace(s), "\n")
		sort.Strings(lines)
		return strings.Join(lines, ",")
	}
	if out, _ := run("read", "o1", "--pk", "t1", "--jq", ".item.total"); out != "42\n" {
		t.Errorf("read --jq .item.total printed %q", out)
	}
	if out, _ := run("read", "o1", "--pk", "t1", "--jq", ".item.note"); out != "West US\n" {
		t.Errorf("a string prints raw: %q", out)
	}
	if out, _ := run("query", "SELECT * FROM c", "-o", "ndjson", "--jq", ".id"); sorted(out) != "o1,o2,o3" {
		t.Errorf("query -o ndjson --jq .id (per line) printed %q", out)
	}
	if out, _ := run("query", "SELECT * FROM c", "--jq", ".items | length"); out != "3\n" {
		t.Errorf("query --jq (implies -o json: the whole object) printed %q", out)
	}
	if out, _ := run("changes", "--jq", "select(.total > 8) | .id"); sorted(out) != "o1,o3" {
		t.Errorf("changes --jq printed %q", out)
	}
	if out, _ := run("regions", "--jq", ".regions[].region"); sorted(out) != "East US,North Europe,West US" {
		t.Errorf("regions --jq over the table default printed %q", out)
	}
	if out, _ := run("db", "ls", "--jq", ".[] | {id}"); out != "{\n  \"id\": \"app\"\n}\n" {
		t.Errorf("an object prints as indented JSON under -o json: %q", out)
	}
	if out, _ := run("export", "--jq", "{id, total}"); sorted(out) != `{"id":"o1","total":42},{"id":"o2","total":7},{"id":"o3","total":9}` {
		t.Errorf("export --jq (each item, one a line) printed %q", out)
	}
	// The expression sees the command's JSON only: no key from the environment.
	if out, _ := run("read", "o1", "--pk", "t1", "--jq", "[$ENV, env] | map(length)"); out != "[\n  0,\n  0\n]\n" {
		t.Errorf("$ENV and env are not empty: %q", out)
	}
	// An expression that fails on the output: exit 2, after what it printed.
	code, out, errOut := runBinary(t, bin, env, "", "query", "SELECT * FROM c", "-o", "ndjson", "--jq", ".id + 1")
	if lines := strings.Split(strings.TrimSpace(errOut), "\n"); code != ExitUsage || out != "" || !strings.HasPrefix(lines[len(lines)-1], "Error: --jq: cannot add") {
		t.Errorf("a failing expression → exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// A command that fails keeps its own exit code; stdout has what the expression made
	// of the result object.
	code, out, _ = runBinary(t, bin, env, "", "read", "nope", "--pk", "t1", "--jq", ".error.code")
	if code != ExitNotFound || out != "NotFound\n" {
		t.Errorf("read of a missing item --jq .error.code → exit %d %q", code, out)
	}
}

// Item 11: -o tsv is the table, tab-separated, for awk; --no-headers drops the header.
func TestTSVIsTheTableTabSeparated(t *testing.T) {
	_, env := formatsAccount(t)
	bin := cosmosctlBinary(t)
	code, out, errOut := runBinary(t, bin, env, "", "regions", "-o", "tsv")
	if code != 0 {
		t.Fatalf("regions -o tsv → %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	header := strings.Split(lines[0], "\t")
	if strings.Join(header, "|") != "REGION|ROLE|READ #|WRITE #|LATENCY|HEALTH|ENDPOINT|NOTE" || len(lines) != 4 {
		t.Fatalf("regions -o tsv:\n%s", out)
	}
	writeRegion := ""
	for _, l := range lines[1:] {
		cells := strings.Split(l, "\t")
		if len(cells) != len(header) {
			t.Fatalf("a row with %d fields, the header %d: %q", len(cells), len(header), l)
		}
		if cells[1] == "write" {
			writeRegion = cells[0] // "East US", one field though it has a space
		}
		if cells[1] == "read" && cells[3] != "" {
			t.Errorf("a read region's WRITE # is empty in TSV, not a dash: %q", l)
		}
	}
	if writeRegion != "East US" {
		t.Errorf("awk -F'\\t' '$2 == \"write\"' finds %q", writeRegion)
	}
	if strings.Contains(out, "reads go to") || !strings.Contains(errOut, "reads go to:") {
		t.Errorf("the lines under the table go to stderr under -o tsv: stdout %q stderr %q", out, errOut)
	}
	_, noHeaders, _ := runBinary(t, bin, env, "", "regions", "-o", "tsv", "--no-headers")
	if strings.Count(noHeaders, "\n") != 3 || strings.Contains(noHeaders, "REGION") {
		t.Errorf("--no-headers:\n%s", noHeaders)
	}
	// A value with a tab or a newline stays one field of one line.
	if r := cosmosctl(t, "{\"id\":\"tab\",\"pk\":\"t9\",\"note\":\"a\\tb\\nc\"}", "create", "-f", "-"); r.code != 0 {
		t.Fatal(r)
	}
	_, out, _ = runBinary(t, bin, env, "", "query", "SELECT c.id, c.note FROM c WHERE c.id = 'tab'", "-o", "tsv")
	if out != "id\tnote\ntab\ta\\tb\\nc\n" {
		t.Errorf("query -o tsv of a value with a tab and a newline: %q", out)
	}
}

// Item 13: -o is the format on every command; export's file is --output-file, and the
// --output FILE of before still works this release, with a warning; the emulator
// commands take -o table like every other (-o text still works, with a warning).
func TestTheFormatFlagMeansTheSameEverywhere(t *testing.T) {
	srv, env := formatsAccount(t)
	bin := cosmosctlBinary(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "items.ndjson")
	code, out, errOut := runBinary(t, bin, env, "", "export", "--output-file", file)
	if b, _ := os.ReadFile(file); code != 0 || out != "" || strings.Count(string(b), "\n") != 3 {
		t.Fatalf("export --output-file → %d, stdout %q, stderr %q, file %q", code, out, errOut, b)
	}
	old := filepath.Join(dir, "old.ndjson")
	code, out, errOut = runBinary(t, bin, env, "", "export", "--output", old)
	if b, _ := os.ReadFile(old); code != 0 || out != "" || strings.Count(string(b), "\n") != 3 ||
		!strings.Contains(errOut, "deprecated") || !strings.Contains(errOut, "--output-file "+old) {
		t.Fatalf("export --output FILE → %d, stdout %q, stderr %q, file %q", code, out, errOut, b)
	}
	if code, _, errOut := runBinary(t, bin, env, "", "export", "-o", "json"); code != ExitUsage || !strings.Contains(errOut, "--output must be ndjson") {
		t.Errorf("export -o json → %d %q", code, errOut)
	}
	if code, out, _ := runBinary(t, bin, env, "", "export", "-o", "ndjson"); code != 0 || strings.Count(out, "\n") != 3 {
		t.Errorf("export -o ndjson → %d %q", code, out)
	}

	ctl := func(args ...string) (int, string, string) {
		return runBinary(t, bin, env, "", append(args, "--endpoint", srv.Endpoint())...)
	}
	code, table, errOut := ctl("emulator", "status", "-o", "table")
	if code != 0 || !strings.Contains(table, "account") || errOut != "" {
		t.Fatalf("emulator status -o table → %d %q %q", code, table, errOut)
	}
	code, text, errOut := ctl("emulator", "status", "-o", "text")
	if code != 0 || text != table || !strings.Contains(errOut, "-o text is now -o table") {
		t.Errorf("emulator status -o text → %d, stderr %q; want the table and a deprecation warning", code, errOut)
	}
	code, out, _ = ctl("emulator", "status", "-o", "json")
	var st map[string]any
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil || st["replication_lag_ms"] != float64(0) {
		t.Errorf("emulator status -o json → %d %v: %s", code, err, out)
	}
	if code, _, errOut := ctl("emulator", "fault", "list", "-o", "yaml"); code != ExitUsage || !strings.Contains(errOut, "table, json or tsv") {
		t.Errorf("emulator fault list -o yaml → %d %q", code, errOut)
	}
	if code, out, _ := ctl("emulator", "fault", "list", "-o", "tsv"); code != 0 || !strings.HasPrefix(out, "ID\tREGION\t") {
		t.Errorf("emulator fault list -o tsv → %d %q", code, out)
	}
}

// Item 12: import's progress goes to stderr, as export's; stdout is its report, one object.
func TestImportProgressGoesToStderrAndItsReportToStdout(t *testing.T) {
	_, env := formatsAccount(t)
	bin := cosmosctlBinary(t)
	input := filepath.Join(t.TempDir(), "items.ndjson")
	var b strings.Builder
	for i := range 50 {
		b.WriteString(`{"id":"i` + string(rune('a'+i%26)) + strings.Repeat("x", i/26) + `","pk":"p"}` + "\n")
	}
	os.WriteFile(input, []byte(b.String()), 0o644)
	code, out, errOut := runBinary(t, bin, env, "", "import", input, "-o", "json", "--progress", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep["event"] != "report" || rep["created"] != float64(50) {
		t.Fatalf("stdout is not the report, one object: %v\n%s", err, out)
	}
	if _, ok := rep["throttled"]; !ok {
		t.Errorf("the report counts 429s as throttled, as export's does: %s", out)
	}
	events := jsonLines(t, "import --progress json (stderr)", errOut)
	if len(events) < 2 || events[0]["event"] != "progress" || events[len(events)-1]["event"] != "report" {
		t.Fatalf("stderr is not progress events then the report:\n%s", errOut)
	}
	for _, e := range events[:len(events)-1] {
		if _, ok := e["elapsed_ms"]; e["event"] != "progress" || !ok {
			t.Errorf("a progress event: %v", e)
		}
	}
	// Without --progress, off a terminal: the report alone, nothing on stderr.
	code, out, errOut = runBinary(t, bin, env, "", "import", input, "-o", "json", "--mode", "upsert")
	if code != 0 || errOut != "" || json.Unmarshal([]byte(out), &rep) != nil || rep["updated"] != float64(50) {
		t.Fatalf("import -o json → %d, stderr %q, stdout %s", code, errOut, out)
	}
}
