package hedging

import "time"

func durationNanos(n int64) time.Duration { return time.Duration(n) }
