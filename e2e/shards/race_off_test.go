//go:build unix && !race

package shards_test

// items is how many items the container holds (the 100,000), written how many
// the change feed test creates while its shards follow.
const items, written = 100000, 2000
