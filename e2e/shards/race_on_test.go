//go:build unix && race

package shards_test

// Under -race the emulator, which runs in the test process, serves some ten times
// slower (the shards, separate processes, are not instrumented): a tenth of the items
// keeps the package within its time budget; the items are still spread over every
// range, and the shards still cut them.
const items, written = 10000, 300
