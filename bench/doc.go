// Package bench holds cosmosctl's side-by-side benchmarks (issue 25): each data command
// (import in create and upsert mode, the change feed's catch-up, export, query --all)
// measured in one process and one run against one in-process emulator beside the same
// work done by the official Go SDK (azcosmos) and by a floor of hand-made signed REST
// requests (and, for the reads, a second floor that also splits each page into lines
// and writes them), so that the ratios between them, not absolute figures on a noisy
// machine, say how close cosmosctl is to the wire.
//
// Everything is in its test files; the package itself is empty. The benchmarks run only
// with -bench:
//
//	go test -run='^$' -bench=. -benchtime=2x -count=2 ./bench/
//
// COSMOSCTL_BENCH_N sets the items per workload (default 20,000); COSMOSCTL_BENCH_ONLY
// (cosmosctl, sdk, floor or floor-lines) runs one implementation alone, for a profile;
// the emulator serves from a child process, or, with COSMOSCTL_BENCH_EMULATOR=inprocess,
// from this one.
// The package's one test (a few hundred items) checks that every implementation does
// the work.
package bench
