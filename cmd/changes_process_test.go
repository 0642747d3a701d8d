package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// TestChangesKilledAndResumedWhileWritesContinue is the acceptance test of --state: the
// built binary follows the feed with a state file while a writer keeps creating items;
// it is killed (SIGKILL: no chance to save) twice and resumed. Every created item is
// printed by some run, and the only items a run prints again are the last batch the
// killed run printed, which it had not saved yet.
func TestChangesKilledAndResumedWhileWritesContinue(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := cosmosctlBinary(t)
	srv := testAccount(t)
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
	var runs [][]string // the ids each run printed, in order
	for k := 0; k < 2; k++ {
		outPath := filepath.Join(dir, fmt.Sprintf("run%d.ndjson", k))
		out, err := os.Create(outPath)
		if err != nil {
			t.Fatal(err)
		}
		var errOut strings.Builder
		c := exec.Command(bin, args...)
		c.Env, c.Stdout, c.Stderr = env, out, &errOut
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		// Let it print a good many batches (so that it saved its position several
		// times), then kill it.
		deadline := time.Now().Add(60 * time.Second)
		for countLines(t, outPath) < 40 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		c.Process.Kill()
		c.Wait()
		out.Close()
		lines := readIDs(t, outPath)
		if len(lines) < 40 {
			t.Fatalf("run %d printed %d lines in a minute; stderr %s", k, len(lines), errOut.String())
		}
		runs = append(runs, lines)
		if b, err := os.ReadFile(state); err != nil || !json.Valid(b) {
			t.Fatalf("after kill %d the state file is not whole JSON: %v %q", k, err, b)
		}
	}
	close(stop)
	wg.Wait()
	// The last run catches up with everything written and stops.
	code, out, errOut := runBinary(t, bin, env, "", "changes", "--state", state, "--page-size", fmt.Sprint(pageSize))
	if code != 0 {
		t.Fatalf("last run: exit %d: %s", code, errOut)
	}
	var last []string
	for id := range changeIDs(t, out) {
		last = append(last, id)
	}
	runs = append(runs, last)

	printed := map[string]bool{}
	for k, ids := range runs {
		once := map[string]bool{}
		var tail map[string]bool
		if k > 0 {
			prev := runs[k-1]
			tail = map[string]bool{}
			for _, id := range prev[max(0, len(prev)-pageSize):] {
				tail[id] = true
			}
		}
		for _, id := range ids {
			if once[id] {
				t.Errorf("run %d printed %s twice", k, id)
			}
			once[id] = true
			if printed[id] && !tail[id] {
				t.Errorf("run %d printed %s again, which the run before saved (not in its last batch)", k, id)
			}
			printed[id] = true
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

// readIDs are the ids of the whole lines of an NDJSON file, in order.
func readIDs(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
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
		var d struct{ ID string }
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("%s: %q: %v", path, line, err)
		}
		ids = append(ids, d.ID)
	}
	return ids
}
