// Package workload owns what `cosmosctl probe` and `cosmosctl hedge-test` share: sending a
// stream of requests on a schedule (open loop at a fixed rate, or closed loop), recording
// their latencies in HdrHistograms with errors by status (and, for the answers that said
// it, the service's own time and the network's beside it), and judging the result against
// --fail-on thresholds.
//
// Latency is measured from a request's intended send time, not from when it was actually
// sent (as wrk2 and vegeta do): when the service stalls, the requests that should have been
// sent during the stall count the stall against themselves, so it shows in the percentiles
// instead of being hidden as one slow request ("coordinated omission").
//
// The package sends nothing itself and knows nothing of Cosmos DB, flags or output: the
// caller's function does the request, and time comes only from the Schedule's clock.
package workload
