// Package cosmos is the Azure Cosmos DB gateway (REST) protocol as cosmosctl speaks it:
// master-key and AAD request signing, resource type and link derivation, header names,
// typed service errors, the account / container / partition-key-range shapes, partition
// key encoding and hashing, and a Transport that sends one signed request to one endpoint.
//
// It owns the wire format only. It never decides which region to use, never retries and
// never waits: routing, hedging and retries belong to the engine and its policies, which
// need to see every individual attempt to record it. The one wait is AADCredential's
// fetch of an Azure AD token, which bounds it by the request's context. The emulator uses the same package,
// so the client and the server cannot drift apart on a wire fact.
package cosmos
