package scripts_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/internal/clitest"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
	"github.com/cosmosctl/cosmosctl/output"
)

// itemsFile writes items from..to, one a line, over five partition keys.
func itemsFile(t *testing.T, from, to int) string {
	t.Helper()
	var b strings.Builder
	for k := from; k <= to; k++ {
		fmt.Fprintf(&b, `{"id":"i%d","pk":"p%d","n":%d}`+"\n", k, k%5, k)
	}
	path := filepath.Join(t.TempDir(), "items.ndjson")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Against a container held to its provisioned throughput (the emulator enforcing it,
// 429/3200 with a retry-after): an import over it completes, slowed by the 429s; one
// capped under it with --max-ru-per-second keeps to the cap and is never throttled.
func TestImportAgainstAContainerHeldToItsThroughput(t *testing.T) {
	testkit.Account(t, func(c *emulator.Config) { c.EnforceThroughput = true })
	report := func(r clitest.Result) output.ImportReport {
		t.Helper()
		var rep output.ImportReport
		if err := json.Unmarshal([]byte(r.Out), &rep); err != nil {
			t.Fatalf("stdout %q is not the report: %v (stderr %s)", r.Out, err, r.ErrOut)
		}
		return rep
	}
	// 400 RU/s (the emulator's default offer) over 4 ranges: 100 RU/s, 20 writes/s each;
	// 120 items of 5 RU are 600 RU, half as much again as a second's worth.
	r := clitest.Run(t, "", "import", itemsFile(t, 1, 120), "-o", "json")
	rep := report(r)
	if r.Code != 0 || rep.Created != 120 || rep.Throttled == 0 {
		t.Fatalf("exit %d, report %+v: %s", r.Code, rep, r.ErrOut)
	}
	t.Logf("over the throughput: %d 429s for 120 items, %.0f RU/s", rep.Throttled, rep.ThisRun.RUPerSecond)

	if r := clitest.Run(t, "", "throughput", "set", "items", "--throughput", "8000"); r.Code != 0 {
		t.Fatalf("throughput set: %+v", r)
	}
	r = clitest.Run(t, "", "import", itemsFile(t, 1001, 2200), "--max-ru-per-second", "2000", "-o", "json")
	rep = report(r)
	if r.Code != 0 || rep.Created != 1200 || rep.Throttled != 0 {
		t.Fatalf("exit %d, report %+v: %s", r.Code, rep, r.ErrOut)
	}
	// 6,000 RU at 2,000 RU/s, less the first second's worth and what 16 writers in
	// flight may owe (80 RU): at least 1.96 s, so at most 3,060 RU/s; 3,400 leaves 10 %.
	if rep.ThisRun.RUPerSecond > 3400 {
		t.Fatalf("%.0f RU/s with --max-ru-per-second 2000", rep.ThisRun.RUPerSecond)
	}
	t.Logf("capped: %.0f RU/s", rep.ThisRun.RUPerSecond)
}
