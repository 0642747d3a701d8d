package faults

import (
	"fmt"
	"strings"
	"time"
)

// Duration is a time.Duration that travels as text ("300ms", "1.5s", "2m")
// in TOML and JSON. Scenario files are written by hand, and a bare integer
// of nanoseconds is too easy to get wrong by a factor of a million.
type Duration time.Duration

func (d Duration) String() string { return time.Duration(d).String() }

// MarshalText uses time.Duration's own form so the output always parses
// back with UnmarshalText (e.g. two minutes comes out as "2m0s").
func (d Duration) MarshalText() ([]byte, error) {
	return []byte(time.Duration(d).String()), nil
}

// UnmarshalText rejects negative values: every duration in this package is a
// delay, an offset from emulator start or a length of time, and a negative
// one is always a typo rather than something to clamp silently.
func (d *Duration) UnmarshalText(text []byte) error {
	s := strings.TrimSpace(string(text))
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("invalid duration %q: use a number with a unit, like \"300ms\", \"1.5s\" or \"2m\"", s)
	}
	if v < 0 {
		return fmt.Errorf("duration must not be negative: %s", s)
	}
	*d = Duration(v)
	return nil
}
