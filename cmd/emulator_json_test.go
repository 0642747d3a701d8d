package cmd

import (
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// regionsOf reads the regions an emulator command printed (-o json) back as the
// emulator's own.
func regionsOf(printed []emulatorRegionJSON) []emulator.Region {
	out := make([]emulator.Region, len(printed))
	for i, r := range printed {
		out[i] = emulator.Region{Name: r.Region, Endpoint: r.Endpoint, Write: r.Write}
	}
	return out
}

// latencyEntriesOf reads a latency table an emulator command printed (-o json) back as
// the emulator's own.
func latencyEntriesOf(t *testing.T, printed []latencyJSON) []faults.LatencyEntry {
	t.Helper()
	d := func(ms *float64) faults.Duration {
		if ms == nil {
			return 0
		}
		return faults.Duration(time.Duration(*ms * float64(time.Millisecond)))
	}
	out := make([]faults.LatencyEntry, len(printed))
	for i, l := range printed {
		region := ""
		if l.Region != nil {
			region = *l.Region
		}
		j := l.Distribution
		out[i] = faults.LatencyEntry{Region: region, Operation: l.Operation, Distribution: faults.Distribution{Kind: j.Kind,
			Value: d(j.ValueMs), Min: d(j.MinMs), Max: d(j.MaxMs), P50: d(j.P50Ms), P99: d(j.P99Ms)}}
	}
	return out
}
