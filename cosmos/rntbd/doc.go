// Package rntbd is the message encoding of RNTBD, the binary protocol Cosmos DB replicas
// speak: request and response frames, their tokens (the binary headers), the connection
// context negotiation, and the activity id in Microsoft GUID byte order. Direct mode
// carries these frames over TLS TCP to each replica; Gateway 2.0 ("thin client") carries
// the same frames as the body of an HTTP/2 POST to a regional proxy.
//
// It owns bytes only: no connections, no TLS, no request ids, no mapping to cosmos.Response.
// Decoding never reads past the buffer or past the frame's own length, never panics, keeps
// tokens it does not know (in wire order, so every frame re-encodes byte for byte), and
// says what is wrong in its errors; ErrIncomplete marks a buffer that ends early.
//
// The facts come from the public sources of the official SDKs — Java RntbdConstants,
// RntbdTokenType, RntbdRequestFrame, RntbdResponseStatus, RntbdContextRequest and
// RntbdContext; .NET TransportSerialization and RntbdConstants on msdata/direct; the Rust
// driver's transport/rntbd — gathered in the project's REFERENCE-rntbd.md. The code is
// cosmosctl's own.
//
// What is verified on bytes nobody here wrote (vectors_test.go quotes each with its source):
//
//   - a response: the .NET SDK's recorded thin-client 201 (ThinClientTransportSerializerTests
//     base64MockResponse, 821 bytes) decodes to the status, activity id, token values and
//     JSON body it holds, including token 0x0063 that this package does not know, and
//     re-encodes to the same 821 bytes;
//   - the GUID byte order: Java's uuidConversion vector, generated with .NET's
//     Guid.ToByteArray;
//   - a request: the Rust driver's known-good snapshot (Read, PageSize, PayloadPresent,
//     body "{}") decodes and re-encodes byte for byte, and is rebuilt from its fields.
//
// What is not verified: no real replica or proxy has read a frame this package wrote; the
// context request and response have no independent vector (none was found in public
// material); the Rust request is a Document Read, 0x0003 and 0x0003, so it cannot tell
// resource type from operation type, whose order rests on Java RntbdRequestFrame.encode;
// and which tokens the service requires on a request is known only from what the SDKs
// send. The vectors prove the layout, not the service's acceptance.
package rntbd
