package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/shard"
)

// shardAccount is an account whose items container has 3 partition key ranges: 1 and
// 3 shards read whole ranges, 4 and 7 cut some into sub-ranges.
func shardAccount(t *testing.T, n int) []string {
	t.Helper()
	_, ids := shardServer(t, n)
	return ids
}

func shardServer(t *testing.T, n int) (*emulator.Server, []string) {
	t.Helper()
	srv := testAccount(t, func(c *emulator.Config) { c.Ranges = 3 })
	var b strings.Builder
	var ids []string
	for i := range n {
		id := fmt.Sprintf("i%04d", i)
		ids = append(ids, id)
		fmt.Fprintf(&b, `{"id":%q,"pk":"p%d","n":%d}`+"\n", id, i%101, i)
	}
	if r := cosmosctl(t, b.String(), "import", "-"); r.code != ExitOK {
		t.Fatalf("import: %+v", r)
	}
	return srv, ids
}

// idsOf are the ids of an NDJSON file's items, sorted.
func idsOf(t *testing.T, ndjson string) []string {
	t.Helper()
	var ids []string
	for _, m := range jsonLines(t, "the items", ndjson) {
		ids = append(ids, m["id"].(string))
	}
	slices.Sort(ids)
	return ids
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestShardedExportsMergeToThePlainExportEachItemOnce(t *testing.T) {
	ids := shardAccount(t, 600)
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.ndjson")
	if r := cosmosctl(t, "", "export", "--output-file", plain); r.code != ExitOK {
		t.Fatalf("plain export: %+v", r)
	}
	if got := idsOf(t, readFile(t, plain)); !slices.Equal(got, ids) {
		t.Fatalf("the plain export holds %d items, want %d", len(got), len(ids))
	}
	for _, n := range []int{1, 3, 4, 7} {
		t.Run(fmt.Sprintf("%d shards", n), func(t *testing.T) {
			sd := filepath.Join(dir, fmt.Sprint(n))
			if err := os.MkdirAll(sd, 0o700); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				flag := fmt.Sprintf("%d/%d", i, n)
				if n == 4 {
					// A Kubernetes Indexed Job's pod: the index comes from the environment.
					t.Setenv("JOB_COMPLETION_INDEX", fmt.Sprint(i))
					flag = "auto/4"
				}
				out := filepath.Join(sd, fmt.Sprintf("s%d.ndjson", i))
				r := cosmosctl(t, "", "export", "--shard", flag, "--output-file", out, "--state", out+".state")
				if r.code != ExitOK {
					t.Fatalf("shard %d/%d: %+v", i, n, r)
				}
				if cuts := strings.Contains(r.errOut, "read as a sub-range"); cuts != (n > 3) && i == 0 {
					t.Fatalf("shard %d/%d: a notice of a sub-range read is printed iff the shards cut a range (3 ranges): %q", i, n, r.errOut)
				}
			}
			merged := filepath.Join(dir, fmt.Sprintf("merged-%d.ndjson", n))
			r := cosmosctl(t, "", "export", "merge", sd, "--output-file", merged)
			if r.code != ExitOK {
				t.Fatalf("merge: %+v", r)
			}
			if got := idsOf(t, readFile(t, merged)); !slices.Equal(got, ids) {
				t.Fatalf("the %d shards merged hold %d items (want every one of %d exactly once)", n, len(got), len(ids))
			}
			r = cosmosctl(t, "", "export", "merge", sd)
			if r.code != ExitOK || !slices.Equal(idsOf(t, r.out), ids) {
				t.Fatalf("merge to stdout: exit %d, %d lines", r.code, strings.Count(r.out, "\n"))
			}
		})
	}
}

func TestExportMergeSaysWhatIsMissingOrIncomplete(t *testing.T) {
	shardAccount(t, 50)
	dir := t.TempDir()
	for _, i := range []int{0, 2} {
		out := filepath.Join(dir, fmt.Sprintf("s%d.ndjson", i))
		if r := cosmosctl(t, "", "export", "--shard", fmt.Sprintf("%d/3", i), "--output-file", out); r.code != ExitOK {
			t.Fatalf("shard %d: %+v", i, r)
		}
	}
	r := cosmosctl(t, "", "export", "merge", dir)
	if r.code != ExitPartial || !strings.Contains(r.errOut, "missing: shard 1/3") || r.out != "" {
		t.Fatalf("a missing shard: exit %d (want %d) naming it, nothing on stdout: %+v", r.code, ExitPartial, r)
	}
	// An incomplete shard: its manifest says so (a shard killed before it completed).
	m := filepath.Join(dir, "s2.ndjson"+".manifest.json")
	b := strings.Replace(readFile(t, m), `"complete": true`, `"complete": false`, 1)
	if err := os.WriteFile(m, []byte(b), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "s1.ndjson")
	if r := cosmosctl(t, "", "export", "--shard", "1/3", "--output-file", out); r.code != ExitOK {
		t.Fatalf("shard 1: %+v", r)
	}
	r = cosmosctl(t, "", "export", "merge", dir)
	if r.code != ExitPartial || !strings.Contains(r.errOut, "not complete: shard 2/3") {
		t.Fatalf("an incomplete shard: exit %d, %q", r.code, r.errOut)
	}
	// Shards of another plan never merge.
	other := filepath.Join(t.TempDir(), "o.ndjson")
	if r := cosmosctl(t, "", "export", "--shard", "0/2", "--output-file", other); r.code != ExitOK {
		t.Fatalf("shard 0/2: %+v", r)
	}
	r = cosmosctl(t, "", "export", "merge", filepath.Join(dir, "s0.ndjson.manifest.json"), other+".manifest.json")
	if r.code != ExitUsage || !strings.Contains(r.errOut, "different plans") {
		t.Fatalf("shards of two plans: exit %d, %q", r.code, r.errOut)
	}
}

func TestAStateOfAnotherShardIsRefused(t *testing.T) {
	shardAccount(t, 20)
	dir := t.TempDir()
	out, state := filepath.Join(dir, "s.ndjson"), filepath.Join(dir, "s.state")
	if r := cosmosctl(t, "", "export", "--shard", "0/4", "--output-file", out, "--state", state); r.code != ExitOK {
		t.Fatalf("shard 0/4: %+v", r)
	}
	feed := filepath.Join(dir, "feed.state")
	if r := cosmosctl(t, "", "changes", "--shard", "0/4", "--state", feed, "-o", "ndjson"); r.code != ExitOK {
		t.Fatalf("changes 0/4: %+v", r)
	}
	// Refused before the first request: an account that answers nothing would be exit 8.
	live := os.Getenv("COSMOSCTL_ENDPOINT")
	t.Setenv("COSMOSCTL_ENDPOINT", "https://127.0.0.1:1")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"export of another shard", []string{"export", "--shard", "1/4", "--output-file", out, "--state", state}, "shard 1/4"},
		{"export of another plan", []string{"export", "--shard", "0/3", "--output-file", out, "--state", state}, "shard 0/3"},
		{"export of no shard", []string{"export", "--output-file", out, "--state", state}, "the whole container"},
		{"export of a feed range", []string{"export", "--feed-range", `{"Range":{"min":"","max":"FF"}}`, "--output-file", out, "--state", state}, "feed range"},
		{"changes of another shard", []string{"changes", "--shard", "2/4", "--state", feed}, "shard 2/4"},
		{"changes of no shard", []string{"changes", "--state", feed}, "the whole container"},
	} {
		r := cosmosctl(t, "", tc.args...)
		if r.code != ExitUsage || !strings.Contains(r.errOut, "shard 0/4") || !strings.Contains(r.errOut, tc.want) ||
			!strings.Contains(r.errOut, "--shard 0/4") || strings.Count(strings.TrimSpace(r.errOut), "\n") != 0 {
			t.Fatalf("%s: exit %d (want %d), one line naming both and the fix: %q", tc.name, r.code, ExitUsage, r.errOut)
		}
	}
	t.Setenv("COSMOSCTL_ENDPOINT", live)
	// The same shard resumes (complete: nothing to do).
	if r := cosmosctl(t, "", "export", "--shard", "0/4", "--output-file", out, "--state", state); r.code != ExitOK {
		t.Fatalf("resume 0/4: %+v", r)
	}
}

func TestChangesShardsTogetherDeliverEveryChange(t *testing.T) {
	ids := shardAccount(t, 300)
	dir := t.TempDir()
	const n = 5
	read := func() []string {
		var got []string
		for i := range n {
			r := cosmosctl(t, "", "changes", "--shard", fmt.Sprintf("%d/%d", i, n), "--state", filepath.Join(dir, fmt.Sprint(i)), "-o", "ndjson")
			if r.code != ExitOK {
				t.Fatalf("changes %d/%d: %+v", i, n, r)
			}
			got = append(got, idsOf(t, r.out)...)
		}
		slices.Sort(got)
		return got
	}
	if got := read(); !slices.Equal(got, ids) {
		t.Fatalf("the shards' changes hold %d items, want each of %d once", len(got), len(ids))
	}
	var b strings.Builder
	var more []string
	for i := range 80 {
		id := fmt.Sprintf("m%03d", i)
		more = append(more, id)
		fmt.Fprintf(&b, `{"id":%q,"pk":"q%d"}`+"\n", id, i)
	}
	if r := cosmosctl(t, b.String(), "import", "-"); r.code != ExitOK {
		t.Fatalf("import: %+v", r)
	}
	if got := read(); !slices.Equal(got, more) {
		t.Fatalf("resumed, the shards' changes are %v, want the %d new items once", got, len(more))
	}
}

func TestQueryShardsTogetherReturnEveryItemOnce(t *testing.T) {
	ids := shardAccount(t, 200)
	var got []string
	for i := range 7 {
		r := cosmosctl(t, "", "query", "SELECT c.id FROM c", "--all", "-o", "ndjson", "--shard", fmt.Sprintf("%d/7", i))
		if r.code != ExitOK {
			t.Fatalf("query shard %d/7: %+v", i, r)
		}
		got = append(got, idsOf(t, r.out)...)
	}
	slices.Sort(got)
	if !slices.Equal(got, ids) {
		t.Fatalf("the 7 query shards return %d items, want each of %d once", len(got), len(ids))
	}
	whole := cosmosctl(t, "", "query", "SELECT c.id FROM c", "--all", "-o", "ndjson", "--feed-range", `{"Range":{"min":"","max":"FF"}}`)
	if whole.code != ExitOK || !slices.Equal(idsOf(t, whole.out), ids) {
		t.Fatalf("the whole feed range: %+v", whole)
	}
}

func TestShardedChangeFeedExportsMergeToThePlainOne(t *testing.T) {
	ids := shardAccount(t, 300)
	dir := t.TempDir()
	for i := range 5 {
		out := filepath.Join(dir, fmt.Sprintf("s%d.ndjson", i))
		if r := cosmosctl(t, "", "export", "--source", "change-feed", "--shard", fmt.Sprintf("%d/5", i), "--output-file", out, "--state", out+".state"); r.code != ExitOK {
			t.Fatalf("shard %d/5: %+v", i, r)
		}
		// Resumed complete: nothing to do, and the state's change feed position is the shard's.
		if r := cosmosctl(t, "", "export", "--source", "change-feed", "--shard", fmt.Sprintf("%d/5", i), "--output-file", out, "--state", out+".state"); r.code != ExitOK {
			t.Fatalf("shard %d/5 again: %+v", i, r)
		}
	}
	r := cosmosctl(t, "", "export", "merge", dir)
	if r.code != ExitOK || !slices.Equal(idsOf(t, r.out), ids) {
		t.Fatalf("the change feed shards merged: exit %d, %d lines, want %d items once: %s", r.code, strings.Count(r.out, "\n"), len(ids), r.errOut)
	}
}

// A resumed shard reads the interval its state recorded, not a new plan: a split since
// its first start would give it another. Shards planned before and after a split do not
// merge.
func TestAResumedShardKeepsItsIntervalAfterASplit(t *testing.T) {
	srv, _ := shardServer(t, 300)
	dir := t.TempDir()
	out, state := filepath.Join(dir, "s1.ndjson"), filepath.Join(dir, "s1.state")
	if r := cosmosctl(t, "", "export", "--shard", "1/4", "--output-file", out, "--state", state); r.code != ExitOK {
		t.Fatalf("shard 1/4: %+v", r)
	}
	before := idsOf(t, readFile(t, out))
	if _, err := srv.SplitRange(emulator.SplitRequest{Database: "app", Container: "items", Range: "0"}); err != nil {
		t.Fatal(err)
	}
	// The state as a run killed before its first page leaves it.
	var st map[string]any
	if err := json.Unmarshal([]byte(readFile(t, state)), &st); err != nil {
		t.Fatal(err)
	}
	st["complete"], st["position"], st["items"], st["output_bytes"] = false, nil, 0, 0
	b, _ := json.Marshal(st)
	if err := os.WriteFile(state, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := cosmosctl(t, "", "export", "--shard", "1/4", "--output-file", out, "--state", state); r.code != ExitOK {
		t.Fatalf("shard 1/4 resumed: %+v", r)
	}
	if got := idsOf(t, readFile(t, out)); !slices.Equal(got, before) {
		t.Fatalf("resumed after a split, shard 1/4 read %d items, not the %d of its recorded interval", len(got), len(before))
	}
	for _, i := range []int{0, 2, 3} {
		o := filepath.Join(dir, fmt.Sprintf("s%d.ndjson", i))
		if r := cosmosctl(t, "", "export", "--shard", fmt.Sprintf("%d/4", i), "--output-file", o); r.code != ExitOK {
			t.Fatalf("shard %d/4: %+v", i, r)
		}
	}
	r := cosmosctl(t, "", "export", "merge", dir)
	if r.code != ExitUsage || !strings.Contains(r.errOut, "split") {
		t.Fatalf("shards planned before and after a split: exit %d (want %d) naming the split: %q", r.code, ExitUsage, r.errOut)
	}
}

// With --shard, export's --max-ru-per-second is the whole job's; the per-shard cap needs
// a shard, and a negative one is refused, each in one line before any request.
func TestExportShardRUFlags(t *testing.T) {
	isolate(t)
	t.Setenv("COSMOSCTL_ENDPOINT", "http://127.0.0.1:1") // nothing may be sent
	for _, args := range [][]string{
		{"export", "--max-ru-per-second-per-shard", "10"},
		{"export", "--shard", "0/2", "--max-ru-per-second-per-shard", "-1"},
	} {
		r := cosmosctl(t, "", args...)
		if r.code != ExitUsage || strings.Count(strings.TrimSpace(r.errOut), "\n") != 0 || !strings.Contains(r.errOut, "--max-ru-per-second-per-shard") {
			t.Fatalf("%v: exit %d %q", args, r.code, r.errOut)
		}
	}
	if got := shardRULimit(400, 0, shard.Spec{Index: 1, Count: 4}); got != 100 {
		t.Fatalf("a quarter of 400 RU/s is %v", got)
	}
}
