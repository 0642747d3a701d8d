// Package rntbdserver is the emulator's server side of RNTBD, the binary protocol Cosmos
// DB replicas speak to direct-mode clients (TLS over TCP) and that the Gateway 2.0 proxy
// carries in HTTP/2 bodies.
//
// It owns its own frame and token codec, written from the public SDK sources and the
// independent byte vectors listed in /work/shared/REFERENCE-rntbd.md §1 (each file cites
// the source it follows). It must not import cosmos/rntbd, cosmos/rntbdmap or any other
// client package: the emulator models the service, and a misreading shared by client and
// server would pass every round-trip test.
//
// The package knows nothing of documents or replicas. Server decodes request frames,
// turns each into an *http.Request for an http.Handler (the emulator's replica handling),
// and turns the handler's answer back into a response frame. ParseRequest, HTTPRequest and
// EncodeResponse are exported for the Gateway 2.0 endpoint, which carries the same frames
// in HTTP/2 bodies.
package rntbdserver
