// Package emulator is cosmosctl's local multi-region Cosmos DB account: one global
// endpoint and one loopback port per region, speaking the gateway REST protocol closely
// enough that the official SDKs use it unmodified.
//
// It owns the account topology, the document store (in memory, or persisted in bbolt so
// that no acknowledged write is lost to a crash), replication to read regions with a
// configurable lag, session tokens, the request-charge model, and the latency and fault
// injection that lets a team rehearse a regional brownout on one machine. For direct-mode
// clients it also serves replica sets: the gateway's //addresses/ endpoint, each replica
// over HTTP under its own address prefix on its region's port, and "replica moves" in
// which a replica goes away while the gateway keeps handing out its address for a while
// (see replicas.go). The faults
// and latencies themselves are modelled in the faults sub-package; document JSON, patch
// and the SQL (parsing, evaluation, query plans) live in jsondoc. Queries, their paging
// and the gateway's query plans are served by query.go, querycache.go and queryplan.go.
// A container's indexing policy decides what an ORDER BY needs and what the index
// metrics report (indexpolicy.go, indexmetrics.go); the emulator itself scans.
// Offers (offers.go) are bookkeeping unless throughput is enforced: then each partition
// key range spends an RU budget and answers 429/3200 when it is spent (throughput.go).
//
// It must not depend on the engine or the CLI: it is the other side of the wire.
package emulator
