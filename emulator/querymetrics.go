package emulator

import (
	"strconv"
	"time"
)

// queryMetrics are the figures of one query page that the service reports in
// x-ms-documentdb-query-metrics when the request asks for them
// (x-ms-documentdb-populatequerymetrics: true). Every figure is measured on the
// emulator's own engine; a phase the engine does not have is 0.
type queryMetrics struct {
	// compile is parsing and binding the query (the emulator has no separate logical
	// or physical plan or optimisation phase, so those are 0).
	compile time.Duration
	// run is the page's execution: reading the scope's documents, filtering,
	// projecting, sorting and aggregating. The emulator reads documents from memory
	// as it evaluates them and has no index, so document load and index lookup are
	// inside it, not apart; system functions are evaluated inside it too.
	run time.Duration
	// write is rendering the page's feed body.
	write time.Duration
	// retrieved and retrievedBytes are the documents the page read (every document of
	// the scope that was examined, as the emulator scans), matched those of them that
	// passed the filter, output and outputBytes the rows returned.
	retrieved, retrievedBytes, matched, output, outputBytes int
}

// header renders the metrics as the service does: "name=value" pairs joined by ";",
// in the service's order, times in milliseconds with two decimals, counts and sizes
// (bytes) as integers, and the index utilization ratio (documents that matched the
// filter over documents retrieved) with two decimals. The names and their order are
// those of the .NET SDK's parser test (ServerSideMetricsTests) and of captured service
// headers (Azure/azure-cosmos-dotnet-v3#1085).
func (m queryMetrics) header() string {
	total := m.compile + m.run + m.write
	ratio := 0.0
	if m.retrieved > 0 {
		ratio = float64(m.matched) / float64(m.retrieved)
	}
	b := make([]byte, 0, 512)
	msField := func(name string, d time.Duration) {
		b = append(b, name...)
		b = append(b, '=')
		b = strconv.AppendFloat(b, float64(d.Microseconds())/1000, 'f', 2, 64)
		b = append(b, ';')
	}
	intField := func(name string, n int) {
		b = append(b, name...)
		b = append(b, '=')
		b = strconv.AppendInt(b, int64(n), 10)
		b = append(b, ';')
	}
	msField("totalExecutionTimeInMs", total)
	msField("queryCompileTimeInMs", m.compile)
	msField("queryLogicalPlanBuildTimeInMs", 0)
	msField("queryPhysicalPlanBuildTimeInMs", 0)
	msField("queryOptimizationTimeInMs", 0)
	msField("VMExecutionTimeInMs", m.run)
	msField("indexLookupTimeInMs", 0)
	msField("documentLoadTimeInMs", 0)
	msField("systemFunctionExecuteTimeInMs", 0)
	msField("userFunctionExecuteTimeInMs", 0)
	intField("retrievedDocumentCount", m.retrieved)
	intField("retrievedDocumentSize", m.retrievedBytes)
	intField("outputDocumentCount", m.output)
	intField("outputDocumentSize", m.outputBytes)
	msField("writeOutputTimeInMs", m.write)
	b = append(b, "indexUtilizationRatio="...)
	b = strconv.AppendFloat(b, ratio, 'f', 2, 64)
	return string(b)
}
