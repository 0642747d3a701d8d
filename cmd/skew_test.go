package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// skewJSON runs `skew -o json` with args and decodes the report, whatever the exit.
func skewJSON(t *testing.T, stdin string, args ...string) (skewReport, runResult) {
	t.Helper()
	r := cosmosctl(t, stdin, append([]string{"skew", "-o", "json"}, args...)...)
	var rep skewReport
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatalf("skew %v: exit %d, stdout %q, stderr %q: %v", args, r.code, r.out, r.errOut, err)
	}
	return rep, r
}

// seedKeys creates one item a key, and returns the range the service stored each in,
// by key.
func seedKeys(t *testing.T, srv *emulator.Server, keys []string, perKey int) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, k := range keys {
		pk, _ := cosmos.PK(k)
		for i := range perKey {
			out[k] = storedRange(t, srv, pk, fmt.Sprintf(`{"id":"i%d","pk":%q,"pad":%q}`, i, k, strings.Repeat("x", 200)))
		}
	}
	return out
}

// keysByRange picks, of tenant-0, tenant-1, …, n keys in each of the emulator's ranges,
// and creates item i0 of each. The items are 20 KB, so that a read costs 20 RU and a
// range's 100 RU/s (400 RU/s over four ranges) is spent by a handful of reads a second,
// however slowly a loaded machine sends them.
func keysByRange(t *testing.T, srv *emulator.Server, n int) map[string][]string {
	t.Helper()
	byRange := map[string][]string{}
	pad := strings.Repeat("x", 19*1024)
	for i := 0; i < 400; i++ {
		k := fmt.Sprintf("tenant-%d", i)
		pk, _ := cosmos.PK(k)
		rg := storedRange(t, srv, pk, fmt.Sprintf(`{"id":"i0","pk":%q,"pad":%q}`, k, pad))
		if len(byRange[rg]) < n {
			byRange[rg] = append(byRange[rg], k)
		}
		full := len(byRange) == emulator.DefaultRanges
		for _, ks := range byRange {
			full = full && len(ks) == n
		}
		if full {
			return byRange
		}
	}
	t.Fatalf("400 keys did not fill %d ranges with %d keys: %v", emulator.DefaultRanges, n, byRange)
	return nil
}

// idsFile writes --ids lines for item i0 of each key, each key repeated as often as asked.
func idsFile(t *testing.T, keys map[string]int) string {
	t.Helper()
	var b strings.Builder
	for k, n := range keys {
		for range n {
			fmt.Fprintf(&b, "{\"id\":\"i0\",\"pk\":%q}\n", k)
		}
	}
	path := filepath.Join(t.TempDir(), "ids.ndjson")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSkewNamesTheHotRangeAndItsKey: with throughput enforced (400 RU/s over four
// ranges), a sample that reads one key far more than three others in other ranges
// meets its 429s on that key's range: the verdict is a hot partition, on that range,
// naming that key.
func TestSkewNamesTheHotRangeAndItsKey(t *testing.T) {
	srv := testAccount(t)
	byRange := keysByRange(t, srv, 1)
	var hot, hotRange string
	weights := map[string]int{}
	for rg, ks := range byRange {
		if hot == "" {
			hot, hotRange = ks[0], rg
			weights[ks[0]] = 12
			continue
		}
		weights[ks[0]] = 1
	}
	srv.SetEnforceThroughput(true)
	rep, r := skewJSON(t, "", "--sample", "1s", "--ids", idsFile(t, weights), "--concurrency", "4")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	if rep.Sample == nil || rep.Sample.Throttled == 0 {
		t.Fatalf("the sample met no 429 with 400 RU/s enforced: %+v", rep.Sample)
	}
	v := rep.Verdict
	if v.Kind != skewHotPartition || v.RangeID == nil || *v.RangeID != hotRange || keyText(v.PartitionKey) != hot {
		t.Fatalf("verdict %+v (%s), want a hot partition on range %s, key %s", v, v.Text, hotRange, hot)
	}
	if !strings.Contains(v.Text, "on range "+hotRange) || !strings.Contains(v.Text, "key "+hot) {
		t.Fatalf("the verdict's text must name the range and the key: %q", v.Text)
	}
	if rep.Throughput.Mode != "manual" || rep.Throughput.RUPerSecond == nil || *rep.Throughput.RUPerSecond != 400 ||
		rep.Throughput.PerRangeRUPerSecond == nil || *rep.Throughput.PerRangeRUPerSecond != 100 || rep.Throughput.InstantMaxRUPerSecond != 40000 {
		t.Fatalf("throughput %+v", rep.Throughput)
	}
}

// TestSkewSaysEvenlyLoadedWhenTheLoadIsSpread: the same throttling, with the reads
// spread evenly over keys in every range, is too few RU, not a hot partition.
func TestSkewSaysEvenlyLoadedWhenTheLoadIsSpread(t *testing.T) {
	srv := testAccount(t)
	weights := map[string]int{}
	for _, ks := range keysByRange(t, srv, 2) {
		for _, k := range ks {
			weights[k] = 1
		}
	}
	srv.SetEnforceThroughput(true)
	rep, r := skewJSON(t, "", "--sample", "1s", "--ids", idsFile(t, weights), "--concurrency", "8")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	if rep.Verdict.Kind != skewEvenlyLoaded || !strings.HasPrefix(rep.Verdict.Text, "evenly loaded: raise throughput") {
		t.Fatalf("verdict %+v; ranges %+v", rep.Verdict, rep.Ranges)
	}
}

// TestSkewIsBoundedWhenTheFirstRegionHangs: with East US hanging every request, the
// reads, the statistics, the offer and the sample fail over within --attempt-timeout,
// and the command ends well within a generous bound with a report; a report that
// lacks something says so (exit 11 and notes), never silently.
func TestSkewIsBoundedWhenTheFirstRegionHangs(t *testing.T) {
	srv := testAccount(t)
	seedKeys(t, srv, []string{"t1", "t2"}, 1)
	if _, err := srv.AddFault(faults.Rule{Region: "East US", Operations: []string{faults.GroupReads, faults.OpPKRanges, faults.OpMetadata}, Effect: faults.EffectHang}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	rep, r := skewJSON(t, "{\"id\":\"i0\",\"pk\":\"t1\"}\n{\"id\":\"i0\",\"pk\":\"t2\"}\n",
		"--sample", "1s", "--ids", "-", "--attempt-timeout", "300ms", "--e2e-timeout", "5s")
	// Generous: a few 300 ms attempt timeouts, the sample's second, a loaded machine.
	if elapsed := time.Since(start); elapsed > 30*time.Second {
		t.Fatalf("took %s", elapsed)
	}
	switch {
	case r.code == ExitOK && !rep.Partial && len(rep.Notes) == 0:
	case r.code == ExitPartial && rep.Partial && len(rep.Notes) > 0:
	default:
		t.Fatalf("exit %d, partial %v, notes %v: a report is complete (exit 0) or says what it lacks (exit 11)", r.code, rep.Partial, rep.Notes)
	}
	if len(rep.Ranges) != emulator.DefaultRanges || rep.Sample == nil || rep.Sample.Requests == 0 || rep.Verdict.Kind == "" {
		t.Fatalf("report %+v, sample %+v", rep, rep.Sample)
	}
}

func TestSkewFlagsAreChecked(t *testing.T) {
	testAccount(t)
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--sample", "10s"}, "--query SQL or --ids FILE"},
		{[]string{"--query", "SELECT * FROM c"}, "add --sample"},
		{[]string{"--sample", "1s", "--query", "SELECT * FROM c", "--ids", "-"}, "not both"},
		{[]string{"--sample", "-1s", "--ids", "-"}, "positive duration"},
		{[]string{"--sample", "0s", "--ids", "-"}, "samples nothing"},
		{[]string{"--sample", "1s", "--ids", "-", "--concurrency", "0"}, "1 to 64"},
		{[]string{"extra"}, ""},
	} {
		r := cosmosctl(t, "", append([]string{"skew"}, tc.args...)...)
		if r.code != ExitUsage || r.out != "" || !strings.Contains(r.errOut, tc.says) || strings.Count(strings.TrimSpace(r.errOut), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q: want exit 2 and one line saying %q", tc.args, r.code, r.errOut, tc.says)
		}
	}
	for _, ids := range []string{"", "not json\n", `{"id":"o1"}` + "\n", `{"pk":"t1"}` + "\n"} {
		if r := cosmosctl(t, ids, "skew", "--sample", "1s", "--ids", "-"); r.code != ExitUsage || !strings.Contains(r.errOut, "--ids") {
			t.Errorf("--ids %q: exit %d, stderr %q", ids, r.code, r.errOut)
		}
	}
}

func TestSkewOfAContainerThatDoesNotExist(t *testing.T) {
	testAccount(t)
	// An empty one exists: its ranges report no data, which is no missing statistics.
	if rep, r := skewJSON(t, ""); r.code != ExitOK || rep.Verdict.Kind != skewStorageEven || rep.Ranges[0].StoragePercent == nil {
		t.Fatalf("an empty container: exit %d, %+v", r.code, rep.Verdict)
	}
	if r := cosmosctl(t, "", "skew", "--container", "nope"); r.code != ExitNotFound || r.out != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.out, r.errOut)
	}
}

// TestSkewWithoutASampleJudgesTheStorage: without --sample, the table shows each
// range's items, size and share of the storage, and the verdict is about the storage.
func TestSkewWithoutASampleJudgesTheStorage(t *testing.T) {
	srv := testAccount(t)
	ranges := seedKeys(t, srv, []string{"big"}, 20)
	seedKeys(t, srv, []string{"t1", "t2", "t3"}, 1)
	rep, r := skewJSON(t, "")
	if r.code != ExitOK || rep.Sample != nil {
		t.Fatalf("exit %d, %+v", r.code, rep)
	}
	if v := rep.Verdict; v.Kind != skewStorageSkew || v.RangeID == nil || *v.RangeID != ranges["big"] {
		t.Fatalf("verdict %+v, the big key is in range %s: %+v", v, ranges["big"], rep.Ranges)
	}
	table := cosmosctl(t, "", "skew")
	if table.code != ExitOK || !strings.Contains(table.out, "RANGE") || !strings.Contains(table.out, "app/items: 400 RU/s manual over 4 ranges, 100 RU/s each") ||
		!strings.Contains(table.out, "\nverdict: storage skew: range "+ranges["big"]) {
		t.Fatalf("table: %+v", table)
	}
	// Under -o tsv stdout is the table alone; the throughput and the verdict go to stderr.
	tsv := cosmosctl(t, "", "skew", "-o", "tsv")
	if lines := strings.Split(strings.TrimSpace(tsv.out), "\n"); tsv.code != ExitOK || len(lines) != 1+emulator.DefaultRanges ||
		!strings.HasPrefix(lines[0], "RANGE\tITEMS\tSIZE") || !strings.Contains(tsv.errOut, "verdict: storage skew") {
		t.Fatalf("tsv: %+v", tsv)
	}
}

// TestSkewSamplesAQuery: a query's pages are counted on the ranges they read.
func TestSkewSamplesAQuery(t *testing.T) {
	srv := testAccount(t)
	seedKeys(t, srv, []string{"t1", "t2", "t3", "t4", "t5", "t6"}, 1)
	rep, r := skewJSON(t, "", "--sample", "300ms", "--query", "SELECT * FROM c", "--concurrency", "1")
	if r.code != ExitOK || rep.Sample == nil || rep.Sample.Source != "query" || rep.Sample.Requests == 0 {
		t.Fatalf("exit %d %s: %+v", r.code, r.errOut, rep.Sample)
	}
	for _, rg := range rep.Ranges {
		if rg.Sample == nil || rg.Sample.Requests == 0 || rg.Sample.RequestCharge <= 0 {
			t.Fatalf("a cross-partition query reads every range: range %s %+v", rg.ID, rg.Sample)
		}
	}
	if r := cosmosctl(t, "", "skew", "--sample", "1s", "--query", "SELEC nonsense"); r.code != ExitUsage {
		t.Fatalf("a query the service refuses: exit %d %s", r.code, r.errOut)
	}
}

// TestSkewSampleKeepsToItsRUCap: with --max-ru-per-second the sample spends no more
// than the cap allows over its duration (a second's allowance at the start, and the
// requests in flight when it runs out), whatever the machine's speed. (Without the
// cap the same sample spends thousands of RU.)
func TestSkewSampleKeepsToItsRUCap(t *testing.T) {
	srv := testAccount(t)
	seedKeys(t, srv, []string{"t1", "t2", "t3", "t4"}, 1)
	const maxRU, concurrency = 10.0, 4
	rep, r := skewJSON(t, "", "--sample", "1s", "--query", "SELECT * FROM c", "--concurrency", fmt.Sprint(concurrency), "--max-ru-per-second", fmt.Sprint(maxRU))
	if r.code != ExitOK || rep.Sample == nil || rep.Sample.Requests == 0 {
		t.Fatalf("exit %d %s: %+v", r.code, r.errOut, rep.Sample)
	}
	s := rep.Sample
	if s.MaxRUPerSecond == nil || *s.MaxRUPerSecond != maxRU {
		t.Errorf("max_ru_per_second %v, want %g", s.MaxRUPerSecond, maxRU)
	}
	perPage := s.RequestCharge / float64(s.Requests)
	allowed := maxRU*(float64(s.DurationMs)/1000+1) + concurrency*perPage
	if s.RequestCharge > allowed {
		t.Fatalf("%.2f RU in %d ms at %g RU/s: more than the %.2f RU the cap allows", s.RequestCharge, s.DurationMs, maxRU, allowed)
	}
	if r := cosmosctl(t, "", "skew", "--max-ru-per-second", "10"); r.code != ExitUsage || !strings.Contains(r.errOut, "--sample") {
		t.Fatalf("--max-ru-per-second without --sample: exit %d %s", r.code, r.errOut)
	}
}

// TestSkewInterruptedPrintsWhatItSampled: Ctrl-C during a long sample ends it at once;
// the report of what was sampled is printed, and the exit is 130.
func TestSkewInterruptedPrintsWhatItSampled(t *testing.T) {
	testAccount(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hook := skewAfterRecord
	t.Cleanup(func() { skewAfterRecord = hook })
	skewAfterRecord = func(n int64) {
		if n >= 5 {
			cancel()
		}
	}
	io, out, errOut := testIO()
	io.In = strings.NewReader("{\"id\":\"o1\",\"pk\":\"t1\"}\n")
	start := time.Now()
	code := Run(ctx, io, []string{"skew", "--sample", "10m", "--ids", "-", "-o", "json"})
	if elapsed := time.Since(start); elapsed > time.Minute {
		t.Fatalf("took %s after the interrupt", elapsed)
	}
	var rep skewReport
	if err := json.Unmarshal([]byte(out.String()), &rep); err != nil || code != ExitInterrupted {
		t.Fatalf("exit %d (want %d), stdout %q, stderr %q: %v", code, ExitInterrupted, out.String(), errOut.String(), err)
	}
	if rep.Sample == nil || !rep.Sample.Interrupted || rep.Sample.Requests < 5 || !rep.Partial {
		t.Fatalf("the report must say the sample was interrupted, with what it sampled: %+v %+v", rep.Sample, rep.Notes)
	}
}

// TestSkewShowsSharedAndAutoscaleThroughput: a container without an offer of its own
// shows its database's RU/s as shared, with no per-range share.
func TestSkewShowsSharedAndAutoscaleThroughput(t *testing.T) {
	testAccount(t)
	for _, args := range [][]string{
		{"db", "create", "shared", "--throughput", "1000"},
		{"container", "create", "events", "--partition-key", "/pk", "--database", "shared"},
	} {
		if r := cosmosctl(t, "", args...); r.code != ExitOK {
			t.Fatalf("%v: %+v", args, r)
		}
	}
	rep, r := skewJSON(t, "", "--database", "shared", "--container", "events")
	tp := rep.Throughput
	if r.code != ExitOK || tp.Mode != "shared" || tp.RUPerSecond == nil || *tp.RUPerSecond != 1000 || tp.PerRangeRUPerSecond != nil {
		t.Fatalf("exit %d %s: %+v", r.code, r.errOut, tp)
	}
	if r := cosmosctl(t, "", "skew", "--database", "shared", "--container", "events"); !strings.Contains(r.out, "1,000 RU/s shared with the database's other containers") {
		t.Fatalf("table: %+v", r)
	}
	// Autoscale: the share is of its maximum, up to which it scales at once.
	if r := cosmosctl(t, "", "container", "create", "auto", "--partition-key", "/pk", "--autoscale-max", "4000"); r.code != ExitOK {
		t.Fatalf("create: %+v", r)
	}
	rep, _ = skewJSON(t, "", "--container", "auto")
	if tp := rep.Throughput; tp.Mode != "autoscale" || tp.RUPerSecond == nil || *tp.RUPerSecond != 4000 || tp.PerRangeRUPerSecond == nil ||
		*tp.PerRangeRUPerSecond != 4000/float64(len(rep.Ranges)) {
		t.Fatalf("autoscale: %+v over %d ranges", tp, len(rep.Ranges))
	}
}
