package output

import (
	"fmt"
	"time"
)

// HumanDuration renders a duration for a person, with the precision that matters at
// each scale: "0.4ms", "12ms", "1.20s", "2m5s". JSON never uses it: scripts get numbers
// with the unit in the field name.
func HumanDuration(d time.Duration) string {
	if d < 0 {
		return "-" + HumanDuration(-d)
	}
	switch {
	case d == 0:
		return "0ms"
	case d < 50*time.Microsecond:
		return "<0.1ms"
	case d < 950*time.Microsecond:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	case d < 999500*time.Microsecond:
		return fmt.Sprintf("%dms", d.Round(time.Millisecond)/time.Millisecond)
	case d < 59995*time.Millisecond:
		return fmt.Sprintf("%.2fs", d.Seconds())
	default:
		return d.Round(time.Second).String()
	}
}
