package hedgetest

import (
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/hedging"
	"github.com/cosmosctl/cosmosctl/workload"
)

func TestParseStrategies(t *testing.T) {
	specs, err := ParseStrategies("none, threshold=500ms/100ms,threshold=50ms,fanout,adaptive,adaptive=5%", 0.1)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	if strings.Join(names, "|") != "none|threshold=500ms/100ms|threshold=50ms|fanout|adaptive|adaptive=5%" {
		t.Fatalf("names %v", names)
	}
	if specs[0].New != nil {
		t.Fatal("none must not hedge")
	}
	s, _ := specs[2].New()
	if th := s.(hedging.Threshold); th.Threshold != 50*time.Millisecond || th.Step != 100*time.Millisecond {
		t.Fatalf("threshold=50ms: %+v", th)
	}
	s, _ = specs[3].New()
	if th := s.(hedging.Threshold); th.Step != 0 {
		t.Fatalf("fanout must ask every region at once: %+v", th)
	}
	a, _ := specs[5].New()
	if !strings.Contains(a.String(), "budget=5%") {
		t.Fatalf("adaptive=5%%: %s", a)
	}
	for _, bad := range []string{"", "bogus", "threshold=soon", "threshold=0s/1ms", "threshold=1ms/-1ms", "none,none", "adaptive=5", "fanout=1", "adaptive=200%"} {
		if _, err := ParseStrategies(bad, 0.1); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func result(name string, p99 time.Duration, reads, attempts int) Result {
	st := workload.NewStats()
	for i := 0; i < 100; i++ {
		st.Record(p99, 200, 0, 1, false)
	}
	return Result{Strategy: name, Stats: st, Reads: reads, Attempts: attempts}
}

func TestRecommendPicksTheCheapestStrategyThatMeetsTheTarget(t *testing.T) {
	results := []Result{
		result("none", time.Second, 100, 100),
		result("fanout", 80*time.Millisecond, 100, 300),
		result("adaptive", 90*time.Millisecond, 100, 106),
		result("threshold=500ms/100ms", 560*time.Millisecond, 100, 104),
	}
	rec := Recommend(results, 100*time.Millisecond)
	if rec.Strategy != "adaptive" || !rec.Met || !strings.Contains(rec.Reason, "+6.0% requests") {
		t.Fatalf("%+v", rec)
	}
	rec = Recommend(results, 50*time.Millisecond)
	if rec.Met || rec.Strategy != "fanout" || !strings.Contains(rec.Reason, "no strategy meets") {
		t.Fatalf("%+v", rec)
	}
}

func TestExtraLoad(t *testing.T) {
	r := Result{Reads: 200, Attempts: 230, RequestCharge: 260, WinnerCharge: 200, Wins: map[string]int{"East US": 150, "West US": 50}}
	if r.ExtraRequestsPct() != 15 || r.ExtraRUPct() != 30 || r.WinShare()["West US"] != 25 {
		t.Fatalf("%v %v %v", r.ExtraRequestsPct(), r.ExtraRUPct(), r.WinShare())
	}
}

func TestQueryOperations(t *testing.T) {
	tmpl := engine.Operation{Kind: engine.OpRead, Database: "app", Container: "items"}
	pk, _ := cosmos.PK("tenant-1")
	item := Item{ID: `o"1`, PartitionKey: pk}
	read := OpRead.operation(tmpl, item)
	if read.Kind != engine.OpRead || read.ID != item.ID || read.Query != nil {
		t.Fatalf("read %+v", read)
	}
	page := OpQuery.operation(tmpl, item)
	if page.Kind != engine.OpQuery || page.ID != "" || page.PartitionKey.JSON() != pk.JSON() || page.Query.Query != QueryPage ||
		len(page.Query.Parameters) != 1 || string(page.Query.Parameters[0].Value) != `"o\"1"` {
		t.Fatalf("query page %+v %+v", page, page.Query)
	}
	for _, s := range []string{"", "read", "query", "query-cross"} {
		if _, err := ParseOp(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	if _, err := ParseOp("scan"); err == nil || !strings.Contains(err.Error(), "query-cross") {
		t.Fatalf("scan: %v", err)
	}
	// Extra requests count against the engine operations a query took, not the queries.
	r := Result{Reads: 10, Requests: 50, Attempts: 60, Wins: map[string]int{"East US": 40, "West US": 10}}
	if r.ExtraRequestsPct() != 20 || r.WinShare()["West US"] != 20 {
		t.Fatalf("%v %v", r.ExtraRequestsPct(), r.WinShare())
	}
}
