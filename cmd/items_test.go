package cmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

type runResult struct {
	code        int
	out, errOut string
}

// cosmosctl runs one invocation in-process with stdin.
func cosmosctl(t *testing.T, stdin string, args ...string) runResult {
	t.Helper()
	io, out, errOut := testIO()
	io.In = strings.NewReader(stdin)
	code := Run(context.Background(), io, args)
	return runResult{code, out.String(), errOut.String()}
}

func TestItemCommandsEndToEnd(t *testing.T) {
	testAccount(t)
	r := cosmosctl(t, `{"id":"o1","pk":"t1","total":42}`, "create", "-f", "-")
	if r.code != 0 || !strings.Contains(r.out, `"total":42`) {
		t.Fatalf("create: %+v", r)
	}
	if r.errOut != "" {
		t.Fatalf("a successful command with stderr not a terminal prints nothing there: %q", r.errOut)
	}
	steps := []struct {
		name  string
		stdin string
		args  []string
		code  int
		out   string
	}{
		{"read", "", []string{"read", "o1", "--pk", "t1"}, ExitOK, `"total":42`},
		{"create again is a conflict", `{"id":"o1","pk":"t1"}`, []string{"create", "-f", "-"}, ExitConflict, ""},
		{"upsert replaces", `{"id":"o1","pk":"t1","total":43}`, []string{"upsert", "-f", "-"}, ExitOK, `"total":43`},
		{"replace with a stale etag", `{"id":"o1","pk":"t1","total":44}`, []string{"replace", "o1", "-f", "-", "--if-match", `"stale"`}, ExitConflict, ""},
		{"replace", `{"id":"o1","pk":"t1","total":44}`, []string{"replace", "o1", "-f", "-"}, ExitOK, `"total":44`},
		{"patch", "", []string{"patch", "o1", "--pk", "t1", "--op", "incr /total=1", "--op", `set /status="shipped"`}, ExitOK, `"status":"shipped"`},
		{"patch whose condition fails", "", []string{"patch", "o1", "--pk", "t1", "--op", "set /x=1", "--condition", "from c where c.total = 1"}, ExitConflict, ""},
		{"delete", "", []string{"delete", "o1", "--pk", "t1"}, ExitOK, ""},
		{"read after delete", "", []string{"read", "o1", "--pk", "t1"}, ExitNotFound, ""},
		{"delete again", "", []string{"delete", "o1", "--pk", "t1"}, ExitNotFound, ""},
	}
	for _, s := range steps {
		r := cosmosctl(t, s.stdin, s.args...)
		if r.code != s.code || !strings.Contains(r.out, s.out) {
			t.Fatalf("%s: exit %d (want %d)\nstdout %q\nstderr %q", s.name, r.code, s.code, r.out, r.errOut)
		}
		if s.code != 0 && (r.out != "" || strings.Count(strings.TrimSpace(r.errOut), "\n") != 0 || !strings.HasPrefix(r.errOut, "Error: ")) {
			t.Fatalf("%s: a failure prints one line on stderr and nothing on stdout: %+v", s.name, r)
		}
	}
}

func TestWritesTakeThePartitionKeyFromTheDocumentAndFiles(t *testing.T) {
	testAccount(t)
	path := filepath.Join(t.TempDir(), "doc.json")
	os.WriteFile(path, []byte("{\"id\":\"f1\",\"pk\":\"from-file\"}\n"), 0o600)
	if r := cosmosctl(t, "", "create", "-f", path); r.code != 0 {
		t.Fatalf("create from file: %+v", r)
	}
	if r := cosmosctl(t, "", "read", "f1", "--pk", "from-file"); r.code != 0 {
		t.Fatalf("read: %+v", r)
	}
}

func TestHierarchicalPartitionKeyCommands(t *testing.T) {
	testAccount(t, func(c *emulator.Config) {
		c.Databases = []emulator.DatabaseConfig{{ID: "app", Containers: []emulator.ContainerConfig{{ID: "items", PartitionKey: []string{"/tenant", "/user"}}}}}
	})
	if r := cosmosctl(t, `{"id":"h1","tenant":"acme","user":7}`, "create", "-f", "-"); r.code != 0 {
		t.Fatalf("create: %+v", r)
	}
	if r := cosmosctl(t, "", "read", "h1", "--pk", `["acme",7]`); r.code != 0 {
		t.Fatalf("read: %+v", r)
	}
	if r := cosmosctl(t, "", "read", "h1", "--pk", `["acme",8]`); r.code != ExitNotFound {
		t.Fatalf("read with another user: %+v", r)
	}
}

// volatile matches the parts of a JSON result that change from run to run.
var volatile = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`"(activity_id|session_token|etag|_etag|_rid|_self|endpoint)": "(\\"|[^"])*"`), `"$1": "…"`},
	{regexp.MustCompile(`"(start_ms|duration_ms|server_duration_ms|network_ms|waited_ms|_ts|latency_ms)": [0-9.e+-]+`), `"$1": 0`},
	{regexp.MustCompile(`"_ts":[0-9]+`), `"_ts":0`},
	{regexp.MustCompile(`ActivityId: [0-9a-fA-F-]{36}`), `ActivityId: …`}, // in a service_message
}

func normalise(s string) string {
	for _, v := range volatile {
		s = v.re.ReplaceAllString(s, v.repl)
	}
	return s
}

func TestJSONOutputMatchesGoldenFiles(t *testing.T) {
	srv := testAccount(t)
	cosmosctl(t, `{"id":"g1","pk":"t1","name":"golden","tags":["b","a"]}`, "create", "-f", "-")
	cases := []struct {
		golden string
		fault  *faults.Rule
		args   []string
		code   int
	}{
		{"read_failover.json", &faults.Rule{Region: "East US", Operations: []string{"read"}, Effect: "status", Status: 503, Count: 1}, []string{"read", "g1", "--pk", "t1", "-o", "json"}, ExitOK},
		{"read_not_found.json", nil, []string{"read", "nope", "--pk", "t1", "-o", "json", "--exclude", "North Europe"}, ExitNotFound},
		{"delete.json", nil, []string{"delete", "g1", "--pk", "t1", "-o", "json"}, ExitOK},
	}
	for _, tc := range cases {
		t.Run(tc.golden, func(t *testing.T) {
			if tc.fault != nil {
				r, err := srv.AddFault(*tc.fault)
				if err != nil {
					t.Fatal(err)
				}
				defer srv.Faults().Remove(r.ID)
			}
			r := cosmosctl(t, "", tc.args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d: %s", r.code, tc.code, r.errOut)
			}
			if !json.Valid([]byte(r.out)) {
				t.Fatalf("stdout is not one JSON document: %q", r.out)
			}
			compareGolden(t, filepath.Join("testdata", tc.golden), normalise(r.out))
		})
	}
}

func TestExitCodes(t *testing.T) {
	srv := testAccount(t)
	cosmosctl(t, `{"id":"x","pk":"p"}`, "create", "-f", "-")
	wrongKey := filepath.Join(t.TempDir(), "wrong.key")
	os.WriteFile(wrongKey, []byte("dsZQi3KtZmCv1ljt3VNWNm7sQUF1y5rJfC6kv5JiwvW0EndXdDku/dkKBp8/ufDToSxLzR4y+O/0H/t4bQtVNw=="), 0o600)
	cases := []struct {
		name  string
		fault *faults.Rule
		args  []string
		env   map[string]string
		want  int
	}{
		{"success", nil, []string{"read", "x", "--pk", "p"}, nil, ExitOK},
		{"not found", nil, []string{"read", "y", "--pk", "p"}, nil, ExitNotFound},
		{"conflict", nil, []string{"create", "-f", "-"}, nil, ExitConflict},
		{"throttled", &faults.Rule{Operations: []string{"read"}, Effect: "status", Status: 429, RetryAfter: faults.Duration(time.Millisecond)}, []string{"read", "x", "--pk", "p"}, nil, ExitThrottled},
		{"timeout", &faults.Rule{Operations: []string{"read"}, Effect: "hang"}, []string{"read", "x", "--pk", "p", "--e2e-timeout", "300ms"}, nil, ExitTimeout},
		{"auth", nil, []string{"read", "x", "--pk", "p", "--key-file", wrongKey}, map[string]string{"COSMOSCTL_KEY": ""}, ExitAuth},
		{"unavailable", &faults.Rule{Operations: []string{"read"}, Effect: "status", Status: 503}, []string{"read", "x", "--pk", "p"}, nil, ExitUnavailable},
		{"region down everywhere", &faults.Rule{Operations: []string{"read"}, Effect: "refuse"}, []string{"read", "x", "--pk", "p"}, nil, ExitUnavailable},
		{"usage", nil, []string{"read", "x"}, nil, ExitUsage},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			if tc.fault != nil {
				r, err := srv.AddFault(*tc.fault)
				if err != nil {
					t.Fatal(err)
				}
				defer srv.Faults().Remove(r.ID)
			}
			r := cosmosctl(t, `{"id":"x","pk":"p"}`, tc.args...)
			if r.code != tc.want {
				t.Fatalf("exit %d, want %d: %s", r.code, tc.want, r.errOut)
			}
		})
	}
}

func TestTimeoutShowsEachAttemptsStateInTheDiagnostics(t *testing.T) {
	srv := testAccount(t)
	cosmosctl(t, `{"id":"x","pk":"p"}`, "create", "-f", "-")
	srv.AddFault(faults.Rule{Operations: []string{"read"}, Effect: "hang"})
	r := cosmosctl(t, "", "read", "x", "--pk", "p", "--e2e-timeout", "200ms", "-o", "json")
	if r.code != ExitTimeout {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	var got struct {
		Error       struct{ Kind string }
		Diagnostics struct {
			TimedOut bool `json:"timed_out"`
			Attempts []struct{ Outcome, Error string }
		}
	}
	if err := json.Unmarshal([]byte(r.out), &got); err != nil {
		t.Fatal(err)
	}
	// Every region hangs: the first two attempts get half of what is left each and
	// expire (a region remained to fail over to), the last is cut by the end-to-end
	// timeout.
	as := got.Diagnostics.Attempts
	if got.Error.Kind != "timeout" || !got.Diagnostics.TimedOut || len(as) != 3 || as[2].Outcome != "cancelled" ||
		as[0].Outcome != "failed" || !strings.Contains(as[0].Error, "no answer within the attempt timeout") {
		t.Fatalf("timeout result %+v", got)
	}
}

func TestBadInputIsOneLineAndExitCode2(t *testing.T) {
	testAccount(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"id": "x", "pk": `), 0o600)
	noID := filepath.Join(dir, "noid.json")
	os.WriteFile(noID, []byte(`{"pk":"p"}`), 0o600)
	cases := []struct {
		name  string
		stdin string
		args  []string
		msg   string
	}{
		{"missing file", "", []string{"create", "-f", filepath.Join(dir, "missing.json")}, "does not exist"},
		{"no file flag", "", []string{"create"}, "-f FILE"},
		{"malformed JSON", "", []string{"create", "-f", bad}, "not valid JSON"},
		{"document without id", "", []string{"create", "-f", noID}, `no "id"`},
		{"empty stdin", "", []string{"create", "-f", "-"}, "empty"},
		{"read without a partition key", "", []string{"read", "x"}, "--pk"},
		{"unknown excluded region", "", []string{"read", "x", "--pk", "p", "--exclude", "Moon Base"}, "East US"},
		{"unknown pinned region", "", []string{"read", "x", "--pk", "p", "--region", "Moon Base"}, "East US"},
		{"unknown preferred region", "", []string{"read", "x", "--pk", "p", "--preferred-regions", "Moon Base"}, "East US"},
		{"negative timeout", "", []string{"read", "x", "--pk", "p", "--e2e-timeout", "-1s"}, "negative"},
		{"bad duration", "", []string{"read", "x", "--pk", "p", "--e2e-timeout", "soon"}, "e2e-timeout"},
		{"unknown profile", "", []string{"read", "x", "--pk", "p", "--profile", "nope"}, "nope"},
		{"bad output", "", []string{"read", "x", "--pk", "p", "-o", "yaml"}, "table or json"},
		{"id argument and document differ", `{"id":"a","pk":"p"}`, []string{"replace", "b", "-f", "-"}, "does not match"},
		{"missing key file", "", []string{"read", "x", "--pk", "p", "--key-file", filepath.Join(dir, "nokey")}, "nokey"},
		{"unknown patch op", "", []string{"patch", "x", "--pk", "p", "--op", "frob /a=1"}, "frob"},
		{"wrong argument count", "", []string{"read"}, "item id"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := cosmosctl(t, tc.stdin, tc.args...)
			if r.code != ExitUsage || !strings.Contains(r.errOut, tc.msg) {
				t.Fatalf("exit %d, stderr %q; want %d mentioning %q", r.code, r.errOut, ExitUsage, tc.msg)
			}
			if lines := strings.Count(strings.TrimSpace(r.errOut), "\n"); lines != 0 || strings.Contains(r.errOut, "goroutine") {
				t.Fatalf("bad input must get one line, got %q", r.errOut)
			}
		})
	}
}

func TestSettingsPrecedenceFlagEnvProfileDefault(t *testing.T) {
	srv := testAccount(t)
	for _, db := range []string{"fromflag", "fromenv", "fromprofile"} {
		ctl := newRaw(t, srv)
		ctl(`POST`, "/dbs", `{"id":"`+db+`"}`)
		ctl(`POST`, "/dbs/"+db+"/colls", `{"id":"items","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}`)
	}
	cfg := os.Getenv("COSMOSCTL_CONFIG")
	os.WriteFile(cfg, []byte("default_profile = \"p\"\n[profiles.p]\ndatabase = \"fromprofile\"\ncontainer = \"items\"\ne2e_timeout = \"7s\"\n"), 0o600)
	dbOf := func(args ...string) (string, float64) {
		t.Helper()
		r := cosmosctl(t, "", append([]string{"read", "none", "--pk", "p", "-o", "json"}, args...)...)
		var got struct {
			Diagnostics struct {
				Database     string
				E2ETimeoutMs float64 `json:"e2e_timeout_ms"`
			}
		}
		if err := json.Unmarshal([]byte(r.out), &got); err != nil {
			t.Fatalf("%v: %q %q", err, r.out, r.errOut)
		}
		return got.Diagnostics.Database, got.Diagnostics.E2ETimeoutMs
	}
	t.Setenv("COSMOSCTL_DATABASE", "")
	os.Unsetenv("COSMOSCTL_DATABASE")
	if db, to := dbOf(); db != "fromprofile" || to != 7000 {
		t.Fatalf("profile level: database %s timeout %v", db, to)
	}
	t.Setenv("COSMOSCTL_DATABASE", "fromenv")
	t.Setenv("COSMOSCTL_E2E_TIMEOUT", "3s")
	if db, to := dbOf(); db != "fromenv" || to != 3000 {
		t.Fatalf("env beats profile: database %s timeout %v", db, to)
	}
	if db, to := dbOf("--database", "fromflag", "--e2e-timeout", "1s"); db != "fromflag" || to != 1000 {
		t.Fatalf("flag beats env: database %s timeout %v", db, to)
	}
}

func TestEmbeddedEmulatorWhenNothingIsConfigured(t *testing.T) {
	isolate(t)
	r := cosmosctl(t, `{"id":"e1","pk":"t"}`, "create", "-f", "-")
	if r.code != 0 {
		t.Fatalf("create: %+v", r)
	}
	if strings.Count(r.errOut, "embedded emulator") != 1 {
		t.Fatalf("the embedded emulator is announced once on stderr: %q", r.errOut)
	}
	// A second, separate invocation finds the item: the data persists.
	r = cosmosctl(t, "", "read", "e1", "--pk", "t")
	if r.code != 0 || !strings.Contains(r.out, `"e1"`) {
		t.Fatalf("read in a second invocation: %+v", r)
	}
	// --ephemeral starts empty and leaves nothing behind.
	if r := cosmosctl(t, "", "read", "e1", "--pk", "t", "--ephemeral"); r.code != ExitNotFound {
		t.Fatalf("ephemeral read: %+v", r)
	}
}

func TestExcludeAndRegionPinTheReadAndTheDiagnosticsSayWhy(t *testing.T) {
	testAccount(t)
	cosmosctl(t, `{"id":"x","pk":"p"}`, "create", "-f", "-")
	regionOf := func(args ...string) (string, []string, string) {
		t.Helper()
		r := cosmosctl(t, "", append([]string{"read", "x", "--pk", "p", "-o", "json"}, args...)...)
		var got struct {
			Diagnostics struct {
				WinningRegion    string   `json:"winning_region"`
				EffectiveRegions []string `json:"effective_regions"`
				Regions          []struct{ Region, Note string }
			}
		}
		if err := json.Unmarshal([]byte(r.out), &got); err != nil {
			t.Fatalf("%v: %s", err, r.errOut)
		}
		notes := ""
		for _, n := range got.Diagnostics.Regions {
			notes += n.Region + ": " + n.Note + "; "
		}
		return got.Diagnostics.WinningRegion, got.Diagnostics.EffectiveRegions, notes
	}
	if w, eff, notes := regionOf("--exclude", "east us"); w != "West US" || strings.Join(eff, ",") != "West US,North Europe" || !strings.Contains(notes, "East US: excluded") {
		t.Fatalf("--exclude: winner %s, effective %v, notes %s", w, eff, notes)
	}
	if w, eff, _ := regionOf("--region", "North Europe"); w != "North Europe" || len(eff) != 1 {
		t.Fatalf("--region: winner %s, effective %v", w, eff)
	}
	if w, _, _ := regionOf("--exclude", "East US,West US"); w != "North Europe" {
		t.Fatalf("comma-separated --exclude: winner %s", w)
	}
}

func TestDiagnosticsTableOnRequest(t *testing.T) {
	testAccount(t)
	cosmosctl(t, `{"id":"x","pk":"p"}`, "create", "-f", "-")
	r := cosmosctl(t, "", "read", "x", "--pk", "p", "--diagnostics")
	if r.code != 0 || !strings.Contains(r.errOut, "East US") || !strings.Contains(r.errOut, "won") || strings.Contains(r.errOut, "\x1b[") {
		t.Fatalf("--diagnostics on a non-terminal: %q", r.errOut)
	}
	if !strings.HasPrefix(r.out, "{") || strings.Contains(r.out, "REGION") {
		t.Fatalf("stdout carries the item only: %q", r.out)
	}
}
