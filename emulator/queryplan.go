package emulator

// Query plans, as the gateway serves them, and the refusal of cross-partition queries
// that need one. The shapes are the service's (the official SDKs' query pipelines read
// them; the .NET SDK's QueryPlanBaselineTests and the JavaScript SDK's
// queryExecutionContext are the references); what follows is what a client pipeline
// can rely on against this emulator.
//
// # Request and answer
//
// A plan request is the query's POST …/docs with x-ms-cosmos-is-query-plan-request:
// True; no partition key or range header is needed (one is ignored). The client lists
// what its pipeline runs in x-ms-cosmos-supported-query-features (comma-separated:
// Aggregate, CompositeAggregate, Distinct, GroupBy, MultipleAggregates, MultipleOrderBy,
// OffsetAndLimit, OrderBy, Top, NonValueAggregate, DCount, …); when the header is sent
// and lacks a feature the query needs (Aggregate: a VALUE aggregate; NonValueAggregate:
// aggregates without VALUE or GROUP BY; Distinct; GroupBy; MultipleOrderBy: more than one
// ORDER BY item; OffsetAndLimit; OrderBy; Top), the answer is 400 "Query contains 1 or
// more unsupported features …" naming them. A query the emulator cannot parse or run
// gets the same 400 as the query itself. Otherwise 200 and
//
//	{"partitionedQueryExecutionInfoVersion": 2,
//	 "queryInfo": {
//	   "distinctType": "None" | "Ordered" | "Unordered",
//	   "top": n | null, "offset": n | null, "limit": n | null,
//	   "orderBy": ["Ascending" | "Descending", …],
//	   "orderByExpressions": ["c.a", …],
//	   "groupByExpressions": ["c.g", …],
//	   "groupByAliases": ["name", …],
//	   "aggregates": ["Count" | "Sum" | "Min" | "Max" | "Average"],
//	   "groupByAliasToAggregateType": {"name": "Count" | "Sum" | "Min" | "Max" | "Average" | null},
//	   "rewrittenQuery": "…",
//	   "hasSelectValue": true | false,
//	   "dCountInfo": null,
//	   "hasNonStreamingOrderBy": false | true},
//	 "queryRanges": [{"min": "", "max": "FF", "isMinInclusive": true, "isMaxInclusive": false}]}
//
// top, offset and limit carry the bound values (a TOP @n is resolved from the
// parameters). queryRanges is always the whole key space, even when the WHERE clause
// pins the partition key: a client runs such a query on every range (the others return
// nothing) or, knowing the key, sends it with x-ms-documentdb-partitionkey instead.
// Expressions in the plan and in rewrittenQuery are written as the gateway writes them:
// function names in capitals, binary operators in parentheses ("(c.n + 1)"), strings in
// double quotes, clauses on separate lines. Parameters stay parameters (@name) in
// rewrittenQuery, so a client sends the query's parameters with it.
//
// # rewrittenQuery: what each range runs
//
// "" means each range runs the query as it is: a query without ORDER BY, aggregates or
// GROUP BY that has at most TOP, or DISTINCT without TOP or OFFSET. Otherwise, by form
// (c is the query's alias; FROM and WHERE are the query's own):
//
//	TOP n, no ORDER BY            ""                      the client stops after n rows
//	OFFSET o LIMIT l              SELECT …                the client skips o, takes l
//	                              FROM c
//	                              WHERE …
//	                              OFFSET 0 LIMIT <o+l>
//	DISTINCT with TOP or OFFSET   the query without TOP and without OFFSET … LIMIT
//	ORDER BY o1 [DESC], …         SELECT [DISTINCT] [TOP n] c._rid, [{"item": o1}, {"item": o2}] AS orderByItems, <payload> AS payload
//	                              FROM c
//	                              WHERE ((<where>) AND ({documentdb-formattableorderbyquery-filter}))
//	                              ORDER BY o1 [ASC|DESC], …
//	                              [OFFSET 0 LIMIT <o+l>]
//
// In the ORDER BY shape <payload> is c for SELECT *, the expression for SELECT VALUE x,
// and {"a": c.a, "$1": <expr>} for a SELECT list (each entry under its output name:
// its alias, the last property name of a path, or $1, $2, … for the other unnamed
// entries in order). The WHERE clause is ({documentdb-formattableorderbyquery-filter})
// alone without a WHERE of the query's, and for SELECT VALUE x it is further ANDed with
// IS_DEFINED(x): (((<where>) AND ({…filter})) AND IS_DEFINED(x)). The client replaces
// the placeholder {documentdb-formattableorderbyquery-filter} (the braces are part of
// it; the parentheses around it stay) with true, or with a condition that resumes after
// a position (the JavaScript SDK writes c.a > 5 for earlier ranges and c.a >= 5 for the
// range it stopped in and later ones, AND-ed for several items). TOP n stays in the
// per-range query, OFFSET o LIMIT l becomes OFFSET 0 LIMIT o+l; with DISTINCT both go.
//
// Vector search, ORDER BY VectorDistance(…) (emulator/jsondoc/vector.go), has the ORDER BY
// shape with "hasNonStreamingOrderBy": true and needs the NonStreamingOrderBy feature: a
// client reads every range to its end and keeps the TOP (or OFFSET + LIMIT) best rows (the
// JavaScript SDK's NonStreamingOrderByEndpointComponent). Its "orderBy" is the order of
// the scores from the most similar to the least: "Descending" for cosine and dot product,
// "Ascending" for Euclidean, and the reverse with DESC; the rewritten query keeps the
// query's own ORDER BY VectorDistance(…) [ASC|DESC] and TOP.
//
// Aggregates: TOP, OFFSET and LIMIT never reach the ranges (they apply to the merged
// rows), and each aggregate is rewritten into its partial form:
//
//	COUNT(x)   {"item": COUNT(x)}
//	SUM(x)     {"item": SUM(x)}
//	AVG(x)     {"item": {"sum": SUM(x), "count": COUNT(x)}}
//	MIN(x)     {"item": MIN(x), "item2": {"min": MIN(x), "count": COUNT(x)}}
//	MAX(x)     {"item": MAX(x), "item2": {"max": MAX(x), "count": COUNT(x)}}
//
//	SELECT VALUE AGG(x) FROM c …               SELECT VALUE [<partial>]
//	                                           FROM c …
//	SELECT AGG(x) AS a, AGG2(y) FROM c …       SELECT {"a": <partial>, "$1": <partial>} AS payload
//	                                           FROM c …
//	SELECT c.g, AGG(x) AS a FROM c … GROUP BY c.g
//	                                           SELECT [{"item": c.g}] AS groupByItems, {"g": c.g, "a": <partial>} AS payload
//	                                           FROM c …
//	                                           GROUP BY c.g
//	SELECT VALUE AGG(x) … GROUP BY c.g         … [<partial>] AS payload …
//	SELECT VALUE c.g … GROUP BY c.g            … c.g AS payload …
//
// queryInfo says which: a VALUE aggregate has "aggregates": ["Count"] (one entry) and
// "hasSelectValue": true; aggregates without VALUE list every output name in
// groupByAliases (in SELECT order) and map it in groupByAliasToAggregateType to its
// aggregate, or to null for a grouped expression, with "aggregates": []. An aggregate
// inside another expression (SELECT VALUE COUNT(1) + 1, ABS(AVG(c.n))) or an expression
// beside aggregates without GROUP BY cannot be planned: 400, unsupported (the emulator
// runs such queries within one partition).
//
// # What the ranges return
//
// Per range (x-ms-documentdb-partitionkeyrangeid) or per partition key, the emulator
// runs any supported query fully, rewritten or not. Rows of an ORDER BY query come as
// {"_rid": …, "orderByItems": [{"item": v1}, …], "payload": …}, where an undefined value
// is {} (no "item"). They are sorted by the ORDER BY values in the service's order across
// types: undefined < null < false < true < numbers < strings < arrays < objects (the last
// two unordered among themselves); ties are broken by creation order, ascending when the
// first ORDER BY item is ascending and descending when it is descending (the service
// breaks ties by _rid). A client merging ranges compares orderByItems the same way and,
// for equal items, takes the range with the lower minInclusive first (the JavaScript SDK
// does), then emits payload.
//
// A VALUE aggregate's range returns exactly one row: an array with one partial, e.g.
// [{"item": 12}], [{"item": {"sum": 30, "count": 12}}] or [{"item": 2, "item2": {"min": 2,
// "count": 12}}]. An empty range returns COUNT 0 and SUM 0, an AVG with sum 0 and count
// 0, a MIN or MAX with count 0 and no min or max ([{"item2": {"count": 0}}]). A SUM or
// AVG that met a value other than a number, and a MIN or MAX that met an array or an
// object, is undefined in that range: its key is missing ([{}] for SUM, no "sum" for
// AVG, no "item" and no "min" for MIN); over one partition the query then returns no row,
// and a client merging ranges should make the result undefined too (the JavaScript SDK
// gives up on an undefined SUM but skips such a range for AVG). Undefined values are
// skipped by every aggregate. A client combines: COUNT and SUM add up; AVG divides the
// summed sums by the summed counts (undefined at count 0); MIN and MAX take the extreme,
// in the order above, of the ranges whose count is above 0.
// Without VALUE, a range returns one row {"payload": {"a": <partial>, …}} and the query
// exactly one row: the object of the defined results. With GROUP BY, a range returns one
// row per group it holds, {"groupByItems": [{"item": g}, …], "payload": …}, where a
// grouped expression in the payload is its value (left out when undefined); a client
// groups rows by the groupByItems values (equal as JSON values: 1 and 1.0 are the same,
// member order does not matter), combines the partials per alias, and emits one row per
// group, then applies TOP, OFFSET and LIMIT.
//
// DISTINCT: "Unordered" (no ORDER BY, or ORDER BY items that are not exactly the
// projected expressions) means each range de-duplicates its own rows and a client
// de-duplicates across ranges by value (first occurrence wins; the JavaScript SDK hashes
// the JSON). "Ordered" (ORDER BY items that are exactly the projected expressions, e.g.
// SELECT DISTINCT VALUE c.a … ORDER BY c.a) means equal rows arrive next to each other in
// the ORDER BY merge, so comparing a row with the previous one suffices.
//
// Paging within a range: x-ms-max-item-count rows at most, and x-ms-continuation when
// there are more; a client echoes the token unchanged (it is opaque). An ORDER BY
// query resumes after the last row's ORDER BY values and creation order, so writes
// between pages neither repeat nor skip rows that were already there; DISTINCT,
// aggregate and GROUP BY results are computed once per range and paged from memory by
// row number (rebuilt, and so possibly shifted, when the range changed in between). A
// token is refused (400) for another query, other parameters or another partition key.
//
// # Cross-partition queries that need a plan
//
// A query sent with x-ms-documentdb-query-enablecrosspartition: True and neither a
// partition key nor a range id, to a container of more than one range, that uses ORDER
// BY, TOP, OFFSET … LIMIT, DISTINCT, aggregates or GROUP BY, is refused as the gateway
// refuses it: 400, x-ms-substatus 1004 (CrossPartitionQueryNotServable), the message
// "The provided cross partition query can not be directly served by the gateway. …",
// and the query plan above as a JSON string in the body's additionalErrorInfo (where the
// JavaScript SDK looks before it switches to its pipeline). Other queries (SELECT *, a
// SELECT list or VALUE with WHERE) run across ranges directly, range after range.

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator/jsondoc"
)

const (
	// subCrossPartitionQueryNotServable is the gateway's substatus for a cross-partition
	// query the client must run with a query plan.
	subCrossPartitionQueryNotServable = 1004

	needsPlanMessage = "The provided cross partition query can not be directly served by the gateway. " +
		"This is a first chance (internal) exception that all newer clients will know how to handle gracefully. " +
		"This exception is traced, but unless you see it bubble up as an exception (which only happens on older SDK clients), " +
		"then you can safely ignore this message. (cosmosctl's emulator: the query uses ORDER BY, TOP, OFFSET … LIMIT, " +
		"DISTINCT, aggregates or GROUP BY, which a client runs across partition key ranges with the query plan: " +
		"ask for it with x-ms-cosmos-is-query-plan-request: True, or send the query to one partition key or range)"
)

// partitionedQueryExecutionInfo is the plan document; field order follows the service.
type partitionedQueryExecutionInfo struct {
	Version    int          `json:"partitionedQueryExecutionInfoVersion"`
	QueryInfo  queryInfo    `json:"queryInfo"`
	QueryRange []queryRange `json:"queryRanges"`
}

type queryInfo struct {
	DistinctType                string             `json:"distinctType"`
	Top                         *int               `json:"top"`
	Offset                      *int               `json:"offset"`
	Limit                       *int               `json:"limit"`
	OrderBy                     []string           `json:"orderBy"`
	OrderByExpressions          []string           `json:"orderByExpressions"`
	GroupByExpressions          []string           `json:"groupByExpressions"`
	GroupByAliases              []string           `json:"groupByAliases"`
	Aggregates                  []string           `json:"aggregates"`
	GroupByAliasToAggregateType map[string]*string `json:"groupByAliasToAggregateType"`
	RewrittenQuery              string             `json:"rewrittenQuery"`
	HasSelectValue              bool               `json:"hasSelectValue"`
	DCountInfo                  *struct{}          `json:"dCountInfo"`
	HasNonStreamingOrderBy      bool               `json:"hasNonStreamingOrderBy"`
}

type queryRange struct {
	Min            string `json:"min"`
	Max            string `json:"max"`
	IsMinInclusive bool   `json:"isMinInclusive"`
	IsMaxInclusive bool   `json:"isMaxInclusive"`
}

// queryPlan renders prog's plan as the service's JSON; features is the client's
// x-ms-cosmos-supported-query-features.
func queryPlan(prog *jsondoc.Program, features string) ([]byte, error) {
	if prog.Query().Ranked() {
		return hybridQueryPlan(prog, features)
	}
	info, err := prog.Plan()
	if err != nil {
		return nil, err
	}
	doc := partitionedQueryExecutionInfo{
		Version: 2,
		QueryInfo: queryInfo{
			DistinctType: info.DistinctType, Top: info.Top, Offset: info.Offset, Limit: info.Limit,
			OrderBy: info.OrderBy, OrderByExpressions: info.OrderByExpressions,
			GroupByExpressions: info.GroupByExpressions, GroupByAliases: info.GroupByAliases,
			Aggregates: info.Aggregates, GroupByAliasToAggregateType: info.GroupByAliasToAggregateType,
			RewrittenQuery: info.RewrittenQuery, HasSelectValue: info.HasSelectValue,
			HasNonStreamingOrderBy: info.HasNonStreamingOrderBy,
		},
		QueryRange: []queryRange{{Min: "", Max: "FF", IsMinInclusive: true}},
	}
	return json.Marshal(doc)
}

// serveQueryPlan answers a query plan request.
func (s *Server) serveQueryPlan(req *request, prog *jsondoc.Program) {
	if missing := missingFeatures(req.r.Header.Get(cosmos.HeaderSupportedQueryFeatures), prog.Query().Features()); len(missing) > 0 {
		s.writeError(req, badRequest("Query contains 1 or more unsupported features. Upgrade your SDK to a version which does support the requested features: Query contained %s, which the calling client does not support.", strings.Join(missing, ", ")), 0)
		return
	}
	body, err := queryPlan(prog, req.r.Header.Get(cosmos.HeaderSupportedQueryFeatures))
	if err != nil {
		s.writeError(req, badRequest("%v", err), 0)
		return
	}
	s.writeJSON(req, http.StatusOK, body, chargeQueryPlan)
}

// missingFeatures returns the features a query needs that the client's header does
// not list; no header means the client did not say, and nothing is missing.
func missingFeatures(header string, needed []string) []string {
	if strings.TrimSpace(header) == "" {
		return nil
	}
	have := map[string]bool{}
	for _, f := range strings.Split(header, ",") {
		have[strings.ToLower(strings.TrimSpace(f))] = true
	}
	var missing []string
	for _, f := range needed {
		if !have[strings.ToLower(f)] {
			missing = append(missing, f)
		}
	}
	return missing
}

// refuseNeedsPlan answers a cross-partition query that needs a plan the way the gateway
// does: 400/1004 with the plan in additionalErrorInfo.
func (s *Server) refuseNeedsPlan(req *request, prog *jsondoc.Program) {
	info := ""
	if body, err := queryPlan(prog, req.r.Header.Get(cosmos.HeaderSupportedQueryFeatures)); err == nil {
		info = string(body)
	}
	s.writeErrorInfo(req, cosmosErr(400, subCrossPartitionQueryNotServable, needsPlanMessage), 0, info)
}

// vectorBindOptions is what VectorDistance reads of the container: its vector
// embedding policy (stored as sent, containerreplace.go), whose entry for a vector's
// path gives the distance function and data type (emulator/jsondoc/vector.go).
func vectorBindOptions(c *container) jsondoc.BindOptions {
	res := c.resource()
	if !present(res.VectorEmbeddingPolicy) {
		return jsondoc.BindOptions{}
	}
	var v struct {
		VectorEmbeddings []struct {
			Path             string `json:"path"`
			DataType         string `json:"dataType"`
			DistanceFunction string `json:"distanceFunction"`
			Dimensions       int    `json:"dimensions"`
		} `json:"vectorEmbeddings"`
	}
	if json.Unmarshal(res.VectorEmbeddingPolicy, &v) != nil {
		return jsondoc.BindOptions{} // refused when the container was created or replaced
	}
	var opts jsondoc.BindOptions
	for _, e := range v.VectorEmbeddings {
		opts.VectorEmbeddings = append(opts.VectorEmbeddings, jsondoc.VectorEmbedding{
			Path: e.Path, DataType: e.DataType, DistanceFunction: e.DistanceFunction, Dimensions: e.Dimensions,
		})
	}
	return opts
}
