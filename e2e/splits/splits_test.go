// Package splits_test runs the data commands against an emulator whose container splits
// and merges while they work and while writes go on, on an account with partition merge
// enabled and its metadata feeds served in pages of one: what a real account with many
// physical partitions does under growth and shrinkage. Every command must give exactly
// the right answer: queries resumed across a split and a merge, the change feed and an
// export resumed from their states, locate and container show after them.
package splits_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cmd"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/internal/clitest"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

const seeds = 200

func send(t *testing.T, srv *emulator.Server, method, path string, header map[string]string, body string) (*cosmos.Response, error) {
	cred, _ := cosmos.NewMasterKey(srv.Key())
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
	req := &cosmos.Request{Method: method, Path: path, Header: http.Header{}}
	if body != "" {
		req.Body = []byte(body)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return tr.Do(context.Background(), srv.Endpoint(), req)
}

func create(t *testing.T, srv *emulator.Server, id, pk, kind string, n int) error {
	resp, err := send(t, srv, http.MethodPost, cosmos.ItemsPath("app", "items"), map[string]string{cosmos.HeaderPartitionKey: `["` + pk + `"]`},
		fmt.Sprintf(`{"id":%q,"pk":%q,"kind":%q,"n":%d}`, id, pk, kind, n))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("creating %s: %d %s", id, resp.StatusCode, resp.Body)
	}
	return nil
}

// writer creates "live" items one after another until stopped, and keeps the ids the
// emulator acknowledged.
type writer struct {
	mu    sync.Mutex
	acked []string
	stop  chan struct{}
	done  chan error
}

func startWriter(t *testing.T, srv *emulator.Server) *writer {
	w := &writer{stop: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		for i := 0; ; i++ {
			select {
			case <-w.stop:
				w.done <- nil
				return
			default:
			}
			id := fmt.Sprintf("w%05d", i)
			if err := create(t, srv, id, fmt.Sprintf("q%03d", i%97), "live", i); err != nil {
				w.done <- err
				return
			}
			w.mu.Lock()
			w.acked = append(w.acked, id)
			w.mu.Unlock()
		}
	}()
	return w
}

// waitFor waits until at least n items were acknowledged, so that writes are really
// going on around what follows.
func (w *writer) waitFor(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := w.count()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the writer acknowledged %d writes in 60 s, want %d", got, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (w *writer) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.acked)
}

func (w *writer) finish(t *testing.T) []string {
	t.Helper()
	close(w.stop)
	if err := <-w.done; err != nil {
		t.Fatalf("a write failed during the splits and merges: %v", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.acked...)
}

type queryJSON struct {
	Items        []json.RawMessage `json:"items"`
	Complete     bool              `json:"complete"`
	Continuation *string           `json:"continuation"`
	Totals       struct {
		Splits int `json:"splits"`
		Merges int `json:"merges"`
	} `json:"totals"`
}

func query(t *testing.T, args ...string) queryJSON {
	t.Helper()
	var q queryJSON
	out := clitest.MustRun(t, append([]string{"query", "-o", "json", "--page-size", "7"}, args...)...)
	if err := json.Unmarshal([]byte(out), &q); err != nil {
		t.Fatalf("query -o json printed %q: %v", out, err)
	}
	return q
}

// chain is a query read in runs of 30 items, each resumed from the previous run's
// continuation.
type chain struct {
	sql   string
	tok   string
	items []json.RawMessage
	done  bool
	seen  queryJSON // the totals of the runs, summed
}

func (c *chain) step(t *testing.T) {
	t.Helper()
	if c.done {
		return
	}
	args := []string{c.sql, "--max-items", "30"}
	if c.tok != "" {
		args = append(args, "--continuation", c.tok)
	}
	q := query(t, args...)
	c.items = append(c.items, q.Items...)
	c.seen.Totals.Splits += q.Totals.Splits
	c.seen.Totals.Merges += q.Totals.Merges
	if q.Continuation == nil || *q.Continuation == "" {
		c.done = true
		return
	}
	c.tok = *q.Continuation
}

func ndjsonIDs(t *testing.T, out string, seen map[string]int) {
	t.Helper()
	clitest.ItemIDs(t, out, seen)
}

func seedIDs() []string {
	var ids []string
	for i := 0; i < seeds; i++ {
		ids = append(ids, fmt.Sprintf("s%03d", i))
	}
	return ids
}

// exactlyOnce reports what of want is not in seen exactly once, and what seen holds
// beyond want.
func exactlyOnce(seen map[string]int, want []string) string {
	var problems []string
	w := map[string]bool{}
	for _, id := range want {
		w[id] = true
		if seen[id] != 1 {
			problems = append(problems, fmt.Sprintf("%s×%d", id, seen[id]))
		}
	}
	for id := range seen {
		if !w[id] {
			problems = append(problems, id+" (not expected)")
		}
	}
	sort.Strings(problems)
	if len(problems) > 8 {
		problems = append(problems[:8], fmt.Sprintf("… %d in all", len(problems)))
	}
	return strings.Join(problems, ", ")
}

// liveRanges reads the container's partition key ranges, every page of them.
func liveRanges(t *testing.T, srv *emulator.Server) []cosmos.PartitionKeyRange {
	t.Helper()
	var all []cosmos.PartitionKeyRange
	cont := ""
	for {
		h := map[string]string{}
		if cont != "" {
			h[cosmos.HeaderContinuation] = cont
		}
		resp, err := send(t, srv, http.MethodGet, cosmos.PKRangesPath("app", "items"), h, "")
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("reading the ranges: %v %+v", err, resp)
		}
		var feed cosmos.PartitionKeyRangeFeed
		if err := json.Unmarshal(resp.Body, &feed); err != nil {
			t.Fatal(err)
		}
		all = append(all, feed.Ranges...)
		if cont = resp.Header.Get(cosmos.HeaderContinuation); cont == "" {
			return all
		}
	}
}

// exportUntilCut runs an export in-process and stops it (as Ctrl-C does) once it has
// written its first items: it is paced to take far longer than that.
func exportUntilCut(t *testing.T, out string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	io, stdout, stderr := clitest.IO()
	code := make(chan int, 1)
	go func() { code <- cmd.Run(ctx, io, args) }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if b, _ := os.ReadFile(out); bytes.Count(b, []byte("\n")) >= 1 {
			break
		}
		select {
		case c := <-code:
			t.Fatalf("the paced export ended (exit %d) before it wrote anything it could be stopped after\nstdout %s\nstderr %s", c, stdout, stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the export wrote nothing in 60 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if c := <-code; c != cmd.ExitInterrupted {
		t.Fatalf("the stopped export exited %d, want %d (interrupted, state saved)\nstderr %s", c, cmd.ExitInterrupted, stderr)
	}
}

// TestCommandsGiveExactAnswersAcrossALiveSplitAndMerge: queries, the change feed and an
// export are started, a range splits and two ranges merge while items are written, and
// each goes on to exactly the right answer.
func TestCommandsGiveExactAnswersAcrossALiveSplitAndMerge(t *testing.T) {
	srv := testkit.Account(t, func(c *emulator.Config) { c.Ranges, c.FeedPageSize, c.MergeEnabled = 4, 1, true })
	for i := 0; i < seeds; i++ {
		if err := create(t, srv, fmt.Sprintf("s%03d", i), fmt.Sprintf("p%03d", i), "seed", i); err != nil {
			t.Fatal(err)
		}
	}
	ctl, err := emulator.NewControlClient(srv.Endpoint(), srv.Key())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dir := t.TempDir()

	w := startWriter(t, srv)
	w.waitFor(t, 20)

	// Before: every reader takes its first part.
	plain := &chain{sql: "SELECT c.id FROM c WHERE c.kind = 'seed'"}
	ordered := &chain{sql: "SELECT VALUE c.n FROM c WHERE c.kind = 'seed' ORDER BY c.n DESC"}
	plain.step(t)
	ordered.step(t)
	changesState := filepath.Join(dir, "changes.state")
	changed := map[string]int{}
	ndjsonIDs(t, clitest.MustRun(t, "changes", "--state", changesState, "--max-items", "90", "--page-size", "10"), changed)
	exportOut, exportState := filepath.Join(dir, "export.ndjson"), filepath.Join(dir, "export.state")
	exportArgs := []string{"export", "--query", "SELECT * FROM c WHERE c.kind = 'seed'", "--page-size", "5", "--strip-system",
		"--state", exportState, "--output-file", exportOut}
	exportUntilCut(t, exportOut, append(append([]string(nil), exportArgs...), "--max-ru-per-second", "2")...)

	// A split while the writes go on.
	before := liveRanges(t, srv)
	split, err := ctl.Split(ctx, emulator.SplitRequest{Database: "app", Container: "items", Range: before[1].ID})
	if err != nil {
		t.Fatal(err)
	}
	w.waitFor(t, w.count()+20)
	plain.step(t)
	ordered.step(t)
	ndjsonIDs(t, clitest.MustRun(t, "changes", "--state", changesState, "--max-items", "90", "--page-size", "10"), changed)

	// A merge of the split's second child with the range after it, and of the first two
	// ranges, while the writes go on.
	if _, err := ctl.Merge(ctx, emulator.MergeRequest{Database: "app", Container: "items", Ranges: []string{split.Created[1].ID, before[2].ID}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ctl.Merge(ctx, emulator.MergeRequest{Database: "app", Container: "items", Ranges: []string{before[0].ID, split.Created[0].ID}}); err != nil {
		t.Fatal(err)
	}
	w.waitFor(t, w.count()+20)
	acked := w.finish(t)

	// After: each reader goes on to its end.
	for !plain.done || !ordered.done {
		plain.step(t)
		ordered.step(t)
	}
	t.Run("a plain query resumed across the split and the merges", func(t *testing.T) {
		seen := map[string]int{}
		for _, it := range plain.items {
			var d struct{ ID string }
			_ = json.Unmarshal(it, &d)
			seen[d.ID]++
		}
		if p := exactlyOnce(seen, seedIDs()); p != "" {
			t.Errorf("items not exactly once: %s", p)
		}
	})
	t.Run("ORDER BY resumed across the split and the merges", func(t *testing.T) {
		ok := len(ordered.items) == seeds
		for i := 0; ok && i < seeds; i++ {
			ok = string(ordered.items[i]) == fmt.Sprint(seeds-1-i)
		}
		if !ok {
			t.Errorf("ORDER BY c.n DESC gave %d values, want %d..0: %s", len(ordered.items), seeds-1, ordered.items)
		}
		if ordered.seen.Totals.Splits+ordered.seen.Totals.Merges == 0 && plain.seen.Totals.Splits+plain.seen.Totals.Merges == 0 {
			t.Error("neither query reports a split or merge: the ranges they resumed on did not change")
		}
	})
	t.Run("COUNT after the split and the merges", func(t *testing.T) {
		q := query(t, "SELECT VALUE COUNT(1) FROM c")
		if want := fmt.Sprint(seeds + len(acked)); len(q.Items) != 1 || string(q.Items[0]) != want || !q.Complete {
			t.Errorf("COUNT(1) = %s complete %v, want [%s]", q.Items, q.Complete, want)
		}
	})
	t.Run("changes resumed from its state", func(t *testing.T) {
		ndjsonIDs(t, clitest.MustRun(t, "changes", "--state", changesState, "--page-size", "10"), changed)
		if p := exactlyOnce(changed, append(seedIDs(), acked...)); p != "" {
			t.Errorf("changes not exactly once over its runs: %s", p)
		}
		if out := clitest.MustRun(t, "changes", "--state", changesState); out != "" {
			t.Errorf("a run from the caught-up state printed %q, want nothing", out)
		}
	})
	t.Run("export resumed from its state", func(t *testing.T) {
		clitest.MustRun(t, exportArgs...)
		b, _ := os.ReadFile(exportOut)
		seen := map[string]int{}
		ndjsonIDs(t, string(b), seen)
		if p := exactlyOnce(seen, seedIDs()); p != "" {
			t.Errorf("the export file's items not exactly once: %s", p)
		}
	})
	after := liveRanges(t, srv)
	t.Run("locate names the range that holds the key now", func(t *testing.T) {
		for _, i := range []int{0, 37, 74, 111, 148, 199} {
			pk := fmt.Sprintf("p%03d", i)
			resp, err := send(t, srv, http.MethodGet, cosmos.ItemPath("app", "items", fmt.Sprintf("s%03d", i)), map[string]string{cosmos.HeaderPartitionKey: `["` + pk + `"]`}, "")
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("reading s%03d: %v %+v", i, err, resp)
			}
			var rep struct {
				Ranges []struct {
					ID string `json:"id"`
				} `json:"ranges"`
			}
			out := clitest.MustRun(t, "locate", "--pk", pk, "-o", "json")
			if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Ranges) != 1 || rep.Ranges[0].ID != resp.Header.Get(cosmos.HeaderPartitionKeyRangeID) {
				t.Errorf("locate --pk %s: %s, want range %s", pk, out, resp.Header.Get(cosmos.HeaderPartitionKeyRangeID))
			}
		}
	})
	t.Run("container show counts the ranges there are now", func(t *testing.T) {
		var c struct {
			Ranges *int `json:"partition_key_ranges"`
		}
		out := clitest.MustRun(t, "container", "show", "items", "-o", "json")
		if err := json.Unmarshal([]byte(out), &c); err != nil || c.Ranges == nil || *c.Ranges != len(after) || len(after) != 3 {
			t.Errorf("container show: %s; the emulator has %d ranges (4, one split, two merges: 3)", out, len(after))
		}
	})
}
