// Package retries decides, after each attempt, what the engine does next: stop, try the
// same region again after a wait, move to the next region, or re-read the account and
// try the new write region. It classifies Cosmos DB statuses the way the SDKs do (which
// results are final, which are transient) and owns the throttling back-off.
//
// It is pure logic: no HTTP, no sleeping, no clock. The engine reports what happened
// and carries out the decision, recording it in the diagnostics.
package retries
