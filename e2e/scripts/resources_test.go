package scripts_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// A database or container command against an endpoint that is a cosmosctl emulator
// takes only what it needs from the announcement: a container command names its
// container itself, so a new database is never met with a demand for --container; the
// container is created in a database that exists, and a missing one is named with what
// to do. A create prints the throughput the new resource has, read back from its offer.
func TestDatabaseAndContainerCreatesOnANewDatabase(t *testing.T) {
	_, env := standalone(t)
	bin := testkit.Binary(t)
	run := func(args ...string) (int, string, string) {
		t.Helper()
		return testkit.RunBinary(t, bin, env, "", args...)
	}
	type throughput struct {
		Mode        string `json:"mode"`
		RUPerSecond int    `json:"ru_per_second"`
	}

	code, out, errOut := run("container", "create", "orders", "--database", "newdb", "--partition-key", "/tenantId")
	if code != 3 || out != "" || strings.Contains(errOut, "--container") ||
		!strings.Contains(errOut, `database "newdb" does not exist: create it first (cosmosctl db create newdb)`) {
		t.Fatalf("a container in a database not created yet: exit %d, stderr %q; want 3 and a line saying to create the database", code, errOut)
	}

	code, out, errOut = run("db", "create", "newdb", "--throughput", "500", "-o", "json")
	var db struct {
		ID         string      `json:"id"`
		Throughput *throughput `json:"throughput"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &db) != nil || db.Throughput == nil || db.Throughput.Mode != "manual" || db.Throughput.RUPerSecond != 500 {
		t.Fatalf("db create --throughput 500 -o json: exit %d: %s %s", code, out, errOut)
	}
	if strings.Contains(errOut, "database app") || strings.Contains(errOut, "container items") {
		t.Errorf("a database command takes the key alone from the announcement: stderr %q", errOut)
	}
	code, out, _ = run("db", "create", "plain", "-o", "json")
	if code != 0 || json.Unmarshal([]byte(out), &db) != nil || db.Throughput == nil || db.Throughput.Mode != "none" {
		t.Errorf("db create without throughput: exit %d: %s", code, out)
	}

	var coll struct {
		ID         string      `json:"id"`
		Database   string      `json:"database"`
		Throughput *throughput `json:"throughput"`
	}
	code, out, errOut = run("container", "create", "orders", "--database", "newdb", "--partition-key", "/tenantId", "-o", "json")
	if code != 0 || json.Unmarshal([]byte(out), &coll) != nil || coll.ID != "orders" || coll.Database != "newdb" || coll.Throughput == nil || coll.Throughput.Mode != "shared" {
		t.Fatalf("container create in the new database: exit %d: %s %s", code, out, errOut)
	}
	code, out, errOut = run("container", "create", "own", "--database", "newdb", "--partition-key", "/tenantId", "--throughput", "400", "-o", "json")
	if code != 0 || json.Unmarshal([]byte(out), &coll) != nil || coll.Throughput == nil || coll.Throughput.Mode != "manual" || coll.Throughput.RUPerSecond != 400 {
		t.Fatalf("container create --throughput 400: exit %d: %s %s", code, out, errOut)
	}
	// Without --database, the announced one: of several, app (the embedded emulator's
	// default, which the standalone one has too).
	code, out, errOut = run("container", "create", "more", "--partition-key", "/pk", "-o", "json")
	if code != 0 || json.Unmarshal([]byte(out), &coll) != nil || coll.Database != "app" {
		t.Errorf("container create with the announced database: exit %d: %s %s", code, out, errOut)
	}
}
