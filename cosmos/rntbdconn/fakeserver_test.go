package rntbdconn

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos/rntbd"
)

// testHost is the name the fake server's certificate is for; the tests dial it through
// Options.Dial, which sends every address to the fake server's loopback listener.
const testHost = "replica.test"

// action is what the fake server does with one request.
type action struct {
	resp  *rntbd.Response // answer with it (TransportRequestID echoed), unless nil
	close bool            // close the connection instead
	wait  <-chan struct{} // answer only once this is closed (nil: at once)
}

// fakeServer is an RNTBD-over-TLS server for the tests: it negotiates, then hands each
// request to handle, answering concurrently so that answers may come out of order.
type fakeServer struct {
	t      testing.TB
	ln     net.Listener
	cfg    *tls.Config // the client's: trusts the server's certificate
	ctx    rntbd.ContextResponse
	handle func(req rntbd.Request) action

	accepted   atomic.Int32
	contexts   chan rntbd.ContextRequest
	serverName chan string
	closedConn chan struct{} // one value per connection the client closed (EOF)
	wg         sync.WaitGroup
}

func newFakeServer(t testing.TB, handle func(rntbd.Request) action) *fakeServer {
	t.Helper()
	serverCfg, clientCfg := testCerts(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeServer{
		t: t, ln: tls.NewListener(ln, serverCfg), cfg: clientCfg, handle: handle,
		ctx: rntbd.ContextResponse{Status: 200, Tokens: []rntbd.Token{
			rntbd.StringToken(rntbd.CtxRespServerAgent, rntbd.TypeSmallString, "fake"),
			rntbd.StringToken(rntbd.CtxRespServerVersion, rntbd.TypeSmallString, "1.0"),
			rntbd.ULongToken(rntbd.CtxRespIdleTimeoutInSeconds, 600),
		}},
		contexts:   make(chan rntbd.ContextRequest, 1024),
		serverName: make(chan string, 1024),
		closedConn: make(chan struct{}, 1024),
	}
	s.wg.Add(1)
	go s.serve()
	t.Cleanup(func() { s.ln.Close(); s.wg.Wait() })
	return s
}

// options are pool options that reach this server under testHost.
func (s *fakeServer) options() Options {
	return Options{
		TLSConfig: s.cfg, ClientVersion: "2020-11-05", UserAgent: "cosmosctl-test",
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, s.ln.Addr().String())
		},
	}
}

func (s *fakeServer) addr() string {
	_, port, _ := net.SplitHostPort(s.ln.Addr().String())
	return net.JoinHostPort(testHost, port)
}

func (s *fakeServer) serve() {
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

func (s *fakeServer) conn(tc *tls.Conn) {
	var wmu sync.Mutex
	var answers sync.WaitGroup
	defer answers.Wait()
	defer tc.Close()
	if err := tc.Handshake(); err != nil {
		return
	}
	s.serverName <- tc.ConnectionState().ServerName
	br := bufio.NewReader(tc)
	frame, err := readFrame(br, func(b []byte) (int, error) { _, n, err := rntbd.DecodeContextRequest(b); return n, err })
	if err != nil {
		return
	}
	cr, _, err := rntbd.DecodeContextRequest(frame)
	if err != nil {
		return
	}
	s.contexts <- cr
	wire, _ := s.ctx.Encode()
	if _, err := tc.Write(wire); err != nil || s.ctx.Failed() {
		return
	}
	for {
		frame, err := readFrame(br, func(b []byte) (int, error) { _, n, err := rntbd.DecodeRequest(b); return n, err })
		if err != nil {
			s.closedConn <- struct{}{}
			return
		}
		req, _, err := rntbd.DecodeRequest(frame)
		if err != nil {
			return
		}
		a := s.handle(req)
		if a.close {
			return
		}
		if a.resp == nil {
			continue // hang: never answer this one
		}
		idTok, _ := req.Token(rntbd.ReqTransportRequestID)
		id, _ := idTok.Uint()
		resp := *a.resp
		resp.Tokens = append(append([]rntbd.Token(nil), resp.Tokens...), rntbd.ULongToken(rntbd.RespTransportRequestID, uint32(id)))
		resp.ActivityID = req.ActivityID
		answers.Add(1)
		go func() {
			defer answers.Done()
			if a.wait != nil {
				<-a.wait
			}
			wire, err := resp.Encode()
			if err != nil {
				s.t.Errorf("fake server: %v", err)
				return
			}
			wmu.Lock()
			defer wmu.Unlock()
			_, _ = tc.Write(wire)
		}()
	}
}

// ok is a 200 answer with body.
func ok(body string) *rntbd.Response {
	r := &rntbd.Response{Status: 200, Tokens: []rntbd.Token{rntbd.BoolToken(rntbd.RespPayloadPresent, body != "")}}
	if body != "" {
		r.Payload = []byte(body)
	}
	return r
}

// testCerts makes a self-signed certificate for testHost: the server's config and a
// client config trusting it.
func testCerts(t testing.TB) (server, client *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: testHost},
		DNSNames: []string{testHost}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
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
