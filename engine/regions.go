package engine

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// RegionInfo is one region of the account as an operator sees it.
type RegionInfo struct {
	Name     string `json:"name"`
	Endpoint string `json:"endpoint"`
	Write    bool   `json:"write"`
	// ReadRank and WriteRank are the region's place in the effective read and write
	// order for the current settings (1 = first), 0 when it is not used.
	ReadRank  int    `json:"read_rank"`
	WriteRank int    `json:"write_rank"`
	Note      string `json:"note"`
	// Latency of one GET / to the regional endpoint; Error when it did not answer.
	Latency time.Duration `json:"-"`
	Status  int           `json:"status_code"`
	Error   string        `json:"error,omitempty"`
}

// RegionsReport is the account's regions and how the current settings use them.
type RegionsReport struct {
	Account          string       `json:"account"`
	MultiWrite       bool         `json:"multi_write"`
	Regions          []RegionInfo `json:"regions"`
	EffectiveReads   []string     `json:"effective_read_regions"`
	EffectiveWrites  []string     `json:"effective_write_regions"`
	ReadFallback     string       `json:"read_fallback,omitempty"`
	WriteFallback    string       `json:"write_fallback,omitempty"`
	PreferredRegions []string     `json:"preferred_regions"`
	ExcludedRegions  []string     `json:"excluded_regions"`
}

// Regions reports the account's regions, their effective order for reads and writes
// with these exclusions, and (when ping is set) the latency of one request to each,
// measured in parallel.
func (c *Client) Regions(ctx context.Context, exclude []string, ping bool) (*RegionsReport, error) {
	acct, err := c.topology.get(ctx)
	if err != nil {
		return nil, err
	}
	reads, err := planRegions(acct, c.preferred, exclude, false)
	if err != nil {
		return nil, err
	}
	writes, err := planRegions(acct, c.preferred, exclude, true)
	if err != nil {
		return nil, err
	}
	rep := &RegionsReport{
		Account: acct.ID, MultiWrite: acct.EnableMultipleWriteLocations,
		EffectiveReads: namesOf(reads.targets), EffectiveWrites: namesOf(writes.targets),
		ReadFallback: reads.fallback, WriteFallback: writes.fallback,
		PreferredRegions: nonNil(reads.preferred), ExcludedRegions: nonNil(reads.excluded),
	}
	for i, l := range acct.ReadableLocations {
		info := RegionInfo{Name: l.Name, Endpoint: endpointOf(l), Note: reads.notes[i].Note}
		for _, w := range acct.WritableLocations {
			if w.Name == l.Name {
				info.Write = true
			}
		}
		info.ReadRank = indexOf(rep.EffectiveReads, l.Name) + 1
		info.WriteRank = indexOf(rep.EffectiveWrites, l.Name) + 1
		rep.Regions = append(rep.Regions, info)
	}
	if ping {
		var wg sync.WaitGroup
		for i := range rep.Regions {
			wg.Add(1)
			go func(r *RegionInfo) {
				defer wg.Done()
				start := c.clock.Now()
				resp, err := c.transport.Do(ctx, r.Endpoint, &cosmos.Request{Method: http.MethodGet, Path: "/"})
				r.Latency = c.clock.Now().Sub(start)
				if resp != nil {
					r.Status = resp.StatusCode
				}
				if err != nil {
					r.Error = err.Error()
				}
			}(&rep.Regions[i])
		}
		wg.Wait()
	}
	return rep, nil
}

func namesOf(ls []cosmos.Location) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Name
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// MarshalJSON adds the latency with its unit.
func (r RegionInfo) MarshalJSON() ([]byte, error) {
	type plain RegionInfo
	return marshalJSON(struct {
		plain
		LatencyMs float64 `json:"latency_ms"`
	}{plain(r), ms(r.Latency)})
}
