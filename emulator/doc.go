// Package emulator is cosmosctl's local multi-region Cosmos DB account: one global
// endpoint and one loopback port per region, speaking the gateway REST protocol closely
// enough that the official SDKs use it unmodified.
//
// It owns the account topology, the document store (in memory, or persisted in bbolt so
// that no acknowledged write is lost to a crash), replication to read regions with a
// configurable lag, session tokens, the request-charge model, and the latency and fault
// injection that lets a team rehearse a regional brownout on one machine. The faults
// and latencies themselves are modelled in the faults sub-package; document JSON, patch
// and the small SQL subset live in jsondoc.
//
// It must not depend on the engine or the CLI: it is the other side of the wire.
package emulator
