// Package probe measures latency and errors per region, and with Options.Replicas per
// replica of the probe item's partition key range: a schedule of requests per region,
// each pinned to its region and never retried, a live view while it runs (a table
// redrawn every second, or an NDJSON stream of interval lines) and a final report with
// the --fail-on breaches.
//
// It owns the probe item (finding it, or creating it on first use), the per-region run
// loop and the replica prober. It gets an engine client, an Options value, the streams
// to write to and a clock; it reads no flags, files or environment and knows nothing of
// cobra: cmd/probe.go parses the flags and wires it.
package probe
