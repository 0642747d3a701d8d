package cmd

import (
	"testing"

	"github.com/cosmosctl/cosmosctl/emulator"
)

// Against a container held to its provisioned throughput (the emulator enforcing it,
// 429/3200 with a retry-after): an import over it completes, slowed by the 429s; one
// capped under it with --max-ru-per-second keeps to the cap and is never throttled.
func TestImportAgainstAContainerHeldToItsThroughput(t *testing.T) {
	testAccount(t, func(c *emulator.Config) { c.EnforceThroughput = true })
	// 400 RU/s (the emulator's default offer) over 4 ranges: 100 RU/s, 20 writes/s each;
	// 120 items of 5 RU are 600 RU, half as much again as a second's worth.
	r := cosmosctl(t, "", "import", importFile(t, items(1, 120)), "-o", "json")
	rep := lastReport(t, r.out)
	if r.code != 0 || rep.Created != 120 || rep.Throttles == 0 {
		t.Fatalf("exit %d, report %+v: %s", r.code, rep, r.errOut)
	}
	t.Logf("over the throughput: %d 429s for 120 items, %.0f RU/s", rep.Throttles, rep.ThisRun.RUPerSecond)

	if r := cosmosctl(t, "", "throughput", "set", "items", "--throughput", "8000"); r.code != 0 {
		t.Fatalf("throughput set: %+v", r)
	}
	r = cosmosctl(t, "", "import", importFile(t, items(1001, 2200)), "--max-ru-per-second", "2000", "-o", "json")
	rep = lastReport(t, r.out)
	if r.code != 0 || rep.Created != 1200 || rep.Throttles != 0 {
		t.Fatalf("exit %d, report %+v: %s", r.code, rep, r.errOut)
	}
	// 6,000 RU at 2,000 RU/s, less the first second's worth and what 16 writers in
	// flight may owe (80 RU): at least 1.96 s, so at most 3,060 RU/s; 3,400 leaves 10 %.
	if rep.ThisRun.RUPerSecond > 3400 {
		t.Fatalf("%.0f RU/s with --max-ru-per-second 2000", rep.ThisRun.RUPerSecond)
	}
	t.Logf("capped: %.0f RU/s", rep.ThisRun.RUPerSecond)
}
