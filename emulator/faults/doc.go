// Package faults models latency and injected failures for the local
// multi-region Cosmos DB emulator, so teams can rehearse regional incidents
// (slow regions, throttling storms, outages, ambiguous writes) without
// touching a real account.
//
// The package is deliberately pure: it never sleeps, never reads the wall
// clock and never touches the network. The server asks an Injector what to
// do with a request (Decide) or a new connection (Refusing) and carries out
// the answer itself. Time and randomness are injected so that a scenario is
// reproducible from a seed and tests can move time by hand.
//
// A scenario file describes both halves of the model in TOML (or JSON with
// the same field names):
//
//	[[latency]]
//	region = "West US"
//	operation = "reads"
//	kind = "lognormal"
//	p50 = "5ms"
//	p99 = "40ms"
//
//	[[fault]]
//	region = "East US"
//	operations = ["read"]
//	probability = 0.05
//	effect = "delay"
//	delay = { kind = "uniform", min = "500ms", max = "2s" }
//
// Base latency always applies and comes from the most specific latency
// entry; fault rules are then evaluated in the order they were added. Delay
// rules stack on top of the base latency, while the first firing rule with
// any other effect decides how the request ends.
//
// A rule's time window (after, for) counts from the emulator's start for the
// rules of a scenario file, so that a scenario replays the same way each run,
// and from the moment it is added for rules added while the emulator runs
// (the control API, `cosmosctl emulator fault add`): Rule.Since says which.
package faults
