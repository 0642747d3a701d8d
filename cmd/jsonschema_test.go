package cmd

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/spf13/cobra"
)

// schemaDir is docs/json, where `go generate` writes each command's JSON schema.
var schemaDir = filepath.Join("..", "docs", "json")

var (
	schemasOnce sync.Once
	schemas     map[string]*jsonschema.Schema
	schemasErr  error
)

// schemaFor compiles docs/json/NAME.schema.json (all of them, once).
func schemaFor(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	schemasOnce.Do(func() {
		schemas = map[string]*jsonschema.Schema{}
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		for _, out := range JSONOutputs() {
			path, err := filepath.Abs(filepath.Join(schemaDir, out.Name+".schema.json"))
			if err != nil {
				schemasErr = err
				return
			}
			s, err := c.Compile(path)
			if err != nil {
				schemasErr = err
				return
			}
			schemas[out.Name] = s
		}
	})
	if schemasErr != nil {
		t.Fatalf("compiling the schemas of docs/json (go generate ./... writes them): %v", schemasErr)
	}
	s, ok := schemas[name]
	if !ok {
		t.Fatalf("no schema %s in cmd.JSONOutputs", name)
	}
	return s
}

// validate holds out to docs/json/NAME.schema.json: the one JSON value, or with lines
// every line.
func validate(t *testing.T, name string, out string, lines bool) {
	t.Helper()
	s := schemaFor(t, name)
	values := []string{out}
	if lines {
		values = nil
		sc := bufio.NewScanner(strings.NewReader(out))
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			values = append(values, sc.Text())
		}
	}
	if len(values) == 0 || strings.TrimSpace(out) == "" {
		t.Fatalf("%s printed nothing to validate", name)
	}
	for _, v := range values {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(v))
		if err != nil {
			t.Fatalf("%s printed what is not JSON: %v\n%s", name, err, v)
		}
		if err := s.Validate(inst); err != nil {
			t.Errorf("%s printed what docs/json/%s.schema.json does not allow: %v\n%s", name, name, err, v)
		}
	}
}

// TestEveryCommandWithJSONOutputHasASchema: a command that takes -o json, or prints JSON
// with --progress json, is in JSONOutputs (and so has a schema in docs/json), and every
// schema is of a command that exists.
func TestEveryCommandWithJSONOutputHasASchema(t *testing.T) {
	names := map[string]bool{}
	for _, out := range JSONOutputs() {
		names[out.Name] = true
		if _, err := os.Stat(filepath.Join(schemaDir, out.Name+".schema.json")); err != nil {
			t.Errorf("%s: %v (go generate ./... writes it)", out.Name, err)
		}
	}
	io, _, _ := testIO()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		name := strings.ReplaceAll(strings.TrimPrefix(c.CommandPath(), "cosmosctl "), " ", "-")
		if f := c.Flags().Lookup("output"); f != nil {
			formats := f.Annotations[formatsAnnotation]
			if (slices.Contains(formats, "json") || slices.Contains(formats, "ndjson")) && !names[name] &&
				name != "emulator-fault-remove" && name != "emulator-fault-clear" {
				t.Errorf("%s prints JSON (-o %v) but has no schema: add it to cmd.JSONOutputs", c.CommandPath(), formats)
			}
			if c.Flags().Lookup("jq") == nil {
				t.Errorf("%s takes -o but not --jq", c.CommandPath())
			}
		}
		if c.Flags().Lookup("progress") != nil && !names[name+".progress"] {
			t.Errorf("%s --progress json has no schema: add %s.progress to cmd.JSONOutputs", c.CommandPath(), name)
		}
	}
	walk(NewRootCmd(io))
}

// TestEveryCommandsJSONMatchesItsSchema runs every command that prints JSON against the
// emulator and holds what it printed to its schema in docs/json.
func TestEveryCommandsJSONMatchesItsSchema(t *testing.T) {
	testAccount(t)
	dir := t.TempDir()
	run := func(stdin string, args ...string) runResult {
		t.Helper()
		r := cosmosctl(t, stdin, args...)
		if r.code != 0 {
			t.Fatalf("cosmosctl %s → exit %d\nstdout %s\nstderr %s", strings.Join(args, " "), r.code, r.out, r.errOut)
		}
		return r
	}
	check := func(name string, lines bool, stdin string, args ...string) {
		t.Helper()
		validate(t, name, run(stdin, args...).out, lines)
	}

	// Item commands, success and a 404's result object.
	check("create", false, `{"id":"o1","pk":"t1","total":42,"note":"<b>&</b>"}`, "create", "-f", "-", "-o", "json")
	check("upsert", false, `{"id":"o2","pk":"t2","total":7}`, "upsert", "-f", "-", "-o", "json")
	check("read", false, "", "read", "o1", "--pk", "t1", "-o", "json")
	check("replace", false, `{"id":"o2","pk":"t2","total":8}`, "replace", "o2", "-f", "-", "-o", "json")
	check("patch", false, "", "patch", "o2", "--pk", "t2", "--op", "incr /total=1", "-o", "json")
	missing := cosmosctl(t, "", "read", "nope", "--pk", "t1", "-o", "json")
	if missing.code != ExitNotFound {
		t.Fatalf("read of a missing item → %d", missing.code)
	}
	validate(t, "read", missing.out, false)
	run(`{"id":"o9","pk":"t9"}`, "upsert", "-f", "-")
	check("delete.partition", false, "", "delete", "--partition-key-value", "t9", "--dry-run", "-o", "json")
	check("delete.partition", false, "", "delete", "--partition-key-value", "t9", "--mode", "query", "--yes", "-o", "json")
	check("delete.partition", false, "", "delete", "--partition-key-value", "t9", "--yes", "-o", "json")

	// Queries, the change feed, import, export.
	check("query", false, "", "query", "SELECT * FROM c", "-o", "json")
	check("query", false, "", "query", "SELECT * FROM c", "--max-items", "1", "-o", "json") // with a continuation
	check("query.ndjson", true, "", "query", "SELECT * FROM c", "-o", "ndjson")
	check("query.explain", false, "", "query", "SELECT * FROM c WHERE c.total > 1", "--explain", "-o", "json")
	check("changes", true, "", "changes", "-o", "json")
	input := filepath.Join(dir, "items.ndjson")
	os.WriteFile(input, []byte("{\"id\":\"i1\",\"pk\":\"p\"}\n{\"id\":\"i2\",\"pk\":\"p\"}\n"), 0o644)
	imp := run("", "import", input, "-o", "json", "--progress", "json", "--state", filepath.Join(dir, "items.state"))
	validate(t, "import", imp.out, false)
	validate(t, "import.progress", imp.errOut, true)
	bad := filepath.Join(dir, "bad.ndjson")
	os.WriteFile(bad, []byte("{\"id\":\"i3\",\"pk\":\"p\"}\nnot json\n"), 0o644)
	rejected := cosmosctl(t, "", "import", bad, "-o", "json")
	if rejected.code != ExitPartial {
		t.Fatalf("import of a bad line → %d", rejected.code)
	}
	validate(t, "import", rejected.out, false)
	// --diagnostics=json events of each kind.
	validate(t, "diagnostics", run("", "read", "o1", "--pk", "t1", "--diagnostics=json").errOut, true)
	validate(t, "diagnostics", run("", "query", "SELECT * FROM c", "-o", "ndjson", "--diagnostics=json").errOut, true)
	validate(t, "diagnostics", run("", "changes", "--diagnostics=json").errOut, true)
	validate(t, "diagnostics", run("", "import", input, "--progress", "off", "--diagnostics=json").errOut, true)
	exp := run("", "export", "--progress", "json")
	validate(t, "export", exp.out, true)
	validate(t, "export.progress", exp.errOut, true)
	out := filepath.Join(dir, "out.ndjson")
	exp = run("", "export", "--progress", "json", "--output-file", out, "--state", filepath.Join(dir, "out.state"))
	validate(t, "export.progress", exp.errOut, true)

	// Databases, containers, throughput.
	check("db-ls", false, "", "db", "ls", "-o", "json")
	check("db-show", false, "", "db", "show", "app", "-o", "json")
	check("db-create", false, "", "db", "create", "shared", "--throughput", "400", "-o", "json")
	check("container-ls", false, "", "container", "ls", "-o", "json")
	check("container-create", false, "", "container", "create", "events", "--partition-key", "/tenant", "-o", "json")
	check("container-show", false, "", "container", "show", "events", "-o", "json")
	check("container-set-indexing-policy", false, `{"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/total/?"}]}`, "container", "set-indexing-policy", "-", "-o", "json")
	check("query.explain", false, "", "query", "SELECT * FROM c WHERE c.total > 1", "--explain", "-o", "json") // a scan and a proposal
	check("throughput-show", false, "", "throughput", "show", "items", "-o", "json")
	check("throughput-set", false, "", "throughput", "set", "items", "--throughput", "500", "-o", "json")
	check("container-delete", false, "", "container", "delete", "events", "--yes", "-o", "json")
	check("db-delete", false, "", "db", "delete", "shared", "--yes", "-o", "json")

	// Where things are, and how the regions are.
	check("locate", false, "", "locate", "--pk", "t1", "-o", "json")
	check("locate", false, "", "locate", "--pk", "t1", "--connection-mode", "direct", "-o", "json")
	check("skew", false, "", "skew", "-o", "json")
	check("skew", false, "", "skew", "--sample", "200ms", "--query", "SELECT * FROM c", "--concurrency", "1", "-o", "json")
	check("skew", false, "{\"id\":\"o1\",\"pk\":\"t1\"}\n", "skew", "--sample", "200ms", "--ids", "-", "--concurrency", "1", "-o", "json")
	check("regions", false, "", "regions", "-o", "json")
	check("regions", false, "", "regions", "--no-latency", "-o", "json")
	check("health", false, "", "health", "-o", "json")
	check("health-reset", false, "", "health", "reset", "--all", "-o", "json")
	check("probe", true, "", "probe", "--count", "4", "-o", "json")
	check("hedge-test", false, "", "hedge-test", "--count", "20", "--strategies", "none,fanout", "-o", "json")

	// Configuration and the build.
	check("config-show", false, "", "config", "show", "-o", "json")
	run("", "config", "set", "--profile", "prod", "endpoint", "https://prod.documents.azure.com:443/")
	check("config-list", false, "", "config", "list", "-o", "json")
	check("version", false, "", "version", "-o", "json")

	// Failures: one object under -o json, one line in a stream.
	usage := cosmosctl(t, "", "read", "o1", "-o", "json")
	if usage.code != ExitUsage || strings.Count(usage.out, "\n") < 2 {
		t.Fatalf("read without --pk -o json → %d %q", usage.code, usage.out)
	}
	validate(t, "failure", usage.out, false)
	line := cosmosctl(t, "", "query", "SELECT * FROM c", "--max-items", "0", "-o", "ndjson")
	if line.code != ExitUsage || strings.Count(line.out, "\n") != 1 {
		t.Fatalf("query --max-items 0 -o ndjson → %d %q", line.code, line.out)
	}
	validate(t, "failure", line.out, true)
}

// TestEmulatorCommandsJSONMatchesItsSchema: the same for `cosmosctl emulator` and its
// control commands.
func TestEmulatorCommandsJSONMatchesItsSchema(t *testing.T) {
	isolate(t)
	out, _ := runEmulatorPrinted(t, "-o", "json")
	validate(t, "emulator", out, false)
	var printed struct {
		Endpoint string `json:"endpoint"`
	}
	if err := json.Unmarshal([]byte(out), &printed); err != nil {
		t.Fatal(err)
	}
	check := func(name string, args ...string) {
		t.Helper()
		code, out, errOut := runControl(printed.Endpoint, append(args, "-o", "json")...)
		if code != 0 {
			t.Fatalf("%v → %d: %s", args, code, errOut)
		}
		validate(t, name, out, false)
	}
	check("emulator-fault-add", "emulator", "fault", "add", "--region", "East US", "--op", "reads", "--effect", "status", "--status", "429", "--after", "1h", "--for", "1m", "--count", "3")
	check("emulator-fault-add", "emulator", "fault", "add", "--effect", "delay", "--delay", "5ms", "--probability", "0.5", "--after", "1h")
	check("emulator-fault-list", "emulator", "fault", "list")
	check("emulator-latency", "emulator", "latency", "--region", "West US", "--fixed", "70ms")
	check("emulator-latency", "emulator", "latency", "--op", "writes", "--min", "5ms", "--max", "10ms")
	check("emulator-status", "emulator", "status")
	check("emulator-replication", "emulator", "replication", "--lag", "20ms")
	check("emulator-enforce-throughput", "emulator", "enforce-throughput", "on")
	check("emulator-failover", "emulator", "failover", "West US")
	check("emulator-split", "emulator", "split", "1")
	check("emulator-merge", "emulator", "merge", "2", "3")
	if code, _, errOut := runControl(printed.Endpoint, "emulator", "fault", "clear"); code != 0 {
		t.Fatal(errOut)
	}
	check("emulator-fault-list", "emulator", "fault", "list")
}
