// Package rntbdconn carries RNTBD frames to replicas: TLS connections (1.2 or later, the
// address host as server name), the context negotiation as each connection's first
// frame, requests multiplexed on a connection by TransportRequestID with one reader
// goroutine demultiplexing the answers, and a small bounded pool of connections per
// host:port endpoint that closes connections idle for the negotiated time.
//
// It owns connections only: it neither builds requests from REST ones nor reads
// responses into them (package rntbdmap does), and it never retries — a failed request
// is reported with whether its frame was written (Error.Sent), for the engine's retry
// policy to decide.
//
// Choices, against the SDKs' defaults:
//
//   - Connections per endpoint: at most MaxConnsPerEndpoint (default 4). A request goes
//     to the least busy connection; a new one is opened only when every open one already
//     carries RequestsPerConn (default 30) requests and the bound allows. .NET defaults to
//     30 requests per channel and up to 65,535 channels per host
//     (DocumentClient.DefaultMaxRequestsPerRntbdChannel, DefaultMaxRntbdChannelsPerHost =
//     ushort.MaxValue; azure-cosmos-dotnet-v3 msdata/direct, commit 1bc2c522); Java to 30
//     requests per connection and 130 connections per endpoint (DirectConnectionConfig
//     getMaxRequestsPerConnection, getMaxConnectionsPerEndpoint). cosmosctl is one process
//     issuing tens of concurrent requests, not a service issuing thousands, and a replica
//     endpoint serves many replicas (a node hosts many on one port): a few multiplexed
//     connections carry it, and the bound keeps a burst of hedged requests from opening
//     dozens of TLS sessions to one node. Past the threshold requests share the least busy
//     connection rather than wait.
//   - Idle timeout: the server's IdleTimeoutInSeconds from the negotiation, less a tenth so
//     that the client closes first and never writes into a connection the server is
//     closing; IdleTimeout when the server says nothing. (Java keeps idle connections by
//     default, DirectConnectionConfig idleConnectionTimeout ZERO; a CLI process should not
//     hold a replica's connection past the server's own limit.)
//   - A response carrying DisableRntbdChannel (Java RntbdConstants.RntbdResponseHeader
//     0x0038) retires its connection: no new request goes to it, and it closes once its
//     in-flight requests are answered.
//   - A cancelled request's late answer is read and dropped; the connection stays. A
//     connection that fails (read or write error, a frame that is not RNTBD, an answer
//     with no TransportRequestID) fails every request on it.
package rntbdconn
