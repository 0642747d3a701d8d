//go:build !unix

package testkit

import "time"

// ProcessCPU is unknown here: CPU figures read 0.
func ProcessCPU() time.Duration { return 0 }
