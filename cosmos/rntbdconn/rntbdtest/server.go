// Package rntbdtest is a fake RNTBD-over-TLS server for tests and benchmarks of the
// client side (rntbdconn, cosmos.Transport, the engine): it negotiates the connection
// context, then hands each request to a function that says how to answer. It uses the
// client's own codec (cosmos/rntbd), so it proves the connection machinery, not the
// wire format: the codec's vectors and the emulator's independent server do that.
package rntbdtest

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos/rntbd"
)

// Host is the name (beside 127.0.0.1) the server's certificate is for.
const Host = "replica.test"

// Action is what the server does with one request.
type Action struct {
	Resp  *rntbd.Response // answer with it (TransportRequestID and activity id echoed), unless nil: never answer
	Close bool            // close the connection instead
	Wait  <-chan struct{} // answer only once this is closed (nil: at once)
}

// OK is a 200 answer with body (none when empty).
func OK(body string) *rntbd.Response {
	r := &rntbd.Response{Status: 200, Tokens: []rntbd.Token{rntbd.BoolToken(rntbd.RespPayloadPresent, body != "")}}
	if body != "" {
		r.Payload = []byte(body)
	}
	return r
}

// Server is a running fake server on a loopback port.
type Server struct {
	t      testing.TB
	ln     net.Listener
	cfg    *tls.Config
	handle func(rntbd.Request) Action

	// Context is the negotiation answer; set it before the first connection.
	Context rntbd.ContextResponse

	accepted atomic.Int32
	// Contexts receives each connection's context request; ServerNames each TLS server
	// name; ClientClosed a value whenever the client closed a connection.
	Contexts     chan rntbd.ContextRequest
	ServerNames  chan string
	ClientClosed chan struct{}
	wg           sync.WaitGroup
}

// NewServer starts a server that answers with handle; it stops when the test ends.
func NewServer(t testing.TB, handle func(rntbd.Request) Action) *Server {
	t.Helper()
	serverCfg, clientCfg := certs(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{
		t: t, ln: tls.NewListener(ln, serverCfg), cfg: clientCfg, handle: handle,
		Context: rntbd.ContextResponse{Status: 200, Tokens: []rntbd.Token{
			rntbd.StringToken(rntbd.CtxRespServerAgent, rntbd.TypeSmallString, "rntbdtest"),
			rntbd.StringToken(rntbd.CtxRespServerVersion, rntbd.TypeSmallString, "1.0"),
			rntbd.ULongToken(rntbd.CtxRespIdleTimeoutInSeconds, 600),
		}},
		Contexts:     make(chan rntbd.ContextRequest, 4096),
		ServerNames:  make(chan string, 4096),
		ClientClosed: make(chan struct{}, 4096),
	}
	s.wg.Add(1)
	go s.serve()
	t.Cleanup(func() { s.ln.Close(); s.wg.Wait() })
	return s
}

// ClientTLS trusts the server's certificate.
func (s *Server) ClientTLS() *tls.Config { return s.cfg.Clone() }

// Addr is 127.0.0.1:port; HostAddr is Host:port, to be dialed through Dial.
func (s *Server) Addr() string { return s.ln.Addr().String() }

func (s *Server) HostAddr() string {
	_, port, _ := net.SplitHostPort(s.Addr())
	return net.JoinHostPort(Host, port)
}

// Dial connects to the server whatever address it is given.
func (s *Server) Dial(ctx context.Context, network, _ string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, network, s.Addr())
}

// Accepted is the number of connections the server accepted.
func (s *Server) Accepted() int { return int(s.accepted.Load()) }

func (s *Server) serve() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.accepted.Add(1)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.conn(nc.(*tls.Conn))
		}()
	}
}

func (s *Server) conn(tc *tls.Conn) {
	var wmu sync.Mutex
	var answers sync.WaitGroup
	defer answers.Wait()
	defer tc.Close()
	if err := tc.Handshake(); err != nil {
		return
	}
	s.ServerNames <- tc.ConnectionState().ServerName
	br := bufio.NewReaderSize(tc, 32<<10)
	frame, err := readFrame(br, func(b []byte) error { _, _, err := rntbd.DecodeContextRequest(b); return err })
	if err != nil {
		return
	}
	cr, _, err := rntbd.DecodeContextRequest(frame)
	if err != nil {
		return
	}
	s.Contexts <- cr
	wire, _ := s.Context.Encode()
	if _, err := tc.Write(wire); err != nil || s.Context.Failed() {
		return
	}
	var out []byte
	for {
		frame, err := readFrame(br, func(b []byte) error { _, _, err := rntbd.DecodeRequest(b); return err })
		if err != nil {
			s.ClientClosed <- struct{}{}
			return
		}
		req, _, err := rntbd.DecodeRequest(frame)
		if err != nil {
			return
		}
		a := s.handle(req)
		if a.Close {
			return
		}
		if a.Resp == nil {
			continue // never answer this one
		}
		idTok, _ := req.Token(rntbd.ReqTransportRequestID)
		id, _ := idTok.Uint()
		resp := *a.Resp
		resp.Tokens = append(append(make([]rntbd.Token, 0, len(resp.Tokens)+1), resp.Tokens...), rntbd.ULongToken(rntbd.RespTransportRequestID, uint32(id)))
		resp.ActivityID = req.ActivityID
		if a.Wait == nil {
			// Answered in line, in order: the cheapest path, for benchmarks.
			wmu.Lock()
			out, err = resp.AppendEncode(out[:0])
			if err == nil {
				_, _ = tc.Write(out)
			}
			wmu.Unlock()
			if err != nil {
				s.t.Errorf("rntbdtest: %v", err)
			}
			continue
		}
		answers.Add(1)
		go func() {
			defer answers.Done()
			<-a.Wait
			wire, err := resp.Encode()
			if err != nil {
				s.t.Errorf("rntbdtest: %v", err)
				return
			}
			wmu.Lock()
			defer wmu.Unlock()
			_, _ = tc.Write(wire)
		}()
	}
}

// readFrame reads one frame and, when decode finds it incomplete (a body follows), its
// body length and body.
func readFrame(r io.Reader, decode func([]byte) error) ([]byte, error) {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, err
	}
	l := binary.LittleEndian.Uint32(head[:])
	if l < 24 || l > 16<<20 {
		return nil, fmt.Errorf("rntbdtest: frame length %d", l)
	}
	buf := make([]byte, l)
	copy(buf, head[:])
	if _, err := io.ReadFull(r, buf[4:]); err != nil {
		return nil, err
	}
	if err := decode(buf); err == nil || !errors.Is(err, rntbd.ErrIncomplete) {
		return buf, err
	}
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, err
	}
	n := binary.LittleEndian.Uint32(head[:])
	if n > 64<<20 {
		return nil, fmt.Errorf("rntbdtest: body length %d", n)
	}
	full := make([]byte, int(l)+4+int(n))
	copy(full, buf)
	copy(full[l:], head[:])
	_, err := io.ReadFull(r, full[l+4:])
	return full, err
}

// certs makes a self-signed certificate for Host and 127.0.0.1: the server's config
// and a client config trusting it.
func certs(t testing.TB) (server, client *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: Host},
		DNSNames: []string{Host}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	server = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, MinVersion: tls.VersionTLS12}
	return server, &tls.Config{RootCAs: roots}
}
