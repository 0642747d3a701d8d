// Package testkit is what cosmosctl's command tests share: an emulator account the
// environment points at, an environment cleared of the developer's own settings, the
// built binary, and a buffer safe to read while a command writes to it.
//
// It is imported by tests only (cmd's own, e2e/ and acceptance/), and it must not import
// cmd: cmd's in-package tests use it too, and an import of cmd here would be a cycle.
package testkit

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator"
)

// AccountKey is a well-formed master key that is no emulator's, for tests of key handling.
const AccountKey = "dGVzdC1hY2NvdW50LWtleS1ub3QtYS1yZWFsLW9uZS0wMTIzNDU2Nzg5YWJjZGVm"

// Account starts an emulator with database "app" / container "items" (partition key
// /pk), isolates the environment (Isolate) and points it at the emulator.
func Account(t *testing.T, mutate ...func(*emulator.Config)) *emulator.Server {
	t.Helper()
	cfg := emulator.Config{Databases: []emulator.DatabaseConfig{{ID: "app", Containers: []emulator.ContainerConfig{{ID: "items", PartitionKey: []string{"/pk"}}}}}}
	for _, m := range mutate {
		m(&cfg)
	}
	srv, err := emulator.Start(cfg, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	Isolate(t)
	t.Setenv("COSMOSCTL_ENDPOINT", srv.Endpoint())
	t.Setenv("COSMOSCTL_KEY", srv.Key())
	t.Setenv("COSMOSCTL_DATABASE", "app")
	t.Setenv("COSMOSCTL_CONTAINER", "items")
	TrustEmulator(t, srv)
	return srv
}

// Isolate clears every COSMOSCTL_ variable (and NO_COLOR) and points the config file,
// the embedded emulator's data and the remembered state at the test's temporary
// directories, so that a developer's own settings never leak into a test.
func Isolate(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "COSMOSCTL_") || name == "NO_COLOR" {
			t.Setenv(name, "")
			os.Unsetenv(name)
		}
	}
	t.Setenv("COSMOSCTL_CONFIG", filepath.Join(t.TempDir(), "config.toml"))
	t.Setenv("COSMOSCTL_EMULATOR_DATA", filepath.Join(t.TempDir(), "emulator"))
	t.Setenv("COSMOSCTL_STATE_DIR", filepath.Join(t.TempDir(), "state"))
}

// Buffer is a bytes.Buffer safe to read while a command writes to it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// Binary builds the real cosmosctl binary once per test process and returns its path.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "cosmosctl-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "cosmosctl")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/cosmosctl/cosmosctl").CombinedOutput()
		if err != nil {
			buildErr = err
			binPath = string(out)
		}
	})
	if buildErr != nil {
		t.Fatalf("building cosmosctl: %v\n%s", buildErr, binPath)
	}
	return binPath
}

// RunBinary runs the built binary once with env and stdin, bounded by a minute, and
// returns its exit code, stdout and stderr.
func RunBinary(t *testing.T, bin string, env []string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errOut.String()
}

// Main runs a package's tests with what commands remember between invocations (region
// health, topologies, learned thresholds) kept out of the developer's cache directory:
// every test that does not isolate itself shares one scratch directory, removed at the
// end. A package's TestMain calls it.
func Main(m *testing.M) {
	dir, err := os.MkdirTemp("", "cosmosctl-test-state-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("COSMOSCTL_STATE_DIR", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// FreePorts returns the first of n consecutive loopback ports that are free now, for a
// program that takes a base port and the ones after it (the standalone emulator and
// its regions), below Linux's ephemeral range so that outgoing connections do not take
// them meanwhile.
func FreePorts(t testing.TB, n int) int {
	t.Helper()
	for try := 0; try < 100; try++ {
		base := 20000 + rand.IntN(12000)
		var held []net.Listener
		for p := base; p < base+n; p++ {
			ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
			if err != nil {
				break
			}
			held = append(held, ln)
		}
		for _, ln := range held {
			ln.Close()
		}
		if len(held) == n {
			return base
		}
	}
	t.Fatalf("no %d consecutive free ports found in 100 tries", n)
	return 0
}

// TrustEmulator writes srv's certificate (its RNTBD replicas' and Gateway 2.0
// endpoints', and its HTTPS endpoints' when it serves TLS) to a file of the test's and
// points SSL_CERT_FILE at it, as the emulator's banner tells a user to: cosmosctl reads
// the file for its direct-mode and gateway2 connections at each command.
func TrustEmulator(t *testing.T, srv *emulator.Server) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "emulator.pem")
	if err := os.WriteFile(path, srv.CertificatePEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SSL_CERT_FILE", path)
}
