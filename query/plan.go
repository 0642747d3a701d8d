package query

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// supportedFeatures is what this pipeline runs on the client, sent with every query
// plan request (x-ms-cosmos-supported-query-features): the service refuses to plan a
// query that needs anything else, and shapes the rewritten query for these.
const supportedFeatures = "Aggregate, CompositeAggregate, Distinct, GroupBy, MultipleAggregates, MultipleOrderBy, OffsetAndLimit, OrderBy, Top, NonValueAggregate, DCount, NonStreamingOrderBy, HybridSearch"

// orderByPlaceholder is where the service's rewritten ORDER BY query takes a resume
// filter. This pipeline resumes each range from its own continuation and skips what it
// already returned (see resumeFilter), so the filter is always "true".
const orderByPlaceholder = "{documentdb-formattableorderbyquery-filter}"

// queryPlan is the gateway's answer to a query plan request (partitioned query execution
// info): how the query must run across partitions, and which ranges of the effective
// partition key space it reads.
type queryPlan struct {
	Version     int             `json:"partitionedQueryExecutionInfoVersion"`
	Info        *queryInfo      `json:"queryInfo"`
	QueryRanges []queryRange    `json:"queryRanges"`
	Hybrid      json.RawMessage `json:"hybridSearchQueryInfo"`
}

type queryInfo struct {
	DistinctType       string   `json:"distinctType"`
	Top                *int     `json:"top"`
	Offset             *int     `json:"offset"`
	Limit              *int     `json:"limit"`
	OrderBy            []string `json:"orderBy"`
	OrderByExpressions []string `json:"orderByExpressions"`
	GroupByExpressions []string `json:"groupByExpressions"`
	GroupByAliases     []string `json:"groupByAliases"`
	Aggregates         []string `json:"aggregates"`
	// AliasTypes is groupByAliasToAggregateType: each select-list alias of an aggregate
	// or GROUP BY query and its aggregate (nil for a grouped value). aliasOrder keeps
	// the order the service listed them in.
	AliasTypes             map[string]*string `json:"groupByAliasToAggregateType"`
	aliasOrder             []string
	RewrittenQuery         string  `json:"rewrittenQuery"`
	HasSelectValue         bool    `json:"hasSelectValue"`
	DCountInfo             *dCount `json:"dCountInfo"`
	HasNonStreamingOrderBy bool    `json:"hasNonStreamingOrderBy"`
}

type dCount struct {
	Alias string `json:"dCountAlias"`
}

// queryRange is one range of effective partition keys the query reads.
type queryRange struct {
	Min          string `json:"min"`
	Max          string `json:"max"`
	MinInclusive bool   `json:"isMinInclusive"`
	MaxInclusive bool   `json:"isMaxInclusive"`
}

// UnsupportedError is a query whose plan needs a feature this pipeline does not run
// across partitions. Feature names it as the service's plan does; the query still runs
// against one partition key (--pk), where the service runs everything itself.
type UnsupportedError struct {
	Feature string
	// Prefix: the query was given a hierarchical partition key prefix, whose keys
	// span partitions; the whole key runs it in one.
	Prefix bool
}

func (e *UnsupportedError) Error() string {
	if e.Prefix {
		return fmt.Sprintf("the query needs %s across the partitions a partition key prefix spans, which cosmosctl does not support; give the whole partition key (--pk with a value for every path) to run it within one partition, where the service runs it whole", e.Feature)
	}
	return fmt.Sprintf("the query needs %s across partitions, which cosmosctl does not support; give a partition key (--pk) to run it within one partition, where the service runs it whole", e.Feature)
}

// parsePlan reads a query plan answer.
func parsePlan(body []byte) (*queryPlan, error) {
	var p queryPlan
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, fmt.Errorf("the query plan answer is not a partitioned query execution info: %v", err)
	}
	if p.Info == nil {
		p.Info = &queryInfo{}
	}
	var order struct {
		Info struct {
			AliasTypes json.RawMessage `json:"groupByAliasToAggregateType"`
		} `json:"queryInfo"`
	}
	if json.Unmarshal(body, &order) == nil {
		p.Info.aliasOrder = objectKeys(order.Info.AliasTypes)
	}
	return &p, nil
}

// objectKeys lists a JSON object's keys in the order they appear.
func objectKeys(raw json.RawMessage) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		k, _ := t.(string)
		keys = append(keys, k)
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return keys
		}
	}
	return keys
}

// shape is how a planned query runs on the client.
type shape struct {
	ordered bool // k-way merge on orderByItems
	// nonStreaming: ORDER BY a score (vector search): drain every range into a buffer
	// of the buffer best rows, then emit them (nonstreaming.go)
	nonStreaming bool
	buffer       int
	sorts        []bool
	grouping     bool // aggregates or GROUP BY: drain every range, then emit
	distinct     string
	dcount       *dCount
	top          int // -1: none
	offset       int
	limit        int // -1: none
	// hybrid is a hybrid search plan (ORDER BY RANK): run whole first (hybrid.go)
	hybrid *hybridInfo
}

// needsPipeline reports whether the plan asks for client-side work beyond running the
// query on each range and concatenating the pages.
func (s shape) needsPipeline() bool {
	return s.ordered || s.grouping || s.distinct != "" || s.dcount != nil || s.top >= 0 || s.limit >= 0 || s.offset > 0
}

// mode names the shape in continuation tokens: a token from another kind of query
// plan is refused.
func (s shape) mode() string {
	switch {
	case s.nonStreaming:
		return "nonstreaming"
	case s.hybrid != nil:
		return "hybrid"
	case s.grouping:
		return "group"
	case s.dcount != nil:
		return "dcount"
	case s.ordered:
		return "orderby"
	}
	return "parallel"
}

// shapeOf checks a plan against what the pipeline supports and says how to run it.
func shapeOf(p *queryPlan) (shape, error) {
	qi := p.Info
	s := shape{top: -1, limit: -1}
	if len(p.Hybrid) > 0 && string(p.Hybrid) != "null" {
		h, err := parseHybrid(p.Hybrid)
		s.hybrid = h
		return s, err
	}
	for _, o := range qi.OrderBy {
		switch o {
		case "Ascending":
			s.sorts = append(s.sorts, false)
		case "Descending":
			s.sorts = append(s.sorts, true)
		default:
			return s, &UnsupportedError{Feature: fmt.Sprintf("ORDER BY direction %q", o)}
		}
	}
	s.ordered = len(s.sorts) > 0
	if qi.HasNonStreamingOrderBy {
		if !s.ordered {
			return s, fmt.Errorf("the query plan has hasNonStreamingOrderBy but no orderBy")
		}
		s.ordered, s.nonStreaming = false, true
	}
	for _, a := range qi.Aggregates {
		if !knownAggregate(a) {
			return s, &UnsupportedError{Feature: "aggregate " + a}
		}
	}
	for _, alias := range qi.aliases() {
		if t := qi.AliasTypes[alias]; t != nil && !knownAggregate(*t) {
			return s, &UnsupportedError{Feature: "aggregate " + *t}
		}
	}
	s.grouping = len(qi.Aggregates) > 0 || len(qi.GroupByExpressions) > 0 || len(qi.AliasTypes) > 0
	if s.grouping && qi.HasSelectValue && len(qi.Aggregates) > 1 {
		return s, &UnsupportedError{Feature: "several aggregates in one SELECT VALUE (" + strings.Join(qi.Aggregates, ", ") + ")"}
	}
	switch qi.DistinctType {
	case "", "None":
	case "Ordered", "Unordered":
		s.distinct = qi.DistinctType
	default:
		return s, &UnsupportedError{Feature: "DISTINCT of type " + qi.DistinctType}
	}
	s.dcount = qi.DCountInfo
	switch {
	case s.grouping && s.ordered:
		return s, &UnsupportedError{Feature: "ORDER BY with GROUP BY or aggregates"}
	case s.dcount != nil && (s.grouping || s.ordered):
		return s, &UnsupportedError{Feature: "DCount with GROUP BY, aggregates or ORDER BY"}
	case s.grouping && s.distinct != "":
		return s, &UnsupportedError{Feature: "DISTINCT with GROUP BY or aggregates"}
	case s.nonStreaming && (s.grouping || s.distinct != "" || s.dcount != nil):
		return s, &UnsupportedError{Feature: "non-streaming ORDER BY (vector search) with DISTINCT, GROUP BY or aggregates"}
	}
	if qi.Top != nil {
		s.top = *qi.Top
	}
	if qi.Offset != nil {
		s.offset = *qi.Offset
	}
	if qi.Limit != nil {
		s.limit = *qi.Limit
	}
	if s.top < -1 || s.offset < 0 || s.limit < -1 {
		return s, fmt.Errorf("the query plan has a negative TOP, OFFSET or LIMIT")
	}
	if s.nonStreaming {
		var err error
		if s.buffer, err = nonStreamingBuffer(s); err != nil {
			return s, err
		}
	}
	return s, nil
}

func knownAggregate(a string) bool {
	switch a {
	case "Count", "Sum", "Min", "Max", "Average":
		return true
	}
	return false
}

// aliases are the select-list aliases of an aggregate or GROUP BY query in the order
// its results list them: groupByAliases when the plan gives them, else the order of
// groupByAliasToAggregateType.
func (qi *queryInfo) aliases() []string {
	if len(qi.GroupByAliases) > 0 {
		return qi.GroupByAliases
	}
	if len(qi.aliasOrder) == len(qi.AliasTypes) {
		return qi.aliasOrder
	}
	out := make([]string, 0, len(qi.AliasTypes))
	for a := range qi.AliasTypes {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// perRangeQuery is the query each partition key range runs: the rewritten query, with
// the ORDER BY resume placeholder replaced by "true", or the query itself.
func perRangeQuery(p *queryPlan, original string) string {
	q := p.Info.RewrittenQuery
	if q == "" {
		return original
	}
	return strings.ReplaceAll(q, orderByPlaceholder, "true")
}
