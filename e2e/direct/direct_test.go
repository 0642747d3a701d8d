// Package direct_test runs cosmosctl's item commands in direct mode and in gateway2 mode
// against the emulator, whose replicas speak RNTBD over TLS (emulator/rntbdserver, a
// server written apart from the client's codec) and whose Gateway 2.0 endpoints take
// RNTBD frames in HTTP/2 POSTs.
package direct_test

import (
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cmd"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/internal/clitest"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// attempt is what these tests read of one attempt of a --diagnostics=json event.
type attempt struct {
	endpoint, transport, replica, role string
}

// attempts runs a command with --diagnostics=json and returns its result and the
// attempts of its operation events (stderr lines starting '{').
func attempts(t *testing.T, stdin string, args ...string) (clitest.Result, []attempt) {
	t.Helper()
	r := clitest.Run(t, stdin, append(args, "--diagnostics=json")...)
	var lines []string
	for _, l := range strings.Split(r.ErrOut, "\n") {
		if strings.HasPrefix(l, "{") {
			lines = append(lines, l)
		}
	}
	var out []attempt
	for _, ev := range testkit.JSONLines(t, "diagnostics", strings.Join(lines, "\n")) {
		d, _ := ev["diagnostics"].(map[string]any)
		list, _ := d["attempts"].([]any)
		for _, a := range list {
			m, _ := a.(map[string]any)
			s := func(k string) string { v, _ := m[k].(string); return v }
			out = append(out, attempt{s("endpoint"), s("transport"), s("replica"), s("replica_role")})
		}
	}
	return r, out
}

// replicaRequests is how many requests the emulator's replicas have served.
func replicaRequests(srv *emulator.Server) int64 {
	var n int64
	for _, set := range srv.Replicas() {
		for _, r := range set.Replicas {
			n += r.Requests
		}
	}
	return n
}

// TestDirectModeSpeaksRNTBDToTheReplicas: every item command in direct mode reaches the
// replicas over RNTBD/TLS — each attempt says transport rntbd, names an rntbd://
// replica and its role (writes the primary) — and not one HTTP request reaches a
// replica address, while the replicas count every request.
func TestDirectModeSpeaksRNTBDToTheReplicas(t *testing.T) {
	srv := testkit.Account(t)
	steps := []struct {
		name, stdin string
		args        []string
		write       bool
	}{
		{"create", `{"id":"d1","pk":"t1","n":1}`, []string{"create", "-f", "-"}, true},
		{"read", "", []string{"read", "d1", "--pk", "t1"}, false},
		{"upsert", `{"id":"d2","pk":"t1","n":2}`, []string{"upsert", "-f", "-"}, true},
		{"replace", `{"id":"d1","pk":"t1","n":3}`, []string{"replace", "d1", "-f", "-"}, true},
		{"patch", "", []string{"patch", "d1", "--pk", "t1", "--op", "incr /n=1"}, true},
		{"delete", "", []string{"delete", "d2", "--pk", "t1"}, true},
	}
	before := replicaRequests(srv)
	for _, st := range steps {
		r, atts := attempts(t, st.stdin, append(st.args, "--connection-mode", "direct")...)
		if r.Code != 0 || len(atts) == 0 {
			t.Fatalf("%s: exit %d, %d attempts\n%s", st.name, r.Code, len(atts), r.ErrOut)
		}
		for _, a := range atts {
			if a.transport != "rntbd" || !strings.HasPrefix(a.replica, "rntbd://") || a.endpoint != strings.TrimRight(a.replica, "/") {
				t.Fatalf("%s: attempt %+v: want an rntbd:// replica over transport rntbd", st.name, a)
			}
			if st.write && a.role != "primary" {
				t.Fatalf("%s: attempt %+v: a write goes to the primary", st.name, a)
			}
		}
	}
	if got := srv.ReplicaHTTPRequests(); got != 0 {
		t.Fatalf("%d HTTP requests reached a replica address: direct mode must speak RNTBD only", got)
	}
	if served := replicaRequests(srv) - before; served < int64(len(steps)) {
		t.Fatalf("the replicas served %d requests for %d commands", served, len(steps))
	}
	// What direct mode wrote is what the gateway reads.
	r := clitest.Run(t, "", "read", "d1", "--pk", "t1", "-o", "json", "--jq", ".item.n")
	if r.Code != 0 || strings.TrimSpace(r.Out) != "4" {
		t.Fatalf("gateway read of d1: exit %d out %q err %s", r.Code, r.Out, r.ErrOut)
	}
	if r := clitest.Run(t, "", "read", "d2", "--pk", "t1"); r.Code != cmd.ExitNotFound {
		t.Fatalf("d2 was deleted in direct mode: exit %d", r.Code)
	}
}

// TestDirectModeRefusesStrongAndBoundedStalenessAccounts: cosmosctl reads one replica,
// which is not what those levels promise; it says so in one line, exit 2, and sends no
// request to a replica.
func TestDirectModeRefusesStrongAndBoundedStalenessAccounts(t *testing.T) {
	for _, level := range []string{"Strong", "BoundedStaleness"} {
		t.Run(level, func(t *testing.T) {
			srv := testkit.Account(t, func(c *emulator.Config) { c.Consistency = level })
			r := clitest.Run(t, "", "read", "x", "--pk", "t1", "--connection-mode", "direct")
			msg := strings.TrimSpace(r.ErrOut)
			if r.Code != cmd.ExitUsage || strings.Count(msg, "\n") != 0 || !strings.Contains(msg, level) || !strings.Contains(msg, "--connection-mode gateway") {
				t.Fatalf("exit %d, stderr %q: want exit %d and one line naming %s and the fix", r.Code, msg, cmd.ExitUsage, level)
			}
			if n := replicaRequests(srv); n != 0 {
				t.Fatalf("%d requests reached a replica", n)
			}
		})
	}
}

// TestGateway2CarriesPointOperationsThroughTheProxy: with --connection-mode gateway2 a
// create and a read go to the region's Gateway 2.0 endpoint (transport gateway2), and
// what they wrote is what the ordinary gateway reads; a query still goes through the
// gateway.
func TestGateway2CarriesPointOperationsThroughTheProxy(t *testing.T) {
	srv := testkit.Account(t)
	proxy, ok := srv.ThinClientEndpoint("East US")
	if !ok {
		t.Fatal("the emulator advertises no Gateway 2.0 endpoint for East US")
	}
	proxy = strings.TrimRight(proxy, "/")
	check := func(name string, r clitest.Result, atts []attempt) {
		t.Helper()
		if r.Code != 0 || len(atts) == 0 {
			t.Fatalf("%s: exit %d, %d attempts\n%s", name, r.Code, len(atts), r.ErrOut)
		}
		for _, a := range atts {
			if a.transport != "gateway2" || a.endpoint != proxy {
				t.Fatalf("%s: attempt %+v: want transport gateway2 to %s", name, a, proxy)
			}
		}
	}
	r, atts := attempts(t, `{"id":"g1","pk":"t2","n":7}`, "create", "-f", "-", "--connection-mode", "gateway2")
	check("create", r, atts)
	r, atts = attempts(t, "", "read", "g1", "--pk", "t2", "--connection-mode", "gateway2", "-o", "json", "--jq", ".item.n")
	check("read", r, atts)
	if strings.TrimSpace(r.Out) != "7" {
		t.Fatalf("read through the proxy: %q", r.Out)
	}
	r = clitest.Run(t, "", "read", "g1", "--pk", "t2", "-o", "json", "--jq", ".item.n")
	if r.Code != 0 || strings.TrimSpace(r.Out) != "7" {
		t.Fatalf("gateway read of what gateway2 wrote: exit %d %q %s", r.Code, r.Out, r.ErrOut)
	}
	// A read of a missing item is the service's 404, carried in the proxy's frame.
	if r, atts := attempts(t, "", "read", "nope", "--pk", "t2", "--connection-mode", "gateway2"); r.Code != cmd.ExitNotFound || len(atts) == 0 || atts[0].transport != "gateway2" {
		t.Fatalf("missing item: exit %d attempts %+v", r.Code, atts)
	}
	r, atts = attempts(t, "", "query", "select * from c", "--connection-mode", "gateway2", "-o", "ndjson")
	if r.Code != 0 || strings.Count(r.Out, "\n") != 1 {
		t.Fatalf("query: exit %d out %q", r.Code, r.Out)
	}
	for _, a := range atts {
		if a.transport == "gateway2" {
			t.Fatalf("query attempt %+v: queries go through the gateway", a)
		}
	}
}
