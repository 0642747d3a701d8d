// Package bulk loads a file of items (NDJSON, one JSON object a line) into a container
// through the engine, exactly once per item across interruptions.
//
// Each line is one write (create or upsert) through engine.Client.Execute, so every
// write has the engine's regions, timeouts, retries and diagnostics. Creates use the
// tracking-id write policy with a _trackingId made of the run's id (kept in the state
// file) and the line number, the same in every attempt and every process of the run:
// a 409 whose stored item carries that id is the run's own earlier write, whose answer
// was lost (a dropped connection, a killed process), and counts as created; a 409 with
// any other item is "already present". Upserts cannot conflict and need no id.
//
// Writes go out with bounded concurrency, each after the Limiter lets it (the RU/s cap,
// and the pause and slower rate after a 429, which the engine reports as it happens).
// What is done is checkpointed to a state file: the longest prefix of lines all done,
// the done lines above it, and the counts of the whole run, so that a resumed run skips
// what is done and its report covers every process of the run. The state is bound to
// the input (its size and a hash of its first MiB) and to the target container.
//
// Lines that cannot be imported (not UTF-8, not JSON, not an object, no string id, no
// value at the partition key path, larger than an item can be: rejected as soon as that
// much is read, the rest skipped unread) and writes that failed are written with their
// line number and reason to the rejected-lines file; they do not stop the import unless
// FailFast is set. Writes that fail for the service's availability (503,
// timeouts, no answer, throttling after every retry) are retried a few times; a long
// run of them stops the import without marking those lines done, so that resuming
// retries them once the service takes writes again.
//
// A state may take one shard of the lines (Shard: line n is shard (n-1) mod N's), so that
// N processes, each with its own state and the same run id (ShardRunID, or one they are
// given), import every line once between them: the lines of other shards are passed over
// unparsed, counted apart, and never done in this state's counts.
//
// It owns the scheduling, the state file format and the rejected-lines format. It must
// not read flags, print, or read the wall clock: the command passes options, a clock
// and callbacks.
package bulk
