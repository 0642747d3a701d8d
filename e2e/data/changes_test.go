package data_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"

	"github.com/cosmosctl/cosmosctl/cmd"
	"github.com/cosmosctl/cosmosctl/internal/clitest"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// changeIDs counts the ids of the NDJSON lines changes printed; every line must be an
// item with an id and an _lsn.
func changeIDs(t *testing.T, out string) map[string]int {
	t.Helper()
	seen := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var d struct {
			ID  string `json:"id"`
			LSN *int64 `json:"_lsn"`
		}
		if err := json.Unmarshal([]byte(line), &d); err != nil || d.ID == "" || d.LSN == nil {
			t.Fatalf("not a change feed item line: %q (%v)", line, err)
		}
		seen[d.ID]++
	}
	return seen
}

func wantOnce(t *testing.T, seen map[string]int, ids []string) {
	t.Helper()
	if len(seen) != len(ids) {
		t.Errorf("%d distinct ids, want %d", len(seen), len(ids))
	}
	for _, id := range ids {
		if seen[id] != 1 {
			t.Errorf("%s printed %d times, want once", id, seen[id])
		}
	}
}

// upsertRaw writes items straight to the emulator (not through a command).
func upsertRaw(t *testing.T, srv *emulator.Server, items ...testkit.QueryItem) {
	t.Helper()
	cred, _ := cosmos.NewMasterKey(srv.Key())
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
	for _, it := range items {
		body, _ := json.Marshal(it.Doc())
		pk, _ := cosmos.PK(it.PK)
		req := &cosmos.Request{Method: http.MethodPost, Path: cosmos.ItemsPath("app", "items"), Header: http.Header{}, Body: body}
		req.Header.Set(cosmos.HeaderPartitionKey, pk.JSON())
		req.Header.Set(cosmos.HeaderIsUpsert, "true")
		if resp, err := tr.Do(context.Background(), srv.Endpoint(), req); err != nil || resp.StatusCode >= 300 {
			t.Fatalf("upserting %s: %v %+v", it.ID, err, resp)
		}
	}
}

func newItems(from, to int) []testkit.QueryItem {
	var out []testkit.QueryItem
	for i := from; i < to; i++ {
		out = append(out, testkit.QueryItem{ID: fmt.Sprintf("n%04d", i), PK: fmt.Sprintf("p%d", i%13), N: i})
	}
	return out
}

func TestChangesReadsEveryRangeOnceAndStops(t *testing.T) {
	items := testkit.QueryItems(testkit.QueryTestItems)
	testkit.QueryAccount(t, items)
	r := clitest.Run(t, "", "changes", "--page-size", "7")
	if r.Code != 0 || r.ErrOut != "" {
		t.Fatalf("changes: exit %d, stderr %q", r.Code, r.ErrOut)
	}
	wantOnce(t, changeIDs(t, r.Out), itemIDs(items))

	t.Run("--pk reads one partition key", func(t *testing.T) {
		r := clitest.Run(t, "", "changes", "--pk", "p3")
		var want []string
		for _, it := range items {
			if it.PK == "p3" {
				want = append(want, it.ID)
			}
		}
		if r.Code != 0 {
			t.Fatalf("exit %d: %s", r.Code, r.ErrOut)
		}
		wantOnce(t, changeIDs(t, r.Out), want)
	})
	t.Run("--from now prints nothing of what is there", func(t *testing.T) {
		r := clitest.Run(t, "", "changes", "--from", "now")
		if r.Code != 0 || r.Out != "" {
			t.Fatalf("exit %d, stdout %q, stderr %s", r.Code, r.Out, r.ErrOut)
		}
	})
	t.Run("--from a time", func(t *testing.T) {
		past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
		if r := clitest.Run(t, "", "changes", "--from", past); r.Code != 0 || len(changeIDs(t, r.Out)) != len(items) {
			t.Fatalf("from an hour ago: exit %d, %d ids", r.Code, len(changeIDs(t, r.Out)))
		}
		future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		if r := clitest.Run(t, "", "changes", "--from", future); r.Code != 0 || r.Out != "" {
			t.Fatalf("from an hour ahead: exit %d, stdout %q", r.Code, r.Out)
		}
	})
	t.Run("-o json is one item a line too", func(t *testing.T) {
		r := clitest.Run(t, "", "changes", "-o", "json")
		wantOnce(t, changeIDs(t, r.Out), itemIDs(items))
	})
	t.Run("--diagnostics prints every poll", func(t *testing.T) {
		r := clitest.Run(t, "", "changes", "--diagnostics", "--page-size", "50")
		if r.Code != 0 || !strings.Contains(r.ErrOut, "poll range 0: 200") || !strings.Contains(r.ErrOut, "304 nothing new") || !strings.Contains(r.ErrOut, "won") {
			t.Fatalf("exit %d, stderr:\n%s", r.Code, r.ErrOut)
		}
	})
	t.Run("--exclude", func(t *testing.T) {
		r := clitest.Run(t, "", "changes", "--exclude", "East US", "--diagnostics")
		if r.Code != 0 || strings.Contains(r.ErrOut, "East US") || !strings.Contains(r.ErrOut, "West US won") {
			t.Fatalf("exit %d, stderr:\n%s", r.Code, r.ErrOut)
		}
	})
}

func TestChangesTableOnATerminal(t *testing.T) {
	items := testkit.QueryItems(10)
	testkit.QueryAccount(t, items)
	io, out, errOut := clitest.IO()
	io.OutTTY, io.OutWidth, io.ErrTTY = true, 60, true
	if code := cmd.Run(context.Background(), io, []string{"changes"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !regexp.MustCompile(`10 changes, \d+ polls, [\d.]+ RU in`).MatchString(errOut.String()) {
		t.Errorf("no summary line on a terminal's stderr: %q", errOut)
	}
	plain := ansi.Strip(out.String())
	lines := strings.Split(strings.TrimRight(plain, "\n"), "\n")
	if len(lines) < 1+len(items)+1 || !strings.HasPrefix(lines[0], "TIME") || !strings.Contains(lines[0], "ID") {
		t.Fatalf("table:\n%s", out)
	}
	for _, l := range lines {
		if ansi.StringWidth(l) > 60 {
			t.Errorf("line wider than the terminal: %q", l)
		}
	}
	if !strings.Contains(lines[0], "RANGE") || !strings.Contains(strings.Join(lines[1+len(items):], " "), "hidden: size, lsn") {
		t.Errorf("no footnote for the hidden columns: %q", lines[len(lines)-1])
	}
	for _, it := range items {
		if !strings.Contains(out.String(), it.ID) {
			t.Errorf("%s not in the table", it.ID)
		}
	}
}

// --state: a second run prints only what changed since the first, each once.
func TestChangesStateResumes(t *testing.T) {
	items := testkit.QueryItems(testkit.QueryTestItems)
	srv := testkit.QueryAccount(t, items)
	state := filepath.Join(t.TempDir(), "feed.json")
	r := clitest.Run(t, "", "changes", "--state", state)
	if r.Code != 0 || len(changeIDs(t, r.Out)) != len(items) {
		t.Fatalf("first run: exit %d, %d ids, %s", r.Code, len(changeIDs(t, r.Out)), r.ErrOut)
	}
	more := newItems(0, 40)
	upsertRaw(t, srv, more...)
	upsertRaw(t, srv, items[5], items[77]) // changed again
	r = clitest.Run(t, "", "changes", "--state", state, "--from", "now")
	if r.Code != 0 || !strings.Contains(r.ErrOut, "resuming from the position in") {
		t.Fatalf("second run: exit %d, stderr %q", r.Code, r.ErrOut)
	}
	wantOnce(t, changeIDs(t, r.Out), append(itemIDs(more), items[5].ID, items[77].ID))
	r = clitest.Run(t, "", "changes", "--state", state)
	if r.Code != 0 || r.Out != "" {
		t.Fatalf("third run, nothing new: exit %d, stdout %q", r.Code, r.Out)
	}
}

// A first run --from now with nothing new still saves where "now" was: the next run
// prints what was written in between, and nothing older.
func TestChangesFromNowSavesItsStartingPoint(t *testing.T) {
	items := testkit.QueryItems(30)
	srv := testkit.QueryAccount(t, items)
	state := filepath.Join(t.TempDir(), "feed.json")
	if r := clitest.Run(t, "", "changes", "--from", "now", "--state", state); r.Code != 0 || r.Out != "" {
		t.Fatalf("first run: exit %d, stdout %q, stderr %s", r.Code, r.Out, r.ErrOut)
	}
	more := newItems(0, 12)
	upsertRaw(t, srv, more...)
	r := clitest.Run(t, "", "changes", "--state", state)
	if r.Code != 0 {
		t.Fatalf("second run: exit %d: %s", r.Code, r.ErrOut)
	}
	wantOnce(t, changeIDs(t, r.Out), itemIDs(more))
}

// --max-items N with --state: N changes, and the saved position is exactly after them,
// also when N ends inside a batch.
func TestChangesMaxItemsSavesAnExactPosition(t *testing.T) {
	items := testkit.QueryItems(testkit.QueryTestItems)
	testkit.QueryAccount(t, items)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"cut inside batches", []string{"--max-items", "17", "--page-size", "10"}},
		{"whole batches", []string{"--max-items", "20", "--page-size", "10"}},
		{"page size from --max-items", []string{"--max-items", "9"}},
		{"one at a time", []string{"--max-items", "1", "--parallelism", "1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := filepath.Join(t.TempDir(), "feed.json")
			seen := map[string]int{}
			for run := 0; run < 200; run++ {
				r := clitest.Run(t, "", append([]string{"changes", "--state", state}, tc.args...)...)
				if r.Code != 0 {
					t.Fatalf("run %d: exit %d: %s", run, r.Code, r.ErrOut)
				}
				got := changeIDs(t, r.Out)
				n := 0
				for id, c := range got {
					seen[id] += c
					n += c
				}
				if n == 0 {
					break
				}
				var max int
				fmt.Sscanf(tc.args[1], "%d", &max)
				if n > max {
					t.Fatalf("run %d printed %d changes, --max-items %d", run, n, max)
				}
			}
			wantOnce(t, seen, itemIDs(items))
		})
	}
}

// --follow prints changes as they are written until interrupted (130), and says where
// the position is saved.
func TestChangesFollowUntilInterrupted(t *testing.T) {
	items := testkit.QueryItems(20)
	srv := testkit.QueryAccount(t, items)
	state := filepath.Join(t.TempDir(), "feed.json")
	io, out, errOut := clitest.IO()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- cmd.Run(ctx, io, []string{"changes", "--follow", "--poll-interval", "20ms", "--state", state})
	}()
	more := newItems(0, 30)
	upsertRaw(t, srv, more...)
	deadline := time.Now().Add(30 * time.Second)
	for len(changeIDs(t, out.String())) < 50 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	code := <-done
	if code != cmd.ExitInterrupted {
		t.Fatalf("exit %d, want 130; stderr %s", code, errOut)
	}
	wantOnce(t, changeIDs(t, out.String()), append(itemIDs(items), itemIDs(more)...))
	if !strings.Contains(errOut.String(), "saved in "+state) || strings.Count(strings.TrimSpace(errOut.String()), "\n") != 0 {
		t.Fatalf("stderr %q: want one line naming the state file", errOut)
	}
	// Resumed: nothing again.
	if r := clitest.Run(t, "", "changes", "--state", state); r.Code != 0 || r.Out != "" {
		t.Fatalf("resumed after the interrupt: exit %d, stdout %q", r.Code, r.Out)
	}
}

func TestChangesBadInput(t *testing.T) {
	items := testkit.QueryItems(5)
	testkit.QueryAccount(t, items)
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.json")
	os.WriteFile(corrupt, []byte("{not json"), 0o600)
	other := filepath.Join(dir, "other.json")
	if r := clitest.Run(t, "", "changes", "--state", other, "--pk", "p1"); r.Code != 0 {
		t.Fatalf("writing a state for --pk p1: %+v", r)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"bad --from", []string{"--from", "yesterday"}, cmd.ExitUsage, "--from must be beginning, now or an RFC 3339 time"},
		{"negative --poll-interval", []string{"--follow", "--poll-interval", "-1s"}, cmd.ExitUsage, "--poll-interval must not be negative"},
		{"negative --max-items", []string{"--max-items", "-3"}, cmd.ExitUsage, "--max-items must not be negative"},
		{"bad --page-size", []string{"--page-size", "0"}, cmd.ExitUsage, "--page-size must be between 1 and 1000"},
		{"negative --e2e-timeout", []string{"--e2e-timeout", "-2s"}, cmd.ExitUsage, "--e2e-timeout must not be negative"},
		{"corrupt state file", []string{"--state", corrupt}, cmd.ExitUsage, "is not a change feed state file"},
		{"a directory as state file", []string{"--state", dir}, cmd.ExitUsage, "cannot be read"},
		{"another partition key's state", []string{"--state", other, "--pk", "p2"}, cmd.ExitUsage, `partition key ["p1"]`},
		{"the whole container with a partition key's state", []string{"--state", other}, cmd.ExitUsage, "give another --state file"},
		{"missing container", []string{"--container", "nope"}, cmd.ExitNotFound, "404"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := clitest.Run(t, "", append([]string{"changes"}, tc.args...)...)
			if r.Code != tc.code || !strings.Contains(r.ErrOut, tc.want) || strings.Count(strings.TrimSpace(r.ErrOut), "\n") != 0 || r.Out != "" {
				t.Fatalf("exit %d (want %d), stdout %q, stderr %q (want one line with %q)", r.Code, tc.code, r.Out, r.ErrOut, tc.want)
			}
		})
	}
}

// A range answering 410/1002 (injected; the emulator's ranges do not really split) is
// followed: every change once.
func TestChangesFollowsAGoneRange(t *testing.T) {
	items := testkit.QueryItems(testkit.QueryTestItems)
	srv := testkit.QueryAccount(t, items)
	if _, err := srv.AddFault(faults.Rule{Effect: faults.EffectStatus, Status: 410, SubStatus: 1002, Operations: []string{faults.OpQuery}, Count: 3}); err != nil {
		t.Fatal(err)
	}
	r := clitest.Run(t, "", "changes", "--diagnostics", "--page-size", "10")
	if r.Code != 0 || strings.Count(r.ErrOut, "split into") != 3 {
		t.Fatalf("exit %d, stderr:\n%s", r.Code, r.ErrOut)
	}
	wantOnce(t, changeIDs(t, r.Out), itemIDs(items))
}

func itemIDs(items []testkit.QueryItem) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.ID
	}
	return out
}

// failingWriter takes the first n writes and fails every later one (stdout closed).
type failingWriter struct {
	testkit.Buffer
	mu sync.Mutex
	n  int
}

func (f *failingWriter) Write(p []byte) (int, error) {
	f.mu.Lock()
	f.n--
	ok := f.n >= 0
	f.mu.Unlock()
	if !ok {
		return 0, fmt.Errorf("write /dev/stdout: broken pipe")
	}
	return f.Buffer.Write(p)
}

// A batch that could not be written is not in the saved position: the next run prints
// it.
func TestChangesAFailedWriteIsNotCheckpointed(t *testing.T) {
	items := testkit.QueryItems(testkit.QueryTestItems)
	testkit.QueryAccount(t, items)
	state := filepath.Join(t.TempDir(), "feed.json")
	io, _, errOut := clitest.IO()
	fw := &failingWriter{n: 2}
	io.Out = fw
	if code := cmd.Run(context.Background(), io, []string{"changes", "--state", state, "--page-size", "10"}); code == 0 {
		t.Fatalf("exit 0 with stdout failing; stderr %s", errOut)
	}
	// Two writes went through: two batches of at most 10 (a range's last page may be
	// shorter, and which range's batch comes first is the ranges' race).
	first := changeIDs(t, fw.String())
	if len(first) < 2 || len(first) > 20 {
		t.Fatalf("the first run wrote %d items, want 2 batches of at most 10", len(first))
	}
	r := clitest.Run(t, "", "changes", "--state", state)
	if r.Code != 0 {
		t.Fatalf("resumed: exit %d: %s", r.Code, r.ErrOut)
	}
	second := changeIDs(t, r.Out)
	for id := range first {
		if second[id] > 0 {
			t.Errorf("%s was written and saved, and printed again", id)
		}
	}
	all := map[string]int{}
	for id := range first {
		all[id]++
	}
	for id := range second {
		all[id]++
	}
	wantOnce(t, all, itemIDs(items))
}
