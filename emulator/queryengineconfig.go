package emulator

import "encoding/json"

// queryEngineConfig is the account document's queryEngineConfiguration: the
// service's limits and feature switches for its SQL, read by clients that plan
// queries themselves (the .NET SDK hands it to its query parser, which refuses
// a switched-off construct before sending it). The emulator advertises the
// service's values where it serves the same thing, and switches off what its SQL
// does not serve yet, so a client that trusts the document is refused early
// instead of sending a query the emulator answers with a 400.
type queryEngineConfig struct {
	MaxSQLQueryInputLength         int     `json:"maxSqlQueryInputLength"`
	MaxJoinsPerSQLQuery            int     `json:"maxJoinsPerSqlQuery"`
	MaxLogicalAndPerSQLQuery       int     `json:"maxLogicalAndPerSqlQuery"`
	MaxLogicalOrPerSQLQuery        int     `json:"maxLogicalOrPerSqlQuery"`
	MaxUDFRefPerSQLQuery           int     `json:"maxUdfRefPerSqlQuery"`
	MaxInExpressionItemsCount      int     `json:"maxInExpressionItemsCount"`
	QueryMaxInMemorySortDocCount   int     `json:"queryMaxInMemorySortDocumentCount"`
	MaxQueryRequestTimeoutFraction float64 `json:"maxQueryRequestTimeoutFraction"`
	SQLAllowNonFiniteNumbers       bool    `json:"sqlAllowNonFiniteNumbers"`
	SQLAllowAggregateFunctions     bool    `json:"sqlAllowAggregateFunctions"`
	SQLAllowSubQuery               bool    `json:"sqlAllowSubQuery"`
	SQLAllowScalarSubQuery         bool    `json:"sqlAllowScalarSubQuery"`
	AllowNewKeywords               bool    `json:"allowNewKeywords"`
	SQLAllowLike                   bool    `json:"sqlAllowLike"`
	SQLAllowGroupByClause          bool    `json:"sqlAllowGroupByClause"`
	MaxSpatialQueryCells           int     `json:"maxSpatialQueryCells"`
	SpatialMaxGeometryPointCount   int     `json:"spatialMaxGeometryPointCount"`
	SQLDisableOptimizationFlags    int     `json:"sqlDisableOptimizationFlags"`
	SQLAllowTop                    bool    `json:"sqlAllowTop"`
	EnableSpatialIndexing          bool    `json:"enableSpatialIndexing"`
}

// advertisedQueryEngine is what GET / reports. The limits are the service's
// (the document Microsoft's gateways send); the switches follow what the
// emulator's SQL serves: JOIN, subqueries (EXISTS, ARRAY(SELECT …), scalar),
// UDFs and the spatial functions are refused with a 400 that names them,
// so they are advertised as off (no JOINs, no UDF references) rather than as the
// service's defaults. emulator/queryengineconfig_test.go holds each switch to
// what a query using it gets.
var advertisedQueryEngine = queryEngineConfig{
	MaxSQLQueryInputLength:         262144,
	MaxJoinsPerSQLQuery:            0,
	MaxLogicalAndPerSQLQuery:       500,
	MaxLogicalOrPerSQLQuery:        500,
	MaxUDFRefPerSQLQuery:           0,
	MaxInExpressionItemsCount:      16000,
	QueryMaxInMemorySortDocCount:   500,
	MaxQueryRequestTimeoutFraction: 0.9,
	SQLAllowNonFiniteNumbers:       false,
	SQLAllowAggregateFunctions:     true,
	SQLAllowSubQuery:               false,
	SQLAllowScalarSubQuery:         false,
	AllowNewKeywords:               true,
	SQLAllowLike:                   true, // the service's value; LIKE is served (jsondoc/like.go)
	SQLAllowGroupByClause:          true,
	MaxSpatialQueryCells:           12,
	SpatialMaxGeometryPointCount:   256,
	SQLDisableOptimizationFlags:    0,
	SQLAllowTop:                    true,
	EnableSpatialIndexing:          false,
}

// queryEngineConfiguration renders advertisedQueryEngine as the JSON string the
// account document carries.
func queryEngineConfiguration() string {
	b, err := json.Marshal(advertisedQueryEngine)
	if err != nil {
		panic(err) // a struct of numbers and booleans always marshals
	}
	return string(b)
}
