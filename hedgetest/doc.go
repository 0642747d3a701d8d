// Package hedgetest runs the same workload — point reads, query pages within a partition
// key, or whole cross-partition queries (Op) — under several availability strategies,
// one after another on the same account and data, and compares them: tail latency,
// extra requests and request units, which regions won, timeouts. It ends with a
// recommendation: the strategy that meets a p99 target at the least extra load (on a
// tie, the simplest: none, then threshold, adaptive, fanout).
//
// It drives the engine like any command does and measures from outside it; it knows
// nothing of how the account is reached or of output formats. The replica-move scenario
// (Mover) is the one exception to the first: it moves replicas of the embedded emulator
// during each run, and counts what the moved replicas received.
package hedgetest
