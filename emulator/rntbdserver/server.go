package rntbdserver

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Context negotiation token ids (Java RntbdConstants.RntbdContextRequestHeader and
// RntbdContextHeader, commit 01feecf6; REFERENCE §1.5).
const (
	ctxProtocolVersion        uint16 = 0x0000 // request and response, ULong
	ctxClientVersion          uint16 = 0x0001 // request, SmallString
	ctxUserAgent              uint16 = 0x0002 // request, SmallString
	ctxServerAgent            uint16 = 0x0002 // response, SmallString
	ctxServerVersion          uint16 = 0x0003 // response, SmallString
	ctxIdleTimeoutSeconds     uint16 = 0x0004 // response, ULong
	ctxUnauthenticatedTimeout uint16 = 0x0005 // response, ULong
)

// ProtocolVersion is the only RNTBD protocol version there is (Java
// RntbdConstants.CURRENT_PROTOCOL_VERSION = 0x00000001).
const ProtocolVersion = 1

// Defaults for Server.
const (
	DefaultIdleTimeout            = 600 * time.Second
	DefaultUnauthenticatedTimeout = 60 * time.Second
)

// Server serves RNTBD over TLS. Every connection must open with a context request;
// request frames after it are served concurrently (multiplexed: answers go out as they
// are ready, in any order, each echoing its frame's activity id and TransportRequestID).
type Server struct {
	// Handler serves the REST request each frame stands for (HTTPRequest), with the
	// ReplicaPath token as the path prefix.
	Handler http.Handler
	// TLSConfig is required: RNTBD is never plaintext (.NET Connection.NegotiateSslAsync
	// and Java's TcpServer wrap every connection in TLS; REFERENCE §1.6).
	TLSConfig *tls.Config
	// ServerAgent and ServerVersion answer the context request.
	ServerAgent, ServerVersion string
	// IdleTimeout is announced in the context response and enforced: a connection with
	// no request in flight for that long is closed. 0 is DefaultIdleTimeout.
	IdleTimeout time.Duration
	// UnauthenticatedTimeout bounds the TLS handshake and the context request. 0 is
	// DefaultUnauthenticatedTimeout.
	UnauthenticatedTimeout time.Duration
	// ErrorLog receives handler panics; nil discards them.
	ErrorLog *log.Logger

	mu        sync.Mutex
	listeners map[net.Listener]bool
	conns     map[*conn]bool
	closed    bool
	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	once      sync.Once
}

func (s *Server) init() {
	s.once.Do(func() {
		s.listeners = map[net.Listener]bool{}
		s.conns = map[*conn]bool{}
		s.ctx, s.cancel = context.WithCancel(context.Background())
	})
}

// ErrServerClosed is Serve's answer once Close has run.
var ErrServerClosed = errors.New("rntbdserver: server closed")

// Serve accepts connections on ln (plain TCP; Serve adds TLS) until Close.
func (s *Server) Serve(ln net.Listener) error {
	s.init()
	if s.TLSConfig == nil {
		return errors.New("rntbdserver: TLSConfig is required (RNTBD is never plaintext)")
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.listeners[ln] = true
	s.mu.Unlock()
	for {
		c, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		cn := &conn{s: s, raw: c, tls: tls.Server(c, s.TLSConfig)}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return ErrServerClosed
		}
		s.conns[cn] = true
		s.wg.Add(1)
		s.mu.Unlock()
		go cn.serve()
	}
}

// Close stops the listeners, closes every connection, cancels the requests in flight and
// waits for their handlers to return.
func (s *Server) Close() error {
	s.init()
	s.mu.Lock()
	s.closed = true
	for ln := range s.listeners {
		ln.Close()
	}
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	s.cancel()
	for _, c := range conns {
		c.abort()
	}
	s.wg.Wait()
	return nil
}

// CloseConnections resets every open connection (a region going down).
func (s *Server) CloseConnections() {
	s.init()
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.abort()
	}
}

func (s *Server) idle() time.Duration {
	if s.IdleTimeout > 0 {
		return s.IdleTimeout
	}
	return DefaultIdleTimeout
}

func (s *Server) unauth() time.Duration {
	if s.UnauthenticatedTimeout > 0 {
		return s.UnauthenticatedTimeout
	}
	return DefaultUnauthenticatedTimeout
}

type conn struct {
	s        *Server
	raw      net.Conn
	tls      *tls.Conn
	writeMu  sync.Mutex
	inflight atomic.Int64
	aborted  atomic.Bool
	version  string // ClientVersion of the context
	agent    string // UserAgent of the context
	ctx      context.Context
	cancel   context.CancelFunc
	reqs     sync.WaitGroup
}

// abort ends the connection with a reset, as a replica that refuses it.
func (c *conn) abort() {
	c.aborted.Store(true)
	if tc, ok := c.raw.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.raw.Close()
}

func (c *conn) serve() {
	s := c.s
	c.ctx, c.cancel = context.WithCancel(s.ctx)
	defer func() {
		c.cancel()
		c.raw.Close()
		c.reqs.Wait()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		s.wg.Done()
	}()
	_ = c.raw.SetDeadline(time.Now().Add(s.unauth()))
	if err := c.tls.HandshakeContext(c.ctx); err != nil {
		return
	}
	br := bufio.NewReader(c.tls)
	if !c.negotiate(br) {
		return
	}
	_ = c.raw.SetDeadline(time.Time{})
	for {
		if c.inflight.Load() == 0 {
			_ = c.raw.SetReadDeadline(time.Now().Add(s.idle()))
		} else {
			_ = c.raw.SetReadDeadline(time.Time{})
		}
		req, err := readRequest(br)
		if err != nil {
			// A timeout is the idle timeout (deadlines are set only while nothing is
			// in flight): the connection closes, as announced in the context.
			var ne net.Error
			if err != io.EOF && !errors.As(err, &ne) && !c.aborted.Load() {
				// A malformed frame: the stream cannot be resynchronised.
				c.write(EncodeResponse(&Response{Status: http.StatusBadRequest, Body: ErrorBody(400, err.Error())}))
			}
			return
		}
		if req.ResourceType == ResourceConnection && req.OperationType == OpConnection {
			c.write(EncodeResponse(&Response{Status: http.StatusBadRequest, ActivityID: req.ActivityID,
				Body: ErrorBody(400, "a second context request on a negotiated connection")}))
			return
		}
		c.inflight.Add(1)
		c.reqs.Add(1)
		go func() {
			defer c.reqs.Done()
			c.serveRequest(req)
			if c.inflight.Add(-1) == 0 {
				_ = c.raw.SetReadDeadline(time.Now().Add(s.idle()))
			}
		}()
	}
}

// negotiate reads and answers the context request, the first frame of every connection
// (Java RntbdContextNegotiator pends every write until the context completes; REFERENCE
// §1.5). ProtocolVersion (ULong, 1), ClientVersion and UserAgent (SmallString) are
// required, as Java's RntbdContextRequestHeader marks them; a bad context is answered
// with 400 and a JSON body, then the connection is closed.
func (c *conn) negotiate(br *bufio.Reader) bool {
	req, err := readRequest(br)
	if err != nil {
		var ne net.Error
		if err != io.EOF && !errors.As(err, &ne) {
			c.write(encodeContextResponse(http.StatusBadRequest, [16]byte{}, c.contextTokens(), ErrorBody(400, err.Error())))
		}
		return false
	}
	fail := func(msg string) bool {
		c.write(encodeContextResponse(http.StatusBadRequest, req.ActivityID, c.contextTokens(), ErrorBody(400, msg)))
		return false
	}
	if req.ResourceType != ResourceConnection || req.OperationType != OpConnection {
		return fail("the first frame on an RNTBD connection must be the context request (resource type 0, operation type 0)")
	}
	pv, ok := req.Token(ctxProtocolVersion)
	if !ok || pv.Type != TypeULong {
		return fail("context request without ProtocolVersion (0x0000, ULong)")
	}
	if v, _ := pv.Uint(); v != ProtocolVersion {
		return fail(sprintf("unsupported RNTBD protocol version %d (the server speaks %d)", v, ProtocolVersion))
	}
	cv, ok := req.Token(ctxClientVersion)
	if !ok || cv.Type != TypeSmallString || len(cv.Value) == 0 {
		return fail("context request without ClientVersion (0x0001, SmallString: the x-ms-version string)")
	}
	ua, ok := req.Token(ctxUserAgent)
	if !ok || ua.Type != TypeSmallString {
		return fail("context request without UserAgent (0x0002, SmallString)")
	}
	c.version, c.agent = string(cv.Value), string(ua.Value)
	return c.write(encodeContextResponse(http.StatusOK, req.ActivityID, c.contextTokens(), nil))
}

func (c *conn) contextTokens() []Token {
	s := c.s
	return []Token{
		ulongToken(ctxProtocolVersion, ProtocolVersion),
		smallStringToken(ctxServerAgent, s.ServerAgent),
		smallStringToken(ctxServerVersion, s.ServerVersion),
		ulongToken(ctxIdleTimeoutSeconds, uint32(s.idle()/time.Second)),
		ulongToken(ctxUnauthenticatedTimeout, uint32(s.unauth()/time.Second)),
	}
}

func (c *conn) write(b []byte) bool {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.tls.Write(b)
	return err == nil
}

// serveRequest answers one request frame. Direct mode requires the ReplicaPath token
// (Java: "true in direct, but not for thin client"); its TransportRequestID (0x004D) is
// echoed as response token 0x0035 (REFERENCE §1.6).
func (c *conn) serveRequest(req *Request) {
	var extra []Token
	if t, ok := req.Token(reqTransportRequestID); ok {
		if v, isUint := t.Uint(); isUint {
			extra = append(extra, ulongToken(respTransportRequestID, uint32(v)))
		}
	}
	answer := func(status int, h http.Header, body []byte) {
		resp := &Response{Status: uint32(status), ActivityID: req.ActivityID, Tokens: append(ResponseTokens(h), extra...)}
		if len(body) > 0 {
			resp.Body = body
		}
		c.write(EncodeResponse(resp))
	}
	base := ""
	if t, ok := req.Token(reqReplicaPath); ok {
		base = t.Text()
	}
	if base == "" {
		answer(http.StatusBadRequest, nil, ErrorBody(400, "direct-mode request without ReplicaPath (0x0013)"))
		return
	}
	hr, err := HTTPRequest(c.ctx, req, base, c.version)
	if err != nil {
		status := http.StatusBadRequest
		var fe *FrameError
		if errors.As(err, &fe) {
			status = fe.Status
		}
		answer(status, nil, ErrorBody(status, err.Error()))
		return
	}
	hr.RemoteAddr = c.raw.RemoteAddr().String()
	hr.Host = c.raw.LocalAddr().String()
	st := c.tls.ConnectionState()
	hr.TLS = &st
	if c.agent != "" {
		hr.Header.Set("User-Agent", c.agent)
	}
	rec := Record(c.s.Handler, hr, c.abort, c.s.ErrorLog)
	if rec.Aborted {
		c.abort()
		return
	}
	answer(rec.Status, rec.Header, rec.Body)
}
