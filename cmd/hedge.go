package cmd

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/hedging"
)

// Defaults of the threshold strategy when a profile or flag turns hedging on without
// saying everything: the Java and Python SDKs' 500 ms threshold and 100 ms step.
const (
	defaultHedgeThreshold = 500 * time.Millisecond
	defaultHedgeStep      = 100 * time.Millisecond
)

// hedgeFlags are the availability-strategy flags of reads.
type hedgeFlags struct {
	threshold  time.Duration
	step       time.Duration
	maxRegions int
	off        bool
}

func (h *hedgeFlags) register(fl *pflag.FlagSet) {
	fl.DurationVar(&h.threshold, "hedge-threshold", 0, "hedge: ask the next region when the first has not answered after this long, e.g. 300ms (turns hedging on)")
	fl.DurationVar(&h.step, "hedge-step", 0, "hedge: then one more region every step; 0 asks all remaining regions at the threshold (default 100ms)")
	fl.IntVar(&h.maxRegions, "hedge-max-regions", 0, "hedge: at most this many regions in all (default: every effective region)")
	fl.BoolVar(&h.off, "no-hedge", false, "do not hedge this command, whatever the profile says")
}

// apply passes the hedge flags the user set on to the settings resolution.
func (h *hedgeFlags) apply(fl *pflag.FlagSet, out *config.Flags) {
	if fl.Changed("hedge-threshold") {
		out.HedgeThreshold = &h.threshold
	}
	if fl.Changed("hedge-step") {
		out.HedgeStep = &h.step
	}
	if fl.Changed("hedge-max-regions") {
		out.HedgeMaxRegions = &h.maxRegions
	}
}

// strategy turns the resolved hedging settings into the engine's strategy: nil when
// hedging is off. It is off by default; a threshold from a flag or a profile turns it
// on, and --no-hedge turns it off for one command.
func (h *hedgeFlags) strategy(s config.Settings) (hedging.Strategy, error) {
	if h.off {
		return nil, nil
	}
	set := func(key string) bool { return s.Source(key) != config.SourceDefault }
	mode := s.Hedging.Mode
	if !set("hedging.mode") && set("hedging.threshold") {
		mode = config.HedgingThreshold
	}
	switch mode {
	case config.HedgingThreshold:
	case config.HedgingAdaptive:
		// The adaptive strategy learns from the operations of this process: a single
		// read starts from its fallback threshold, a probe or hedge-test learns.
		if set("hedging.budget") && s.Hedging.BudgetPercent <= 0 {
			return nil, usageErrorf("the adaptive hedging budget must be more than 0%% (got %g%%); set mode = \"off\" to turn hedging off", s.Hedging.BudgetPercent)
		}
		cfg := hedging.AdaptiveConfig{MaxRegions: s.Hedging.MaxRegions, Budget: s.Hedging.BudgetPercent / 100}
		if set("hedging.threshold") {
			cfg.Fallback = s.Hedging.Threshold
		}
		if set("hedging.step") {
			cfg.Step = s.Hedging.Step
		}
		a, err := hedging.NewAdaptive(cfg)
		if err != nil {
			return nil, &UsageError{Err: err}
		}
		return a, nil
	default:
		// A step or a region cap alone does not turn hedging on (the SDKs' threshold is
		// what does); saying so beats reading unhedged while the user thinks otherwise.
		for _, f := range []struct{ key, flag string }{{"hedging.step", "--hedge-step"}, {"hedging.max_regions", "--hedge-max-regions"}} {
			if s.Source(f.key) == config.SourceFlag {
				return nil, usageErrorf("%s needs hedging on: add --hedge-threshold (e.g. --hedge-threshold 300ms %s …), or turn hedging on in the profile (hedging.threshold or hedging.mode)", f.flag, f.flag)
			}
		}
		return nil, nil
	}
	t := hedging.Threshold{Threshold: defaultHedgeThreshold, Step: defaultHedgeStep, MaxRegions: s.Hedging.MaxRegions}
	if set("hedging.threshold") {
		t.Threshold = s.Hedging.Threshold
	}
	if set("hedging.step") {
		t.Step = s.Hedging.Step
	}
	if err := t.Validate(); err != nil {
		return nil, &UsageError{Err: err}
	}
	return t, nil
}
