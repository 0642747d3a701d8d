package cmd

import (
	"crypto/tls"
	"crypto/x509"
	"os"

	"github.com/cosmosctl/cosmosctl/config"
)

// Direct mode (RNTBD to the replicas) and gateway2 (HTTP/2 to the Gateway 2.0 proxies)
// open TLS connections of their own, which must trust the server's certificate. A real
// account's replicas and proxies present certificates the system trusts. An emulator's
// are its own: an emulator in this process is trusted as it is; one elsewhere is
// trusted the way its banner says, SSL_CERT_FILE naming its certificate — read here at
// every command, rather than through Go's system roots, which read it once a process.

// connectionTLS is the TLS configuration of the session's RNTBD and gateway2
// connections: nil (the system's roots) when SSL_CERT_FILE is unset. A gateway-mode
// session may open RNTBD connections too (probe --replicas, hedge-test's replica
// move); only in direct and gateway2 mode is an unusable SSL_CERT_FILE an error before
// the first request.
func connectionTLS(s config.Settings, sess *session) (*tls.Config, error) {
	strict := s.ConnectionMode == config.ConnectionDirect || s.ConnectionMode == config.ConnectionGateway2
	if sess.embedded != nil {
		return sess.embedded.ClientTLSConfig(), nil
	}
	if sess.shared != nil {
		if cfg := sess.shared.clientTLS(); cfg != nil {
			return cfg, nil
		}
	}
	file := os.Getenv("SSL_CERT_FILE")
	if file == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(file)
	if err != nil && !strict {
		return nil, nil
	}
	if err != nil {
		return nil, usageErrorf("SSL_CERT_FILE names %s, which cannot be read (%v): point it at the certificate file to trust, or unset it to trust the system's certificates", file, unwrapPath(err))
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		if !strict {
			return nil, nil
		}
		return nil, usageErrorf("SSL_CERT_FILE names %s, which holds no PEM certificate: point it at the certificate file to trust (an emulator's is `cosmosctl emulator cert`), or unset it", file)
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}
