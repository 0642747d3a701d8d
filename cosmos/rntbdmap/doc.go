// Package rntbdmap translates between cosmosctl's REST requests and responses and RNTBD
// frames: a signed point operation (method, escaped path, headers, body) becomes an
// rntbd.Request for a replica (direct mode) or for a Gateway 2.0 proxy, and an
// rntbd.Response becomes the status, REST headers and body the rest of cosmosctl reads.
//
// It owns the mapping only: no connections, no signing (the authorization token is the
// REST one, passed through), no request ids of its own. It must not import package cosmos,
// whose transport uses it.
//
// Every request header is an explicit decision. A header with an RNTBD token is mapped
// to it; a header whose meaning travels elsewhere is dropped on purpose (the activity id
// rides in the frame header, the API version and user agent in the connection's context
// negotiation, the body's content type in the operation type); any other header is an
// error naming it, so that a header added to the engine later cannot vanish silently on
// the direct path. The table is in request.go.
//
// Sources (facts only; the code is cosmosctl's own): Java RntbdConstants.java
// (Azure/azure-sdk-for-java, commit c3d24ee4877099c35edfe33386e4342ca286878f) for the
// operation, resource and token ids it lists; .NET RntbdConstants.cs,
// TransportSerialization.cs, rntbd2/HeadersTransportSerialization.cs and
// ThinClientTransportSerializer.cs (Azure/azure-cosmos-dotnet-v3 msdata/direct, commit
// 1bc2c522055dbf350e17ca592fa89ec090e5a654) for the ids Java lacks, how each REST header
// fills its token, and the session-token prefix of proxy answers; the token order a
// Gateway 2.0 proxy requires from Java's thinClientHeadersInOrderList as the Rust
// driver's gateway_v2_dispatch.rs quotes it (REFERENCE-rntbd.md §1.8).
package rntbdmap
