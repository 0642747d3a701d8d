//go:build !unix

package changefeed

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
