package data_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/changefeed"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"

	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// TestChangesKilledAndResumedWhileWritesContinue is the acceptance test of --state: the
// built binary follows the feed with a state file while a writer keeps creating items;
// it is killed (SIGKILL: no chance to save) twice and resumed. Every created item is
// printed by some run, and the only items a run prints again are those the killed run
// printed after the position its state file held when it died (its _lsn past the
// saved continuation of its range): printed, not yet checkpointed.
func TestChangesKilledAndResumedWhileWritesContinue(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := testkit.Binary(t)
	srv := testkit.Account(t)
	dir := t.TempDir()
	state := filepath.Join(dir, "feed.json")
	const pageSize = 5

	// The writer creates n0000, n0001, … until stopped.
	cred, _ := cosmos.NewMasterKey(srv.Key())
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var created []string
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			id := fmt.Sprintf("n%05d", i)
			body := fmt.Sprintf(`{"id":%q,"pk":"p%d"}`, id, i%13)
			req := &cosmos.Request{Method: http.MethodPost, Path: cosmos.ItemsPath("app", "items"), Header: http.Header{}, Body: []byte(body)}
			req.Header.Set(cosmos.HeaderPartitionKey, fmt.Sprintf(`["p%d"]`, i%13))
			resp, err := tr.Do(context.Background(), srv.Endpoint(), req)
			if err != nil || resp.StatusCode != http.StatusCreated {
				t.Errorf("creating %s: %v %+v", id, err, resp)
				return
			}
			mu.Lock()
			created = append(created, id)
			mu.Unlock()
			time.Sleep(2 * time.Millisecond) // a steady trickle, not a flood
		}
	}()
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		wg.Wait()
	}()

	env := os.Environ()
	args := []string{"changes", "--follow", "--state", state, "--poll-interval", "10ms", "--page-size", fmt.Sprint(pageSize)}
	ranges := containerRanges(t, tr, srv)
	var runs [][]printedChange    // what each run printed, in order
	var unsaved []map[string]bool // per killed run: what it printed past its saved position
	for k := 0; k < 2; k++ {
		outPath := filepath.Join(dir, fmt.Sprintf("run%d.ndjson", k))
		out, err := os.Create(outPath)
		if err != nil {
			t.Fatal(err)
		}
		var errOut strings.Builder
		c := exec.Command(bin, args...)
		c.Env, c.Stdout, c.Stderr = env, out, &errOut
		runStart := time.Now()
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		// Let it print a good many batches and save its position a few times (it
		// saves at most every 100 ms while changes keep coming), then kill it.
		deadline := time.Now().Add(60 * time.Second)
		saves := map[string]bool{}
		for (countLines(t, outPath) < 40 || len(saves) < 3) && time.Now().Before(deadline) {
			if st, err := changefeed.LoadState(state); err == nil && st.SavedAt.After(runStart) {
				saves[st.SavedAt.String()] = true
			}
			time.Sleep(5 * time.Millisecond)
		}
		// Not just after a save: somewhere into the next 100 ms.
		time.Sleep(time.Duration(30+60*k) * time.Millisecond)
		c.Process.Kill()
		c.Wait()
		out.Close()
		lines := readChanges(t, outPath)
		if len(lines) < 40 || len(saves) < 3 {
			t.Fatalf("run %d printed %d lines and saved %d times in a minute; stderr %s", k, len(lines), len(saves), errOut.String())
		}
		runs = append(runs, lines)
		st, err := changefeed.LoadState(state)
		if err != nil {
			t.Fatalf("after kill %d the state file cannot be used: %v", k, err)
		}
		saved := map[string]int64{}
		for _, r := range st.Ranges {
			saved[r.ID], _ = strconv.ParseInt(strings.Trim(r.Continuation, `"`), 10, 64)
		}
		tail := map[string]bool{}
		for _, c := range lines {
			rng, _ := cosmos.RangeFor(cosmos.EffectivePartitionKey(mustPartitionKey(t, c.PK)), ranges)
			if c.LSN > saved[rng.ID] {
				tail[c.ID] = true
			}
		}
		unsaved = append(unsaved, tail)
		t.Logf("run %d: %d printed, %d of them past the saved position", k, len(lines), len(tail))
	}
	close(stop)
	wg.Wait()
	// The last run catches up with everything written and stops.
	code, out, errOut := testkit.RunBinary(t, bin, env, "", "changes", "--state", state, "--page-size", fmt.Sprint(pageSize))
	if code != 0 {
		t.Fatalf("last run: exit %d: %s", code, errOut)
	}
	lastPath := filepath.Join(dir, "run2.ndjson")
	os.WriteFile(lastPath, []byte(out), 0o600)
	runs = append(runs, readChanges(t, lastPath))

	for k, tail := range unsaved {
		next := map[string]bool{}
		for _, c := range runs[k+1] {
			next[c.ID] = true
		}
		for id := range tail {
			if !next[id] {
				t.Errorf("%s, printed by run %d past its saved position, was not printed by run %d, which resumed from there", id, k, k+1)
			}
		}
	}
	printed := map[string]bool{}
	for k, changes := range runs {
		once := map[string]bool{}
		for _, c := range changes {
			if once[c.ID] {
				t.Errorf("run %d printed %s twice", k, c.ID)
			}
			once[c.ID] = true
			if printed[c.ID] && !unsaved[k-1][c.ID] {
				t.Errorf("run %d printed %s again, which the run before had saved", k, c.ID)
			}
			printed[c.ID] = true
		}
	}
	mu.Lock()
	defer mu.Unlock()
	lost := 0
	for _, id := range created {
		if !printed[id] {
			lost++
			if lost <= 5 {
				t.Errorf("%s was created and never printed", id)
			}
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d created items lost", lost, len(created))
	}
	t.Logf("%d items created; runs printed %d, %d, %d", len(created), len(runs[0]), len(runs[1]), len(runs[2]))
}

func countLines(t *testing.T, path string) int {
	b, _ := os.ReadFile(path)
	return strings.Count(string(b), "\n")
}

// printedChange is what the kill test reads of a printed change.
type printedChange struct {
	ID  string `json:"id"`
	PK  string `json:"pk"`
	LSN int64  `json:"_lsn"`
}

// readChanges are the whole lines of an NDJSON file, in order (a line the kill cut
// short is not one).
func readChanges(t *testing.T, path string) []printedChange {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []printedChange
	s := string(b)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[:i+1]
	} else {
		s = ""
	}
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		if line == "" {
			continue
		}
		var c printedChange
		if err := json.Unmarshal([]byte(line), &c); err != nil || c.ID == "" || c.LSN == 0 {
			t.Fatalf("%s: %q: %v", path, line, err)
		}
		out = append(out, c)
	}
	return out
}

func mustPartitionKey(t *testing.T, v string) cosmos.PartitionKey {
	pk, err := cosmos.PK(v)
	if err != nil {
		t.Fatal(err)
	}
	return pk
}

// containerRanges are app/items' partition key ranges.
func containerRanges(t *testing.T, tr *cosmos.Transport, srv *emulator.Server) []cosmos.PartitionKeyRange {
	t.Helper()
	resp, err := tr.Do(context.Background(), srv.Endpoint(), &cosmos.Request{Method: http.MethodGet, Path: cosmos.PKRangesPath("app", "items"), Header: http.Header{}})
	if err != nil {
		t.Fatal(err)
	}
	var feed cosmos.PartitionKeyRangeFeed
	if err := json.Unmarshal(resp.Body, &feed); err != nil || len(feed.Ranges) == 0 {
		t.Fatalf("pkranges: %v %s", err, resp.Body)
	}
	return feed.Ranges
}
