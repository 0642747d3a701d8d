package emulator_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
)

// startTLSTest starts an emulator serving https (a generated certificate) on host
// (default loopback) with the default regions and db/items partitioned by /pk.
func startTLSTest(t *testing.T, host string) *emulator.Server {
	t.Helper()
	s, err := emulator.Start(emulator.Config{TLS: true, Host: host, Databases: []emulator.DatabaseConfig{{
		ID: "db", Containers: []emulator.ContainerConfig{{ID: "items", PartitionKey: []string{"/pk"}}},
	}}}, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// urlRecorder records the scheme and host of every attempt and the region that served
// it.
type urlRecorder struct {
	mu   sync.Mutex
	seen []string // "https://127.0.0.1:port East US"
}

func (r *urlRecorder) Do(req *policy.Request) (*http.Response, error) {
	resp, err := req.Next()
	if resp != nil {
		r.mu.Lock()
		r.seen = append(r.seen, req.Raw().URL.Scheme+"://"+req.Raw().URL.Host+" "+resp.Header.Get(cosmos.HeaderServedRegion))
		r.mu.Unlock()
	}
	return resp, err
}

// TestOfficialGoSDKOverTLS: azcosmos, trusting the emulator's certificate through its
// transport, writes in the write region and reads in the preferred read region, every
// request over https (the regional endpoints come from the account document); without
// the certificate it fails on the certificate.
func TestOfficialGoSDKOverTLS(t *testing.T) {
	s := startTLSTest(t, "")
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.CertificatePEM()) {
		t.Fatal("no PEM certificate")
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	t.Cleanup(hc.CloseIdleConnections)
	cred, err := azcosmos.NewKeyCredential(s.Key())
	if err != nil {
		t.Fatal(err)
	}
	rec := &urlRecorder{}
	opts := &azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: hc}, PreferredRegions: []string{"North Europe"}}
	opts.PerRetryPolicies = []policy.Policy{rec}
	client, err := azcosmos.NewClientWithKey(s.Endpoint(), cred, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	container, err := client.NewContainer("db", "items")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pk := azcosmos.NewPartitionKeyString("a")
	if _, err := container.CreateItem(ctx, pk, []byte(`{"id":"1","pk":"a"}`), nil); err != nil {
		t.Fatalf("create over TLS: %v", err)
	}
	resp, err := container.ReadItem(ctx, pk, "1", nil)
	if err != nil {
		t.Fatalf("read over TLS: %v", err)
	}
	if !strings.Contains(string(resp.Value), `"id":"1"`) {
		t.Fatalf("read %s", resp.Value)
	}

	rec.mu.Lock()
	seen := append([]string(nil), rec.seen...)
	rec.mu.Unlock()
	north, _ := s.RegionEndpoint("North Europe")
	readThere := false
	for _, a := range seen {
		if !strings.HasPrefix(a, "https://") {
			t.Errorf("the SDK sent a request over plain http: %s", a)
		}
		readThere = readThere || a == north+" North Europe"
	}
	if !readThere {
		t.Errorf("no request reached the preferred region's https endpoint %s; the SDK's attempts:\n%s", north, strings.Join(seen, "\n"))
	}

	// Without the certificate the SDK cannot connect, and says why.
	untrusting, err := azcosmos.NewClientWithKey(s.Endpoint(), cred, &azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: &http.Client{Transport: &http.Transport{}}, Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(untrusting.Close)
	other, _ := untrusting.NewContainer("db", "items")
	_, err = other.ReadItem(ctx, pk, "1", nil)
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Fatalf("the SDK without the certificate: %v; want a certificate error", err)
	}
}

// TestOfficialJavaScriptSDKOverTLS runs sdkcompat/js/tls.test.js: @azure/cosmos trusts
// the emulator's certificate through NODE_EXTRA_CA_CERTS alone, as a project's CI would
// trust Microsoft's emulator, and reads in a read region over https.
func TestOfficialJavaScriptSDKOverTLS(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "sdkcompat", "js"))
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		skipOrFail(t, "node is not installed: install Node.js, then `npm ci` in %s", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@azure", "cosmos")); err != nil {
		skipOrFail(t, "the JavaScript SDK is not installed: run `npm ci` in %s", dir)
	}
	s := startTLSTest(t, "")
	certFile := filepath.Join(t.TempDir(), "emulator.pem")
	if err := os.WriteFile(certFile, s.CertificatePEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "tls.test.js")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "COSMOS_ENDPOINT="+s.Endpoint(), "COSMOS_KEY="+s.Key(),
		"NODE_EXTRA_CA_CERTS="+certFile, "NODE_TLS_REJECT_UNAUTHORIZED=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the JavaScript SDK over TLS failed: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// TestOfficialPythonSDKOverTLS runs sdkcompat/python/tls.py: the SDK trusts the
// emulator's certificate through REQUESTS_CA_BUNDLE alone and reads in a read region
// over https. The emulator listens on 127.0.0.2: SDK 3.1.1 skips verification for
// localhost and 127.0.0.1, so there the variable would prove nothing.
func TestOfficialPythonSDKOverTLS(t *testing.T) {
	script, err := filepath.Abs(filepath.Join("..", "sdkcompat", "python", "tls.py"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(systemPython, "-c", "import azure.cosmos.cosmos_client").CombinedOutput(); err != nil {
		skipOrFail(t, "the official Python SDK is not installed: apt-get install python3-azure-cosmos (for "+systemPython+"): %v\n%s", err, out)
	}
	s := startTLSTest(t, "127.0.0.2")
	certFile := filepath.Join(t.TempDir(), "emulator.pem")
	if err := os.WriteFile(certFile, s.CertificatePEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, systemPython, script)
	cmd.Env = append(os.Environ(), "COSMOS_ENDPOINT="+s.Endpoint(), "COSMOS_KEY="+s.Key(), "REQUESTS_CA_BUNDLE="+certFile)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the Python SDK over TLS failed: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
