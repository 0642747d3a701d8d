package cmd

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
	"github.com/cosmosctl/cosmosctl/shard"
)

// rangesJSON runs `ranges -o json` with args and decodes its lines, whatever the exit.
func rangesJSON(t *testing.T, args ...string) ([]rangesShard, runResult) {
	t.Helper()
	r := cosmosctl(t, "", append([]string{"ranges", "-o", "json"}, args...)...)
	var rows []rangesShard
	for _, line := range strings.Split(strings.TrimSpace(r.out), "\n") {
		if line == "" {
			continue
		}
		var row rangesShard
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("ranges %v: exit %d, stdout %q, stderr %q: %v", args, r.code, r.out, r.errOut, err)
		}
		rows = append(rows, row)
	}
	return rows, r
}

// fiveRanges is an account whose container has five physical partitions, with 60
// small items over 60 keys.
func fiveRanges(t *testing.T) *emulator.Server {
	t.Helper()
	srv := testAccount(t, func(c *emulator.Config) { c.Ranges = 5 })
	keys := make([]string, 60)
	for i := range keys {
		keys[i] = fmt.Sprintf("tenant-%d", i)
	}
	seedKeys(t, srv, keys, 1)
	return srv
}

// checkRows checks what every plan line promises: the shards in order, tiling the key
// space, their two feed range encodings naming their interval.
func checkRows(t *testing.T, rows []rangesShard, n int) {
	t.Helper()
	if len(rows) != n {
		t.Fatalf("%d lines, want %d: %+v", len(rows), n, rows)
	}
	ivs := make([]shard.Interval, n)
	for i, r := range rows {
		ivs[i] = shard.Interval{Min: r.Min, Max: r.Max}
		if r.Index != i || r.Count != n || len(r.Ranges) == 0 {
			t.Fatalf("line %d: %+v", i, r)
		}
		for name, enc := range map[string]string{"feed_range": string(r.FeedRange), "feed_range_java": r.FeedRangeJava} {
			if got, err := shard.ParseFeedRange(enc); err != nil || got != ivs[i] {
				t.Fatalf("line %d: %s %s reads as %v, %v; want %v", i, name, enc, got, err, ivs[i])
			}
		}
	}
	if err := shard.Tiles(ivs); err != nil {
		t.Fatalf("the shards do not tile the container: %v", err)
	}
}

// TestRangesPrintsThePlanShardsCompute: for 1, 3, 4 and 7 shards over five ranges the
// lines are shard.Plan of the container's ranges (what --shard i/N computes), tiling
// the key space, with estimates that add up to the container's items.
func TestRangesPrintsThePlanShardsCompute(t *testing.T) {
	fiveRanges(t)
	perRange, r := rangesJSON(t)
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	checkRows(t, perRange, 5)
	var ranges []cosmos.PartitionKeyRange
	for _, row := range perRange {
		if row.SubRange || len(row.Ranges) != 1 || row.EstDocuments == nil {
			t.Fatalf("without --shards, one shard a range: %+v", row)
		}
		ranges = append(ranges, cosmos.PartitionKeyRange{ID: row.Ranges[0], MinInclusive: row.Min, MaxExclusive: row.Max})
	}
	for _, n := range []int{1, 3, 4, 7} {
		rows, r := rangesJSON(t, "--shards", fmt.Sprint(n))
		if r.code != ExitOK {
			t.Fatalf("--shards %d: exit %d: %s", n, r.code, r.errOut)
		}
		checkRows(t, rows, n)
		plan, err := shard.Plan(ranges, n)
		if err != nil {
			t.Fatal(err)
		}
		var docs int64
		sub := false
		for i, row := range rows {
			p := plan[i]
			if row.Min != p.Min || row.Max != p.Max || !reflect.DeepEqual(row.Ranges, p.RangeIDs) || row.SubRange != p.SubRange || row.Balance != "ranges" {
				t.Fatalf("--shards %d line %d: %+v, want %+v", n, i, row, p)
			}
			sub = sub || row.SubRange
			docs += *row.EstDocuments
		}
		if sub != (n > 5) {
			t.Fatalf("--shards %d over 5 ranges: sub-ranges %v", n, sub)
		}
		// Whole ranges add up exactly; sub-ranges' shares of a range round apart.
		if slack := int64(n); docs < 60-slack || docs > 60+slack || n <= 5 && docs != 60 {
			t.Fatalf("--shards %d: the estimates add up to %d documents, the container holds 60", n, docs)
		}
	}
}

func TestRangesTableAndTSV(t *testing.T) {
	fiveRanges(t)
	table := cosmosctl(t, "", "ranges", "--shards", "3")
	if table.code != ExitOK || !strings.Contains(table.out, "app/items: 5 ranges, 3 shards: the plan of --shard i/3, whole ranges") ||
		!strings.Contains(table.out, "SHARD") || !strings.Contains(table.out, "2/3") {
		t.Fatalf("table: %+v", table)
	}
	if r := cosmosctl(t, "", "ranges", "--shards", "7"); r.code != ExitOK || !strings.Contains(r.out, "ranges cut at EPK midpoints") || !strings.Contains(r.out, "(part)") {
		t.Fatalf("sub-ranges: %+v", r)
	}
	tsv := cosmosctl(t, "", "ranges", "--shards", "4", "-o", "tsv")
	lines := strings.Split(strings.TrimSpace(tsv.out), "\n")
	if tsv.code != ExitOK || len(lines) != 5 || !strings.HasPrefix(lines[0], "SHARD\tMIN\tMAX\tRANGES") ||
		!strings.HasPrefix(lines[1], "0/4\t\t") || !strings.Contains(tsv.errOut, "the plan of --shard i/4") {
		t.Fatalf("tsv: %+v", tsv)
	}
	// ndjson is the same lines as json.
	nd := cosmosctl(t, "", "ranges", "--shards", "2", "-o", "ndjson")
	js := cosmosctl(t, "", "ranges", "--shards", "2", "-o", "json")
	if nd.code != ExitOK || nd.out != js.out || strings.Count(nd.out, "\n") != 2 {
		t.Fatalf("ndjson %q, json %q", nd.out, js.out)
	}
}

// TestRangesBalancesByStatistics: with one range holding most documents, the
// statistics-balanced plan gives it a shard of its own, whole ranges only, marked.
func TestRangesBalancesByStatistics(t *testing.T) {
	srv := testAccount(t)
	big := seedKeys(t, srv, []string{"big"}, 30)["big"]
	seedKeys(t, srv, []string{"t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8"}, 1)
	rows, r := rangesJSON(t, "--shards", "2", "--balance", "statistics")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	checkRows(t, rows, 2)
	for _, row := range rows {
		if row.Balance != "statistics" || row.SubRange {
			t.Fatalf("%+v", row)
		}
		if reflect.DeepEqual(row.Ranges, []string{big}) {
			return
		}
		for _, id := range row.Ranges {
			if id == big && len(row.Ranges) > 1 && *row.EstDocuments > 31+4 {
				t.Fatalf("the big range %s shares its shard with more than the others hold: %+v", big, rows)
			}
		}
	}
	if table := cosmosctl(t, "", "ranges", "--shards", "2", "--balance", "statistics"); !strings.Contains(table.out, "balanced by the partition statistics' documents: give each process its --feed-range") {
		t.Fatalf("table: %+v", table)
	}
	if r := cosmosctl(t, "", "ranges", "--shards", "5", "--balance", "statistics"); r.code != ExitUsage || !strings.Contains(r.errOut, "--shards 4 or fewer") {
		t.Fatalf("more shards than ranges: %+v", r)
	}
}

// TestRangesDescribesAFeedRange: a feed range of either SDK's form prints its interval,
// the ranges it overlaps and both encodings: the Java form of a .NET feed range reads
// back as the same range.
func TestRangesDescribesAFeedRange(t *testing.T) {
	testAccount(t)
	rows, r := rangesJSON(t, "--feed-range", `{"Range":{"min":"","max":"20"}}`)
	if r.code != ExitOK || len(rows) != 1 {
		t.Fatalf("exit %d %s: %+v", r.code, r.errOut, rows)
	}
	row := rows[0]
	if row.Min != "" || row.Max != "20" || len(row.Ranges) != 2 || row.SubRange || row.Balance != "feed-range" {
		t.Fatalf("%+v", row)
	}
	back, r := rangesJSON(t, "--feed-range", row.FeedRangeJava)
	if r.code != ExitOK || len(back) != 1 || string(back[0].FeedRange) != `{"Range":{"min":"","max":"20"}}` {
		t.Fatalf("the Java form read back: exit %d %s %+v", r.code, r.errOut, back)
	}
	part, _ := rangesJSON(t, "--feed-range", `{"Range":{"min":"08","max":"0C"}}`)
	if len(part) != 1 || !part[0].SubRange || len(part[0].Ranges) != 1 {
		t.Fatalf("part of a range: %+v", part)
	}
}

func TestRangesRefusesBadInput(t *testing.T) {
	testAccount(t)
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--shards", "0"}, "at least 1"},
		{[]string{"--shards", "-3"}, "at least 1"},
		{[]string{"--balance", "documents", "--shards", "2"}, "ranges or statistics"},
		{[]string{"--balance", "statistics"}, "give --shards"},
		{[]string{"--feed-range", "0-FF"}, "neither JSON nor base64"},
		{[]string{"--feed-range", `{"PKRangeId":"0"}`}, "partition key range id"},
		{[]string{"--feed-range", `{"Range":{"min":"","max":"FF","isMaxInclusive":true}}`}, "not a [min, max) range"},
		{[]string{"--feed-range", `{"Range":{"min":"","max":"FF"}}`, "--shards", "2"}, "leave out --shards"},
		{[]string{"--shards", "x"}, ""},
		{[]string{"extra"}, ""},
	} {
		r := cosmosctl(t, "", append([]string{"ranges"}, tc.args...)...)
		if r.code != ExitUsage || r.out != "" || !strings.Contains(r.errOut, tc.says) || strings.Count(strings.TrimSpace(r.errOut), "\n") != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q: want exit 2 and one line saying %q", tc.args, r.code, r.out, r.errOut, tc.says)
		}
	}
	if r := cosmosctl(t, "", "ranges", "--container", "nope"); r.code != ExitNotFound || r.out != "" {
		t.Fatalf("a container that does not exist: exit %d, stdout %q, stderr %q", r.code, r.out, r.errOut)
	}
}

// TestRangesIsBoundedWhenTheFirstRegionHangs: with East US hanging every request, the
// definition, the ranges and the statistics fail over within --attempt-timeout and the
// plan is printed well within a generous bound; statistics that did not come are a
// note, never a silent gap.
func TestRangesIsBoundedWhenTheFirstRegionHangs(t *testing.T) {
	srv := testAccount(t)
	seedKeys(t, srv, []string{"t1", "t2"}, 1)
	if _, err := srv.AddFault(faults.Rule{Region: "East US", Operations: []string{faults.GroupReads, faults.OpPKRanges, faults.OpMetadata}, Effect: faults.EffectHang}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	rows, r := rangesJSON(t, "--shards", "3", "--attempt-timeout", "300ms", "--e2e-timeout", "5s")
	// Generous: a few 300 ms attempt timeouts on a loaded machine.
	if elapsed := time.Since(start); elapsed > 30*time.Second {
		t.Fatalf("took %s", elapsed)
	}
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	checkRows(t, rows, 3)
	if rows[0].EstDocuments == nil && !strings.Contains(r.errOut, "statistics") {
		t.Fatalf("no estimates and no note: %q", r.errOut)
	}
}

// TestRangesAfterASplitAndAMerge: after range 1 splits (its children 4 and 5, listed
// after the others) and ranges 2 and 3 merge, the plan is of the live ranges in EPK
// order, tiling the key space, and the estimates still add up to the container's items.
func TestRangesAfterASplitAndAMerge(t *testing.T) {
	srv := fiveRanges(t)
	if _, err := srv.SplitRange(emulator.SplitRequest{Database: "app", Container: "items", Range: "1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.MergeRanges(emulator.MergeRequest{Database: "app", Container: "items", Ranges: []string{"2", "3"}}); err != nil {
		t.Fatal(err)
	}
	perRange, r := rangesJSON(t)
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	checkRows(t, perRange, 5)
	for _, n := range []int{2, 5, 9} {
		rows, r := rangesJSON(t, "--shards", fmt.Sprint(n))
		if r.code != ExitOK {
			t.Fatalf("--shards %d: exit %d: %s", n, r.code, r.errOut)
		}
		checkRows(t, rows, n)
		var docs int64
		for _, row := range rows {
			docs += *row.EstDocuments
		}
		if docs < 60-int64(n) || docs > 60+int64(n) {
			t.Fatalf("--shards %d: estimates add up to %d documents, the container holds 60", n, docs)
		}
	}
}
