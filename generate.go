package main

// The shell completion scripts, the markdown docs and the man pages are generated from
// the command tree and checked in; CI fails when they are not current.
//go:generate go run ./internal/gen -completions completions -docs docs -man man
