package output

import (
	"fmt"
	"io"
	"math"
	"sort"
	"time"

	"github.com/cosmosctl/cosmosctl/bulk"
	"github.com/cosmosctl/cosmosctl/internal/progress"
)

// ImportReport is what `cosmosctl import` reports at the end: the counts of the whole
// run (every process of it, when it was resumed from a state file) and this process's
// share. It is the object -o json prints, and the last event of --progress json, hence
// its "event": "report".
type ImportReport struct {
	Event     string `json:"event"`
	Input     string `json:"input"`
	Database  string `json:"database"`
	Container string `json:"container"`
	Mode      string `json:"mode"`
	// RunID is the run's id, the first part of each created item's _trackingId
	// (RUN_ID:LINE); every shard of a sharded import has the same.
	RunID string `json:"run_id"`
	// Shard is this process's share of the input (--shard), null for all of it.
	Shard    *ImportShard `json:"shard"`
	Complete bool         `json:"complete"`
	// Stopped says why the import stopped before the end of its input.
	Stopped        string `json:"stopped,omitempty"`
	Lines          int64  `json:"lines"`
	Created        int64  `json:"created"`
	AlreadyPresent int64  `json:"already_present"`
	Updated        int64  `json:"updated"`
	// CreatedOrUpdated are upserts whose earlier attempt may have been applied (a lost
	// answer, an earlier process of the run): written, created or updated unknown.
	CreatedOrUpdated int64 `json:"created_or_updated"`
	// Superseded lines failed for availability and a later line of the same item
	// overwrote it: done, not rejected.
	Superseded int64            `json:"superseded"`
	Failed     int64            `json:"failed"`
	BadLines   int64            `json:"bad_lines"`
	BlankLines int64            `json:"blank_lines"`
	Reasons    map[string]int64 `json:"-"`
	// ReasonCounts are the bad and failed lines by reason, most first: a list of
	// records, as every list in cosmosctl's JSON, not an object keyed by the reason.
	ReasonCounts  []ImportReason `json:"reasons"`
	RequestCharge float64        `json:"request_charge"`
	// Throttled counts the requests answered 429, as everywhere (export's report too).
	Throttled int64     `json:"throttled"`
	Runs      int       `json:"runs"`
	ElapsedMs float64   `json:"elapsed_ms"`
	ThisRun   ImportRun `json:"this_run"`
	// RejectedFile and StateFile are null when there is none.
	RejectedFile *string      `json:"rejected_file"`
	StateFile    *string      `json:"state_file"`
	Error        *ErrorObject `json:"error"`
}

// ImportShard is the share of the input one shard of an import takes: line n is shard
// (n-1) mod count's.
type ImportShard struct {
	Index int `json:"index"`
	Count int `json:"count"`
	// Lines are the lines of the input this process read that are the shard's, and
	// OtherLines those it passed over unparsed, other shards'; at the end of the input
	// they add up to its lines.
	Lines      int64 `json:"lines"`
	OtherLines int64 `json:"other_shards_lines"`
	// MaxRUPerSecond is the cap this shard kept to (--max-ru-per-second divided by the
	// count, or --max-ru-per-second-per-shard), null for none.
	MaxRUPerSecond *float64 `json:"max_ru_per_second"`
}

// ImportReason is how many lines were rejected or failed for one reason.
type ImportReason struct {
	Reason string `json:"reason"`
	Lines  int64  `json:"lines"`
}

// ImportRun is one process's share of an import.
type ImportRun struct {
	Lines          int64   `json:"lines"`
	Skipped        int64   `json:"skipped"`
	RequestCharge  float64 `json:"request_charge"`
	Throttled      int64   `json:"throttled"`
	DurationMs     float64 `json:"duration_ms"`
	ItemsPerSecond float64 `json:"items_per_second"`
	RUPerSecond    float64 `json:"ru_per_second"`
}

// NewImportReport is the report of r; err is what stopped the import, if anything.
func NewImportReport(r *bulk.Report, input string, target bulk.Target, mode bulk.Mode, err error) *ImportReport {
	reasons := r.Reasons
	if reasons == nil {
		reasons = map[string]int64{}
	}
	counts := []ImportReason{}
	for _, k := range sortedReasons(reasons) {
		counts = append(counts, ImportReason{Reason: k, Lines: reasons[k]})
	}
	var sh *ImportShard
	if !r.Shard.Whole() {
		sh = &ImportShard{Index: r.Shard.Index, Count: r.Shard.Count, Lines: r.ShardLines, OtherLines: r.OtherShards}
	}
	return &ImportReport{ReasonCounts: counts, Event: "report", Input: input, Database: target.Database, Container: target.Container, Mode: string(mode),
		RunID: r.RunID, Shard: sh,
		Complete: r.Complete, Stopped: r.Stopped, Lines: r.Lines, Created: r.Created, AlreadyPresent: r.AlreadyPresent,
		Updated: r.Updated, CreatedOrUpdated: r.CreatedOrUpdated, Superseded: r.Superseded, Failed: r.Failed, BadLines: r.BadLines, BlankLines: r.Blank, Reasons: reasons,
		RequestCharge: round2(r.RequestCharge), Throttled: r.Throttles, Runs: r.Runs, ElapsedMs: millis(r.Elapsed),
		ThisRun: ImportRun{Lines: r.ThisRun.Lines, Skipped: r.Skipped, RequestCharge: round2(r.ThisRun.RequestCharge),
			Throttled: r.ThisRun.Throttles, DurationMs: millis(r.Duration), ItemsPerSecond: round2(r.ItemsPerSecond()), RUPerSecond: round2(r.RUPerSecond())},
		Error: ErrorOf(err)}
}

func millis(d time.Duration) float64 { return round2(float64(d) / float64(time.Millisecond)) }

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// WriteImportReport is the report as a table: the outcome of every line, what it cost
// and how fast this process went.
func WriteImportReport(w io.Writer, st Styles, r *ImportReport) error {
	t := NewTableOf(w, st, Column{Header: "IMPORT", Key: true}, Column{Header: "", Priority: 1, Min: 10})
	n := progress.Thousands
	status := "complete"
	if !r.Complete {
		status = "stopped: " + r.Stopped
	}
	t.Append("import", fmt.Sprintf("%s into %s/%s (--mode %s): %s", r.Input, r.Database, r.Container, r.Mode, status))
	if sh := r.Shard; sh != nil {
		cap := "no RU cap"
		if sh.MaxRUPerSecond != nil {
			cap = fmt.Sprintf("at most %s RU/s", n(int64(math.Round(*sh.MaxRUPerSecond))))
		}
		t.Append("shard", fmt.Sprintf("%d/%d: %s of the input read, %s other shards'; %s", sh.Index, sh.Count,
			HumanCountThousands(sh.Lines, "line"), n(sh.OtherLines), cap))
	}
	t.Append("created", n(r.Created))
	t.Append("already present", n(r.AlreadyPresent))
	if r.Mode == string(bulk.Upsert) {
		t.Append("updated", n(r.Updated))
		if r.CreatedOrUpdated > 0 {
			t.Append("created or updated", n(r.CreatedOrUpdated)+" (an earlier attempt may have written them: which is not known)")
		}
		if r.Superseded > 0 {
			t.Append("superseded", n(r.Superseded)+" (failed, then overwritten by a later line of the same item)")
		}
	}
	t.Append("failed", n(r.Failed))
	t.Append("bad lines", n(r.BadLines))
	for _, rc := range r.ReasonCounts {
		t.Append("  "+rc.Reason, n(rc.Lines))
	}
	lines := n(r.Lines)
	if r.BlankLines > 0 {
		lines += fmt.Sprintf(" (%s blank)", n(r.BlankLines))
	}
	t.Append("lines done", lines)
	t.Append("request charge", fmt.Sprintf("%s RU, %s throttled (429)", n(int64(math.Round(r.RequestCharge))), HumanCount(int(r.Throttled), "request")))
	run := r.ThisRun
	t.Append("this run", fmt.Sprintf("%s in %s: %s items/s, %s RU/s", HumanCountThousands(run.Lines, "line"),
		HumanDuration(time.Duration(run.DurationMs*float64(time.Millisecond))), n(int64(math.Round(run.ItemsPerSecond))), n(int64(math.Round(run.RUPerSecond)))))
	if r.Runs > 1 {
		t.Append("runs", fmt.Sprintf("%d, %s in all; %s skipped, done before", r.Runs,
			HumanDuration(time.Duration(r.ElapsedMs*float64(time.Millisecond))), HumanCountThousands(run.Skipped, "line")))
	}
	if r.RejectedFile != nil {
		t.Append("rejected lines", *r.RejectedFile)
	}
	if r.StateFile != nil {
		t.Append("state", *r.StateFile)
	}
	return t.Render()
}

// sortedReasons are the reasons, most lines first, then by name.
func sortedReasons(counts map[string]int64) []string {
	reasons := make([]string, 0, len(counts))
	for k := range counts {
		reasons = append(reasons, k)
	}
	sort.Slice(reasons, func(i, j int) bool {
		if counts[reasons[i]] != counts[reasons[j]] {
			return counts[reasons[i]] > counts[reasons[j]]
		}
		return reasons[i] < reasons[j]
	})
	return reasons
}

// HumanCountThousands is HumanCount for the larger counts of imports, thousands
// separated: "1 line", "12,345 lines".
func HumanCountThousands(n int64, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return progress.Thousands(n) + " " + word + "s"
}
