// Package health remembers how each region has been answering, so that an operation
// does not rediscover a dead region from scratch: per region (and, optionally, per
// partition key range) and per kind of operation (read or write), the failures, the
// hedges lost and the successes seen, and from them which regions are unavailable.
//
// It follows the per-partition circuit breaker of the Java and .NET SDKs: a few
// failures within a counting window make a region unavailable; an
// unavailable region is tried last, never dropped; after a while one request at a time
// may go there as a probe, and its answer decides whether the region is available again
// or stays unavailable for a longer period. Beyond the SDKs, a region that keeps losing
// hedge races to another region (slow, rather than failing) is made unavailable too,
// and the state can be carried from one cosmosctl process to the next (Snapshot, Merge).
//
// It owns the state model and the order it implies for a list of effective regions. It
// must not do I/O of any kind — no HTTP, files, flags, environment — nor read the wall
// clock or sleep: the engine reports outcomes and asks for orders, time comes from an
// injected clock.Clock, and persisting a Snapshot is the caller's business (see
// internal/statefile). It does not decide what an answer means for the operation
// (final, transient, retried): the engine classifies, this package only counts.
package health
