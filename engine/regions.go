package engine

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/health"
	"github.com/cosmosctl/cosmosctl/retries"
)

// RegionInfo is one region of the account as an operator sees it.
type RegionInfo struct {
	Name     string `json:"-"`
	Endpoint string `json:"endpoint"`
	Write    bool   `json:"write"`
	// ReadRank and WriteRank are the region's place in the effective read and write
	// order for the current settings (1 = first), 0 when it is not used.
	ReadRank  int    `json:"-"`
	WriteRank int    `json:"-"`
	Note      string `json:"note"`
	// Latency of one GET / to the regional endpoint; Error when it did not answer.
	Latency time.Duration `json:"-"`
	Status  int           `json:"-"`
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
				resp, err := c.do(ctx, ClassAccount, r.Endpoint, &cosmos.Request{Method: http.MethodGet, Path: "/"})
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

// Derive returns a client that shares this one's endpoint, transport, clock and cached
// account topology, with its own preferred regions and retry policy. Probes use it to
// send requests that are never retried, so that every 429 and 503 is counted.
func (c *Client) Derive(preferred []string, retry retries.Policy) *Client {
	o := c.opts
	o.PreferredRegions, o.Retry, o.Direct = preferred, &retry, false
	d, _ := New(o)
	d.topology = c.topology
	d.addr = c.addr
	return d
}

// WithHealth returns a client like this one (endpoint, transport, clock, topology,
// preferred regions, retry policy, connection mode) with its own region health store.
func (c *Client) WithHealth(h *health.Store) *Client {
	o := c.opts
	o.Retry = &c.policy
	o.Health = h
	d, _ := New(o)
	d.topology = c.topology
	if c.addr != nil {
		d.addr.Close()
		d.addr = c.addr
	}
	return d
}

// Ping sends one GET / to a region's own endpoint, once, without retries: the cheapest
// round trip through that region's gateway. It returns what the transport does: the
// response, with a *cosmos.Error for a status of 400 or more, or a *cosmos.NetworkError.
func (c *Client) Ping(ctx context.Context, region string) (*cosmos.Response, error) {
	acct, err := c.topology.get(ctx)
	if err != nil {
		return nil, err
	}
	for _, l := range append(append([]cosmos.Location(nil), acct.ReadableLocations...), acct.WritableLocations...) {
		if cosmos.SameRegion(l.Name, region) {
			return c.do(ctx, ClassAccount, endpointOf(l), &cosmos.Request{Method: http.MethodGet, Path: "/"})
		}
	}
	return nil, inputErrorf("region %q is not a region of this account; its regions are %s", region, strings.Join(quoted(acct.ReadRegions()), ", "))
}

// PartitionKeyPaths returns a container's partition key paths ("/pk", or one per level of
// a hierarchical key), read from the write region once per process.
func (c *Client) PartitionKeyPaths(ctx context.Context, database, container string) ([]string, error) {
	acct, err := c.topology.get(ctx)
	if err != nil {
		return nil, err
	}
	def, err := c.partitionKeyDefinition(ctx, database, container, acct, endpointOf(acct.WritableLocations[0]))
	if err != nil {
		return nil, err
	}
	return append([]string(nil), def.Paths...), nil
}
