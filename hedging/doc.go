// Package hedging decides when a read is sent to one more region, and which answer
// wins: the availability strategies of the Java, .NET and Python SDKs (a threshold, then
// one more region every step; first final answer wins; the rest are cancelled), and the
// race that carries them out.
//
// It knows nothing of HTTP or regions: an arm is a function the engine supplies, pinned
// to its region, that reports transient results and returns whether it ended with a
// final one. Time comes from an injected clock, so a 300 ms schedule is tested in
// microseconds.
//
// What the adaptive strategy learns can outlive its process as an AdaptiveState, a
// JSON-serialisable snapshot that Export, Import and MergeAdaptiveState produce and
// check; reading and writing the file that holds it, and locking it, are the command
// layer's.
package hedging
