package engine

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/cosmosctl/cosmosctl/addrcache"
	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/health"
	"github.com/cosmosctl/cosmosctl/retries"
)

// Transport sends one request to one endpoint; *cosmos.Transport implements it, and
// tests and benchmarks use in-memory ones.
type Transport interface {
	Do(ctx context.Context, endpoint string, req *cosmos.Request) (*cosmos.Response, error)
}

// Options configure a Client.
type Options struct {
	// Endpoint is the account's global endpoint.
	Endpoint  string
	Transport Transport
	// Clock defaults to the wall clock.
	Clock clock.Clock
	// PreferredRegions order the regions reads go to; empty means the account's order.
	PreferredRegions []string
	// Retry is the retry policy; the zero value means retries.DefaultPolicy().
	Retry *retries.Policy
	// Direct routes operations to replicas (reads to any, writes to the primary)
	// through the address cache instead of the gateway.
	Direct bool
	// NoReplicaHealth turns the address cache's health ordering off: for comparison
	// only, to show what health awareness buys.
	NoReplicaHealth bool
	// ThinClient sends point operations through the account's Gateway 2.0 proxies
	// (the account read asks for them); everything else, and every region that
	// advertises no proxy, goes through the gateway.
	ThinClient bool
	// AttemptTimeouts bound each attempt; nil means DefaultAttemptTimeouts().
	AttemptTimeouts *AttemptTimeouts
	// KnownAccount is the account topology an earlier process saved, or nil. When
	// KnownAccountFresh is set it is used without asking the service; otherwise it only
	// names the regional endpoints that the account lookup falls back to.
	KnownAccount      *cosmos.Account
	KnownAccountFresh bool
	// KnownAccountAt is when KnownAccount was read from the service, for a command that
	// must say how old a topology it could not refresh is (regions).
	KnownAccountAt time.Time
	// LookupRegions are regions whose own endpoints the account lookup asks, in this
	// order, when the global endpoint does not answer (the region a command is pinned
	// to, say); the preferred regions follow them.
	LookupRegions []string
	// OnAccount is called with every account topology read from the service (a command
	// saves it for the next process).
	OnAccount func(*cosmos.Account)
	// Health is the region health store the client orders regions by and feeds with
	// every attempt's outcome; nil turns region health off. Clients derived from this
	// one share it.
	Health *health.Store
}

// Client runs operations against one account. It is safe for concurrent use; the
// account topology and container definitions are cached for its lifetime.
type Client struct {
	endpoint  string
	transport Transport
	clock     clock.Clock
	preferred []string
	policy    retries.Policy
	timeouts  AttemptTimeouts
	health    *health.Store
	topology  *topology
	opts      Options

	mu         sync.Mutex
	containers map[string]cosmos.PartitionKeyDefinition
	routing    map[string]*containerInfo
	// ranges is the routing cache of partition key ranges per container ("db/coll"),
	// shared by direct routing and query pipelines (PartitionKeyRanges).
	ranges map[string][]cosmos.PartitionKeyRange
	plans  map[planKey]regionPlan
	addr   *addrcache.Cache

	// beside are the region health probes sent beside operations; ownsBeside says this
	// client made them (derived clients share their parent's) and settles them on Close.
	beside     *besideProbes
	ownsBeside bool
}

// New returns a Client.
func New(opts Options) (*Client, error) {
	if opts.Endpoint == "" {
		return nil, errors.New("engine: no endpoint")
	}
	if opts.Transport == nil {
		return nil, errors.New("engine: no transport")
	}
	c := &Client{
		endpoint:   strings.TrimRight(opts.Endpoint, "/"),
		transport:  opts.Transport,
		clock:      opts.Clock,
		preferred:  opts.PreferredRegions,
		policy:     retries.DefaultPolicy(),
		containers: map[string]cosmos.PartitionKeyDefinition{},
		routing:    map[string]*containerInfo{},
		ranges:     map[string][]cosmos.PartitionKeyRange{},
		plans:      map[planKey]regionPlan{},
		beside:     newBesideProbes(),
		ownsBeside: true,
	}
	if c.clock == nil {
		c.clock = clock.Real{}
	}
	if opts.Retry != nil {
		c.policy = *opts.Retry
	}
	c.timeouts = DefaultAttemptTimeouts()
	if opts.AttemptTimeouts != nil {
		if err := opts.AttemptTimeouts.Validate(); err != nil {
			return nil, err
		}
		c.timeouts = *opts.AttemptTimeouts
	}
	c.opts = opts
	c.health = opts.Health
	c.topology = &topology{endpoint: c.endpoint, preferred: append(append([]string(nil), opts.LookupRegions...), opts.PreferredRegions...),
		onFetch: opts.OnAccount, known: opts.KnownAccount, knownAt: opts.KnownAccountAt, thinClient: opts.ThinClient,
		send: func(ctx context.Context, i int, endpoint string, req *cosmos.Request) sent {
			return c.send(ctx, ClassAccount, i, endpoint, req)
		}}
	// A saved topology read without asking for the Gateway 2.0 proxies does not list
	// them: in gateway2 mode the account is read again.
	unasked := opts.ThinClient && opts.KnownAccount != nil && len(opts.KnownAccount.ThinClientReadableLocations)+len(opts.KnownAccount.ThinClientWritableLocations) == 0
	if opts.KnownAccount != nil && opts.KnownAccountFresh && !unasked {
		c.topology.account, c.topology.accountSaved = opts.KnownAccount, true
	}
	if opts.Direct {
		c.addr = addrcache.New(gatewayResolver{c}, c.clock, addrcache.Options{DisableHealth: opts.NoReplicaHealth})
	}
	return c, nil
}

// Close stops the address cache's background refreshes, if any, and settles the region
// health probes still in flight beside operations: it waits a short grace for their
// answers (besideGrace), then cuts them (each then counts as a failed probe).
func (c *Client) Close() {
	if c.addr != nil {
		c.addr.Close()
	}
	if c.ownsBeside {
		c.beside.settle(c.clock)
	}
}

// share makes d use c's account topology and region health probes.
func (c *Client) share(d *Client) {
	d.topology = c.topology
	d.beside, d.ownsBeside = c.beside, false
}

// Health is the client's region health store, or nil.
func (c *Client) Health() *health.Store { return c.health }

// AddressCache is the client's replica address cache (direct mode), or nil.
func (c *Client) AddressCache() *addrcache.Cache { return c.addr }

// Account returns the account topology, reading it on first use.
func (c *Client) Account(ctx context.Context) (*cosmos.Account, error) {
	return c.topology.get(ctx)
}

// InputError is an operation the engine refuses before sending anything: an unknown
// region, a document without an id, a missing partition key. Commands report it as a
// usage error.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

func inputErrorf(format string, args ...any) error {
	return &InputError{Msg: sprintf(format, args...)}
}

// Endpoint is the account's global endpoint the client was made for (no trailing
// slash): what state that belongs to one account, such as a change feed position, is
// bound to.
func (c *Client) Endpoint() string { return c.endpoint }
