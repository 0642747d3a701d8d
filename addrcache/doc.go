// Package addrcache owns the direct-mode view of where a partition lives: for each
// region × container × partition key range, the replica addresses the gateway's
// //addresses/ endpoint returned, the health the client has observed for each replica,
// and the refresh of that list when a replica moves.
//
// It follows the replica health model of the .NET and Java SDKs (Connected, Unknown,
// UnhealthyPending, Unhealthy): a replica that answered 410 or hung is tried last, and
// one background refresh (single flight) asks the gateway for the new set while requests
// go on against the stale one. Without that, a request picks the moved replica one time
// in four and can spend seconds waiting for it while three good replicas sit idle.
//
// It must not speak HTTP, read flags, environment or the wall clock, or sleep: the engine
// supplies a Resolver that calls the gateway, time comes from an injected clock.Clock and
// randomness from an injected source, so the state model is tested in microseconds and
// the order of a seeded run is reproducible. It decides the order in which replicas are
// tried; sending the request, retrying and recording diagnostics stay with the engine.
package addrcache
