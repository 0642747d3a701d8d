// Package config owns cosmosctl's settings: the TOML profiles file, the environment
// variables, and the precedence that combines them with the flags a command was given:
// flag > environment > profile > built-in default. For an endpoint that announces
// itself as a cosmosctl emulator, what it announces (Announced: its well-known key, its
// database and container) comes before the built-in default; the asking is the
// commands' to do.
//
// It reads the profiles file and any key file it points to, and writes the profiles file
// for `cosmosctl config set`; it never reads flags or the process environment itself.
// Commands hand it the flags the user actually set and an environment lookup function,
// so that precedence is tested without touching the real environment.
//
// Account keys and Azure AD tokens are secrets: they are held as a Secret, which prints
// masked, and no error from this package includes one.
package config
