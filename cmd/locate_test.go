package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// locateJSON runs `locate -o json` with args and decodes the report.
func locateJSON(t *testing.T, args ...string) locateReport {
	t.Helper()
	r := cosmosctl(t, "", append([]string{"locate", "-o", "json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("locate %v: exit %d\nstdout %s\nstderr %s", args, r.code, r.out, r.errOut)
	}
	var rep locateReport
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatalf("locate -o json printed %q: %v", r.out, err)
	}
	return rep
}

// storedRange creates doc under pk straight on the emulator and returns the partition
// key range that the service says it stored the item in.
func storedRange(t *testing.T, srv *emulator.Server, pk cosmos.PartitionKey, doc string) string {
	t.Helper()
	cred, _ := cosmos.NewMasterKey(srv.Key())
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
	req := &cosmos.Request{Method: http.MethodPost, Path: cosmos.ItemsPath("app", "items"), Header: http.Header{}, Body: []byte(doc)}
	req.Header.Set(cosmos.HeaderPartitionKey, pk.JSON())
	resp, err := tr.Do(context.Background(), srv.Endpoint(), req)
	if err != nil {
		t.Fatalf("create %s: %v", doc, err)
	}
	id := resp.Header.Get(cosmos.HeaderPartitionKeyRangeID)
	if id == "" {
		t.Fatalf("the emulator named no range for %s", doc)
	}
	return id
}

// TestLocatePrintsTheRangeThatHoldsTheItem: for keys spread over the emulator's four
// ranges, the range locate prints is the one the service stores the item in, with the
// range's bounds holding the effective partition key.
func TestLocatePrintsTheRangeThatHoldsTheItem(t *testing.T) {
	srv := testAccount(t)
	seen := map[string]int{} // range → items created in it
	for i := 0; i < 12; i++ {
		v := fmt.Sprintf("tenant-%d", i)
		pk, _ := cosmos.PK(v)
		want := storedRange(t, srv, pk, fmt.Sprintf(`{"id":"x","pk":%q}`, v))
		rep := locateJSON(t, "--pk", v)
		if len(rep.Ranges) != 1 || rep.Ranges[0].ID != want {
			t.Fatalf("--pk %s: locate says %+v, the service stored it in range %s", v, rep.Ranges, want)
		}
		r := rep.Ranges[0]
		if rep.EffectivePartitionKey != cosmos.EffectivePartitionKey(pk) || rep.EffectivePartitionKey < r.MinInclusive ||
			(r.MaxExclusive != "FF" && rep.EffectivePartitionKey >= r.MaxExclusive) {
			t.Fatalf("--pk %s: effective key %s outside [%q, %q)", v, rep.EffectivePartitionKey, r.MinInclusive, r.MaxExclusive)
		}
		if rep.Prefix || rep.PartitionKeyKind != "Hash" || rep.ConnectionMode != "gateway" || r.Regions != nil {
			t.Fatalf("--pk %s: %+v", v, rep)
		}
		// The emulator reports the range's statistics as the service does, exactly:
		// every item created so far in this range, and their size.
		seen[want]++
		if r.DocumentCount == nil || *r.DocumentCount != int64(seen[want]) || r.SizeKB == nil || *r.SizeKB < 1 {
			t.Fatalf("--pk %s: range %s holds %d items, locate reports %v items, %v KB", v, want, seen[want], r.DocumentCount, r.SizeKB)
		}
	}
	if len(seen) < 2 {
		t.Fatalf("12 keys all in one range %v: the cross-check checks little", seen)
	}
	// The table says so too, and names the range.
	pk, _ := cosmos.PK("tenant-0")
	r := cosmosctl(t, "", "locate", "--pk", "tenant-0")
	if r.code != 0 || !strings.Contains(r.out, cosmos.EffectivePartitionKey(pk)) || !strings.Contains(r.out, " KB") {
		t.Fatalf("table: %+v", r)
	}
}

// TestLocateSaysNotReportedWhereTheServiceGivesNoStatistics: a range the service
// reports no statistics for is "not reported" in the table and null in the JSON, never
// an invented number.
func TestLocateSaysNotReportedWhereTheServiceGivesNoStatistics(t *testing.T) {
	rep := locateReport{PartitionKey: json.RawMessage(`["t1"]`), EffectivePartitionKey: "3D48", ConnectionMode: "gateway",
		Ranges: []locateRange{{ID: "3", MinInclusive: "30", MaxExclusive: "FF"}}}
	io, out, _ := testIO()
	if err := printLocate(io, true, rep); err != nil {
		t.Fatal(err)
	}
	if strings.Count(out.String(), "not reported") != 2 {
		t.Fatalf("table:\n%s", out)
	}
	body, _ := json.Marshal(rep.Ranges[0])
	if !strings.Contains(string(body), `"document_count":null,"size_kb":null`) {
		t.Fatalf("json: %s", body)
	}
}

// TestLocateHierarchicalKeysPrefixesAndTheNoneKey: a full hierarchical key is in the
// range that stores it; a prefix spans the ranges from its hash to its end; the none key
// is located like any other.
func TestLocateHierarchicalKeysPrefixesAndTheNoneKey(t *testing.T) {
	srv := testAccount(t, func(c *emulator.Config) {
		c.Databases = []emulator.DatabaseConfig{{ID: "app", Containers: []emulator.ContainerConfig{{ID: "items", PartitionKey: []string{"/tenant", "/user"}}}}}
	})
	for i := 0; i < 8; i++ {
		pk, _ := cosmos.PK("acme", i)
		want := storedRange(t, srv, pk, fmt.Sprintf(`{"id":"h%d","tenant":"acme","user":%d}`, i, i))
		rep := locateJSON(t, "--pk", fmt.Sprintf(`["acme",%d]`, i))
		if rep.Prefix || rep.PartitionKeyKind != "MultiHash" || len(rep.Ranges) != 1 || rep.Ranges[0].ID != want {
			t.Fatalf(`["acme",%d]: %+v, stored in %s`, i, rep, want)
		}
		if len(rep.EffectivePartitionKey) != 64 {
			t.Fatalf("a two-level key's effective key is two hashes: %s", rep.EffectivePartitionKey)
		}
	}
	prefix := locateJSON(t, "--pk", `["acme"]`)
	pk, _ := cosmos.PK("acme")
	epk := cosmos.EffectivePartitionKey(pk)
	if !prefix.Prefix || prefix.EffectivePartitionKey != epk || prefix.EffectiveMax == nil || *prefix.EffectiveMax != epk+"FF" || len(prefix.Ranges) == 0 {
		t.Fatalf("prefix: %+v", prefix)
	}
	for _, r := range prefix.Ranges {
		if !(r.MinInclusive < epk+"FF" && (r.MaxExclusive == "FF" || r.MaxExclusive > epk)) {
			t.Fatalf("range %+v is outside the prefix's span", r)
		}
	}
	// Every full key under the prefix lives in one of the ranges the prefix spans.
	for i := 0; i < 8; i++ {
		full := locateJSON(t, "--pk", fmt.Sprintf(`["acme",%d]`, i))
		found := false
		for _, r := range prefix.Ranges {
			found = found || r.ID == full.Ranges[0].ID
		}
		if !found {
			t.Fatalf(`["acme",%d] is in range %s, which the prefix's %+v leaves out`, i, full.Ranges[0].ID, prefix.Ranges)
		}
	}
	r := cosmosctl(t, "", "locate", "--pk", `["acme"]`)
	if r.code != 0 || !strings.Contains(r.out, "a prefix of /tenant, /user") {
		t.Fatalf("prefix table: %+v", r)
	}

	none := locateJSON(t, "--pk", `[{}]`)
	if compactJSON(none.PartitionKey) != "[{}]" || none.EffectivePartitionKey != cosmos.EffectivePartitionKey(cosmos.NonePK) {
		t.Fatalf("none key: %+v", none)
	}
}

func TestLocateNoneKeyIsWhereTheServiceStoresItemsWithoutTheProperty(t *testing.T) {
	srv := testAccount(t)
	want := storedRange(t, srv, cosmos.NonePK, `{"id":"nokey"}`)
	rep := locateJSON(t, "--pk", `[{}]`)
	if len(rep.Ranges) != 1 || rep.Ranges[0].ID != want || rep.Prefix || compactJSON(rep.PartitionKey) != "[{}]" {
		t.Fatalf("none key: %+v, stored in %s", rep, want)
	}
}

func TestLocateBadKeyIsAUsageError(t *testing.T) {
	testAccount(t)
	for _, args := range [][]string{
		{"locate"},
		{"locate", "--pk", ""},
		{"locate", "--pk", `["a",`},
		{"locate", "--pk", `{"a":1}`},
		{"locate", "--pk", `[]`},
		{"locate", "--pk", `["a","b"]`}, // two values, one path
	} {
		r := cosmosctl(t, "", args...)
		if r.code != ExitUsage || r.out != "" || !strings.HasPrefix(r.errOut, "Error: ") || strings.Count(strings.TrimSpace(r.errOut), "\n") != 0 {
			t.Fatalf("%q: want exit 2 and one line on stderr, got %+v", args, r)
		}
	}
}

// TestLocateDirectModeListsTheRangesReplicas: in direct mode every read region lists the
// replicas of the range, the same addresses the emulator's control API has for it,
// primary first.
func TestLocateDirectModeListsTheRangesReplicas(t *testing.T) {
	srv := testAccount(t)
	rep := locateJSON(t, "--pk", "t1", "--connection-mode", "direct")
	if rep.ConnectionMode != "direct" || len(rep.Ranges) != 1 {
		t.Fatalf("%+v", rep)
	}
	rng := rep.Ranges[0]
	if len(rng.Regions) != 3 {
		t.Fatalf("want the replicas of 3 regions: %+v", rng.Regions)
	}
	want := map[string]map[string]bool{} // region → serving addresses of the range
	for _, set := range srv.Replicas() {
		if set.Container != "items" || set.Range != rng.ID {
			continue
		}
		want[set.Region] = map[string]bool{}
		for _, r := range set.Replicas {
			if r.State == "serving" {
				want[set.Region][strings.TrimRight(r.Address, "/")] = true
			}
		}
	}
	for _, g := range rng.Regions {
		if g.Error != nil || len(g.Replicas) == 0 || g.Replicas[0].Role != "primary" || g.Health.Read.Status != "available" {
			t.Fatalf("region %s: %+v", g.Region, g)
		}
		for _, p := range g.Replicas {
			if !want[g.Region][strings.TrimRight(p.URL, "/")] {
				t.Fatalf("region %s: replica %s is not one the emulator serves range %s from (%v)", g.Region, p.URL, rng.ID, want[g.Region])
			}
		}
		if len(g.Replicas) != len(want[g.Region]) {
			t.Fatalf("region %s: %d replicas, the emulator has %d", g.Region, len(g.Replicas), len(want[g.Region]))
		}
	}
	r := cosmosctl(t, "", "locate", "--pk", "t1", "--connection-mode", "direct")
	if r.code != 0 || !strings.Contains(r.out, "primary") || !strings.Contains(r.out, "West US") {
		t.Fatalf("table: %+v", r)
	}
}

// TestLocateAnswersWhileTheFirstRegionHangs: with every metadata, range and address
// request to the first region hanging, locate answers from the others within bounds, and
// in direct mode says that region gave no addresses.
func TestLocateAnswersWhileTheFirstRegionHangs(t *testing.T) {
	srv := testAccount(t)
	pk, _ := cosmos.PK("t1")
	want := storedRange(t, srv, pk, `{"id":"o1","pk":"t1"}`)
	if _, err := srv.AddFault(faults.Rule{Region: "East US", Operations: []string{faults.OpPKRanges, faults.OpMetadata, faults.OpAddresses}, Effect: faults.EffectHang}); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"gateway", "direct"} {
		start := time.Now()
		rep := locateJSON(t, "--pk", "t1", "--attempt-timeout", "300ms", "--connection-mode", mode)
		elapsed := time.Since(start)
		if len(rep.Ranges) != 1 || rep.Ranges[0].ID != want {
			t.Fatalf("%s: %+v, stored in %s", mode, rep, want)
		}
		// Generous: a few 300 ms attempt timeouts and cross-region reads on a loaded machine.
		if elapsed > 20*time.Second {
			t.Fatalf("%s: took %s", mode, elapsed)
		}
		if mode == "direct" {
			for _, g := range rep.Ranges[0].Regions {
				if (g.Region == "East US") != (g.Error != nil) {
					t.Fatalf("region %s: %+v", g.Region, g)
				}
			}
		}
	}
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	_ = json.Compact(&b, raw)
	return b.String()
}

func TestLocateTablesFitTheTerminal(t *testing.T) {
	testAccount(t)
	t.Setenv("NO_COLOR", "1")
	for _, width := range terminalWidths {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			r := cosmosctlAtWidth(t, width, "locate", "--pk", "t1", "--connection-mode", "direct")
			if r.code != ExitOK {
				t.Fatalf("exit %d: %s", r.code, r.errOut)
			}
			ranges, replicas, ok := strings.Cut(r.out, "\n\n")
			if !ok {
				t.Fatalf("no replica table after the range table:\n%s", r.out)
			}
			assertTableFits(t, ranges, "RANGE", width, "RANGE", "ITEMS")
			assertTableFits(t, replicas, "RANGE", width, "RANGE", "REGION", "ROLE", "REPLICA", "HEALTH")
			// A replica is told apart by how its address ends: that end stays.
			if !strings.Contains(r.out, "p/") {
				t.Errorf("at %d the primary's address lost its end:\n%s", width, r.out)
			}
		})
	}
}
