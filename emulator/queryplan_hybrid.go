package emulator

import (
	"encoding/json"
	"strings"

	"github.com/cosmosctl/cosmosctl/emulator/jsondoc"
)

// The plan of an ORDER BY RANK query across ranges is a hybrid search plan
// (jsondoc.HybridPlan documents it): no queryInfo, and hybridSearchQueryInfo with the
// global statistics query and one component query per scoring function, as the
// service's gateway answers it (.NET SDK QueryPlanRetrieverTests and
// TestHybridSearchQueryInfoDeserialization). A client that lists
// HybridSearchSkipOrderByRewrite in x-ms-cosmos-supported-query-features gets the
// rewritten component shape the service gives it.

type hybridPlanDocument struct {
	Version    int                   `json:"partitionedQueryExecutionInfoVersion"`
	Hybrid     hybridSearchQueryInfo `json:"hybridSearchQueryInfo"`
	QueryRange []queryRange          `json:"queryRanges"`
}

type hybridSearchQueryInfo struct {
	GlobalStatisticsQuery             string      `json:"globalStatisticsQuery"`
	ComponentQueryInfos               []queryInfo `json:"componentQueryInfos"`
	ComponentWithoutPayloadQueryInfos []queryInfo `json:"componentWithoutPayloadQueryInfos"`
	ProjectionQueryInfo               *queryInfo  `json:"projectionQueryInfo"`
	ComponentWeights                  []float64   `json:"componentWeights"`
	Skip                              *int        `json:"skip"`
	Take                              *int        `json:"take"`
	RequiresGlobalStatistics          bool        `json:"requiresGlobalStatistics"`
}

// hybridQueryPlan renders prog's hybrid search plan; features is the client's
// x-ms-cosmos-supported-query-features.
func hybridQueryPlan(prog *jsondoc.Program, features string) ([]byte, error) {
	plan, err := prog.HybridPlan(hasFeature(features, "HybridSearchSkipOrderByRewrite"))
	if err != nil {
		return nil, err
	}
	info := hybridSearchQueryInfo{
		GlobalStatisticsQuery:             plan.GlobalStatisticsQuery,
		ComponentWithoutPayloadQueryInfos: []queryInfo{},
		ComponentWeights:                  plan.Weights,
		Skip:                              plan.Skip,
		Take:                              plan.Take,
		RequiresGlobalStatistics:          plan.RequiresGlobalStatistics,
	}
	for _, c := range plan.Components {
		info.ComponentQueryInfos = append(info.ComponentQueryInfos, queryInfo{
			DistinctType: "None", Top: c.Top, OrderBy: c.OrderBy, OrderByExpressions: c.OrderByExpressions,
			GroupByExpressions: []string{}, GroupByAliases: []string{}, Aggregates: []string{},
			GroupByAliasToAggregateType: map[string]*string{}, RewrittenQuery: c.RewrittenQuery,
			HasNonStreamingOrderBy: c.NonStreamingOrderBy,
		})
	}
	return json.Marshal(hybridPlanDocument{Version: 2, Hybrid: info,
		QueryRange: []queryRange{{Min: "", Max: "FF", IsMinInclusive: true}}})
}

func hasFeature(header, feature string) bool {
	for _, f := range strings.Split(header, ",") {
		if strings.EqualFold(strings.TrimSpace(f), feature) {
			return true
		}
	}
	return false
}
