package health

import (
	"fmt"
	"time"
)

// Config holds the thresholds of the state model. A zero field takes its default,
// which follows the Java and .NET SDKs' per-partition circuit breaker where they have
// one.
type Config struct {
	// ReadFailures: a region becomes unavailable for reads when it has more read
	// failures than this within the counting window (default 2: the third trips it).
	ReadFailures int
	// WriteFailures is the same for writes (default 5: the sixth trips it). Writes are
	// given more rope because moving them is costlier: on a single-write account there
	// is nowhere else to send them.
	WriteFailures int
	// HedgeLosses: a region becomes unavailable when hedges to other regions win this
	// many times in a row against it, the first region (default 5). A region that answers
	// too slowly to ever win costs every operation the hedge threshold.
	HedgeLosses int
	// ResetAfter is the counting window: failure counts (and a hedge-loss streak) start
	// again from zero after this long with none (default 5m).
	ResetAfter time.Duration
	// ProbeAfter is how long a region stays unavailable before one request may probe it
	// (default 5s).
	ProbeAfter time.Duration
	// MaxProbeInterval caps the unavailable period, which doubles with every failed
	// probe (default 1m), so that a hung region costs one timeout a minute, not one
	// every five seconds.
	MaxProbeInterval time.Duration
	// ProbeHold is how long a probe may hold the region's probe slot before it is taken
	// to be lost (the caller never settled it; its process died) and the slot is given
	// to another request (default 2m).
	ProbeHold time.Duration
	// EntryTTL: what is known of a region with no event for this long is forgotten, in
	// memory, in Snapshot and in Merge (default 30m). Old news about a region is no news.
	EntryTTL time.Duration
}

// Defaults.
const (
	DefaultReadFailures     = 2
	DefaultWriteFailures    = 5
	DefaultHedgeLosses      = 5
	DefaultResetAfter       = 5 * time.Minute
	DefaultProbeAfter       = 5 * time.Second
	DefaultMaxProbeInterval = time.Minute
	DefaultProbeHold        = 2 * time.Minute
	DefaultEntryTTL         = 30 * time.Minute
)

func (c Config) withDefaults() Config {
	if c.ReadFailures == 0 {
		c.ReadFailures = DefaultReadFailures
	}
	if c.WriteFailures == 0 {
		c.WriteFailures = DefaultWriteFailures
	}
	if c.HedgeLosses == 0 {
		c.HedgeLosses = DefaultHedgeLosses
	}
	if c.ResetAfter == 0 {
		c.ResetAfter = DefaultResetAfter
	}
	if c.ProbeAfter == 0 {
		c.ProbeAfter = DefaultProbeAfter
	}
	if c.MaxProbeInterval == 0 {
		c.MaxProbeInterval = max(DefaultMaxProbeInterval, c.ProbeAfter)
	}
	if c.ProbeHold == 0 {
		c.ProbeHold = DefaultProbeHold
	}
	if c.EntryTTL == 0 {
		c.EntryTTL = DefaultEntryTTL
	}
	return c
}

// validate checks a configuration as given, before defaults: a negative value is an
// error naming its field.
func (c Config) validate() error {
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"ReadFailures", int64(c.ReadFailures)},
		{"WriteFailures", int64(c.WriteFailures)},
		{"HedgeLosses", int64(c.HedgeLosses)},
		{"ResetAfter", int64(c.ResetAfter)},
		{"ProbeAfter", int64(c.ProbeAfter)},
		{"MaxProbeInterval", int64(c.MaxProbeInterval)},
		{"ProbeHold", int64(c.ProbeHold)},
		{"EntryTTL", int64(c.EntryTTL)},
	} {
		if f.v < 0 {
			return fmt.Errorf("region health %s must not be negative (got %s)", f.name, c.show(f.name, f.v))
		}
	}
	d := c.withDefaults()
	if d.MaxProbeInterval < d.ProbeAfter {
		return fmt.Errorf("region health MaxProbeInterval (%s) must not be less than ProbeAfter (%s)", d.MaxProbeInterval, d.ProbeAfter)
	}
	return nil
}

func (Config) show(name string, v int64) string {
	switch name {
	case "ReadFailures", "WriteFailures", "HedgeLosses":
		return fmt.Sprint(v)
	}
	return time.Duration(v).String()
}
