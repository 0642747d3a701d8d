package hedging

import (
	"errors"
	"fmt"
	"time"
)

// Strategy says when each hedge arm starts.
type Strategy interface {
	// Offset is the time after the first arm at which arm i (i >= 1) starts if no final
	// answer has arrived by then.
	Offset(arm int) time.Duration
	// Arms is how many arms may run for an operation with this many effective regions.
	Arms(regions int) int
	// String describes the strategy for diagnostics.
	String() string
}

// Threshold is the SDKs' threshold strategy: the first arm at t0, the second at
// t0+Threshold, then one more every Step. A zero Step starts every remaining arm at the
// threshold at once. MaxRegions caps the arms (0: every effective region).
type Threshold struct {
	Threshold  time.Duration
	Step       time.Duration
	MaxRegions int
}

// Validate checks the strategy's settings.
func (t Threshold) Validate() error {
	switch {
	case t.Threshold <= 0:
		return fmt.Errorf("hedge threshold must be greater than 0 (got %s): give a duration such as 300ms", t.Threshold)
	case t.Step < 0:
		return fmt.Errorf("hedge step must not be negative (got %s); 0 sends every remaining region at the threshold", t.Step)
	case t.MaxRegions < 0:
		return errors.New("hedge max regions must be at least 1 (or 0 for every effective region)")
	}
	return nil
}

func (t Threshold) Offset(arm int) time.Duration {
	if arm <= 0 {
		return 0
	}
	return t.Threshold + time.Duration(arm-1)*t.Step
}

func (t Threshold) Arms(regions int) int {
	if t.MaxRegions > 0 && t.MaxRegions < regions {
		return t.MaxRegions
	}
	return regions
}

func (t Threshold) String() string {
	max := "all"
	if t.MaxRegions > 0 {
		max = fmt.Sprint(t.MaxRegions)
	}
	return fmt.Sprintf("threshold=%s step=%s max_regions=%s", t.Threshold, t.Step, max)
}
