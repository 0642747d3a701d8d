package emulator

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// trustingClient is a test client whose HTTP client trusts only the emulator's
// certificate, as a client given SSL_CERT_FILE does.
func trustingClient(t *testing.T, s *Server) *testClient {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.CertificatePEM()) {
		t.Fatalf("the emulator's certificate is no PEM certificate:\n%s", s.CertificatePEM())
	}
	c := newTestClient(t, s.Key())
	c.tr.HTTP.Transport.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: pool}
	return c
}

func TestTLSServesHTTPSOnEveryEndpoint(t *testing.T) {
	s := startTest(t, httpReplicas, func(c *Config) { c.TLS = true })
	c := trustingClient(t, s)

	endpoints := map[string]string{"global": s.Endpoint()}
	for _, r := range s.Regions() {
		endpoints[r.Name] = r.Endpoint
	}
	for name, ep := range endpoints {
		if !strings.HasPrefix(ep, "https://127.0.0.1:") {
			t.Errorf("%s endpoint %s is not https", name, ep)
		}
		if st, _ := sc(t)(c.do(ep, "GET", "/", nil, nil)); st != 200 {
			t.Errorf("GET / on the %s endpoint over TLS → %d", name, st)
		}
	}

	// The account document advertises https, so that an SDK that follows it to a
	// region stays on TLS.
	var acct cosmos.Account
	if err := json.Unmarshal(c.mustDo(s.Endpoint(), "GET", "/", nil).Body, &acct); err != nil {
		t.Fatal(err)
	}
	for _, loc := range append(acct.WritableLocations, acct.ReadableLocations...) {
		if !strings.HasPrefix(loc.Endpoint, "https://") {
			t.Errorf("account location %s advertises %s", loc.Name, loc.Endpoint)
		}
	}

	// So does the address feed, and a replica address answers over TLS.
	rng := createIn(t, c, s.Endpoint(), "1", "a")
	east := regionURL(t, s, "East US")
	addrs := fetchAddresses(t, c, east, rng, false)
	for _, a := range addrs {
		if a.Protocol != "https" || !strings.HasPrefix(a.PhysicalURI, "https://") {
			t.Errorf("address %s with protocol %q under TLS", a.PhysicalURI, a.Protocol)
		}
	}
	replica := addressesOfRange(addrs, rng)[1]
	if st, _ := sc(t)(replicaDo(c, replica, "GET", itemPath("1"), pkHeader(`["a"]`), nil)); st != 200 {
		t.Fatalf("read through replica %s over TLS → %d", replica, st)
	}
}

func TestTLSCertificateCoversLoopbackAndIsServedWithoutKey(t *testing.T) {
	s := startTest(t, func(c *Config) { c.TLS = true })
	block, _ := pem.Decode(s.CertificatePEM())
	if block == nil {
		t.Fatal("no PEM certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"localhost", "127.0.0.1", "::1"} {
		if err := cert.VerifyHostname(host); err != nil {
			t.Errorf("the certificate is not valid for %s: %v", host, err)
		}
	}
	if cert.PublicKeyAlgorithm != x509.ECDSA || !cert.IsCA {
		t.Errorf("certificate: key %v, CA %v; want an ECDSA self-signed root", cert.PublicKeyAlgorithm, cert.IsCA)
	}

	// As Microsoft's emulator: GET /_explorer/emulator.pem, no key, on every endpoint.
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.CertificatePEM())
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer hc.CloseIdleConnections()
	for _, ep := range []string{s.Endpoint(), s.Regions()[2].Endpoint} {
		resp, err := hc.Get(ep + CertificatePath)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != string(s.CertificatePEM()) {
			t.Errorf("GET %s%s → %d %q", ep, CertificatePath, resp.StatusCode, body)
		}
	}
}

func TestPlainHTTPToATLSEndpointIsRefusedClearly(t *testing.T) {
	s := startTest(t, func(c *Config) { c.TLS = true })
	plain := "http://" + strings.TrimPrefix(s.Endpoint(), "https://")
	resp, err := http.Get(plain + "/")
	if err != nil {
		t.Fatalf("plain http to the TLS endpoint: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(body), "HTTP request to an HTTPS server") {
		t.Fatalf("plain http → %d %q; want 400 saying the server speaks https", resp.StatusCode, body)
	}

	// A client that does not trust the certificate fails the handshake: nothing is
	// served over an unverified connection by accident.
	_, err = newTestClient(t, s.Key()).do(s.Endpoint(), "GET", "/", nil, nil)
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Fatalf("a client without the certificate: %v; want an unknown authority error", err)
	}
}

// Without TLS the endpoints serve http and GET /_explorer/emulator.pem answers 404; the
// RNTBD listeners still use TLS, with a certificate generated for them, which
// CertificatePEM returns.
func TestPlainHTTPEmulatorHasNoCertificate(t *testing.T) {
	s := startTest(t)
	if s.TLS() || !strings.HasPrefix(s.Endpoint(), "http://") {
		t.Fatalf("an emulator without TLS: TLS %v, endpoint %s", s.TLS(), s.Endpoint())
	}
	if _, err := CertificateFingerprint(s.CertificatePEM()); err != nil {
		t.Fatalf("CertificatePEM without TLS (the RNTBD certificate): %v", err)
	}
	resp, err := http.Get(s.Endpoint() + CertificatePath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("GET %s without TLS → %d, want 404", CertificatePath, resp.StatusCode)
	}
}

func TestTLSWithACertificateOfOnesOwn(t *testing.T) {
	dir := t.TempDir()
	certPEM, keyPEM, err := GenerateCertificate([]string{"emulator.test"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, certPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	s := startTest(t, func(c *Config) { c.TLSCertFile, c.TLSKeyFile = certFile, keyFile })
	if string(s.CertificatePEM()) != string(certPEM) || !strings.HasPrefix(s.Endpoint(), "https://") {
		t.Fatalf("with a certificate of one's own: TLS %v, endpoint %s", s.TLS(), s.Endpoint())
	}
	// The name in the certificate reaches the emulator: a client that dials the
	// loopback port for emulator.test verifies the given certificate.
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	addr := strings.TrimPrefix(s.Endpoint(), "https://")
	hc := &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
	}}
	defer hc.CloseIdleConnections()
	u := url.URL{Scheme: "https", Host: "emulator.test:" + strings.Split(addr, ":")[1], Path: CertificatePath}
	resp, err := hc.Get(u.String())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	for _, half := range []func(*Config){
		func(c *Config) { c.TLSCertFile = certFile },
		func(c *Config) { c.TLSKeyFile = keyFile },
	} {
		cfg := Config{}
		half(&cfg)
		if _, err := Start(cfg, Options{}); err == nil || !strings.Contains(err.Error(), "both") {
			t.Errorf("a certificate without its key (or a key without its certificate) started: %v", err)
		}
	}
}
