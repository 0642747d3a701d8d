// Package engine carries out Cosmos DB operations for every cosmosctl command: it
// resolves the account's regions, computes the effective regions of an operation,
// sends each attempt through a Transport, applies the retry and failover policies of
// package retries, bounds everything with the end-to-end timeout, and returns a Result
// whose Diagnostics were recorded as things happened.
//
// Every attempt is bounded by its own timeout (AttemptTimeouts: a ladder per request
// class, clamped to the end-to-end timeout), the account lookup falls back from the
// global endpoint to regional ones, and, given a health.Store, the effective regions are
// ordered by region health and every attempt's outcome is reported to it: so no
// operation hangs on a hung region, and none rediscovers a dead one.
//
// It never reads flags, files, the environment or the wall clock: a command builds an
// Options and an Operation, and tests pass a fake clock and an in-memory transport. It
// knows nothing of cobra or of output formats.
package engine
