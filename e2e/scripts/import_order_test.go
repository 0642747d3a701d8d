//go:build unix

package scripts_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// repeatedIDFile writes n lines over fewer items, each line carrying its number in "n":
// one item on every seventh line (far apart, hundreds of times), runs of one item on
// four adjacent lines, and the rest spread over n/3 items (some repeated, far apart). It
// returns the file and, for every id, the last line that names it.
func repeatedIDFile(t *testing.T, n int) (string, map[string]int) {
	t.Helper()
	var b strings.Builder
	last := map[string]int{}
	for k := 1; k <= n; k++ {
		id := fmt.Sprintf("o%d", k%(n/3))
		switch {
		case k%7 == 0:
			id = "hot"
		case k%101 < 4:
			id = fmt.Sprintf("run%d", k/101)
		}
		fmt.Fprintf(&b, `{"id":%q,"pk":"p%d","n":%d}`+"\n", id, len(id)%5, k)
		last[id] = k
	}
	path := filepath.Join(t.TempDir(), "orders.ndjson")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, last
}

// waitForLines waits, polling the state file for at most two minutes, until it says
// more than min lines are done.
func waitForLines(t *testing.T, cmd *exec.Cmd, state string, min int64) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if n, ok := linesDone(state); ok && n > min {
			return
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no checkpoint with more than %d lines done within two minutes", min)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// linesDone is the lines done that the state file says; ok is false while there is none
// (or half of one).
func linesDone(state string) (n int64, ok bool) {
	b, err := os.ReadFile(state)
	if err != nil {
		return 0, false
	}
	var st struct {
		State struct {
			Counts struct {
				Lines int64 `json:"lines"`
			} `json:"counts"`
		} `json:"state"`
	}
	if json.Unmarshal(b, &st) != nil {
		return 0, false
	}
	return st.State.Counts.Lines, true
}

// storedLines reads every item back through cosmosctl query: id -> its "n".
func storedLines(t *testing.T, bin string) map[string]int {
	t.Helper()
	code, out, errOut := testkit.RunBinary(t, bin, os.Environ(), "", "query", "SELECT c.id, c.n FROM c", "--all", "-o", "ndjson")
	if code != 0 {
		t.Fatalf("query: exit %d: %s", code, errOut)
	}
	got := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var it struct {
			ID string `json:"id"`
			N  int    `json:"n"`
		}
		if err := json.Unmarshal(sc.Bytes(), &it); err != nil {
			t.Fatalf("query line %q: %v", sc.Text(), err)
		}
		if _, dup := got[it.ID]; dup {
			t.Fatalf("%s is stored twice", it.ID)
		}
		got[it.ID] = it.N
	}
	return got
}

// An upsert import of a file whose ids repeat (hundreds of times far apart, four times
// side by side), at --concurrency 32, with answers dropped after the writes were applied
// and killed with SIGKILL twice, leaves every item with the file's last line for it, as
// a sequential upsert would; and its report accounts for every line once without
// claiming more creates or updates than happened, naming "created or updated" the lines
// whose answer cannot tell.
func TestAKilledUpsertImportWithLostAnswersLeavesEveryItemWithItsLastLine(t *testing.T) {
	bin := testkit.Binary(t)
	srv := testkit.Account(t, func(c *emulator.Config) {
		c.Latency = []faults.LatencySpec{{Operation: faults.OpUpsert, Distribution: faults.Distribution{Kind: faults.KindFixed, Value: faults.Duration(10 * time.Millisecond)}}}
	})
	if _, err := srv.AddFault(faults.Rule{Operations: []string{faults.OpUpsert}, Probability: 0.03, Effect: faults.EffectDropResponse}); err != nil {
		t.Fatal(err)
	}
	const lines = 6000
	input, last := repeatedIDFile(t, lines)
	state := filepath.Join(t.TempDir(), "orders.state")
	args := []string{"import", input, "--state", state, "--mode", "upsert", "--concurrency", "32", "-o", "json"}

	done := int64(0)
	for kill := 1; kill <= 2; kill++ {
		cmd := exec.Command(bin, args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitForLines(t, cmd, state, done)
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		var ok bool
		if done, ok = linesDone(state); !ok || done >= lines {
			t.Fatalf("the import ended before kill %d: the test means to kill it mid-way", kill)
		}
	}
	code, out, errOut := testkit.RunBinary(t, bin, os.Environ(), "", args...)
	if code != 0 {
		t.Fatalf("the resumed import: exit %d: %s", code, errOut)
	}
	var rep struct {
		Complete         bool  `json:"complete"`
		Runs             int   `json:"runs"`
		Lines            int64 `json:"lines"`
		Created          int64 `json:"created"`
		Updated          int64 `json:"updated"`
		CreatedOrUpdated int64 `json:"created_or_updated"`
		Superseded       int64 `json:"superseded"`
		Failed           int64 `json:"failed"`
	}
	reportJSON(t, out, &rep)
	if !rep.Complete || rep.Runs != 3 || rep.Lines != lines || rep.Failed != 0 {
		t.Fatalf("report %+v: want all %d lines done over 3 runs", rep, lines)
	}
	items := int64(len(last))
	if rep.Created+rep.Updated+rep.CreatedOrUpdated+rep.Superseded != lines || rep.Created > items || rep.Updated > lines-items {
		t.Fatalf("report %+v: the file has %d items, so %d creates and %d updates at most, %d lines in all", rep, items, items, lines-items, lines)
	}
	got := storedLines(t, bin)
	if len(got) != len(last) {
		t.Fatalf("%d items stored, the file has %d", len(got), len(last))
	}
	wrong := 0
	for id, n := range last {
		if got[id] != n {
			wrong++
			if wrong <= 5 {
				t.Errorf("%s holds line %d, want its last line %d", id, got[id], n)
			}
		}
	}
	if wrong > 0 {
		t.Fatalf("%d of %d items hold an earlier line's document", wrong, len(last))
	}
}

// With the write region hung and default flags, an import stops within half a minute
// with exit 8 (the service is not taking writes), no line marked done, the state saved;
// the same command, once the region recovers, imports every line exactly once.
func TestAnImportAgainstAHungWriteRegionStopsInTimeAndResumesExactly(t *testing.T) {
	bin := testkit.Binary(t)
	srv := testkit.Account(t)
	const lines = 20
	input := importFile(t, lines)
	state := filepath.Join(t.TempDir(), "orders.state")
	if _, err := srv.AddFault(faults.Rule{Region: "East US", Operations: []string{faults.GroupWrites}, Effect: faults.EffectHang}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	code, out, errOut := testkit.RunBinary(t, bin, os.Environ(), "", "import", input, "--state", state, "-o", "json")
	took := time.Since(start)
	if code != 8 {
		t.Fatalf("exit %d, want 8: %s\n%s", code, out, errOut)
	}
	// The bound: 15 s for the writes, a few for the set-up; the machine may be loaded.
	if took > 45*time.Second {
		t.Fatalf("the import took %s against a hung write region: want it stopped within its write bound", took)
	}
	t.Logf("stopped after %s", took.Round(time.Millisecond))
	var rep struct {
		Complete bool   `json:"complete"`
		Lines    int64  `json:"lines"`
		Failed   int64  `json:"failed"`
		Stopped  string `json:"stopped"`
	}
	reportJSON(t, out, &rep)
	if rep.Complete || rep.Lines != 0 || rep.Failed != 0 || !strings.Contains(rep.Stopped, "hung") {
		t.Fatalf("report %+v: want a stop for a hung write region with no line done", rep)
	}
	if !strings.Contains(errOut, "resume with the same command") {
		t.Fatalf("stderr does not say how to resume: %s", errOut)
	}
	srv.Faults().Clear()
	code, out, errOut = testkit.RunBinary(t, bin, os.Environ(), "", "import", input, "--state", state, "-o", "json")
	if code != 0 {
		t.Fatalf("resumed: exit %d: %s", code, errOut)
	}
	var resumed struct {
		Complete bool  `json:"complete"`
		Created  int64 `json:"created"`
		Lines    int64 `json:"lines"`
		Runs     int   `json:"runs"`
	}
	reportJSON(t, out, &resumed)
	if !resumed.Complete || resumed.Created != lines || resumed.Lines != lines || resumed.Runs != 2 {
		t.Fatalf("resumed report %+v: want all %d lines created", resumed, lines)
	}
	if got := storedLines(t, bin); len(got) != lines {
		t.Fatalf("%d items stored, want %d", len(got), lines)
	}
}

// A small import (fewer lines than the run of failures that stops a large one) during a
// write-region outage, refused or answering 503, stops with exit 8 and marks no line
// done as failed, so that the resume after recovery writes every line.
func TestASmallImportDuringAnOutageStopsAndTheResumeWritesEveryLine(t *testing.T) {
	bin := testkit.Binary(t)
	for _, tc := range []struct {
		name string
		rule faults.Rule
	}{
		{"writes answered 503", faults.Rule{Region: "East US", Operations: []string{faults.GroupWrites}, Effect: faults.EffectStatus, Status: 503}},
		{"the write region refusing connections", faults.Rule{Region: "East US", Operations: []string{faults.GroupWrites}, Effect: faults.EffectRefuse}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := testkit.Account(t)
			const lines = 10
			input := importFile(t, lines)
			state := filepath.Join(t.TempDir(), "orders.state")
			if _, err := srv.AddFault(tc.rule); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := testkit.RunBinary(t, bin, os.Environ(), "", "import", input, "--state", state, "-o", "json")
			if code != 8 {
				t.Fatalf("exit %d, want 8: %s\n%s", code, out, errOut)
			}
			var rep struct {
				Complete     bool    `json:"complete"`
				Lines        int64   `json:"lines"`
				RejectedFile *string `json:"rejected_file"`
			}
			reportJSON(t, out, &rep)
			if rep.Complete || rep.Lines != 0 || rep.RejectedFile != nil {
				t.Fatalf("report %+v: want no line done and none rejected", rep)
			}
			srv.Faults().Clear()
			code, out, errOut = testkit.RunBinary(t, bin, os.Environ(), "", "import", input, "--state", state, "-o", "json")
			if code != 0 {
				t.Fatalf("resumed: exit %d: %s", code, errOut)
			}
			var resumed struct {
				Created int64 `json:"created"`
				Lines   int64 `json:"lines"`
			}
			reportJSON(t, out, &resumed)
			if resumed.Created != lines || resumed.Lines != lines {
				t.Fatalf("resumed report %+v: want all %d lines created", resumed, lines)
			}
		})
	}
}
