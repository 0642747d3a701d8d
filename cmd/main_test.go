package cmd

import (
	"fmt"
	"os"
	"testing"
)

// TestMain keeps what commands remember between invocations (region health, topologies,
// learned thresholds) out of the developer's cache directory: every test that does not
// isolate itself shares one scratch directory, removed at the end.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cosmosctl-cmd-state-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("COSMOSCTL_STATE_DIR", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
