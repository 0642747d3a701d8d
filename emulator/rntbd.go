package emulator

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"

	"github.com/cosmosctl/cosmosctl/emulator/rntbdserver"
)

// Replicas over RNTBD, as the service serves them (issue 27; /work/contracts/issue27.md
// decisions 1, 2, 6).
//
// Every region has one RNTBD listener, always TLS, on a port of its own; every replica
// of the region is served on it, told apart by the ReplicaPath token, as a real node
// hosts many replicas on one port. The addresses feed advertises
//
//	rntbd://127.0.0.1:PORT/apps/<account>/services/<collection rid>/partitions/<range id>/replicas/<replica id>(p|s)/
//
// with protocol "rntbd" (Config.ReplicaProtocol "http" keeps the legacy feed of http
// addresses on the regional port). A request frame is translated by rntbdserver into
// the REST request it stands for, under the ReplicaPath, and served by the region's
// ordinary handler: the same replica resolution, request counts, fault rules
// (replica = "<range id>:<replica id>") and move effects as over HTTP. Over RNTBD a
// move's "gone" is a 410/0 answer frame, "hang" never answers that frame (the others on
// the connection still are), and "refuse" closes the connection.
//
// The listeners use the certificate of the https endpoints under Config.TLS, otherwise
// one generated at start (CertificatePEM, ClientTLSConfig).

// Replica protocols of Config.ReplicaProtocol.
const (
	ReplicaProtocolRNTBD = "rntbd"
	ReplicaProtocolHTTP  = "http"
)

// RNTBD context answers: the emulator's agent, and the idle timeout it announces and
// enforces (contract decision 3: 600 s).
const (
	rntbdServerAgent  = "cosmosctl-emulator"
	rntbdServerVer    = "1.0"
	rntbdIdleTimeout  = 600
	rntbdAuthTimeout  = 60
	rntbdURLScheme    = "rntbd://"
	thinClientURLPath = "/"
)

// viaRNTBD marks a request that arrived as an RNTBD frame (direct or Gateway 2.0), so
// that ReplicaHTTPRequests counts only the ones that came over HTTP.
type viaRNTBD struct{}

// rntbdTLSConfig is the RNTBD listeners' TLS: the https certificate, or one of their own.
func (s *Server) rntbdTLSConfig() error {
	if s.tls != nil {
		s.rntbdTLS = s.tls.Clone()
		s.rntbdTLS.NextProtos = nil
		return nil
	}
	certPEM, keyPEM, err := GenerateCertificate([]string{s.cfg.Host}, s.clock.Now())
	if err != nil {
		return fmt.Errorf("generating the RNTBD certificate: %v", err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return err
	}
	s.rntbdTLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	s.rntbdCertPEM = certPEM
	return nil
}

// bindRNTBD opens a region's RNTBD listener on a free port.
func (s *Server) bindRNTBD(ep *endpoint) error {
	addr := net.JoinHostPort(s.cfg.Host, "0")
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return &ListenError{What: "the RNTBD listener of region " + ep.name, Addr: addr, Err: err}
	}
	name := ep.name
	ep.rntbdListener = &faultListener{Listener: ln, refusing: func() bool { return s.faults.Refusing(name) }}
	ep.rntbdURL = rntbdURLScheme + ln.Addr().String()
	regionHandler := ep.http.Handler
	ep.rntbd = &rntbdserver.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, _, ok := splitReplicaAddress(r.URL.EscapedPath()); !ok {
				writeFrameError(w, http.StatusNotFound, "ReplicaPath "+strconv.Quote(r.URL.Path)+" is no replica address: use the physcialUri path of //addresses/ ("+replicaAddressForm+")")
				return
			}
			regionHandler.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), viaRNTBD{}, true)))
		}),
		TLSConfig:              s.rntbdTLS,
		ServerAgent:            rntbdServerAgent,
		ServerVersion:          rntbdServerVer,
		IdleTimeout:            rntbdIdleTimeout * 1e9,
		UnauthenticatedTimeout: rntbdAuthTimeout * 1e9,
		ErrorLog:               s.logger,
	}
	return nil
}

func writeFrameError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(rntbdserver.ErrorBody(status, msg))
}

// serveRNTBD serves a region's RNTBD listener until Close.
func (s *Server) serveRNTBD(ep *endpoint) {
	if err := ep.rntbd.Serve(ep.rntbdListener); err != nil && !errors.Is(err, rntbdserver.ErrServerClosed) {
		s.logger.Printf("the RNTBD listener of %s stopped serving: %v", ep.name, err)
	}
}

// regionEndpoints lists each region's endpoint once (a region on the global endpoint
// shares it).
func (s *Server) regionEndpoints() []*endpoint {
	seen := map[*endpoint]bool{}
	var out []*endpoint
	for _, ep := range s.regions {
		if ep != nil && !seen[ep] {
			seen[ep] = true
			out = append(out, ep)
		}
	}
	return out
}

// CertificatePEM is the certificate the emulator's TLS listeners serve (PEM): the https
// certificate under Config.TLS, otherwise the one generated for the RNTBD listeners,
// which always use TLS.
func (s *Server) CertificatePEM() []byte {
	if s.certPEM != nil {
		return bytes.Clone(s.certPEM)
	}
	return bytes.Clone(s.rntbdCertPEM)
}

// ClientTLSConfig is a client TLS configuration that trusts the emulator's certificate
// (RootCAs), for direct-mode (RNTBD) and Gateway 2.0 clients in tests and embedding.
func (s *Server) ClientTLSConfig() *tls.Config {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.CertificatePEM())
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

// ReplicaHTTPRequests counts the HTTP requests that reached a replica address path
// (/apps/…): 0 in a run whose direct-mode traffic all went over RNTBD.
func (s *Server) ReplicaHTTPRequests() int64 { return s.replicaHTTP.Load() }

// ReplicaEndpoint is the rntbd://host:port of a region's RNTBD listener.
func (s *Server) ReplicaEndpoint(region string) (string, bool) {
	if i, ok := s.regionIndex(region); ok {
		return s.regions[i].rntbdURL, true
	}
	return "", false
}
