//go:build !unix && !windows

package cmd

// processAlive cannot tell here: the check that the recorded server answers decides.
func processAlive(int) bool { return true }
