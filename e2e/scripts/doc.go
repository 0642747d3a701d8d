// Package scripts holds the end-to-end tests of what a script or a pipeline relies on:
// the built binary's exit codes, what it writes to stdout and stderr (and what it never
// writes there), and the commands an operator runs under `set -euo pipefail`.
package scripts
