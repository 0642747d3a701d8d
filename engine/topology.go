package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

var sprintf = fmt.Sprintf

// topology caches the account's regions (GET /) for the life of the process. It is
// re-read when a 403/3 says the write region moved.
//
// A fresh process may start from a topology an earlier one saved (known): used as it is
// when fresh, it saves the lookup; when old, it still names the regional endpoints to ask
// when the global endpoint does not answer. The global endpoint of a real account
// resolves to the write region, so when that region is down the account lookup fails
// there first, and only the regional endpoints can answer.
type topology struct {
	endpoint  string
	send      func(ctx context.Context, i int, endpoint string, req *cosmos.Request) sent
	preferred []string
	// onFetch is told of every account read from the service (to save it).
	onFetch func(*cosmos.Account)

	mu      sync.Mutex
	account *cosmos.Account
	known   *cosmos.Account
	// lookups records, for diagnostics, how the account was last looked up.
	lookups []string
}

func (t *topology) get(ctx context.Context) (*cosmos.Account, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.account != nil {
		return t.account, nil
	}
	return t.fetchLocked(ctx)
}

// refresh re-reads the account.
func (t *topology) refresh(ctx context.Context) (*cosmos.Account, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.fetchLocked(ctx)
}

// lookupEndpoints are the endpoints asked for the account, in order: the global
// endpoint, then the preferred regions' own endpoints, then every other regional
// endpoint known (from this process's topology or the one saved by an earlier process),
// as the SDKs fall back when the global endpoint is down. For a region known by name
// only, a real account's regional endpoint is derived from the global one
// (https://acct.documents.azure.com → https://acct-westus.documents.azure.com).
func (t *topology) lookupEndpoints() []string {
	eps := []string{t.endpoint}
	add := func(ep string) {
		ep = strings.TrimRight(ep, "/")
		if ep != "" && !contains(eps, ep) {
			eps = append(eps, ep)
		}
	}
	var locs []cosmos.Location
	for _, a := range []*cosmos.Account{t.account, t.known} {
		if a != nil {
			locs = append(append(locs, a.ReadableLocations...), a.WritableLocations...)
		}
	}
	for _, name := range t.preferred {
		found := false
		for _, l := range locs {
			if cosmos.SameRegion(l.Name, name) {
				add(l.Endpoint)
				found = true
				break
			}
		}
		if !found {
			add(cosmos.RegionalEndpoint(t.endpoint, name))
		}
	}
	for _, l := range locs {
		add(l.Endpoint)
	}
	return eps
}

func (t *topology) fetchLocked(ctx context.Context) (*cosmos.Account, error) {
	var lastErr error
	var tried []string
	for _, ep := range t.lookupEndpoints() {
		at := t.send(ctx, 0, ep, &cosmos.Request{Method: http.MethodGet, Path: "/"})
		if at.err != nil {
			lastErr = at.err
			tried = append(tried, fmt.Sprintf("%s: %s", ep, lookupProblem(at)))
			if ctx.Err() != nil {
				break
			}
			continue
		}
		var acct cosmos.Account
		if err := json.Unmarshal(at.resp.Body, &acct); err != nil {
			lastErr = fmt.Errorf("the account at %s answered GET / with something that is not a Cosmos DB account: %v", ep, err)
			tried = append(tried, fmt.Sprintf("%s: not a Cosmos DB account", ep))
			continue
		}
		if len(acct.ReadableLocations) == 0 || len(acct.WritableLocations) == 0 {
			lastErr = fmt.Errorf("the account at %s lists no regions", ep)
			tried = append(tried, fmt.Sprintf("%s: lists no regions", ep))
			continue
		}
		t.account = &acct
		t.lookups = tried
		if len(tried) > 0 {
			t.lookups = append(t.lookups, "account read from "+ep)
		}
		if t.onFetch != nil {
			t.onFetch(&acct)
		}
		return t.account, nil
	}
	if ctx.Err() != nil || lastErr == nil {
		if lastErr == nil {
			lastErr = ctx.Err()
		}
		return nil, lastErr
	}
	if len(tried) > 1 {
		return nil, &AccountLookupError{Tried: tried, Last: lastErr}
	}
	return nil, lastErr
}

// takeNotes says how the account was found when the global endpoint did not answer, once:
// the first operation after the lookup reports it in its diagnostics.
func (t *topology) takeNotes() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := t.lookups
	t.lookups = nil
	return n
}

func lookupProblem(at sent) string {
	switch {
	case at.expired:
		return fmt.Sprintf("no answer within %s", at.timeout)
	case at.resp != nil:
		return fmt.Sprintf("answered %d", at.resp.StatusCode)
	}
	var ne *cosmos.NetworkError
	if errors.As(at.err, &ne) {
		return ne.Err.Error()
	}
	return at.err.Error()
}

// AccountLookupError is an account that no endpoint answered GET / for: the global
// endpoint and every regional endpoint known.
type AccountLookupError struct {
	Tried []string
	Last  error
}

func (e *AccountLookupError) Error() string {
	return "no endpoint of the account answered GET / (" + strings.Join(e.Tried, "; ") + "); with the global endpoint down, name a region with --region or --preferred-regions so that its own endpoint is asked"
}

func (e *AccountLookupError) Unwrap() error { return e.Last }

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
