package emulator

import (
	"strconv"
	"strings"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator/jsondoc"
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
	// as it evaluates them and has no index, so it has no index lookup or document
	// load phase to time apart: both are reported as 0 and are inside run, with the
	// system functions.
	run time.Duration
	// write is rendering the page's feed body.
	write time.Duration
	// retrieved and retrievedBytes are the documents the service would have loaded for
	// the page under the container's indexing policy (indexLoads: the matching ones
	// when the index serves the filter, every one examined when it scans), matched
	// those that passed the filter, output and outputBytes the rows returned.
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

// indexLoads decides which documents of a query's scope count as retrieved: those the
// service's index would leave it to load, under the container's indexing policy. With
// every filter term on an indexed path the index answers the filter and only the
// matching documents are loaded (retrieved = matched); with none (no WHERE clause, or
// every term on an excluded path, or a term no index serves such as UPPER(c.x) = …)
// the query scans and loads every document of its scope; with some, the documents the
// served terms leave ("Troubleshoot query performance", Microsoft Learn, "Include
// necessary paths in the indexing policy": the same equality filter costs 409.51 RU
// with its path excluded and 2.98 RU with it indexed; "Index usage": a full scan loads
// the items to evaluate the filter). The emulator has no index: it reads every
// document either way and counts what the service's index would have loaded.
type indexLoads struct {
	whole  bool                 // the index serves the whole filter
	filter *jsondoc.IndexFilter // what it serves, nil: nothing (a scan)
}

func indexLoadsOf(pol *indexPolicy, prog *jsondoc.Program) indexLoads {
	f, whole := prog.IndexServed(func(path []jsondoc.PathStep, elements bool) bool {
		return pol.indexed(docSteps(path, elements))
	})
	return indexLoads{whole: whole, filter: f}
}

// scan reports whether the query loads every document of its scope.
func (l indexLoads) scan() bool { return l.filter == nil }

// loads reports whether the index leaves the document to load, given whether it
// matched the whole WHERE clause (a document that matches it matches any part of it).
func (l indexLoads) loads(body []byte, matched bool) bool {
	if l.filter == nil || matched {
		return true
	}
	if l.whole {
		return false
	}
	return l.served(body)
}

// served reports whether the document matches the part of the filter the index serves.
func (l indexLoads) served(body []byte) bool {
	ok, err := l.filter.Match(body)
	return ok && err == nil
}

// count adds up the documents of docs the index leaves to load, and their size.
func (l indexLoads) count(docs []jsondoc.Doc) (n, bytes int) {
	for _, d := range docs {
		if l.filter == nil || l.served(d.Body) {
			n++
			bytes += len(d.Body)
		}
	}
	return n, bytes
}

// load counts a document the page read as retrieved when the index would have left it
// to load.
func (pg *queryPage) load(l indexLoads, body []byte, matched bool) {
	if l.loads(body, matched) {
		pg.retrieved++
		pg.retrievedBytes += len(body)
	}
}

// wantsQueryMetrics reports whether the request asks for the query metrics.
func wantsQueryMetrics(req *request) bool {
	return strings.EqualFold(req.r.Header.Get(cosmos.HeaderPopulateQueryMetrics), "true")
}

// scopeDocs are the documents of a scope that a query reads, in no particular order.
func (s *Server) scopeDocs(c *container, p *partition, region int, scope docScope) []jsondoc.Doc {
	return s.store.visibleDocs(c, p, region, scope, 0)
}
