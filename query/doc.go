// Package query runs Cosmos DB SQL queries the way the service requires of a client: a
// query within one partition key goes to that partition as it is, page by page, and the
// service runs all of it; a query across partitions starts with the gateway's query plan
// (x-ms-cosmos-is-query-plan-request), runs the plan's rewritten query on every partition
// key range it covers, in parallel (Options.Parallelism requests at most), each range
// paged with its own service continuation, and finishes on the client what the ranges
// cannot: the k-way merge of ORDER BY (Cosmos's order across types: undefined, null,
// booleans, numbers, strings), TOP and OFFSET/LIMIT after the merge, DISTINCT (ordered:
// against the previous item; unordered: against every value seen), aggregates and GROUP
// BY (the ranges' partials combined, emitted once every range is drained), DCount, and
// hybrid search (ORDER BY RANK: hybrid.go). A plan that needs anything else (vector
// search, MakeList…) is an UnsupportedError naming it.
//
// Every request is an engine operation built from Options.Page, so each page is routed
// to the effective regions, retried, failed over and hedged like a point read, and
// reported with its diagnostics through Iterator.Next.
//
// A prefix of a hierarchical partition key (Options.PartitionKeyPrefix) is no partition
// key the service takes: such a query runs as across partitions, on the ranges that hold
// any key of the prefix's effective partition key range, each page narrowed to the part
// of that range its range holds (x-ms-start-epk, x-ms-end-epk), as the JS SDK reads a
// feed range.
//
// A range that splits answers 410/1002; the pipeline re-reads the partition key ranges
// and goes on from the children, each from the continuation the parent was at (the
// service accepts a parent's continuation on its children), so that nothing is lost or
// repeated.
//
// Continuation tokens are the pipeline's own (see token.go): every unfinished range's
// service continuation and, for ORDER BY, what of its current page was returned, plus
// what the client-side stages hold. A run resumed from a token returns every remaining
// item exactly once. Memory is bounded by two pages per range for the streaming forms (a
// merge holds each range's current page and one read ahead); aggregates, GROUP BY and
// unordered DISTINCT hold their state, which a token carries too.
//
// It never reads flags, files or the environment, and takes its clock from Options.
package query
