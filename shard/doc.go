// Package shard plans how N cosmosctl processes split a container between them, each
// computing its own part without talking to the others (`--shard i/N`, a Kubernetes
// Indexed Job's JOB_COMPLETION_INDEX), and reads and writes the feed range strings the
// SDKs exchange for the same purpose (`--feed-range`).
//
// A plan is a pure function of the container's partition key ranges: never of the
// partition statistics, which change between two processes' starts, so two shards
// planning a few seconds apart could otherwise disagree and leave a gap or an overlap.
// When there are at least as many ranges as shards each shard gets contiguous whole
// physical ranges; otherwise ranges are cut at effective partition key (EPK) midpoints.
//
// The package does no I/O and reads no flags: the environment reaches ParseSpec as a
// getenv function, the ranges as a slice the caller read.
package shard
