package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

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
	// thinClient asks the account read for the Gateway 2.0 proxies.
	thinClient bool

	mu      sync.Mutex
	account *cosmos.Account
	known   *cosmos.Account
	// knownAt is when known was read from the service (by an earlier process);
	// accountSaved says account is known, used as it was saved.
	knownAt      time.Time
	accountSaved bool
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
		acct, problem, err := t.ask(ctx, ep)
		if err != nil {
			lastErr = err
			tried = append(tried, ep+": "+problem)
			if ctx.Err() != nil {
				break
			}
			continue
		}
		t.setLocked(acct)
		t.lookups = tried
		if len(tried) > 0 {
			t.lookups = append(t.lookups, "account read from "+ep)
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

// ask sends GET / to one endpoint and reads the account from its answer; problem says
// in a few words what went wrong, for an AccountLookupError.
func (t *topology) ask(ctx context.Context, ep string) (acct *cosmos.Account, problem string, err error) {
	req := &cosmos.Request{Method: http.MethodGet, Path: "/"}
	if t.thinClient {
		// The account lists its Gateway 2.0 proxies only when asked (.NET
		// GatewayAccountReader.ExecuteAccountReadAsync sends bool.ToString(), "True").
		req.Header = http.Header{http.CanonicalHeaderKey(cosmos.HeaderUseThinClient): {"True"}}
	}
	at := t.send(ctx, 0, ep, req)
	if at.err != nil {
		return nil, lookupProblem(at), at.err
	}
	var a cosmos.Account
	if err := json.Unmarshal(at.resp.Body, &a); err != nil {
		return nil, "not a Cosmos DB account", fmt.Errorf("the account at %s answered GET / with something that is not a Cosmos DB account: %v", ep, err)
	}
	if len(a.ReadableLocations) == 0 || len(a.WritableLocations) == 0 {
		return nil, "lists no regions", fmt.Errorf("the account at %s lists no regions", ep)
	}
	return &a, "", nil
}

// setLocked makes acct, just read from the service, the topology, and has it saved.
func (t *topology) setLocked(acct *cosmos.Account) {
	t.account, t.accountSaved = acct, false
	if t.onFetch != nil {
		t.onFetch(acct)
	}
}

// Freshness says where a topology came from.
type Freshness struct {
	// Saved: the account could not be asked, and the topology is the one an earlier
	// command saved, read from the service at FetchedAt; Err says why it could not be
	// asked. Otherwise the topology was read from the service just now, from Endpoint.
	Saved     bool
	FetchedAt time.Time
	Endpoint  string
	Err       error
}

// askAll asks every endpoint of the account for it at once — the global endpoint and
// every regional endpoint known — and takes the first answer: a command that shows the
// topology (regions) must show it as it is now, after a failover too, and a dead global
// endpoint (a real account's resolves to its write region) must not hold it up. The
// answer replaces the cached topology and is saved. When no endpoint answers, the
// topology this process already has, or the one an earlier process saved, is used as it
// is and reported as Saved; with neither, the lookup's error is returned.
func (t *topology) askAll(ctx context.Context, now func() time.Time) (*cosmos.Account, Freshness, error) {
	t.mu.Lock()
	eps := t.lookupEndpoints()
	t.mu.Unlock()
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	type answer struct {
		acct    *cosmos.Account
		ep      string
		problem string
		err     error
	}
	answers := make(chan answer, len(eps))
	for _, ep := range eps {
		go func() {
			acct, problem, err := t.ask(actx, ep)
			answers <- answer{acct, ep, problem, err}
		}()
	}
	var tried []string
	var last error
	for range eps {
		a := <-answers
		if a.err == nil {
			cancel()
			t.mu.Lock()
			t.setLocked(a.acct)
			t.mu.Unlock()
			return a.acct, Freshness{FetchedAt: now(), Endpoint: a.ep}, nil
		}
		tried, last = append(tried, a.ep+": "+a.problem), a.err
	}
	var err error = &AccountLookupError{Tried: tried, Last: last}
	if len(tried) == 1 {
		err = last
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.account != nil && !t.accountSaved:
		// Read by this process earlier: as good as saved, and newer.
		return t.account, Freshness{Saved: true, FetchedAt: now(), Err: err}, nil
	case t.account != nil:
		return t.account, Freshness{Saved: true, FetchedAt: t.knownAt, Err: err}, nil
	case t.known != nil:
		// What the rest of this process uses too: asking again would fail the same way.
		t.account, t.accountSaved = t.known, true
		return t.account, Freshness{Saved: true, FetchedAt: t.knownAt, Err: err}, nil
	}
	return nil, Freshness{}, err
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
