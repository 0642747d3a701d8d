package output

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/query"
)

// QueryObject is what `cosmosctl query -o json` prints: the items, where to resume, and
// every request the query sent. Its field names are an API, as ResultObject's.
type QueryObject struct {
	Query      string                  `json:"query"`
	Parameters []cosmos.QueryParameter `json:"parameters"`
	// PartitionKey is the --pk the query ran within; null across partitions.
	// PartitionKeyPrefix says it is a prefix of a hierarchical key: the query ran over
	// the partitions its keys span.
	PartitionKey       json.RawMessage   `json:"partition_key"`
	PartitionKeyPrefix bool              `json:"partition_key_prefix"`
	Items              []json.RawMessage `json:"items"`
	// Complete says the query has no more results. Continuation resumes it after Items
	// (--continuation); null when it is complete, or when Unresumable says why it
	// cannot be resumed.
	Complete     bool    `json:"complete"`
	Continuation *string `json:"continuation"`
	// Unresumable says why a query that is not complete cannot be resumed; null
	// otherwise.
	Unresumable *string      `json:"unresumable"`
	Totals      QueryTotals  `json:"totals"`
	Pages       []QueryPage  `json:"pages"`
	Error       *ErrorObject `json:"error"`
}

// QueryTotals sum up a query run.
type QueryTotals struct {
	Items int `json:"items"`
	// Pages counts the query's pages; Requests every request, the plan and the reads of
	// the partition key ranges included.
	Pages            int      `json:"pages"`
	Requests         int      `json:"requests"`
	RequestCharge    float64  `json:"request_charge"`
	ContactedRegions []string `json:"contacted_regions"`
	Splits           int      `json:"splits"`
	Merges           int      `json:"merges"`
	DurationMs       float64  `json:"duration_ms"`
	// FirstItemMs is how long the first item took to arrive; null with no item.
	FirstItemMs *float64 `json:"first_item_ms"`
}

// QueryPage is one request of a query: a page from a partition key range (or from the
// partition key), the query plan, or a read of the partition key ranges.
type QueryPage struct {
	N       int    `json:"n"`
	Kind    string `json:"kind"`
	RangeID string `json:"-"`
	// Items is how many items the service returned in the page, before any merge.
	Items int `json:"items"`
	// StatusCode and SubStatus are the answer used, null when no attempt got one.
	StatusCode       int      `json:"-"`
	SubStatus        int      `json:"-"`
	RequestCharge    float64  `json:"request_charge"`
	DurationMs       float64  `json:"duration_ms"`
	ContactedRegions []string `json:"contacted_regions"`
	WinningRegion    string   `json:"-"`
	// Attempts counts the requests on the wire, Hedges those of them that were hedges.
	Attempts    int                 `json:"attempts"`
	Hedges      int                 `json:"hedges"`
	Note        string              `json:"-"`
	Diagnostics *engine.Diagnostics `json:"diagnostics"`
}

// NewQueryPage describes the n-th request the query pipeline reported.
func NewQueryPage(n int, info query.PageInfo) QueryPage {
	p := QueryPage{N: n, Kind: info.Kind, RangeID: info.RangeID, Items: info.Items, RequestCharge: info.RequestCharge,
		DurationMs: msOf(info.Duration), Note: info.Note, Diagnostics: info.Diagnostics, ContactedRegions: []string{}}
	if d := info.Diagnostics; d != nil {
		p.ContactedRegions = append(p.ContactedRegions, d.ContactedRegions...)
		p.WinningRegion = d.WinningRegion
		p.Attempts = len(d.Attempts)
		for _, a := range d.Attempts {
			if a.Reason == engine.ReasonHedge {
				p.Hedges++
			}
		}
		p.StatusCode, p.SubStatus = pageStatus(d)
	}
	return p
}

// pageStatus is the status of the answer used: the winning attempt's, else the last
// attempt's that got one.
func pageStatus(d *engine.Diagnostics) (int, int) {
	for _, a := range d.Attempts {
		if a.N == d.WinningAttempt && a.StatusCode != 0 {
			return a.StatusCode, a.SubStatus
		}
	}
	for i := len(d.Attempts) - 1; i >= 0; i-- {
		if a := d.Attempts[i]; a.StatusCode != 0 {
			return a.StatusCode, a.SubStatus
		}
	}
	return 0, 0
}

// NewQueryTotals sums up a run from the pipeline's totals; firstItem is how long the
// first item took (negative when none came).
func NewQueryTotals(t query.Totals, firstItem time.Duration) QueryTotals {
	out := QueryTotals{Items: t.Items, Pages: t.Pages, Requests: t.Requests, RequestCharge: math.Round(t.RequestCharge*1e6) / 1e6,
		ContactedRegions: append([]string{}, t.Regions...), Splits: t.Splits, Merges: t.Merges, DurationMs: msOf(t.Duration)}
	if firstItem >= 0 {
		ms := msOf(firstItem)
		out.FirstItemMs = &ms
	}
	return out
}

// ErrorOf is the "error" member of a JSON result for err (nil for nil).
func ErrorOf(err error) *ErrorObject {
	if err == nil {
		return nil
	}
	return errorObject(err)
}

func msOf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// QuerySummary is the line a query ends with on a terminal: what it read, what it cost,
// where from, how long it took.
func QuerySummary(t QueryTotals) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, %s, %.2f RU", HumanCount(t.Items, "item"), HumanCount(t.Pages, "page"), t.RequestCharge)
	if len(t.ContactedRegions) > 0 {
		b.WriteString(" from " + strings.Join(t.ContactedRegions, ", "))
	}
	b.WriteString(" in " + HumanDuration(time.Duration(t.DurationMs*float64(time.Millisecond))))
	if t.FirstItemMs != nil && t.Items > 0 {
		b.WriteString(" (first item " + HumanDuration(time.Duration(*t.FirstItemMs*float64(time.Millisecond))) + ")")
	}
	if t.Splits > 0 {
		b.WriteString(fmt.Sprintf("; %s split during the query", HumanCount(t.Splits, "range")))
	}
	if t.Merges > 0 {
		b.WriteString(fmt.Sprintf("; %s merged during the query", HumanCount(t.Merges, "range")))
	}
	return b.String()
}

// HumanCount is n and the word, in the plural unless n is 1: "1 item", "3 items".
func HumanCount(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
