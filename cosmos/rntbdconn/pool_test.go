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
func echo(req rntbd.Request) action { return action{resp: ok(docOf(req))} }

func TestRoundTripNegotiatesOverTLS(t *testing.T) {
	s := newFakeServer(t, echo)
	p := NewPool(s.options())
	defer p.Close()

	resp, err := p.Do(context.Background(), s.addr(), read("a"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 200 || string(resp.Payload) != "a" {
		t.Fatalf("answer %d %q, want 200 \"a\"", resp.Status, resp.Payload)
	}
	if got := <-s.serverName; got != testHost {
		t.Errorf("TLS server name %q, want the address host %q", got, testHost)
	}
	cr := <-s.contexts
	for id, want := range map[uint16]string{rntbd.CtxReqClientVersion: "2020-11-05", rntbd.CtxReqUserAgent: "cosmosctl-test"} {
		tok, _ := rntbd.Find(cr.Tokens, id)
		if got, _ := tok.Str(); got != want {
			t.Errorf("context token 0x%04X = %q, want %q", id, got, want)
		}
	}
	// A second request reuses the connection.
	if _, err := p.Do(context.Background(), s.addr(), read("b"), 0); err != nil {
		t.Fatal(err)
	}
	if n := s.accepted.Load(); n != 1 {
		t.Errorf("%d connections accepted, want 1", n)
	}
}

func TestFailedNegotiationQuotesTheServersError(t *testing.T) {
	s := newFakeServer(t, echo)
	s.ctx = rntbd.ContextResponse{Status: 400, ErrorBody: []byte(`{"code":"BadRequest","message":"Unsupported protocol version"}`)}
	p := NewPool(s.options())
	defer p.Close()

	_, err := p.Do(context.Background(), s.addr(), read("a"), 0)
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
	s := newFakeServer(t, echo)
	opts := s.options()
	opts.TLSConfig = nil // system roots do not trust the test certificate
	p := NewPool(opts)
	defer p.Close()
	_, err := p.Do(context.Background(), s.addr(), read("a"), 0)
	if err == nil || !strings.Contains(err.Error(), "TLS handshake") {
		t.Fatalf("error %v, want a TLS handshake failure", err)
	}
}

func TestAnswersOutOfOrderReachTheirRequests(t *testing.T) {
	release := make(chan struct{})
	s := newFakeServer(t, func(req rntbd.Request) action {
		if docOf(req) == "slow" {
			return action{resp: ok("slow"), wait: release}
		}
		return action{resp: ok(docOf(req))}
	})
	p := NewPool(s.options())
	defer p.Close()

	slow := make(chan rntbd.Response, 1)
	go func() {
		r, err := p.Do(context.Background(), s.addr(), read("slow"), 0)
		if err != nil {
			t.Error(err)
		}
		slow <- r
	}()
	// "fast" is sent after "slow" on the same connection and answered first.
	waitFor(t, func() bool { return p.inflight(s.addr()) == 1 })
	r, err := p.Do(context.Background(), s.addr(), read("fast"), 0)
	if err != nil || string(r.Payload) != "fast" {
		t.Fatalf("fast: %q %v", r.Payload, err)
	}
	close(release)
	if r := <-slow; string(r.Payload) != "slow" {
		t.Errorf("slow got %q", r.Payload)
	}
	if n := s.accepted.Load(); n != 1 {
		t.Errorf("%d connections, want both requests multiplexed on 1", n)
	}
}

func TestCancelledRequestsLateAnswerIsDroppedAndTheConnectionStays(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	s := newFakeServer(t, func(req rntbd.Request) action {
		if docOf(req) == "late" {
			arrived <- struct{}{}
			return action{resp: ok("late"), wait: release}
		}
		return action{resp: ok(docOf(req))}
	})
	p := NewPool(s.options())
	defer p.Close()

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := p.Do(ctx, s.addr(), read("late"), 0)
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
	r, err := p.Do(context.Background(), s.addr(), read("next"), 0)
	if err != nil || string(r.Payload) != "next" {
		t.Fatalf("next: %q %v, want its own answer", r.Payload, err)
	}
	if n := s.accepted.Load(); n != 1 {
		t.Errorf("%d connections, want the first one kept", n)
	}
}

func TestConnectionLostAfterTheRequestWasWrittenSaysSent(t *testing.T) {
	s := newFakeServer(t, func(req rntbd.Request) action { return action{close: true} })
	p := NewPool(s.options())
	defer p.Close()
	_, err := p.Do(context.Background(), s.addr(), read("a"), 0)
	var e *Error
	if !errors.As(err, &e) || !e.Sent {
		t.Fatalf("error %v, want a sent *Error", err)
	}
	if n := p.Conns(s.addr()); n != 0 {
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
	s := newFakeServer(t, func(req rntbd.Request) action {
		r := ok(docOf(req))
		if n.Add(1) == 1 {
			r.Tokens = append(r.Tokens, rntbd.BoolToken(rntbd.RespDisableRntbdChannel, true))
		}
		return action{resp: r}
	})
	p := NewPool(s.options())
	defer p.Close()
	if _, err := p.Do(context.Background(), s.addr(), read("a"), 0); err != nil {
		t.Fatal(err)
	}
	<-s.closedConn // the retired connection is closed once its request is answered
	if _, err := p.Do(context.Background(), s.addr(), read("b"), 0); err != nil {
		t.Fatal(err)
	}
	if got := s.accepted.Load(); got != 2 {
		t.Errorf("%d connections, want a new one after DisableRntbdChannel", got)
	}
}

func TestIdleConnectionClosesAfterTheNegotiatedTimeout(t *testing.T) {
	s := newFakeServer(t, echo)
	s.ctx.Tokens = []rntbd.Token{
		rntbd.StringToken(rntbd.CtxRespServerAgent, rntbd.TypeSmallString, "fake"),
		rntbd.StringToken(rntbd.CtxRespServerVersion, rntbd.TypeSmallString, "1.0"),
		rntbd.ULongToken(rntbd.CtxRespIdleTimeoutInSeconds, 1),
	}
	p := NewPool(s.options())
	defer p.Close()
	if _, err := p.Do(context.Background(), s.addr(), read("a"), 0); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.closedConn:
	case <-time.After(30 * time.Second):
		t.Fatal("the idle connection was not closed")
	}
	waitFor(t, func() bool { return p.Conns(s.addr()) == 0 })
}

func TestCloseIdleClosesOnlyIdleConnections(t *testing.T) {
	s := newFakeServer(t, echo)
	p := NewPool(s.options())
	defer p.Close()
	if _, err := p.Do(context.Background(), s.addr(), read("a"), 0); err != nil {
		t.Fatal(err)
	}
	p.CloseIdle()
	<-s.closedConn
	if n := p.Conns(s.addr()); n != 0 {
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
	s := newFakeServer(t, func(req rntbd.Request) action {
		if arrived.Add(1) == concurrent {
			close(all)
		}
		return action{resp: ok(docOf(req)), wait: all}
	})
	p := NewPool(s.options())
	defer p.Close()
	var wg sync.WaitGroup
	for i := range concurrent {
		wg.Add(1)
		go func() {
			defer wg.Done()
			doc := string(rune('A' + i%26))
			r, err := p.Do(context.Background(), s.addr(), read(doc), 0)
			if err != nil || string(r.Payload) != doc {
				t.Errorf("request %d: %q %v", i, r.Payload, err)
			}
		}()
	}
	wg.Wait()
	if got := s.accepted.Load(); got > DefaultMaxConnsPerEndpoint || got < 1 {
		t.Errorf("%d connections for %d concurrent requests, want 1..%d", got, concurrent, DefaultMaxConnsPerEndpoint)
	}
	if got := p.Conns(s.addr()); got > DefaultMaxConnsPerEndpoint {
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
