package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

var sprintf = fmt.Sprintf

// topology caches the account's regions (GET /) for the life of the process. It is
// re-read when a 403/3 says the write region moved.
type topology struct {
	endpoint  string
	transport Transport
	mu        sync.Mutex
	account   *cosmos.Account
}

func (t *topology) get(ctx context.Context) (*cosmos.Account, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.account != nil {
		return t.account, nil
	}
	return t.fetchLocked(ctx)
}

// refresh re-reads the account. The global endpoint is asked first; if it does not
// answer, each regional endpoint in turn, as the SDKs do when a region is down.
func (t *topology) refresh(ctx context.Context) (*cosmos.Account, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.fetchLocked(ctx)
}

func (t *topology) fetchLocked(ctx context.Context) (*cosmos.Account, error) {
	endpoints := []string{t.endpoint}
	if t.account != nil {
		for _, l := range t.account.ReadableLocations {
			endpoints = append(endpoints, strings.TrimRight(l.Endpoint, "/"))
		}
	}
	var lastErr error
	for _, ep := range endpoints {
		resp, err := t.transport.Do(ctx, ep, &cosmos.Request{Method: http.MethodGet, Path: "/"})
		if err != nil {
			lastErr = err
			if ctx.Err() != nil {
				break
			}
			continue
		}
		var acct cosmos.Account
		if err := json.Unmarshal(resp.Body, &acct); err != nil {
			lastErr = fmt.Errorf("the account at %s answered GET / with something that is not a Cosmos DB account: %v", ep, err)
			continue
		}
		if len(acct.ReadableLocations) == 0 || len(acct.WritableLocations) == 0 {
			lastErr = fmt.Errorf("the account at %s lists no regions", ep)
			continue
		}
		t.account = &acct
		return t.account, nil
	}
	return nil, lastErr
}

// regionPlan is where an operation may go, in order, and why.
type regionPlan struct {
	targets   []cosmos.Location
	effective []string
	notes     []RegionNote
	excluded  []string
	preferred []string
	fallback  string
}

// planRegions computes the effective regions of an operation: the preferred regions (or
// the account's order) minus the excluded ones, matched case- and space-insensitively.
// Reads use readable regions. Writes on a single-write account always go to the write
// region; on a multi-write account they follow the same rule over the writable regions.
// If every region is excluded, reads fall back to the first write region and writes to
// the write region, and the plan says so.
func planRegions(acct *cosmos.Account, preferred, excluded []string, write bool) (regionPlan, error) {
	var plan regionPlan
	known := func(name string) (cosmos.Location, bool) {
		for _, l := range acct.ReadableLocations {
			if cosmos.SameRegion(l.Name, name) {
				return l, true
			}
		}
		for _, l := range acct.WritableLocations {
			if cosmos.SameRegion(l.Name, name) {
				return l, true
			}
		}
		return cosmos.Location{}, false
	}
	valid := strings.Join(quoted(acct.ReadRegions()), ", ")
	for _, name := range excluded {
		l, ok := known(name)
		if !ok {
			return plan, inputErrorf("excluded region %q is not a region of this account; its regions are %s", name, valid)
		}
		plan.excluded = appendUnique(plan.excluded, l.Name)
	}
	for _, name := range preferred {
		l, ok := known(name)
		if !ok {
			return plan, inputErrorf("preferred region %q is not a region of this account; its regions are %s", name, valid)
		}
		plan.preferred = appendUnique(plan.preferred, l.Name)
	}

	pool := acct.ReadableLocations
	if write {
		pool = acct.WritableLocations
	}
	order := pool
	if len(plan.preferred) > 0 {
		order = nil
		for _, name := range plan.preferred {
			for _, l := range pool {
				if l.Name == name {
					order = append(order, l)
				}
			}
		}
	}
	isExcluded := func(name string) bool { return contains(plan.excluded, name) }
	for _, l := range order {
		if !isExcluded(l.Name) {
			plan.targets = append(plan.targets, l)
			plan.effective = append(plan.effective, l.Name)
		}
	}
	writeRegion := acct.WritableLocations[0]
	switch {
	case write && !acct.EnableMultipleWriteLocations:
		plan.targets = []cosmos.Location{writeRegion}
		plan.effective = []string{writeRegion.Name}
		if len(plan.excluded) > 0 || len(plan.preferred) > 0 {
			plan.fallback = "single-write account: writes go to the write region " + writeRegion.Name + " whatever the preferred and excluded regions say"
		}
	case len(plan.targets) == 0 && len(order) > 0:
		plan.targets = []cosmos.Location{writeRegion}
		plan.fallback = "every region is excluded: falling back to the write region " + writeRegion.Name
	case len(plan.targets) == 0:
		plan.targets = []cosmos.Location{writeRegion}
		plan.fallback = "no preferred region takes this operation: falling back to the write region " + writeRegion.Name
	}

	for _, l := range acct.ReadableLocations {
		n := RegionNote{Region: l.Name}
		rank := indexOf(plan.effective, l.Name)
		switch {
		case rank >= 0:
			n.Effective = true
			n.Note = fmt.Sprintf("effective #%d", rank+1)
			if indexOf(plan.preferred, l.Name) >= 0 {
				n.Note += ", preferred"
			}
		case isExcluded(l.Name):
			n.Note = "excluded"
		case write && !acct.EnableMultipleWriteLocations:
			n.Note = "read region: writes go to " + writeRegion.Name
		case len(plan.preferred) > 0 && indexOf(plan.preferred, l.Name) < 0:
			n.Note = "not a preferred region"
		case write:
			n.Note = "not writable"
		}
		if l.Name == writeRegion.Name {
			n.Note += "; write region"
			n.Note = strings.TrimPrefix(n.Note, "; ")
		}
		plan.notes = append(plan.notes, n)
	}
	return plan, nil
}

func quoted(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fmt.Sprintf("%q", n)
	}
	return out
}

func appendUnique(list []string, s string) []string {
	if contains(list, s) {
		return list
	}
	return append(list, s)
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// planKey identifies a region plan: the same account topology, exclusions and kind of
// operation always give the same plan.
type planKey struct {
	acct     *cosmos.Account
	excluded string
	write    bool
}

// plan returns the region plan of an operation, computed once per account topology,
// exclusions and kind: an operator's commands and a probe's thousands of reads ask the
// same question again and again.
func (c *Client) plan(acct *cosmos.Account, excluded []string, write bool) (regionPlan, error) {
	key := planKey{acct: acct, excluded: strings.Join(excluded, "\x00"), write: write}
	c.mu.Lock()
	p, ok := c.plans[key]
	c.mu.Unlock()
	if ok {
		return p, nil
	}
	p, err := planRegions(acct, c.preferred, excluded, write)
	if err != nil {
		return p, err
	}
	c.mu.Lock()
	if len(c.plans) > 256 {
		c.plans = map[planKey]regionPlan{} // topologies refreshed, many exclusions: start over
	}
	c.plans[key] = p
	c.mu.Unlock()
	return p, nil
}
