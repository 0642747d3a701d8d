package emulator

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// TLS, as Microsoft's emulator serves it. Its documented endpoint is
// https://localhost:8081 with a self-signed certificate that clients import into their
// trust store, and the Linux container serves that certificate, without a key, at
// GET /_explorer/emulator.pem, so that a script can fetch it (curl --insecure) and
// trust it. The vNext (Linux) emulator serves http unless started with --protocol https,
// or with a certificate of its own (--cert-path).
//
// With Config.TLS every listener serves https: the global endpoint, each region's
// endpoint, and so each replica address (served on its region's port); the account
// document's locations and the address feed say https. The certificate is generated at
// start (ECDSA P-256, valid for localhost, 127.0.0.1, ::1 and the host bound) unless
// TLSCertFile and TLSKeyFile give one; either way GET /_explorer/emulator.pem answers
// it, on every endpoint, with no key. HTTP/2 is not offered: faults that drop a
// connection need HTTP/1.1 connections of their own, and every Cosmos SDK speaks
// HTTP/1.1 to the gateway.

// CertificatePath is where the emulator serves its certificate, as Microsoft's does.
const CertificatePath = "/_explorer/emulator.pem"

const opCertificate = "certificate" // classify's name for it: no latency, no faults, no key

// certificateValidity is how long a generated certificate is valid: long enough for any
// run, short enough that one copied somewhere does not stay trusted for ever.
const certificateValidity = 397 * 24 * time.Hour

// GenerateCertificate returns a self-signed ECDSA P-256 certificate and its key, both
// PEM, valid from now for hosts (DNS names or IP addresses) and always for localhost,
// 127.0.0.1 and ::1. It is its own issuer and a CA, so that a client can trust it as a
// root (SSL_CERT_FILE, NODE_EXTRA_CA_CERTS, REQUESTS_CA_BUNDLE).
func GenerateCertificate(hosts []string, now time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "cosmosctl emulator", Organization: []string{"cosmosctl emulator (self-signed)"}},
		NotBefore:             now.Add(-time.Hour), // a client clock a little behind still accepts it
		NotAfter:              now.Add(certificateValidity),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	seen := map[string]bool{}
	for _, h := range append([]string{"localhost", "127.0.0.1", "::1"}, hosts...) {
		h = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(h), "["), "]")
		if h == "" || seen[strings.ToLower(h)] {
			continue
		}
		seen[strings.ToLower(h)] = true
		if ip := net.ParseIP(h); ip != nil {
			if !ip.IsUnspecified() { // 0.0.0.0 and :: are no address a client connects to
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			}
			continue
		}
		tmpl.DNSNames = append(tmpl.DNSNames, h)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), nil
}

// CertificateFingerprint is the SHA-256 fingerprint of the first certificate in a PEM
// bundle, as openssl x509 -fingerprint -sha256 prints it (AB:CD:…).
func CertificateFingerprint(certPEM []byte) (string, error) {
	block, _ := pem.Decode(certPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		return "", errors.New("no PEM certificate")
	}
	sum := sha256.Sum256(block.Bytes)
	var b strings.Builder
	for i, c := range sum {
		if i > 0 {
			b.WriteByte(':')
		}
		fmt.Fprintf(&b, "%02X", c)
	}
	return b.String(), nil
}

// serverTLS builds the listeners' TLS configuration from cfg, reading the certificate
// of its own or generating one, and returns the certificate's PEM (the chain of a
// certificate of one's own, as given).
func serverTLS(cfg Config, now time.Time) (*tls.Config, []byte, error) {
	certPEM, keyPEM := cfg.TLSCertPEM, cfg.TLSKeyPEM
	switch {
	case certPEM != nil:
	case cfg.TLSCertFile != "":
		var err error
		if certPEM, err = os.ReadFile(cfg.TLSCertFile); err != nil {
			return nil, nil, fmt.Errorf("TLS certificate: %v", err)
		}
		if keyPEM, err = os.ReadFile(cfg.TLSKeyFile); err != nil {
			return nil, nil, fmt.Errorf("TLS key: %v", err)
		}
	default:
		var err error
		if certPEM, keyPEM, err = GenerateCertificate([]string{cfg.Host}, now); err != nil {
			return nil, nil, fmt.Errorf("generating the TLS certificate: %v", err)
		}
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		if cfg.TLSCertFile != "" {
			return nil, nil, fmt.Errorf("TLS certificate %s and key %s: %v", cfg.TLSCertFile, cfg.TLSKeyFile, err)
		}
		return nil, nil, err
	}
	return &tls.Config{
		Certificates: []tls.Certificate{pair},
		MinVersion:   tls.VersionTLS12,
		NextProtos:   []string{"http/1.1"},
	}, certPEM, nil
}

// serveCertificate answers GET /_explorer/emulator.pem with the certificate, or 404
// when the emulator serves plain http.
func (s *Server) serveCertificate(req *request) {
	if s.certPEM == nil {
		s.writeError(req, notFound("this emulator serves plain http and has no certificate (start it with --tls, or tls = true in the scenario)"), 0)
		return
	}
	h := req.w.Header()
	h.Set("Content-Type", "application/x-pem-file")
	h.Set("Content-Length", fmt.Sprint(len(s.certPEM)))
	req.w.WriteHeader(http.StatusOK)
	_, _ = req.w.Write(s.certPEM)
}

// TLS reports whether the emulator serves https.
func (s *Server) TLS() bool { return s.certPEM != nil }
