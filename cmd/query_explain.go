package cmd

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	goio "io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/output"
	"github.com/cosmosctl/cosmosctl/query"
)

// query --explain: the query run as `query` runs it, every page asking the service for
// its query metrics (x-ms-documentdb-populatequerymetrics), index metrics
// (x-ms-cosmos-populateindexmetrics) and query advice (x-ms-cosmos-populatequeryadvice),
// the answers put together per partition key range, and the indexes the service says
// would help turned into a change of the container's indexing policy.

const queryExplainHelp = `
--explain runs the query as above (--max-items, --all, --pk, --param) but prints,
instead of the items, how the service ran it: per partition key range its request
charge, server time, documents retrieved (loaded) and output and their ratio, index
lookup and document load time, from the service's query metrics; the indexes it
used and those it says would help (index metrics), and the change to the
container's indexing policy that adds them, as a diff and, with -o json, as
.indexing_policy.proposed, ready for "container set-indexing-policy -"; and the
service's query advice, with links. Retrieved far above output means part of the
filter could not use an index and the query scanned. -o json has all of it.
`

// explainQuery runs the query with the service's metrics asked for, and prints the report.
func (o *queryOptions) explainQuery(ctx context.Context, io *IOStreams, sql string) error {
	spec, pk, sess, err := o.open(ctx, io, sql)
	if err != nil {
		return err
	}
	defer sess.Close()
	format := sess.settings.Output
	if format == config.OutputNDJSON || format == config.OutputTSV {
		return usageErrorf("--explain prints a report: use -o table or -o json, not -o %s", format)
	}
	page, err := o.conn.readTemplate(ctx, sess)
	if err != nil {
		return err
	}
	page.Explain = true
	keys, err := resolveKeyScope(ctx, sess, o.pk, pk)
	if err != nil {
		return err
	}
	qo := query.Options{Client: sess.client, Database: sess.settings.Database, Container: sess.settings.Container,
		Spec: spec, PartitionKey: keys.key, PartitionKeyPrefix: keys.prefix, PageSize: o.pageSize, Continuation: o.continuation, Parallelism: o.parallelism, Page: page}
	if !o.all {
		qo.MaxItems = o.maxItems
		if !o.conn.flags.Changed("page-size") {
			qo.PageSize = min(o.maxItems, maxQueryPageSize)
		}
	}
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, o.timeout, errQueryTimeout)
		defer cancel()
	}
	run := &queryRun{o: o, io: io, lines: output.ItemLineWriter{W: io.Out}, sess: sess, spec: spec, keys: keys, format: format, start: time.Now(), firstItem: -1}
	it, err := query.Run(ctx, qo)
	if err != nil {
		return queryError(err)
	}
	defer it.Close()
	var infos []query.PageInfo
	items := 0
	var runErr error
	for {
		got, info, err := it.Next(ctx)
		if info != nil {
			infos = append(infos, *info)
			if info.Kind == query.KindPage && info.RangeID != "" {
				run.pages = append(run.pages, output.QueryPage{RangeID: info.RangeID})
			}
		}
		items += len(got)
		if errors.Is(err, goio.EOF) {
			break
		}
		if err != nil {
			runErr = err
			break
		}
	}
	it.Close()
	if runErr != nil {
		return run.commandError(ctx, runErr, items)
	}
	rr := &resourceRun{o: &resourceOptions{conn: o.conn}, io: io, sess: sess, exclude: page.ExcludeRegions}
	cont, err := rr.getContainerResource(ctx, sess.settings.Database, sess.settings.Container)
	if err != nil {
		return err
	}
	rep := buildExplain(spec, infos, it.Stats().RequestCharge, cont.indexingPolicy())
	rep.Scope = run.scope()
	rep.Items = items
	token := it.Continuation()
	rep.Complete = token == "" && it.Unresumable() == ""
	if token != "" {
		rep.Continuation = &token
	}
	rep.PartitionKey = json.RawMessage("null")
	if k := keys.json(); k != "" {
		rep.PartitionKey = json.RawMessage(k)
	}
	if o.conn.wantJSON(sess.settings) {
		return output.WriteJSON(io.Out, rep)
	}
	if err := output.WriteExplain(io.Out, io.outStyles(o.conn.noColor), rep); err != nil {
		return err
	}
	run.resumeNote(token, it.Unresumable(), rep.Complete, false, items)
	return nil
}

// buildExplain puts the pages' metrics together.
func buildExplain(spec cosmos.QuerySpec, infos []query.PageInfo, charge float64, policy json.RawMessage) *output.ExplainReport {
	rep := &output.ExplainReport{Query: spec.Query, Parameters: spec.Parameters, RequestCharge: charge,
		Ranges: []output.ExplainRange{}, QueryAdvice: []output.ExplainAdvice{}, Notes: []string{}}
	if rep.Parameters == nil {
		rep.Parameters = []cosmos.QueryParameter{}
	}
	byRange := map[string]*output.ExplainRange{}
	var order []string
	idx := newIndexUnion()
	advice := map[string]bool{}
	indexPages := 0
	for _, in := range infos {
		if in.Kind != query.KindPage {
			continue
		}
		r := byRange[in.RangeID]
		if r == nil {
			r = &output.ExplainRange{RangeID: in.RangeID}
			byRange[in.RangeID] = r
			order = append(order, in.RangeID)
		}
		r.Pages++
		r.RequestCharge += in.RequestCharge
		if m, ok := parseServerMetrics(in.QueryMetrics); ok {
			r.MetricsPages++
			addServerMetrics(r, m)
		}
		if in.IndexUtilization != "" && idx.add(in.IndexUtilization) {
			indexPages++
		}
		for _, a := range parseQueryAdvice(in.QueryAdvice) {
			key := a.ID + "\x00" + strings.Join(a.Parameters, "\x00")
			if !advice[key] {
				advice[key] = true
				rep.QueryAdvice = append(rep.QueryAdvice, a)
			}
		}
	}
	slices.SortFunc(order, compareRangeIDs)
	for _, id := range order {
		r := byRange[id]
		setRatio(r)
		rep.Ranges = append(rep.Ranges, *r)
		t := &rep.Totals
		t.Pages += r.Pages
		t.MetricsPages += r.MetricsPages
		t.RequestCharge += r.RequestCharge
		t.ServerTimeMs += r.ServerTimeMs
		t.RetrievedDocuments += r.RetrievedDocuments
		t.RetrievedBytes += r.RetrievedBytes
		t.OutputDocuments += r.OutputDocuments
		t.OutputBytes += r.OutputBytes
		t.IndexLookupTimeMs += r.IndexLookupTimeMs
		t.DocumentLoadTimeMs += r.DocumentLoadTimeMs
		t.VMExecutionTimeMs += r.VMExecutionTimeMs
		t.QueryCompileTimeMs += r.QueryCompileTimeMs
		t.WriteOutputTimeMs += r.WriteOutputTimeMs
		t.SystemFunctionTimeMs += r.SystemFunctionTimeMs
	}
	setRatio(&rep.Totals)
	rep.Indexes = idx.result()
	rep.IndexingPolicy = proposeIndexingPolicy(policy, rep.Indexes)

	pages := rep.Totals.Pages
	switch {
	case pages > 0 && rep.Totals.MetricsPages == 0:
		rep.Notes = append(rep.Notes, "the service sent no query metrics (x-ms-documentdb-query-metrics) for the query's pages")
	case pages > 0 && rep.Totals.MetricsPages < pages:
		rep.Notes = append(rep.Notes, fmt.Sprintf("only %d of the %d pages carried query metrics: the figures are theirs", rep.Totals.MetricsPages, pages))
	}
	if pages > 0 && indexPages == 0 {
		rep.Notes = append(rep.Notes, "the service sent no index metrics: it sends them only for a page that returns items (Microsoft Learn, \"Indexing metrics\")")
	}
	return rep
}

func setRatio(r *output.ExplainRange) {
	if r.OutputDocuments > 0 {
		v := float64(r.RetrievedDocuments) / float64(r.OutputDocuments)
		r.RetrievedPerOutput = &v
	}
}

// compareRangeIDs orders partition key range ids as numbers where they are.
func compareRangeIDs(a, b string) int {
	x, errA := strconv.Atoi(a)
	y, errB := strconv.Atoi(b)
	if errA == nil && errB == nil {
		return x - y
	}
	return strings.Compare(a, b)
}

// parseServerMetrics reads x-ms-documentdb-query-metrics: "name=value" pairs joined by
// ";" (the .NET SDK's ServerSideMetrics parser reads the same form).
func parseServerMetrics(h string) (map[string]float64, bool) {
	if strings.TrimSpace(h) == "" {
		return nil, false
	}
	m := map[string]float64{}
	for _, p := range strings.Split(h, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			continue
		}
		m[strings.TrimSpace(k)] = f
	}
	return m, len(m) > 0
}

func addServerMetrics(r *output.ExplainRange, m map[string]float64) {
	r.ServerTimeMs += m["totalExecutionTimeInMs"]
	r.RetrievedDocuments += int64(m["retrievedDocumentCount"])
	r.RetrievedBytes += int64(m["retrievedDocumentSize"])
	r.OutputDocuments += int64(m["outputDocumentCount"])
	r.OutputBytes += int64(m["outputDocumentSize"])
	r.IndexLookupTimeMs += m["indexLookupTimeInMs"]
	r.DocumentLoadTimeMs += m["documentLoadTimeInMs"]
	r.VMExecutionTimeMs += m["VMExecutionTimeInMs"]
	r.QueryCompileTimeMs += m["queryCompileTimeInMs"]
	r.WriteOutputTimeMs += m["writeOutputTimeInMs"]
	r.SystemFunctionTimeMs += m["systemFunctionExecuteTimeInMs"]
}

// indexUnion unites the index metrics of every page, each index once, in the order
// first reported.
type indexUnion struct {
	single    map[string]*output.ExplainSingleIndex
	composite map[string]bool
	out       output.ExplainIndexes
	// singleOrder keeps the specs of the two single lists in order.
	utilizedOrder, potentialOrder []string
}

func newIndexUnion() *indexUnion {
	return &indexUnion{single: map[string]*output.ExplainSingleIndex{}, composite: map[string]bool{}}
}

// The two forms of x-ms-cosmos-index-utilization: V1, base64 of this JSON (the .NET
// SDK's IndexUtilizationInfo.TryCreateFromDelimitedBase64String), and V2, URL-encoded
// JSON of UtilizedIndexes and PotentialIndexes (the JS SDK's decodeAndParseJSONString).
type (
	indexMetricsV1 struct {
		UtilizedSingleIndexes     []singleIndexV1    `json:"UtilizedSingleIndexes"`
		PotentialSingleIndexes    []singleIndexV1    `json:"PotentialSingleIndexes"`
		UtilizedCompositeIndexes  []compositeIndexV1 `json:"UtilizedCompositeIndexes"`
		PotentialCompositeIndexes []compositeIndexV1 `json:"PotentialCompositeIndexes"`
	}
	singleIndexV1 struct {
		FilterExpression string `json:"FilterExpression"`
		IndexSpec        string `json:"IndexSpec"`
		IndexImpactScore string `json:"IndexImpactScore"`
	}
	compositeIndexV1 struct {
		IndexSpecs       []string `json:"IndexSpecs"`
		IndexImpactScore string   `json:"IndexImpactScore"`
	}
	indexMetricsV2 struct {
		UtilizedIndexes  *indexesV2 `json:"UtilizedIndexes"`
		PotentialIndexes *indexesV2 `json:"PotentialIndexes"`
	}
	indexesV2 struct {
		SingleIndexes    []singleIndexV1    `json:"SingleIndexes"`
		CompositeIndexes []compositeIndexV1 `json:"CompositeIndexes"`
	}
)

// add unites one page's header; false when it is in neither form.
func (u *indexUnion) add(h string) bool {
	var v1 indexMetricsV1
	if raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(h)); err == nil && json.Unmarshal(raw, &v1) == nil {
		u.addLists(v1.UtilizedSingleIndexes, v1.PotentialSingleIndexes, v1.UtilizedCompositeIndexes, v1.PotentialCompositeIndexes)
		return true
	}
	var v2 indexMetricsV2
	if raw, err := url.PathUnescape(h); err == nil && json.Unmarshal([]byte(raw), &v2) == nil && (v2.UtilizedIndexes != nil || v2.PotentialIndexes != nil) {
		var used, pot indexesV2
		if v2.UtilizedIndexes != nil {
			used = *v2.UtilizedIndexes
		}
		if v2.PotentialIndexes != nil {
			pot = *v2.PotentialIndexes
		}
		u.addLists(used.SingleIndexes, pot.SingleIndexes, used.CompositeIndexes, pot.CompositeIndexes)
		return true
	}
	return false
}

func (u *indexUnion) addLists(usedS, potS []singleIndexV1, usedC, potC []compositeIndexV1) {
	addS := func(list []singleIndexV1, kind string, order *[]string) {
		for _, s := range list {
			key := kind + s.IndexSpec
			e := u.single[key]
			if e == nil {
				e = &output.ExplainSingleIndex{IndexSpec: s.IndexSpec, Filters: []string{}, ImpactScore: s.IndexImpactScore}
				u.single[key] = e
				*order = append(*order, key)
			}
			if s.FilterExpression != "" && !slices.Contains(e.Filters, s.FilterExpression) {
				e.Filters = append(e.Filters, s.FilterExpression)
			}
		}
	}
	addS(usedS, "u", &u.utilizedOrder)
	addS(potS, "p", &u.potentialOrder)
	addC := func(list []compositeIndexV1, kind string, out *[]output.ExplainCompositeIndex) {
		for _, c := range list {
			key := kind + strings.Join(c.IndexSpecs, ",")
			if !u.composite[key] {
				u.composite[key] = true
				*out = append(*out, output.ExplainCompositeIndex{IndexSpecs: c.IndexSpecs, ImpactScore: c.IndexImpactScore})
			}
		}
	}
	addC(usedC, "u", &u.out.UtilizedComposite)
	addC(potC, "p", &u.out.PotentialComposite)
}

func (u *indexUnion) result() output.ExplainIndexes {
	out := u.out
	out.UtilizedSingle, out.PotentialSingle = []output.ExplainSingleIndex{}, []output.ExplainSingleIndex{}
	for _, k := range u.utilizedOrder {
		out.UtilizedSingle = append(out.UtilizedSingle, *u.single[k])
	}
	for _, k := range u.potentialOrder {
		out.PotentialSingle = append(out.PotentialSingle, *u.single[k])
	}
	if out.UtilizedComposite == nil {
		out.UtilizedComposite = []output.ExplainCompositeIndex{}
	}
	if out.PotentialComposite == nil {
		out.PotentialComposite = []output.ExplainCompositeIndex{}
	}
	return out
}

// queryAdviceRules are the Query Advisor rules cosmosctl can summarise, in its own
// words, from the rules the .NET SDK documents (QueryAdviceRuleDocumentation.xml,
// Query/Core/QueryAdvisor, azure-cosmos-dotnet-v3). An unknown rule is shown by its id
// and link.
var queryAdviceRules = map[string]string{
	"QA1000": "ARRAY_CONTAINS with partial matching: an EXISTS subquery may serve it better",
	"QA1002": "CONTAINS: if it matches a prefix, STARTSWITH uses the index better",
	"QA1003": "case-insensitive STARTSWITH or StringEquals: a computed property of the lower-cased string may serve it better",
	"QA1004": "ENDSWITH: a computed property of the reversed string with STARTSWITH may serve it better",
	"QA1006": "UPPER or LOWER in the filter: a computed property of that expression may serve it better",
	"QA1007": "GetCurrentDateTime in the filter: GetCurrentDateTimeStatic is evaluated once per query",
	"QA1008": "GetCurrentTicks in the query: GetCurrentTicksStatic is evaluated once per query",
	"QA1009": "GetCurrentTimestamp in the query: GetCurrentTimestampStatic is evaluated once per query",
}

// parseQueryAdvice reads x-ms-cosmos-query-advice: URL-encoded JSON, an array of
// {"Id", "Params"} (the .NET SDK's QueryAdvice.TryCreateFromString and QueryAdviceEntry);
// each rule is documented at https://aka.ms/CosmosDB/QueryAdvisor/<Id>. A header in
// another form is ignored.
func parseQueryAdvice(h string) []output.ExplainAdvice {
	if strings.TrimSpace(h) == "" {
		return nil
	}
	raw, err := url.QueryUnescape(h)
	if err != nil {
		raw = h
	}
	var entries []struct {
		ID     string   `json:"Id"`
		Params []string `json:"Params"`
	}
	if json.Unmarshal([]byte(raw), &entries) != nil {
		return nil
	}
	var out []output.ExplainAdvice
	for _, e := range entries {
		if e.ID == "" {
			continue
		}
		params := e.Params
		if params == nil {
			params = []string{}
		}
		out = append(out, output.ExplainAdvice{ID: e.ID, Parameters: params, Message: queryAdviceRules[e.ID], Link: cosmos.QueryAdvisorURL + url.PathEscape(e.ID)})
	}
	return out
}
