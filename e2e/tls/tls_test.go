// Package tls_test runs the cosmosctl binary against `cosmosctl emulator` serving https
// in the shape of Microsoft's emulator (examples/microsoft-emulator.toml): the data
// and control commands trust its certificate through SSL_CERT_FILE alone, as any Go
// program would, and fail clearly without it or over plain http.
package tls_test

import (
	"bufio"
	"context"
	"encoding/json"
	"encoding/pem"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// served is the line `cosmosctl emulator -o json` prints once it serves.
type served struct {
	Endpoint string  `json:"endpoint"`
	Key      *string `json:"key"`
	TLS      bool    `json:"tls"`
	CertFile *string `json:"tls_certificate_file"`
	SHA256   *string `json:"tls_certificate_sha256"`
	Regions  []struct {
		Region   string `json:"region"`
		Endpoint string `json:"endpoint"`
	} `json:"regions"`
}

// startEmulator runs the binary's emulator with the Microsoft-shaped scenario on free
// ports and returns what it printed once serving; it is stopped when the test ends.
func startEmulator(t *testing.T, bin string, env []string, args ...string) served {
	t.Helper()
	base := testkit.FreePorts(t, 2)
	scenario, err := filepath.Abs(filepath.Join("..", "..", "examples", "microsoft-emulator.toml"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, append([]string{"emulator", "--scenario", scenario, "--port", strconv.Itoa(base), "-o", "json"}, args...)...)
	cmd.Env = env
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	var errOut testkit.Buffer
	cmd.Stderr = &errOut
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	// The JSON line comes once every endpoint listens and the certificate is written.
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
	}()
	select {
	case l, ok := <-line:
		if !ok {
			t.Fatalf("the emulator printed nothing; stderr:\n%s", errOut.String())
		}
		var s served
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			t.Fatalf("the emulator's JSON line %q: %v", l, err)
		}
		if s.Endpoint != "https://127.0.0.1:"+strconv.Itoa(base) {
			t.Fatalf("endpoint %s, want https on port %d", s.Endpoint, base)
		}
		return s
	case <-time.After(2 * time.Minute):
		t.Fatalf("the emulator did not serve within 2 minutes; stderr:\n%s", errOut.String())
	}
	return served{}
}

func without(env []string, names ...string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		keep := true
		for _, n := range names {
			keep = keep && name != n
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}

func TestCosmosctlAgainstAMicrosoftShapedTLSEmulator(t *testing.T) {
	testkit.Isolate(t)
	bin := testkit.Binary(t)
	base := without(os.Environ(), "SSL_CERT_FILE", "SSL_CERT_DIR")
	s := startEmulator(t, bin, base)

	if !s.TLS || s.CertFile == nil || s.SHA256 == nil || s.Key == nil || *s.Key != cosmos.EmulatorKey {
		t.Fatalf("the emulator's JSON line: %+v; want tls, its certificate file and fingerprint, the well-known key", s)
	}
	if len(s.Regions) != 1 || !strings.HasPrefix(s.Regions[0].Endpoint, "https://") {
		t.Fatalf("regions %+v; want one, on https", s.Regions)
	}
	certPEM, err := os.ReadFile(*s.CertFile)
	if err != nil || !strings.Contains(string(certPEM), "BEGIN CERTIFICATE") {
		t.Fatalf("the certificate file %s: %v\n%s", *s.CertFile, err, certPEM)
	}

	trusting := append(append([]string{}, base...), "SSL_CERT_FILE="+*s.CertFile, "COSMOSCTL_ENDPOINT="+s.Endpoint)
	// Control commands: the readiness probe and the certificate, verified.
	if code, _, stderr := testkit.RunBinary(t, bin, trusting, "", "emulator", "status", "--wait", "60s"); code != 0 {
		t.Fatalf("emulator status --wait over TLS: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr := testkit.RunBinary(t, bin, trusting, "", "emulator", "cert")
	if code != 0 || stdout != string(certPEM) || strings.Contains(stderr, "without verifying") {
		t.Fatalf("emulator cert, trusting the certificate: exit %d, stderr %q, printed the file's certificate: %v", code, stderr, stdout == string(certPEM))
	}

	// Data commands: the key, database and container are announced; SSL_CERT_FILE is
	// all they are told about TLS.
	doc := `{"id":"1","pk":"a","v":42}`
	if code, _, stderr := testkit.RunBinary(t, bin, trusting, doc, "create", "-f", "-"); code != 0 {
		t.Fatalf("create over TLS: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr = testkit.RunBinary(t, bin, trusting, "", "read", "1", "--pk", "a", "-o", "json", "--jq", ".item.v")
	if code != 0 || strings.TrimSpace(stdout) != "42" {
		t.Fatalf("read over TLS: exit %d, stdout %q\n%s", code, stdout, stderr)
	}

	// Without the certificate: a certificate error that says how to trust it.
	untrusting := append(append([]string{}, base...), "COSMOSCTL_ENDPOINT="+s.Endpoint)
	code, _, stderr = testkit.RunBinary(t, bin, untrusting, "", "emulator", "status", "--wait", "60s")
	if code == 0 || !strings.Contains(stderr, "certificate") || !strings.Contains(stderr, "SSL_CERT_FILE") {
		t.Fatalf("emulator status without the certificate: exit %d; want a certificate error naming SSL_CERT_FILE\n%s", code, stderr)
	}
	code, stdout, stderr = testkit.RunBinary(t, bin, untrusting, "", "emulator", "cert")
	if code != 0 || stdout != string(certPEM) || !strings.Contains(stderr, "without verifying") || !strings.Contains(stderr, *s.SHA256) {
		t.Fatalf("emulator cert without trusting it: exit %d, stderr %q; want the certificate, a note and its fingerprint", code, stderr)
	}
	if code, _, stderr := testkit.RunBinary(t, bin, untrusting, "", "read", "1", "--pk", "a", "--key-file", writeKey(t), "--database", "app", "--container", "items"); code == 0 || !strings.Contains(stderr, "certificate") {
		t.Fatalf("read without the certificate: exit %d; want a certificate error\n%s", code, stderr)
	}

	// Plain http to the https endpoint: refused, saying to use https.
	plain := "http://" + strings.TrimPrefix(s.Endpoint, "https://")
	code, _, stderr = testkit.RunBinary(t, bin, append(untrusting, "COSMOSCTL_EMULATOR_ENDPOINT="+plain), "", "emulator", "status")
	if code == 0 || !strings.Contains(stderr, "serves https, not http") {
		t.Fatalf("emulator status over plain http: exit %d; want it to say the endpoint serves https\n%s", code, stderr)
	}
}

// writeKey writes the well-known key to a file, so that a command without the
// certificate does not need the hello (which it could not read) to learn it.
func writeKey(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(p, []byte(cosmos.EmulatorKey), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The certificate file is there, whole, before any endpoint accepts a connection: a
// script that starts the emulator in the background and trusts the file as soon as
// the port answers (SSL_CERT_FILE is read once per process) never finds it missing.
func TestTheCertificateFileIsWrittenBeforeTheEmulatorListens(t *testing.T) {
	bin := testkit.Binary(t)
	testkit.Isolate(t)
	port := testkit.FreePorts(t, 4)
	certFile := filepath.Join(t.TempDir(), "emulator.pem")
	cmd := exec.Command(bin, "emulator", "--tls", "--port", strconv.Itoa(port), "--tls-cert-out", certFile)
	cmd.Env = os.Environ()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(time.Minute)
	for {
		conn, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
		if err == nil {
			conn.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the emulator did not listen on %d within a minute: %v", port, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	pemBytes, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatalf("the port answers but the certificate file is not there: %v", err)
	}
	if b, _ := pem.Decode(pemBytes); b == nil || b.Type != "CERTIFICATE" {
		t.Fatalf("the certificate file holds no certificate: %q", pemBytes)
	}
}
