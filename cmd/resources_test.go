package cmd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator/faults"
	"github.com/cosmosctl/cosmosctl/output"
)

// cosmosctlTTY runs a command with stdin a terminal that answers answer.
func cosmosctlTTY(t *testing.T, answer string, args ...string) runResult {
	t.Helper()
	io, out, errOut := testIO()
	io.In, io.InTTY = strings.NewReader(answer), true
	code := Run(context.Background(), io, args)
	return runResult{code, out.String(), errOut.String()}
}

func decode[T any](t *testing.T, r runResult) T {
	t.Helper()
	var v T
	if r.code != 0 {
		t.Fatalf("exit %d: %s %s", r.code, r.out, r.errOut)
	}
	if err := json.Unmarshal([]byte(r.out), &v); err != nil {
		t.Fatalf("stdout %q: %v", r.out, err)
	}
	return v
}

func TestDatabaseCommands(t *testing.T) {
	testAccount(t)
	if r := cosmosctl(t, "", "db", "create", "shared", "--autoscale-max", "4000"); r.code != 0 || !strings.Contains(r.out, "shared") {
		t.Fatalf("create: %+v", r)
	}
	if r := cosmosctl(t, "", "db", "create", "shared"); r.code != ExitConflict || !strings.Contains(r.errOut, `database shared already exists`) {
		t.Fatalf("create again: %+v", r)
	}
	dbs := decode[[]output.DatabaseInfo](t, cosmosctl(t, "", "db", "ls", "-o", "json"))
	got := map[string]string{}
	for _, d := range dbs {
		got[d.ID] = d.Throughput.Mode
	}
	if got["app"] != "none" || got["shared"] != "autoscale" || len(got) != 2 {
		t.Fatalf("ls: %+v", dbs)
	}
	if r := cosmosctl(t, "", "db", "ls"); r.code != 0 || !strings.Contains(r.out, "autoscale 400–4000 RU/s") {
		t.Fatalf("ls table: %+v", r)
	}
	d := decode[output.DatabaseInfo](t, cosmosctl(t, "", "db", "show", "-o", "json"))
	if d.ID != "app" {
		t.Fatalf("show defaults to the profile's database: %+v", d)
	}
	if r := cosmosctl(t, "", "db", "show", "nope"); r.code != ExitNotFound || !strings.Contains(r.errOut, `database "nope" does not exist`) {
		t.Fatalf("show missing: %+v", r)
	}
	r := cosmosctl(t, "", "db", "delete", "shared")
	if r.code != ExitUsage || strings.Count(strings.TrimSpace(r.errOut), "\n") != 0 || !strings.Contains(r.errOut, "--yes") {
		t.Fatalf("delete without a terminal or --yes: %+v", r)
	}
	if r := cosmosctlTTY(t, "no\n", "db", "delete", "shared"); r.code != ExitUsage || !strings.Contains(r.errOut, "Type \"shared\" to confirm") {
		t.Fatalf("delete answered wrongly: %+v", r)
	}
	if r := cosmosctlTTY(t, "shared\n", "db", "delete", "shared"); r.code != 0 {
		t.Fatalf("delete confirmed: %+v", r)
	}
	if r := cosmosctl(t, "", "db", "delete", "shared", "--yes"); r.code != ExitNotFound {
		t.Fatalf("delete of a deleted database: %+v", r)
	}
	if r := cosmosctl(t, "", "db", "create", "tmp"); r.code != 0 {
		t.Fatal(r)
	}
	if r := cosmosctl(t, "", "db", "delete", "tmp", "--yes", "-o", "json"); r.code != 0 || !strings.Contains(r.out, `"deleted": "database"`) {
		t.Fatalf("delete --yes: %+v", r)
	}
}

func TestContainerCommands(t *testing.T) {
	testAccount(t)
	r := cosmosctl(t, "", "container", "create", "events", "--partition-key", "/tenant,/user", "--throughput", "600", "--ttl", "24h", "-o", "json")
	c := decode[output.ContainerInfo](t, r)
	if c.PartitionKeyKind != "MultiHash" || len(c.PartitionKeyPaths) != 2 || c.PartitionKeyVersion != 2 {
		t.Fatalf("create: %+v", c)
	}
	if c.DefaultTTLSeconds == nil || *c.DefaultTTLSeconds != 86400 || strings.Contains(r.errOut, "did not keep") {
		t.Fatalf("create --ttl 24h: default TTL %v, stderr %q; want 86400 s kept and no warning", c.DefaultTTLSeconds, r.errOut)
	}
	if r := cosmosctl(t, "", "container", "show", "events"); r.code != 0 || !strings.Contains(r.out, "86400s") {
		t.Fatalf("show a container with a default TTL: %+v", r)
	}
	for _, bad := range []string{"0", "1.5s", "soon"} {
		if r := cosmosctl(t, "", "container", "create", "bad", "--partition-key", "/a", "--ttl", bad); r.code != ExitUsage || !strings.Contains(r.errOut, "--ttl must be") {
			t.Fatalf("--ttl %s: %+v", bad, r)
		}
	}
	if r := cosmosctl(t, "", "container", "create", "events", "--partition-key", "/tenant"); r.code != ExitConflict {
		t.Fatalf("create again: %+v", r)
	}
	if r := cosmosctl(t, "", "container", "create", "bad", "--partition-key", "tenant"); r.code != ExitUsage || !strings.Contains(r.errOut, "must start with /") {
		t.Fatalf("bad key path: %+v", r)
	}
	if r := cosmosctl(t, "", "container", "create", "bad", "--partition-key", "/a", "--throughput", "400", "--autoscale-max", "4000"); r.code != ExitUsage {
		t.Fatalf("both throughputs: %+v", r)
	}
	ls := decode[[]output.ContainerInfo](t, cosmosctl(t, "", "container", "ls", "-o", "json"))
	if len(ls) != 2 {
		t.Fatalf("ls: %+v", ls)
	}
	show := decode[output.ContainerInfo](t, cosmosctl(t, "", "container", "show", "events", "-o", "json"))
	if show.PartitionKeyRanges == nil || *show.PartitionKeyRanges < 1 || show.Throughput == nil || show.Throughput.Mode != "manual" ||
		show.Throughput.RUPerSecond != 600 || show.Indexing == "" || show.ConflictResolution == "" {
		t.Fatalf("show: %+v %+v", show, show.Throughput)
	}
	if r := cosmosctl(t, "", "container", "show"); r.code != 0 || !strings.Contains(r.out, "partition key ranges") || !strings.Contains(r.out, "/pk (Hash") {
		t.Fatalf("show table of the profile's container: %+v", r)
	}
	if r := cosmosctl(t, "", "container", "show", "nope"); r.code != ExitNotFound || !strings.Contains(r.errOut, `container "nope" in database "app" does not exist`) {
		t.Fatalf("show missing: %+v", r)
	}
	if r := cosmosctl(t, "", "container", "delete", "events"); r.code != ExitUsage {
		t.Fatalf("delete without --yes: %+v", r)
	}
	if r := cosmosctlTTY(t, "events\n", "container", "delete", "events"); r.code != 0 {
		t.Fatalf("delete confirmed: %+v", r)
	}
	if r := cosmosctl(t, "", "container", "show", "events"); r.code != ExitNotFound {
		t.Fatalf("deleted container still there: %+v", r)
	}
	if r := cosmosctl(t, "", "container", "delete", "items", "--yes"); r.code != 0 {
		t.Fatalf("delete --yes: %+v", r)
	}
}

func TestThroughputCommands(t *testing.T) {
	testAccount(t)
	tp := decode[output.ThroughputInfo](t, cosmosctl(t, "", "throughput", "show", "-o", "json"))
	if tp.Mode != "manual" || tp.RUPerSecond != 400 || tp.OfferID == "" || tp.MinRUPerSecond != 400 || tp.ReplacePending {
		t.Fatalf("show default: %+v (want 400 RU/s manual, min 400, no replace pending)", tp)
	}
	tp = decode[output.ThroughputInfo](t, cosmosctl(t, "", "throughput", "set", "--throughput", "1200", "-o", "json"))
	if tp.Mode != "manual" || tp.RUPerSecond != 1200 {
		t.Fatalf("set manual: %+v", tp)
	}
	if r := cosmosctl(t, "", "throughput", "show"); r.code != 0 || !strings.Contains(r.out, "1200") {
		t.Fatalf("show after set: %+v", r)
	}
	if r := cosmosctl(t, "", "throughput", "set", "--throughput", "450"); r.code != ExitUsage {
		t.Fatalf("a throughput the service refuses: %+v", r)
	}
	if r := cosmosctl(t, "", "throughput", "set"); r.code != ExitUsage {
		t.Fatalf("set without a value: %+v", r)
	}
	if r := cosmosctl(t, "", "container", "create", "auto", "--partition-key", "/pk", "--autoscale-max", "4000"); r.code != 0 {
		t.Fatal(r)
	}
	tp = decode[output.ThroughputInfo](t, cosmosctl(t, "", "throughput", "set", "auto", "--autoscale-max", "10000", "-o", "json"))
	if tp.Mode != "autoscale" || tp.AutoscaleMaxRU != 10000 || tp.RUPerSecond != 1000 || tp.MinRUPerSecond != 1000 {
		t.Fatalf("set autoscale: %+v (want max 10000, floor 1000, min 1000)", tp)
	}
	if r := cosmosctl(t, "", "throughput", "show", "auto"); r.code != 0 || !strings.Contains(r.out, "1000–10000 RU/s") {
		t.Fatalf("show autoscale: %+v", r)
	}
	tp = decode[output.ThroughputInfo](t, cosmosctl(t, "", "throughput", "show", "--level", "database", "-o", "json"))
	if tp.Mode != "none" {
		t.Fatalf("a database without throughput: %+v", tp)
	}
	if r := cosmosctl(t, "", "db", "create", "shared", "--throughput", "1000"); r.code != 0 {
		t.Fatal(r)
	}
	tp = decode[output.ThroughputInfo](t, cosmosctl(t, "", "throughput", "set", "shared", "--level", "database", "--throughput", "2000", "-o", "json"))
	if tp.Mode != "manual" || tp.RUPerSecond != 2000 || tp.Resource != "database shared" {
		t.Fatalf("set database: %+v", tp)
	}
	if r := cosmosctl(t, "", "throughput", "show", "--level", "database"); r.code != 0 || !strings.Contains(r.out, "none") {
		t.Fatalf("show database: %+v", r)
	}
}

// TestResourceReadsSurviveAHungFirstRegion: metadata reads fail over like item reads.
func TestResourceReadsSurviveAHungFirstRegion(t *testing.T) {
	srv := testAccount(t)
	if r := cosmosctl(t, "", "db", "ls"); r.code != 0 { // the topology is known before the fault
		t.Fatal(r)
	}
	if _, err := srv.AddFault(faults.Rule{Region: "East US", Operations: []string{faults.OpMetadata, faults.OpPKRanges}, Effect: faults.EffectHang}); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"db", "ls"}, {"container", "show"}} {
		start := time.Now()
		r := cosmosctl(t, "", append(args, "--attempt-timeout", "300ms", "-o", "json")...)
		elapsed := time.Since(start)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s %s", args, r.code, r.out, r.errOut)
		}
		// Generous: a few 300 ms attempt timeouts and cross-region reads on a loaded machine.
		if elapsed > 20*time.Second {
			t.Fatalf("%v took %s", args, elapsed)
		}
	}
	r := cosmosctl(t, "", "container", "show", "--attempt-timeout", "300ms", "--diagnostics")
	if r.code != 0 || !strings.Contains(r.errOut, "East US") || !strings.Contains(r.errOut, "West US") {
		t.Fatalf("the diagnostics name the hung region and the one that answered: %+v", r)
	}
}
