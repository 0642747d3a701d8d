// Package leases reads the lease container of a change feed processor written by the
// .NET or Java SDK and estimates, per lease, how far the processor is behind, as the
// SDKs' own estimators do.
//
// A lease is one document of the lease container: the range of the monitored container
// it covers (a partition key range id, or an effective partition key range), its owner
// (the processor instance holding it), its continuation (the change feed position the
// owner last checkpointed) and a timestamp the owner renews. Parse reads both SDKs'
// shapes; the store's own documents (".info", ".lock") are not leases and are skipped.
//
// Estimate reads, for every lease, the monitored container's change feed from the
// lease's continuation, one change at most, and computes the lag from the answer as the
// .NET SDK's ChangeFeedEstimatorIterator and the Java SDK's getEstimatedLag do: the
// range's latest LSN (from the session token) minus the first change's _lsn, plus one;
// zero when nothing is newer. Every read is an engine operation built from
// Options.Page, so it is routed, failed over, timed out and hedged like any read.
//
// It never reads flags, files or the environment; the time it judges ages by is
// Options.Now.
package leases
