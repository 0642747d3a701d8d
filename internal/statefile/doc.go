// Package statefile keeps small pieces of state that outlive one cosmosctl process —
// region health, adaptive hedging latency windows, the account topology — as JSON
// files in the user's cache directory, one directory per account endpoint and one file
// per kind of state.
//
// cosmosctl is a command-line tool: every invocation is a process of its own, and
// several may run at once (a runbook loop, a probe in another terminal). So every
// change is a read-modify-write under an exclusive lock that other processes respect
// (flock on unix, LockFileEx on Windows), bounded in time so that a stuck process never
// hangs a command, and every write replaces the file atomically (a temporary file in the
// same directory, fsync, rename), so a reader sees the old content or the new, never
// half of one.
//
// A file that cannot be used — corrupt, truncated, written by another format version,
// for another kind of state or another account — is not an error that stops a command:
// Load reports it as *Ignored, which callers print as one notice, and the next Update
// replaces it. State here is a cache of what earlier processes learned; losing it costs
// some rediscovery, never correctness.
//
// It owns the file format (an envelope naming kind, version and endpoint around the
// data), the paths, the locking and the atomic replacement. It must not know what the
// state means: callers pass their own types, kinds and versions, and merge what they
// find with what they learned inside the function they give Update.
package statefile
