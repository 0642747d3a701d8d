package main

// The shell completion scripts, the markdown docs, the man pages and the JSON schemas of
// docs/json/ are generated from the command tree and the Go types of the JSON output,
// and checked in; CI fails when they are not current.
//go:generate go run ./internal/gen -completions completions -docs docs -man man -schemas docs/json
