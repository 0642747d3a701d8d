package rntbdconn

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos/rntbd"
	"github.com/cosmosctl/cosmosctl/cosmos/rntbdconn/rntbdtest"
	"github.com/google/uuid"
)

// read is a minimal replica read frame; the pool adds the TransportRequestID.
func read(doc string) *rntbd.Request {
	return &rntbd.Request{ResourceType: 3, OperationType: 3, ActivityID: uuid.New(), Tokens: []rntbd.Token{
		rntbd.BoolToken(rntbd.ReqPayloadPresent, false),
		rntbd.StringToken(rntbd.ReqDocumentName, rntbd.TypeString, doc),
	}}
}

func docOf(req rntbd.Request) string {
	t, _ := req.Token(rntbd.ReqDocumentName)
	s, _ := t.Str()
	return s
}

// echo answers every request with its document name as the body.
func echo(req rntbd.Request) rntbdtest.Action {
	return rntbdtest.Action{Resp: rntbdtest.OK(docOf(req))}
}

func TestRoundTripNegotiatesOverTLS(t *testing.T) {
	s := newServer(t, echo)
	p := NewPool(options(s))
	defer p.Close()

	resp, err := p.Do(context.Background(), s.HostAddr(), read("a"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 200 || string(resp.Payload) != "a" {
		t.Fatalf("answer %d %q, want 200 \"a\"", resp.Status, resp.Payload)
	}
	if got := <-s.ServerNames; got != rntbdtest.Host {
		t.Errorf("TLS server name %q, want the address host %q", got, rntbdtest.Host)
	}
	cr := <-s.Contexts
	for id, want := range map[uint16]string{rntbd.CtxReqClientVersion: "2020-11-05", rntbd.CtxReqUserAgent: "cosmosctl-test"} {
		tok, _ := rntbd.Find(cr.Tokens, id)
		if got, _ := tok.Str(); got != want {
			t.Errorf("context token 0x%04X = %q, want %q", id, got, want)
		}
	}
	// A second request reuses the connection.
	if _, err := p.Do(context.Background(), s.HostAddr(), read("b"), 0); err != nil {
		t.Fatal(err)
	}
	if n := s.Accepted(); n != 1 {
		t.Errorf("%d connections accepted, want 1", n)
	}
}

func TestFailedNegotiationQuotesTheServersError(t *testing.T) {
	s := newServer(t, echo)
	s.Context = rntbd.ContextResponse{Status: 400, ErrorBody: []byte(`{"code":"BadRequest","message":"Unsupported protocol version"}`)}
	p := NewPool(options(s))
	defer p.Close()

	_, err := p.Do(context.Background(), s.HostAddr(), read("a"), 0)
	var ne *NegotiationError
	if !errors.As(err, &ne) || ne.Status != 400 {
		t.Fatalf("error %v, want a NegotiationError with status 400", err)
	}
	if !strings.Contains(err.Error(), `"message":"Unsupported protocol version"`) {
		t.Errorf("error %q does not quote the server's JSON error", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Sent {
		t.Errorf("error %v: want an unsent *Error", err)
	}
}

func TestUntrustedCertificateFails(t *testing.T) {
	s := newServer(t, echo)
	opts := options(s)
	opts.TLSConfig = nil // system roots do not trust the test certificate
	p := NewPool(opts)
	defer p.Close()
	_, err := p.Do(context.Background(), s.HostAddr(), read("a"), 0)
	if err == nil || !strings.Contains(err.Error(), "TLS handshake") || !strings.Contains(err.Error(), "SSL_CERT_FILE") {
		t.Fatalf("error %v, want a TLS handshake failure saying how to trust the certificate", err)
	}
}

func TestAnswersOutOfOrderReachTheirRequests(t *testing.T) {
	release := make(chan struct{})
	s := newServer(t, func(req rntbd.Request) rntbdtest.Action {
		if docOf(req) == "slow" {
			return rntbdtest.Action{Resp: rntbdtest.OK("slow"), Wait: release}
		}
		return rntbdtest.Action{Resp: rntbdtest.OK(docOf(req))}
	})
	p := NewPool(options(s))
	defer p.Close()

	slow := make(chan rntbd.Response, 1)
	go func() {
		r, err := p.Do(context.Background(), s.HostAddr(), read("slow"), 0)
		if err != nil {
			t.Error(err)
		}
		slow <- r
	}()
	// "fast" is sent after "slow" on the same connection and answered first.
	waitFor(t, func() bool { return p.inflight(s.HostAddr()) == 1 })
	r, err := p.Do(context.Background(), s.HostAddr(), read("fast"), 0)
	if err != nil || string(r.Payload) != "fast" {
		t.Fatalf("fast: %q %v", r.Payload, err)
	}
	close(release)
	if r := <-slow; string(r.Payload) != "slow" {
		t.Errorf("slow got %q", r.Payload)
	}
	if n := s.Accepted(); n != 1 {
		t.Errorf("%d connections, want both requests multiplexed on 1", n)
	}
}

func TestCancelledRequestsLateAnswerIsDroppedAndTheConnectionStays(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	s := newServer(t, func(req rntbd.Request) rntbdtest.Action {
		if docOf(req) == "late" {
			arrived <- struct{}{}
			return rntbdtest.Action{Resp: rntbdtest.OK("late"), Wait: release}
		}
		return rntbdtest.Action{Resp: rntbdtest.OK(docOf(req))}
	})
	p := NewPool(options(s))
	defer p.Close()

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := p.Do(ctx, s.HostAddr(), read("late"), 0)
		done <- err
	}()
	<-arrived
	cancel()
	err := <-done
	var e *Error
	if !errors.As(err, &e) || !e.Sent || !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want a sent *Error wrapping context.Canceled", err)
	}
	close(release) // the late answer arrives and is dropped
	r, err := p.Do(context.Background(), s.HostAddr(), read("next"), 0)
	if err != nil || string(r.Payload) != "next" {
		t.Fatalf("next: %q %v, want its own answer", r.Payload, err)
	}
	if n := s.Accepted(); n != 1 {
		t.Errorf("%d connections, want the first one kept", n)
	}
}

func TestConnectionLostAfterTheRequestWasWrittenSaysSent(t *testing.T) {
	s := newServer(t, func(req rntbd.Request) rntbdtest.Action { return rntbdtest.Action{Close: true} })
	p := NewPool(options(s))
	defer p.Close()
	_, err := p.Do(context.Background(), s.HostAddr(), read("a"), 0)
	var e *Error
	if !errors.As(err, &e) || !e.Sent {
		t.Fatalf("error %v, want a sent *Error", err)
	}
	if n := p.Conns(s.HostAddr()); n != 0 {
		t.Errorf("%d connections kept after the connection failed", n)
	}
}

func TestRefusedConnectionSaysNotSent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p := NewPool(Options{})
	defer p.Close()
	_, err = p.Do(context.Background(), addr, read("a"), 0)
	var e *Error
	if !errors.As(err, &e) || e.Sent {
		t.Fatalf("error %v, want an unsent *Error", err)
	}
}

func TestConnectTimeoutBoundsTheDial(t *testing.T) {
	opts := Options{Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		<-ctx.Done() // a host that never answers the SYN
		return nil, ctx.Err()
	}}
	p := NewPool(opts)
	defer p.Close()
	start := time.Now()
	_, err := p.Do(context.Background(), "replica.test:1", read("a"), 20*time.Millisecond)
	var e *Error
	if !errors.As(err, &e) || e.Sent || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want an unsent *Error wrapping DeadlineExceeded", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("took %s: the connect timeout was not applied", el)
	}
}

func TestDisableRntbdChannelRetiresTheConnection(t *testing.T) {
	var n atomic.Int32
	s := newServer(t, func(req rntbd.Request) rntbdtest.Action {
		r := rntbdtest.OK(docOf(req))
		if n.Add(1) == 1 {
			r.Tokens = append(r.Tokens, rntbd.BoolToken(rntbd.RespDisableRntbdChannel, true))
		}
		return rntbdtest.Action{Resp: r}
	})
	p := NewPool(options(s))
	defer p.Close()
	if _, err := p.Do(context.Background(), s.HostAddr(), read("a"), 0); err != nil {
		t.Fatal(err)
	}
	<-s.ClientClosed // the retired connection is closed once its request is answered
	if _, err := p.Do(context.Background(), s.HostAddr(), read("b"), 0); err != nil {
		t.Fatal(err)
	}
	if got := s.Accepted(); got != 2 {
		t.Errorf("%d connections, want a new one after DisableRntbdChannel", got)
	}
}

func TestIdleConnectionClosesAfterTheNegotiatedTimeout(t *testing.T) {
	s := newServer(t, echo)
	s.Context.Tokens = []rntbd.Token{
		rntbd.StringToken(rntbd.CtxRespServerAgent, rntbd.TypeSmallString, "fake"),
		rntbd.StringToken(rntbd.CtxRespServerVersion, rntbd.TypeSmallString, "1.0"),
		rntbd.ULongToken(rntbd.CtxRespIdleTimeoutInSeconds, 1),
	}
	p := NewPool(options(s))
	defer p.Close()
	if _, err := p.Do(context.Background(), s.HostAddr(), read("a"), 0); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.ClientClosed:
	case <-time.After(30 * time.Second):
		t.Fatal("the idle connection was not closed")
	}
	waitFor(t, func() bool { return p.Conns(s.HostAddr()) == 0 })
}

func TestCloseIdleClosesOnlyIdleConnections(t *testing.T) {
	s := newServer(t, echo)
	p := NewPool(options(s))
	defer p.Close()
	if _, err := p.Do(context.Background(), s.HostAddr(), read("a"), 0); err != nil {
		t.Fatal(err)
	}
	p.CloseIdle()
	<-s.ClientClosed
	if n := p.Conns(s.HostAddr()); n != 0 {
		t.Errorf("%d connections after CloseIdle", n)
	}
}

// 64 requests in flight at once to one endpoint stay on at most MaxConnsPerEndpoint
// connections: the server answers none until all 64 have arrived, so every one of them
// is concurrent.
func TestConnectionsPerEndpointStayBounded(t *testing.T) {
	const concurrent = 64
	all := make(chan struct{})
	var arrived atomic.Int32
	s := newServer(t, func(req rntbd.Request) rntbdtest.Action {
		if arrived.Add(1) == concurrent {
			close(all)
		}
		return rntbdtest.Action{Resp: rntbdtest.OK(docOf(req)), Wait: all}
	})
	p := NewPool(options(s))
	defer p.Close()
	var wg sync.WaitGroup
	for i := range concurrent {
		wg.Add(1)
		go func() {
			defer wg.Done()
			doc := string(rune('A' + i%26))
			r, err := p.Do(context.Background(), s.HostAddr(), read(doc), 0)
			if err != nil || string(r.Payload) != doc {
				t.Errorf("request %d: %q %v", i, r.Payload, err)
			}
		}()
	}
	wg.Wait()
	if got := s.Accepted(); got > DefaultMaxConnsPerEndpoint || got < 1 {
		t.Errorf("%d connections for %d concurrent requests, want 1..%d", got, concurrent, DefaultMaxConnsPerEndpoint)
	}
	if got := p.Conns(s.HostAddr()); got > DefaultMaxConnsPerEndpoint {
		t.Errorf("pool holds %d connections, want at most %d", got, DefaultMaxConnsPerEndpoint)
	}
}

// inflight sums the requests on addr's connections.
func (p *Pool) inflight(addr string) int {
	p.mu.Lock()
	ep := p.endpoints[addr]
	p.mu.Unlock()
	if ep == nil {
		return 0
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	n := 0
	for _, c := range ep.conns {
		c.mu.Lock()
		n += len(c.calls)
		c.mu.Unlock()
	}
	return n
}

// waitFor polls cond until it holds, failing after a generous bound.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(time.Millisecond)
	}
}

// newServer starts a fake server for the test.
func newServer(t *testing.T, handle func(rntbd.Request) rntbdtest.Action) *rntbdtest.Server {
	return rntbdtest.NewServer(t, handle)
}

// options are pool options that reach s under rntbdtest.Host.
func options(s *rntbdtest.Server) Options {
	return Options{TLSConfig: s.ClientTLS(), ClientVersion: "2020-11-05", UserAgent: "cosmosctl-test", Dial: s.Dial}
}

// A second connection opens only once the first carries RequestsPerConn requests, and
// never more than MaxConnsPerEndpoint: with one request per connection and two
// connections, three requests in flight share two connections.
func TestNewConnectionsOpenOnlyPastTheRequestsPerConnection(t *testing.T) {
	const inFlight = 3
	all := make(chan struct{})
	var arrived atomic.Int32
	s := newServer(t, func(req rntbd.Request) rntbdtest.Action {
		if arrived.Add(1) == inFlight {
			close(all)
		}
		return rntbdtest.Action{Resp: rntbdtest.OK(docOf(req)), Wait: all}
	})
	opts := options(s)
	opts.MaxConnsPerEndpoint, opts.RequestsPerConn = 2, 1
	p := NewPool(opts)
	defer p.Close()
	var wg sync.WaitGroup
	for i := range inFlight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := p.Do(context.Background(), s.HostAddr(), read(string(rune('a'+i))), 0); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got := s.Accepted(); got != 2 {
		t.Errorf("%d connections, want 2", got)
	}
	// Sequential requests after that reuse what is open.
	for range 5 {
		if _, err := p.Do(context.Background(), s.HostAddr(), read("z"), 0); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.Accepted(); got != 2 {
		t.Errorf("%d connections after sequential requests, want still 2", got)
	}
}
