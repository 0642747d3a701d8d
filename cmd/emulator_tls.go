package cmd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
)

// `cosmosctl emulator --tls` serves https as Microsoft's emulator does (emulator/tls.go):
// the certificate it generates is written to a PEM file that clients trust —
// SSL_CERT_FILE for Go programs and cosmosctl, NODE_EXTRA_CA_CERTS for Node.js,
// REQUESTS_CA_BUNDLE for Python — and is served at GET /_explorer/emulator.pem, which
// `cosmosctl emulator cert` fetches.

// certificateFileName is the generated certificate's file in --data-dir.
const certificateFileName = "tls-cert.pem"

// tlsConfig applies the TLS flags to cfg (over a scenario's tls settings).
func (o *emulatorOptions) tlsConfig(cfg *emulator.Config) error {
	if o.set("tls") {
		cfg.TLS = o.TLS
	}
	if (o.TLSCertFile == "") != (o.TLSKeyFile == "") {
		return usageErrorf("--tls-cert-file and --tls-key-file go together: a certificate of your own and its key")
	}
	if o.TLSCertFile != "" {
		cfg.TLSCertFile, cfg.TLSKeyFile, cfg.TLS = o.TLSCertFile, o.TLSKeyFile, true
	}
	if o.TLSCertOut != "" {
		if cfg.TLSCertFile != "" {
			return usageErrorf("--tls-cert-out is where a generated certificate is written; with a certificate of your own (%s) there is none: give that file to clients", cfg.TLSCertFile)
		}
		if !cfg.TLS {
			return usageErrorf("--tls-cert-out needs --tls (or tls = true in the scenario)")
		}
	}
	return nil
}

// servedCertificate is the file clients trust: the generated certificate as written,
// or a certificate of one's own as given.
type servedCertificate struct {
	path, sha256 string
	temporary    bool // written to a temporary file, removed when the emulator stops
}

func (c servedCertificate) remove() {
	if c.temporary {
		_ = os.Remove(c.path)
	}
}

// writeCertificate writes a TLS emulator's generated certificate (pemBytes) where
// clients can read it: --tls-cert-out, else DIR/tls-cert.pem with --data-dir, else a
// temporary file; a certificate of one's own (--tls-cert-file) is named, not written. It
// runs before the emulator listens, so that the file is there, complete (renamed into
// place), before any endpoint answers: a script that starts the emulator in the
// background and then trusts the file cannot read it half-written or not at all.
func writeCertificate(pemBytes []byte, cfg emulator.Config, opts *emulatorOptions) (servedCertificate, error) {
	sum, err := emulator.CertificateFingerprint(pemBytes)
	if err != nil {
		return servedCertificate{}, err
	}
	if cfg.TLSCertFile != "" {
		abs, _ := filepath.Abs(cfg.TLSCertFile)
		return servedCertificate{path: abs, sha256: sum}, nil
	}
	out := servedCertificate{path: opts.TLSCertOut, sha256: sum}
	if out.path == "" && cfg.DataDir != "" {
		out.path = filepath.Join(cfg.DataDir, certificateFileName)
	}
	if out.path == "" {
		f, err := os.CreateTemp("", "cosmosctl-emulator-*.pem")
		if err != nil {
			return servedCertificate{}, fmt.Errorf("writing the TLS certificate: %v (give --tls-cert-out PATH)", err)
		}
		out.path, out.temporary = f.Name(), true
		_, err = f.Write(pemBytes)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			out.remove()
			return servedCertificate{}, fmt.Errorf("writing the TLS certificate to %s: %v (give --tls-cert-out PATH)", out.path, err)
		}
		return out, nil
	}
	if abs, err := filepath.Abs(out.path); err == nil {
		out.path = abs
	}
	tmp, err := os.CreateTemp(filepath.Dir(out.path), ".tls-cert-*.pem")
	if err == nil {
		_, err = tmp.Write(pemBytes)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Chmod(tmp.Name(), 0o644) // a certificate is public; its key never leaves memory
		}
		if err == nil {
			err = os.Rename(tmp.Name(), out.path)
		}
		if err != nil {
			_ = os.Remove(tmp.Name())
		}
	}
	if err != nil {
		return servedCertificate{}, &UsageError{Err: fmt.Errorf("cannot write the TLS certificate to %s: %v", out.path, err)}
	}
	return out, nil
}

// emulatorCertJSON is `cosmosctl emulator cert -o json`.
type emulatorCertJSON struct {
	Endpoint string `json:"endpoint"`
	// CertificatePEM is the certificate the emulator serves https with.
	CertificatePEM string `json:"certificate_pem"`
	SHA256         string `json:"sha256"`
	// Verified says the connection that fetched it verified the emulator against the
	// certificates this machine trusts; false: fetched as curl --insecure would.
	Verified bool `json:"verified"`
}

func newEmulatorCertCmd(io *IOStreams) *cobra.Command {
	opts := &controlOptions{io: io}
	c := &cobra.Command{
		Use:   "cert",
		Short: "Print the certificate of an emulator serving https (--tls)",
		Long: `Print, as PEM, the certificate a running ` + "`cosmosctl emulator --tls`" + ` serves https
with, so that a client can be told to trust it. It is fetched from the emulator's
GET /_explorer/emulator.pem, which needs no key (Microsoft's emulator serves its
certificate at the same path, so this works against it too).

The emulator cannot be verified before its certificate is trusted, so the fetch
accepts whatever certificate the endpoint presents, as curl --insecure does, unless
this machine already trusts it; stderr then says so and gives the certificate's
SHA-256 fingerprint, to compare with the one the emulator printed at start. The
emulator also writes the certificate to a file at start (its banner names it):
reading that file needs no network at all.`,
		Example: `  cosmosctl emulator cert --endpoint https://127.0.0.1:8081 > emulator.pem
  SSL_CERT_FILE=emulator.pem COSMOSCTL_ENDPOINT=https://127.0.0.1:8081 cosmosctl read 1 --pk a`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			var err error
			if opts.Output, err = opts.format.apply(io, envFormat()); err != nil {
				return err
			}
			t, err := opts.resolveControlTarget(c.ErrOrStderr())
			if err != nil {
				return err
			}
			got, err := fetchCertificate(c.Context(), t.endpoint)
			if err != nil {
				return err
			}
			if !got.Verified {
				fmt.Fprintf(io.ErrOut, "cosmosctl: fetched from %s without verifying it (nothing here trusts it yet); sha256 %s: compare with the emulator's banner\n", got.Endpoint, got.SHA256)
			}
			if config.JSONOutput(opts.Output) {
				return printJSON(io, got)
			}
			_, err = io.Out.Write([]byte(got.CertificatePEM))
			return err
		},
	}
	opts.addFlags(c)
	return c
}

// fetchCertificate GETs endpoint's /_explorer/emulator.pem: verified when this machine
// trusts the emulator already, else without verification (see the command's help).
func fetchCertificate(ctx context.Context, endpoint string) (emulatorCertJSON, error) {
	base := strings.TrimRight(endpoint, "/")
	if !strings.HasPrefix(base, "https://") {
		if strings.HasPrefix(base, "http://") {
			return emulatorCertJSON{}, usageErrorf("%s is plain http, which has no certificate: an emulator started with --tls serves https://%s", endpoint, strings.TrimPrefix(base, "http://"))
		}
		return emulatorCertJSON{}, usageErrorf("the emulator endpoint %q must be a URL such as https://127.0.0.1:8081", endpoint)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	get := func(insecure bool) ([]byte, error) {
		hc := cosmos.NewHTTPClient()
		defer hc.CloseIdleConnections()
		if insecure {
			// Only for fetching the certificate to be trusted, as curl --insecure in
			// Microsoft's instructions; the answer is printed, never used to connect.
			hc.Transport.(*http.Transport).TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+emulator.CertificatePath, nil)
		if err != nil {
			return nil, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			return nil, &certAnswerError{fmt.Errorf("%s%s answered %d: %s (is it an emulator started with --tls?)", base, emulator.CertificatePath, resp.StatusCode, strings.TrimSpace(string(body)))}
		}
		return body, nil
	}
	out := emulatorCertJSON{Endpoint: base, Verified: true}
	body, err := get(false)
	if untrustedCertificate(err) {
		out.Verified = false
		body, err = get(true)
	}
	var answer *certAnswerError
	if errors.As(err, &answer) {
		return out, answer.error
	}
	if err != nil {
		return out, &cosmos.NetworkError{Endpoint: base, Err: err}
	}
	sum, ferr := emulator.CertificateFingerprint(body)
	if ferr != nil {
		return out, fmt.Errorf("%s%s did not answer a PEM certificate", base, emulator.CertificatePath)
	}
	out.CertificatePEM, out.SHA256 = string(body), sum
	return out, nil
}

// certAnswerError is an endpoint that answered, but not with a certificate: no
// network failure.
type certAnswerError struct{ error }

// untrustedCertificate says err is a TLS endpoint whose certificate this machine does
// not trust: an answer from a running server, which asking again will not change.
func untrustedCertificate(err error) bool {
	var unknown x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var hostname x509.HostnameError
	return errors.As(err, &unknown) || errors.As(err, &invalid) || errors.As(err, &hostname)
}

// withTrustHint adds to an untrusted certificate's error how to trust an emulator's.
func withTrustHint(err error) error {
	if !untrustedCertificate(err) {
		return err
	}
	return fmt.Errorf("%w: if it is `cosmosctl emulator --tls`, trust its certificate: SSL_CERT_FILE=FILE, the file its banner names (or `cosmosctl emulator cert > FILE`)", err)
}

// writeDirectCertificate writes the certificate of the RNTBD and Gateway 2.0 listeners
// of an emulator without --tls to a temporary file, removed at stop.
func writeDirectCertificate(pemBytes []byte) (servedCertificate, error) {
	sum, err := emulator.CertificateFingerprint(pemBytes)
	if err != nil {
		return servedCertificate{}, err
	}
	f, err := os.CreateTemp("", "cosmosctl-emulator-direct-*.pem")
	if err != nil {
		return servedCertificate{}, fmt.Errorf("writing the direct-mode certificate: %v", err)
	}
	out := servedCertificate{path: f.Name(), sha256: sum, temporary: true}
	_, err = f.Write(pemBytes)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		out.remove()
		return servedCertificate{}, fmt.Errorf("writing the direct-mode certificate to %s: %v", out.path, err)
	}
	return out, nil
}
