// Package changefeed reads a container's change feed the way the SDKs do: one partition
// key range at a time (or one partition key), each range polled with the etag of its
// previous answer as its continuation (If-None-Match), until it answers 304 Not
// Modified. Every range is polled in parallel, at most Options.Parallelism at once;
// after a 304 a range waits Options.PollDelay (on the injected clock) before it is
// polled again, and after a 429 the service's retry-after.
//
// A prefix of a hierarchical partition key (Options.PartitionKeyPrefix) is read as the
// JS SDK reads it: every range that holds any key of the prefix's effective partition key
// range, each poll narrowed to the part of it the range holds (x-ms-start-epk,
// x-ms-end-epk); the state records the prefix's range and each range's scope.
//
// Every poll is an engine operation (engine.OpChangeFeed) built from Options.Page, so it
// is routed to the effective regions, retried, failed over and hedged like any read.
//
// A range that splits answers 410/1002; the feed re-reads the partition key ranges and
// goes on from the children, each from the parent's continuation (the service accepts a
// parent's continuation on its children), so that nothing is lost.
//
// State is the position of every range: what every Batch returned so far covers. Saved
// after the batch's items were written, it makes a restarted reader resume where it
// stopped, at least once: the only changes delivered twice are those read but not yet
// saved. A State is bound to the account endpoint, database, container and partition
// key or prefix it was read from; Open refuses another one.
//
// It never reads flags or the environment and takes its clock from Options; files are
// read and written only by LoadState and State.Save, with the paths the caller gives.
package changefeed
