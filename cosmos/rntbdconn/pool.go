package rntbdconn

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos/rntbd"
)

// Defaults; see the package documentation for the choice.
const (
	DefaultMaxConnsPerEndpoint = 4
	DefaultRequestsPerConn     = 30
	DefaultConnectTimeout      = 5 * time.Second
	DefaultIdleTimeout         = 10 * time.Minute
)

// Options configure a Pool. The zero value works: system roots, the defaults above.
type Options struct {
	// TLSConfig supplies RootCAs (and client certificates, if any); nil means the
	// system roots. ServerName is always the address host; versions below TLS 1.2 are
	// never offered.
	TLSConfig *tls.Config
	// ClientVersion (the x-ms-version string) and UserAgent are sent in every
	// connection's context negotiation.
	ClientVersion, UserAgent string
	// MaxConnsPerEndpoint bounds the connections to one host:port; RequestsPerConn is
	// how many requests a connection carries before another is opened (while the bound
	// allows).
	MaxConnsPerEndpoint int
	RequestsPerConn     int
	// IdleTimeout is used when the server's negotiation names none.
	IdleTimeout time.Duration
	// Dial opens the TCP connection; nil means a net.Dialer with 30 s keep-alives.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Now is the clock for idle times; nil means time.Now.
	Now func() time.Time
}

func (o *Options) dial(ctx context.Context, addr string) (net.Conn, error) {
	if o.Dial != nil {
		return o.Dial(ctx, "tcp", addr)
	}
	d := net.Dialer{KeepAlive: 30 * time.Second}
	return d.DialContext(ctx, "tcp", addr)
}

func (o *Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// Pool holds the connections to every endpoint a process talks to. Safe for concurrent
// use.
type Pool struct {
	opts Options

	mu        sync.Mutex
	endpoints map[string]*endpoint
	closed    bool
}

// NewPool returns a pool with opts, defaults filled in.
func NewPool(opts Options) *Pool {
	if opts.MaxConnsPerEndpoint <= 0 {
		opts.MaxConnsPerEndpoint = DefaultMaxConnsPerEndpoint
	}
	if opts.RequestsPerConn <= 0 {
		opts.RequestsPerConn = DefaultRequestsPerConn
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	return &Pool{opts: opts, endpoints: map[string]*endpoint{}}
}

// endpoint is one host:port and its connections.
type endpoint struct {
	addr string

	mu      sync.Mutex
	conns   []*conn
	dialing int
	dialed  chan struct{} // closed (and replaced) whenever a dial ends
}

var errPoolClosed = errors.New("rntbd: the connection pool is closed")

// Do sends req to the endpoint addr (host:port) and returns its answer. It sets the
// request's TransportRequestID. A new connection, if one is needed, must be up within
// connectTimeout (DefaultConnectTimeout when 0) and ctx. Errors are *Error (with Sent),
// *NegotiationError wrapped in one, or ctx's.
func (p *Pool) Do(ctx context.Context, addr string, req *rntbd.Request, connectTimeout time.Duration) (rntbd.Response, error) {
	ep, err := p.endpoint(addr)
	if err != nil {
		return rntbd.Response{}, &Error{Err: err}
	}
	c, err := p.acquire(ctx, ep, connectTimeout)
	if err != nil {
		return rntbd.Response{}, &Error{Err: err}
	}
	return c.roundTrip(ctx, req, &p.opts)
}

func (p *Pool) endpoint(addr string) (*endpoint, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errPoolClosed
	}
	ep := p.endpoints[addr]
	if ep == nil {
		ep = &endpoint{addr: addr, dialed: make(chan struct{})}
		p.endpoints[addr] = ep
	}
	return ep, nil
}

// acquire picks the connection a request goes to, dialing one when every open one is
// busy and the bound allows, and counts the request on it.
func (p *Pool) acquire(ctx context.Context, ep *endpoint, connectTimeout time.Duration) (*conn, error) {
	for {
		ep.mu.Lock()
		best, load := (*conn)(nil), 0
		for _, c := range ep.conns {
			c.mu.Lock()
			ok, n := c.dead == nil && !c.retired, c.inflight
			c.mu.Unlock()
			if ok && (best == nil || n < load) {
				best, load = c, n
			}
		}
		room := len(ep.conns)+ep.dialing < p.opts.MaxConnsPerEndpoint
		if best != nil && (load < p.opts.RequestsPerConn || !room) {
			best.mu.Lock()
			best.inflight++
			best.mu.Unlock()
			ep.mu.Unlock()
			return best, nil
		}
		if room {
			ep.dialing++
			ep.mu.Unlock()
			c, err := p.dial(ctx, ep, connectTimeout)
			ep.mu.Lock()
			ep.dialing--
			close(ep.dialed)
			ep.dialed = make(chan struct{})
			if err != nil {
				ep.mu.Unlock()
				return nil, err
			}
			p.mu.Lock()
			closed := p.closed
			p.mu.Unlock()
			if closed {
				ep.mu.Unlock()
				c.fail(errPoolClosed)
				return nil, errPoolClosed
			}
			c.mu.Lock()
			c.inflight++
			c.mu.Unlock()
			ep.conns = append(ep.conns, c)
			ep.mu.Unlock()
			return c, nil
		}
		// Every connection the bound allows is being dialed: wait for one.
		wait := ep.dialed
		ep.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (p *Pool) dial(ctx context.Context, ep *endpoint, connectTimeout time.Duration) (*conn, error) {
	if connectTimeout <= 0 {
		connectTimeout = DefaultConnectTimeout
	}
	dctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	return dialConn(dctx, ep, &p.opts)
}

// forget takes c out of the endpoint's list, so no new request picks it.
func (ep *endpoint) forget(c *conn) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	for i, x := range ep.conns {
		if x == c {
			ep.conns = append(ep.conns[:i], ep.conns[i+1:]...)
			return
		}
	}
}

// Conns is the number of open connections to addr: for tests and benchmarks.
func (p *Pool) Conns(addr string) int {
	p.mu.Lock()
	ep := p.endpoints[addr]
	p.mu.Unlock()
	if ep == nil {
		return 0
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	return len(ep.conns)
}

// CloseIdle closes every connection that carries no request.
func (p *Pool) CloseIdle() {
	for _, c := range p.all() {
		c.mu.Lock()
		idle := c.inflight == 0
		c.mu.Unlock()
		if idle {
			c.fail(errConnClosed)
		}
	}
}

// Close closes every connection, failing the requests on them, and refuses new ones.
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	for _, c := range p.all() {
		c.fail(errConnClosed)
	}
}

func (p *Pool) all() []*conn {
	p.mu.Lock()
	eps := make([]*endpoint, 0, len(p.endpoints))
	for _, ep := range p.endpoints {
		eps = append(eps, ep)
	}
	p.mu.Unlock()
	var out []*conn
	for _, ep := range eps {
		ep.mu.Lock()
		out = append(out, ep.conns...)
		ep.mu.Unlock()
	}
	return out
}
