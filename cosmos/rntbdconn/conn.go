package rntbdconn

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos/rntbd"
	"github.com/google/uuid"
)

// Error is a request that got no RNTBD answer. Sent says whether its whole frame had
// been written to the connection: a request not sent can always be retried, one sent may
// have been applied.
type Error struct {
	Sent bool
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// NegotiationError is a context negotiation the server refused: its status and the JSON
// error body it sent.
type NegotiationError struct {
	Endpoint string
	Status   uint32
	Body     string
}

func (e *NegotiationError) Error() string {
	return fmt.Sprintf("rntbd: %s refused the context negotiation with status %d: %s", e.Endpoint, e.Status, e.Body)
}

// errConnClosed is what in-flight requests see when their pool closes the connection.
var errConnClosed = errors.New("rntbd: connection closed by the client")

// maxFrameBytes bounds a frame header plus tokens; maxBodyBytes a body. Both far above
// what a point operation carries (a 2 MB item), low enough that a corrupt length cannot
// make the reader allocate gigabytes.
const (
	maxFrameBytes = 16 << 20
	maxBodyBytes  = 64 << 20
)

// result is what a waiting request receives.
type result struct {
	resp rntbd.Response
	err  error
}

// call is one request on a connection.
type call struct {
	ch chan result // buffered 1: the reader never blocks on a request that left
}

// conn is one negotiated TLS connection to an endpoint, carrying many requests.
type conn struct {
	ep    *endpoint
	nc    net.Conn
	idle  time.Duration
	wlock chan struct{} // held (a token in it) while a frame is written
	wbuf  []byte        // guarded by wlock
	done  chan struct{} // closed when the connection fails or is closed

	dlmu    sync.Mutex // guards the write deadline a cancelled request sets
	writing bool       // a frame is being written (wlock is held)
	cut     bool       // the deadline was set to cut that write

	mu       sync.Mutex
	calls    map[uint32]*call
	nextID   uint32
	inflight int // requests acquired on the conn, from acquire to their answer
	retired  bool
	dead     error // set once the connection failed or was closed
	lastUsed time.Time
	timer    *time.Timer
}

// dialConn connects to addr (host:port), negotiates and starts the reader.
func dialConn(ctx context.Context, ep *endpoint, opts *Options) (*conn, error) {
	host, _, err := net.SplitHostPort(ep.addr)
	if err != nil {
		return nil, fmt.Errorf("rntbd: address %q is not host:port: %v", ep.addr, err)
	}
	raw, err := opts.dial(ctx, ep.addr)
	if err != nil {
		return nil, err
	}
	var cfg *tls.Config
	if opts.TLSConfig != nil {
		cfg = opts.TLSConfig.Clone()
	} else {
		cfg = &tls.Config{}
	}
	cfg.ServerName = host
	if cfg.MinVersion < tls.VersionTLS12 {
		cfg.MinVersion = tls.VersionTLS12
	}
	tc := tls.Client(raw, cfg)
	// The handshake and the negotiation are bounded by the connect timeout (ctx).
	if dl, ok := ctx.Deadline(); ok {
		_ = raw.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = raw.SetDeadline(time.Unix(1, 0)) })
	idle, err := negotiate(ctx, tc, ep.addr, opts)
	if !stop() || err != nil {
		tc.Close()
		if cerr := ctx.Err(); cerr != nil {
			return nil, fmt.Errorf("rntbd: connecting to %s: %w", ep.addr, cerr)
		}
		return nil, err
	}
	_ = raw.SetDeadline(time.Time{})
	c := &conn{
		ep: ep, nc: tc, idle: idle, wlock: make(chan struct{}, 1), done: make(chan struct{}),
		calls: map[uint32]*call{}, lastUsed: opts.now(),
	}
	go c.readLoop(opts)
	return c, nil
}

// negotiate runs the TLS handshake and the context negotiation, and returns the idle
// timeout the client keeps.
func negotiate(ctx context.Context, tc *tls.Conn, addr string, opts *Options) (time.Duration, error) {
	if err := tc.HandshakeContext(ctx); err != nil {
		var unknown x509.UnknownAuthorityError
		if errors.As(err, &unknown) {
			// Not the replica's health: this machine does not trust its certificate. A
			// real account's replicas present publicly trusted ones; an emulator's is
			// its own.
			return 0, fmt.Errorf("rntbd: TLS handshake with %s: %w (trust the replicas' certificate: SSL_CERT_FILE naming it; for a cosmosctl emulator, the file its banner names)", addr, err)
		}
		return 0, fmt.Errorf("rntbd: TLS handshake with %s: %w", addr, err)
	}
	cr := rntbd.NewContextRequest(uuid.New(), opts.ClientVersion, opts.UserAgent)
	wire, err := cr.Encode()
	if err != nil {
		return 0, err
	}
	if _, err := tc.Write(wire); err != nil {
		return 0, fmt.Errorf("rntbd: sending the context request to %s: %w", addr, err)
	}
	br := bufio.NewReader(tc)
	resp, err := readFrame(br, func(b []byte) (rntbd.ContextResponse, error) {
		r, _, err := rntbd.DecodeContextResponse(b)
		return r, err
	})
	if err != nil {
		return 0, fmt.Errorf("rntbd: reading the context response from %s: %w", addr, err)
	}
	if br.Buffered() > 0 {
		return 0, fmt.Errorf("rntbd: %s sent %d bytes after the context response, before any request", addr, br.Buffered())
	}
	if resp.Failed() {
		return 0, &NegotiationError{Endpoint: addr, Status: resp.Status, Body: string(resp.ErrorBody)}
	}
	idle := opts.IdleTimeout
	if s := resp.IdleTimeoutSeconds(); s > 0 {
		idle = time.Duration(s) * time.Second
		idle -= idle / 10
	}
	return idle, nil
}

// readFrame reads one frame whose length prefix counts the header and tokens, and
// decodes it. When decode finds it incomplete after them (a body follows: the
// PayloadPresent rule), it reads the u32 body length and the body too, and decodes the
// whole. The decoded value aliases a buffer of its own.
func readFrame[T any](r io.Reader, decode func([]byte) (T, error)) (T, error) {
	var zero T
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return zero, err
	}
	l := binary.LittleEndian.Uint32(head[:])
	if l < 24 || l > maxFrameBytes {
		return zero, fmt.Errorf("rntbd: frame length %d is not between 24 and %d bytes", l, maxFrameBytes)
	}
	buf := make([]byte, l)
	copy(buf, head[:])
	if _, err := io.ReadFull(r, buf[4:]); err != nil {
		return zero, err
	}
	v, err := decode(buf)
	if err == nil || !errors.Is(err, rntbd.ErrIncomplete) {
		return v, err
	}
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return zero, err
	}
	n := binary.LittleEndian.Uint32(head[:])
	if n > maxBodyBytes {
		return zero, fmt.Errorf("rntbd: body length %d is more than %d bytes", n, maxBodyBytes)
	}
	full := make([]byte, int(l)+4+int(n))
	copy(full, buf)
	copy(full[l:], head[:])
	if _, err := io.ReadFull(r, full[l+4:]); err != nil {
		return zero, err
	}
	return decode(full)
}

// readLoop reads answers and hands each to its request, until the connection fails.
func (c *conn) readLoop(opts *Options) {
	br := bufio.NewReaderSize(c.nc, 32<<10)
	for {
		resp, err := readFrame(br, func(b []byte) (rntbd.Response, error) {
			r, _, err := rntbd.DecodeResponse(b)
			return r, err
		})
		if err != nil {
			c.fail(fmt.Errorf("rntbd: connection to %s: %w", c.ep.addr, err))
			return
		}
		tok, ok := resp.Token(rntbd.RespTransportRequestID)
		id, idOK := tok.Uint()
		if !ok || !idOK {
			c.fail(fmt.Errorf("rntbd: %s answered without a TransportRequestID: the answer cannot be matched to its request", c.ep.addr))
			return
		}
		if t, ok := resp.Token(rntbd.RespDisableRntbdChannel); ok {
			if v, _ := t.Uint(); v != 0 {
				c.retire()
			}
		}
		c.mu.Lock()
		cl := c.calls[uint32(id)]
		delete(c.calls, uint32(id))
		c.mu.Unlock()
		if cl != nil {
			cl.ch <- result{resp: resp}
		}
		// else: the request was cancelled; its late answer is dropped.
	}
}

// fail ends the connection: the endpoint forgets it, and every request waiting on it
// gets err (roundTrip reads it from c.dead once c.done is closed).
func (c *conn) fail(err error) {
	c.mu.Lock()
	if c.dead != nil {
		c.mu.Unlock()
		return
	}
	c.dead = err
	c.calls = nil
	if c.timer != nil {
		c.timer.Stop()
	}
	c.mu.Unlock()
	c.ep.forget(c)
	c.nc.Close()
	close(c.done)
}

// retire stops new requests going to c; it closes once its requests are answered.
func (c *conn) retire() {
	c.mu.Lock()
	c.retired = true
	idle := c.inflight == 0
	c.mu.Unlock()
	c.ep.forget(c)
	if idle {
		c.fail(errors.New("rntbd: connection retired by the server (DisableRntbdChannel)"))
	}
}

// roundTrip sends req (whose TransportRequestID it sets) and waits for its answer. The
// caller has counted the request in c.inflight; roundTrip releases it.
func (c *conn) roundTrip(ctx context.Context, req *rntbd.Request, opts *Options) (rntbd.Response, error) {
	defer c.release(opts)
	c.mu.Lock()
	if c.dead != nil {
		err := c.dead
		c.mu.Unlock()
		return rntbd.Response{}, &Error{Err: err}
	}
	c.nextID++
	id := c.nextID
	cl := &call{ch: make(chan result, 1)}
	c.calls[id] = cl
	c.mu.Unlock()
	setRequestID(req, id)

	if err := c.write(ctx, req); err != nil {
		c.drop(id)
		return rntbd.Response{}, err
	}
	// The whole frame is written: from here on a failure is "sent".
	select {
	case r := <-cl.ch:
		return r.resp, r.err
	case <-c.done:
		// The reader hands over an answer before it fails the connection: one that
		// came just before the failure is in cl.ch already.
		select {
		case r := <-cl.ch:
			return r.resp, r.err
		default:
		}
		c.mu.Lock()
		err := c.dead
		c.mu.Unlock()
		return rntbd.Response{}, &Error{Sent: true, Err: err}
	case <-ctx.Done():
		c.drop(id)
		// An answer that raced the cancellation is as good as any.
		select {
		case r := <-cl.ch:
			return r.resp, r.err
		default:
		}
		return rntbd.Response{}, &Error{Sent: true, Err: ctx.Err()}
	}
}

// write encodes and writes one frame, all of it or, on failure, a connection that is
// closed (a frame cut part way would corrupt every frame after it).
func (c *conn) write(ctx context.Context, req *rntbd.Request) error {
	select {
	case c.wlock <- struct{}{}:
	case <-ctx.Done():
		return &Error{Err: ctx.Err()}
	}
	defer func() { <-c.wlock }()
	wire, err := req.AppendEncode(c.wbuf[:0])
	if err != nil {
		return &Error{Err: err}
	}
	c.wbuf = wire
	if cap(c.wbuf) > 1<<20 {
		c.wbuf = nil // a large body's buffer is not kept for every small frame after it
	}
	if err := ctx.Err(); err != nil {
		return &Error{Err: err}
	}
	// A cancelled request stops its own write by a deadline in the past. The callback
	// and the reset after the write hold dlmu, and the callback acts only while this
	// write is the one going on, so a callback that runs late cannot cut the next
	// writer's frame.
	c.dlmu.Lock()
	c.writing = true
	c.dlmu.Unlock()
	stop := context.AfterFunc(ctx, func() {
		c.dlmu.Lock()
		defer c.dlmu.Unlock()
		if c.writing {
			c.cut = true
			_ = c.nc.SetWriteDeadline(time.Unix(1, 0))
		}
	})
	n, werr := c.nc.Write(wire)
	stop()
	c.dlmu.Lock()
	c.writing = false
	if c.cut {
		c.cut = false
		_ = c.nc.SetWriteDeadline(time.Time{})
	}
	c.dlmu.Unlock()
	if werr != nil {
		if n > 0 {
			c.fail(fmt.Errorf("rntbd: writing to %s: %w", c.ep.addr, werr))
		}
		if cerr := ctx.Err(); cerr != nil {
			werr = cerr
		}
		return &Error{Err: werr}
	}
	return nil
}

// drop forgets a request that will not wait for its answer.
func (c *conn) drop(id uint32) {
	c.mu.Lock()
	if c.calls != nil {
		delete(c.calls, id)
	}
	c.mu.Unlock()
}

// release ends a request's hold on c, closing a retired connection with nothing left on
// it and arming the idle timer of one that went idle.
func (c *conn) release(opts *Options) {
	c.mu.Lock()
	c.inflight--
	c.lastUsed = opts.now()
	closeNow := c.retired && c.inflight == 0 && c.dead == nil
	if c.inflight == 0 && !closeNow && c.dead == nil && c.idle > 0 {
		if c.timer == nil {
			c.timer = time.AfterFunc(c.idle, func() { c.idleCheck(opts) })
		} else {
			c.timer.Reset(c.idle)
		}
	}
	c.mu.Unlock()
	if closeNow {
		c.fail(errors.New("rntbd: connection retired by the server (DisableRntbdChannel)"))
	}
}

// idleCheck closes c if nothing used it for its idle timeout.
func (c *conn) idleCheck(opts *Options) {
	c.mu.Lock()
	idle := c.inflight == 0 && c.dead == nil && opts.now().Sub(c.lastUsed) >= c.idle
	c.mu.Unlock()
	if idle {
		c.fail(fmt.Errorf("rntbd: connection to %s closed after %s idle", c.ep.addr, c.idle))
	}
}

// setRequestID sets the request's TransportRequestID token (0x004D, ULong), adding it
// when absent.
func setRequestID(req *rntbd.Request, id uint32) {
	v := binary.LittleEndian.AppendUint32(nil, id)
	for i, t := range req.Tokens {
		if t.ID == rntbd.ReqTransportRequestID {
			req.Tokens[i] = rntbd.Token{ID: t.ID, Type: rntbd.TypeULong, Value: v}
			return
		}
	}
	req.Tokens = append(req.Tokens, rntbd.Token{ID: rntbd.ReqTransportRequestID, Type: rntbd.TypeULong, Value: v})
}
