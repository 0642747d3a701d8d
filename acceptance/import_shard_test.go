package acceptance

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// TestImportShardsAsProcessesStoreEveryLineOnce is issue 28's import across processes:
// one file of 20,000 items imported by N = 1, 3, 4 and 7 `cosmosctl import --shard i/N`
// processes at once, each N into a container of its own, with 20 % of the write answers
// dropped after the write is applied; with N = 4 one shard takes its index from
// JOB_COMPLETION_INDEX (--shard auto/4) and another is SIGKILLed halfway and resumed
// from its state. Every N stores every item exactly once, each with the _trackingId of
// the one run all its shards share (so a lost answer is recognised, never counted as
// someone else's item), and the shards' reports add up to the file.
func TestImportShardsAsProcessesStoreEveryLineOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and imports 20,000 items four times")
	}
	const items = 20000
	bin := testkit.Binary(t)
	endpoint := emulatorProcess(t, bin, isolatedEnv(t), "--latency", "none")
	env := isolatedEnv(t, "COSMOSCTL_ENDPOINT="+endpoint)
	if code, _, errOut := runBinary(t, bin, env, "emulator", "fault", "add", "--endpoint", endpoint,
		"--op", "create", "--effect", "drop-response", "--probability", "0.2"); code != 0 {
		t.Fatalf("fault add: %s", errOut)
	}
	dir := t.TempDir()
	input := filepath.Join(dir, "items.ndjson")
	writeItems(t, input, items)
	for _, n := range []int{1, 3, 4, 7} {
		container := fmt.Sprintf("shards%d", n)
		if code, _, errOut := runBinary(t, bin, env, "container", "create", container, "--partition-key", "/pk"); code != 0 {
			t.Fatalf("container create: %s", errOut)
		}
		args := func(i int) []string {
			return []string{"import", input, "--container", container, "--shard", fmt.Sprintf("%d/%d", i, n),
				"--state", filepath.Join(dir, fmt.Sprintf("%s-%d.state", container, i)), "--concurrency", "32", "-o", "json"}
		}
		if n == 4 {
			killShardHalfway(t, bin, env, args(1), items/n)
		}
		reports := make([]shardReport, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a, e := args(i), env
				if n == 4 && i == 2 {
					a[5], e = "auto/4", append(e[:len(e):len(e)], "JOB_COMPLETION_INDEX=2")
				}
				code, out, errOut := runBinary(t, bin, e, a...)
				if code != 0 || json.Unmarshal([]byte(out), &reports[i]) != nil {
					t.Errorf("shard %d/%d exited %d: %s %s", i, n, code, out, errOut)
				}
			}()
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
		var created, lines int64
		for i, r := range reports {
			if !r.Complete || r.RunID != reports[0].RunID || r.Shard.Index != i || r.Shard.Count != n || r.Shard.Lines+r.Shard.OtherLines != items ||
				r.AlreadyPresent != 0 || r.Failed != 0 {
				t.Fatalf("N=%d: shard %d's report %+v", n, i, r)
			}
			if resumed := n == 4 && i == 1; resumed != (r.Runs == 2) {
				t.Fatalf("N=%d: shard %d ran %d times", n, i, r.Runs)
			}
			created += r.Created
			lines += r.Lines
		}
		if created != items || lines != items {
			t.Fatalf("N=%d: %d created, %d lines done", n, created, lines)
		}
		query := func(sql string, extra ...string) string {
			code, out, errOut := runBinary(t, bin, env, append([]string{"query", sql, "--container", container, "--all", "-o", "ndjson"}, extra...)...)
			if code != 0 {
				t.Fatalf("query %s: exit %d: %s", sql, code, errOut)
			}
			return strings.TrimSpace(out)
		}
		ids := strings.Split(query("SELECT VALUE c.id FROM c"), "\n")
		seen := make(map[string]bool, len(ids))
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("N=%d: item %s stored twice", n, id)
			}
			seen[id] = true
		}
		if len(seen) != items {
			t.Fatalf("N=%d: %d items stored, want %d", n, len(seen), items)
		}
		if got := query("SELECT VALUE COUNT(1) FROM c WHERE c._trackingId = CONCAT(@run, ToString(c.n))", "--param", "@run="+reports[0].RunID+":"); got != fmt.Sprint(items) {
			t.Fatalf("N=%d: %s items carry their line's _trackingId of run %s, want %d", n, got, reports[0].RunID, items)
		}
		if got := query("SELECT VALUE COUNT(1) FROM c WHERE c._trackingId = CONCAT(@run, ToString(c.n))", "--param", "@run=another-run:"); got != "0" {
			t.Fatalf("N=%d: the _trackingId check is not a check: %s items match another run", n, got)
		}
	}
}

type shardReport struct {
	importReport
	RunID string `json:"run_id"`
	Shard struct {
		Index      int   `json:"index"`
		Count      int   `json:"count"`
		Lines      int64 `json:"lines"`
		OtherLines int64 `json:"other_shards_lines"`
	} `json:"shard"`
}

// killShardHalfway starts the shard and SIGKILLs it once its state counts half its lines.
func killShardHalfway(t *testing.T, bin string, env, args []string, lines int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var errOut strings.Builder
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	state := args[7]
	deadline := time.Now().Add(90 * time.Second)
	for {
		if s, ok := readImportState(state); ok && s.State.Counts.Lines >= int64(lines/2) {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("the shard ended before it was killed (%v): %s", err, errOut.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the state never counted %d lines: %s", lines/2, errOut.String())
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-exited
}
