package output

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// ExplainReport is what `cosmosctl query --explain` prints: how the service ran the
// query in each partition key range, the indexes it used and those it says would help,
// the indexing policy change that adds them, and its query advice. Its JSON field names
// are an API.
type ExplainReport struct {
	Query      string                  `json:"query"`
	Parameters []cosmos.QueryParameter `json:"parameters"`
	// PartitionKey is the --pk the query ran within; null across partitions.
	PartitionKey json.RawMessage `json:"partition_key"`
	// Scope says where the query ran, for a person.
	Scope string `json:"scope"`
	// Items is how many items the run returned; Complete says it read them all (else
	// Continuation resumes after them, as for `query`).
	Items        int     `json:"items"`
	Complete     bool    `json:"complete"`
	Continuation *string `json:"continuation"`
	// RequestCharge is what the whole run cost, the query plan and the reads of the
	// partition key ranges included; Ranges only count the query's pages.
	RequestCharge float64 `json:"request_charge"`
	// Ranges are the query's figures per partition key range (one entry, range_id "",
	// within a partition key), in range order; Totals sums them.
	Ranges []ExplainRange `json:"ranges"`
	Totals ExplainRange   `json:"totals"`
	// Indexes are the index metrics of every page, united.
	Indexes ExplainIndexes `json:"indexes"`
	// IndexingPolicy is the container's policy and the change that adds the potential
	// indexes.
	IndexingPolicy ExplainPolicy `json:"indexing_policy"`
	// QueryAdvice is the service's Query Advisor advice, each rule once.
	QueryAdvice []ExplainAdvice `json:"query_advice"`
	// Notes say what the figures cannot show (no metrics sent, no items, …).
	Notes []string `json:"notes"`
}

// ExplainRange is the service's query metrics (x-ms-documentdb-query-metrics) of one
// partition key range, summed over its pages. Times are the service's, in ms.
type ExplainRange struct {
	RangeID       string  `json:"range_id"`
	Pages         int     `json:"pages"`
	RequestCharge float64 `json:"request_charge"`
	// MetricsPages is how many of the pages carried query metrics.
	MetricsPages int `json:"metrics_pages"`
	// ServerTimeMs is totalExecutionTimeInMs: the query's execution in the service.
	ServerTimeMs         float64 `json:"server_time_ms"`
	RetrievedDocuments   int64   `json:"retrieved_document_count"`
	RetrievedBytes       int64   `json:"retrieved_document_size_bytes"`
	OutputDocuments      int64   `json:"output_document_count"`
	OutputBytes          int64   `json:"output_document_size_bytes"`
	IndexLookupTimeMs    float64 `json:"index_lookup_time_ms"`
	DocumentLoadTimeMs   float64 `json:"document_load_time_ms"`
	VMExecutionTimeMs    float64 `json:"vm_execution_time_ms"`
	QueryCompileTimeMs   float64 `json:"query_compile_time_ms"`
	WriteOutputTimeMs    float64 `json:"write_output_time_ms"`
	SystemFunctionTimeMs float64 `json:"system_function_time_ms"`
	// RetrievedPerOutput is retrieved_document_count / output_document_count: 1 when
	// the index served the filter, far more when the query scanned. Null when nothing
	// was output.
	RetrievedPerOutput *float64 `json:"retrieved_per_output"`
}

// ExplainIndexes are the indexes the service reported (x-ms-cosmos-index-utilization).
type ExplainIndexes struct {
	UtilizedSingle     []ExplainSingleIndex    `json:"utilized_single"`
	PotentialSingle    []ExplainSingleIndex    `json:"potential_single"`
	UtilizedComposite  []ExplainCompositeIndex `json:"utilized_composite"`
	PotentialComposite []ExplainCompositeIndex `json:"potential_composite"`
}

// ExplainSingleIndex is one range index path, /name/?, with the filter expressions
// that use it (or would), as the service writes them.
type ExplainSingleIndex struct {
	IndexSpec   string   `json:"index_spec"`
	Filters     []string `json:"filter_expressions"`
	ImpactScore string   `json:"impact_score"`
}

// ExplainCompositeIndex is one composite index: its paths with their order.
type ExplainCompositeIndex struct {
	IndexSpecs  []string `json:"index_specs"`
	ImpactScore string   `json:"impact_score"`
}

// ExplainPolicy is the container's indexing policy and the proposed one: the current
// policy with the potential indexes added (null when it already has them all).
type ExplainPolicy struct {
	Current  json.RawMessage `json:"current"`
	Proposed json.RawMessage `json:"proposed"`
	// Changes list what the proposal changes, for a person; Diff is the proposal as a
	// line diff of the two policies' JSON ("  ", "- ", "+ " prefixes).
	Changes []string `json:"changes"`
	Diff    []string `json:"diff"`
}

// ExplainAdvice is one Query Advisor rule the query matches.
type ExplainAdvice struct {
	ID         string   `json:"id"`
	Parameters []string `json:"parameters"`
	// Message is cosmosctl's summary of the rule ("" for a rule it does not know);
	// Link is the rule's documentation.
	Message string `json:"message"`
	Link    string `json:"link"`
}

// WriteExplain writes the report for a person.
func WriteExplain(w io.Writer, st Styles, r *ExplainReport) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "%s %s\n", st.Bold("Query:"), r.Query)
	fmt.Fprintf(b, "%s %s\n", st.Bold("Scope:"), r.Scope)
	done := "complete"
	if !r.Complete {
		done = "stopped there: more items remain"
	}
	fmt.Fprintf(b, "%s %s (%s), %s RU in all\n\n", st.Bold("Items:"), HumanCount(r.Items, "item"), done, formatRU(r.RequestCharge))
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}

	t := NewTable(w, st, "RANGE", "PAGES", "RU", "SERVER MS", "RETRIEVED", "OUTPUT", "RETRIEVED/OUTPUT", "INDEX LOOKUP MS", "DOC LOAD MS").AlignRight(1, 2, 3, 4, 5, 6, 7, 8)
	row := func(name string, x ExplainRange) {
		t.Append(name, strconv.Itoa(x.Pages), formatRU(x.RequestCharge), explainMs(x.ServerTimeMs),
			strconv.FormatInt(x.RetrievedDocuments, 10), strconv.FormatInt(x.OutputDocuments, 10),
			ratio(x.RetrievedPerOutput, x.RetrievedDocuments), explainMs(x.IndexLookupTimeMs), explainMs(x.DocumentLoadTimeMs))
	}
	for _, x := range r.Ranges {
		name := x.RangeID
		if name == "" {
			name = "(partition key)"
		}
		row(name, x)
	}
	if len(r.Ranges) > 1 {
		row("total", r.Totals)
	}
	if err := t.Render(); err != nil {
		return err
	}

	b.Reset()
	b.WriteString("\n")
	if v := scanVerdict(r.Totals); v != "" {
		b.WriteString(st.Warn(v) + "\n\n")
	}
	ix := r.Indexes
	b.WriteString(st.Bold("Indexes used:"))
	if len(ix.UtilizedSingle)+len(ix.UtilizedComposite) == 0 {
		b.WriteString(" none reported\n")
	} else {
		b.WriteString("\n")
		writeIndexes(b, ix.UtilizedSingle, ix.UtilizedComposite)
	}
	b.WriteString(st.Bold("Indexes that would help (the service's potential indexes):"))
	if len(ix.PotentialSingle)+len(ix.PotentialComposite) == 0 {
		b.WriteString(" none\n")
	} else {
		b.WriteString("\n")
		writeIndexes(b, ix.PotentialSingle, ix.PotentialComposite)
	}
	b.WriteString("\n")
	p := r.IndexingPolicy
	if p.Proposed == nil {
		b.WriteString(st.Bold("Indexing policy:") + " no change proposed\n")
	} else {
		b.WriteString(st.Bold("Indexing policy: proposed change") + "\n")
		for _, c := range p.Changes {
			b.WriteString("  " + c + "\n")
		}
		b.WriteString("\n")
		for _, l := range p.Diff {
			switch {
			case strings.HasPrefix(l, "+"):
				b.WriteString(st.Good(l) + "\n")
			case strings.HasPrefix(l, "-"):
				b.WriteString(st.Bad(l) + "\n")
			default:
				b.WriteString(l + "\n")
			}
		}
		b.WriteString("\n" + st.Faint("Apply it: run the same query with --explain -o json --jq .indexing_policy.proposed | cosmosctl container set-indexing-policy -") + "\n")
	}
	b.WriteString("\n" + st.Bold("Query advice:"))
	if len(r.QueryAdvice) == 0 {
		b.WriteString(" none\n")
	} else {
		b.WriteString("\n")
		for _, a := range r.QueryAdvice {
			line := "  " + a.ID
			if a.Message != "" {
				line += ": " + a.Message
			}
			if len(a.Parameters) > 0 {
				line += " (" + strings.Join(a.Parameters, ", ") + ")"
			}
			b.WriteString(line + "\n    " + a.Link + "\n")
		}
	}
	for _, n := range r.Notes {
		b.WriteString("\n" + st.Faint("Note: "+n))
	}
	if len(r.Notes) > 0 {
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeIndexes(b *strings.Builder, single []ExplainSingleIndex, composite []ExplainCompositeIndex) {
	for _, s := range single {
		line := "  " + s.IndexSpec
		if len(s.Filters) > 0 && s.Filters[0] != "" {
			line += "   " + strings.Join(s.Filters, ", ")
		}
		if s.ImpactScore != "" {
			line += "   impact " + s.ImpactScore
		}
		b.WriteString(line + "\n")
	}
	for _, c := range composite {
		line := "  (" + strings.Join(c.IndexSpecs, ", ") + ")"
		if c.ImpactScore != "" {
			line += "   impact " + c.ImpactScore
		}
		b.WriteString(line + "\n")
	}
}

// scanVerdict says what the retrieved and output counts mean, in the words of
// "Troubleshoot query performance" (Microsoft Learn): a Retrieved Document Count much
// higher than the Output Document Count means part of the query could not use an index
// and scanned; roughly equal means it did not load documents it did not need (TOP may
// load one more).
func scanVerdict(t ExplainRange) string {
	switch {
	case t.MetricsPages == 0:
		return ""
	case t.RetrievedDocuments > 2*t.OutputDocuments+1:
		return fmt.Sprintf("The service loaded %d documents to output %d: at least one part of the query could not use an index and scanned.", t.RetrievedDocuments, t.OutputDocuments)
	}
	return ""
}

func explainMs(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

func ratio(r *float64, retrieved int64) string {
	if r == nil {
		if retrieved > 0 {
			return "n/a" // documents loaded, none output
		}
		return "-"
	}
	return strconv.FormatFloat(*r, 'f', 1, 64)
}

func formatRU(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
