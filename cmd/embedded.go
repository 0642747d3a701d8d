package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/health"
)

// Embedded emulator defaults: what a command talks to when no account is configured
// anywhere, so that `cosmosctl create` then `cosmosctl read` work on a fresh machine.
const (
	embeddedDatabase  = "app"
	embeddedContainer = "items"
)

// embeddedLatencies are realistic round trips from a client next to the first region:
// a few milliseconds locally, tens of milliseconds across a continent or an ocean.
var embeddedLatencies = []faults.LatencySpec{
	{Region: "East US", Operation: "all", Distribution: lognormal(2*time.Millisecond, 8*time.Millisecond)},
	{Region: "West US", Operation: "all", Distribution: lognormal(62*time.Millisecond, 90*time.Millisecond)},
	{Region: "North Europe", Operation: "all", Distribution: lognormal(75*time.Millisecond, 110*time.Millisecond)},
}

func lognormal(p50, p99 time.Duration) faults.Distribution {
	return faults.Distribution{Kind: faults.KindLognormal, P50: faults.Duration(p50), P99: faults.Duration(p99)}
}

// embeddedDataDir is where the embedded emulator keeps its data between invocations.
func embeddedDataDir() (string, error) {
	if dir := os.Getenv("COSMOSCTL_EMULATOR_DATA"); dir != "" {
		return dir, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for the embedded emulator's data (%v): set COSMOSCTL_EMULATOR_DATA or use --ephemeral", err)
	}
	return filepath.Join(cache, "cosmosctl", "emulator"), nil
}

// embeddedOption changes the embedded emulator's configuration before it starts.
type embeddedOption func(*emulator.Config)

// embeddedMultiWrite makes every region of the embedded account take writes: hedge-test
// runs a second, multi-write account next to the usual single-write one to show where
// writes go when the write region is down.
func embeddedMultiWrite(c *emulator.Config) { c.MultiWrite = true }

// embeddedConfig is the embedded emulator's configuration, data in memory.
func embeddedConfig(opts ...embeddedOption) emulator.Config {
	cfg := emulator.Config{
		Port:    0,
		Latency: embeddedLatencies,
		Databases: []emulator.DatabaseConfig{{ID: embeddedDatabase, Containers: []emulator.ContainerConfig{
			{ID: embeddedContainer, PartitionKey: []string{"/pk"}},
		}}},
	}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

// startEmbedded starts an emulator of this process's own, data in memory, on free
// loopback ports: for --ephemeral and hedge-test's scratch accounts, which nobody
// shares. The persistent data is opened by openEmbeddedData instead.
func startEmbedded(opts ...embeddedOption) (*emulator.Server, error) {
	return emulator.Start(embeddedConfig(opts...), emulator.Options{})
}

// connectEmbedded is connect with no account configured anywhere: the embedded
// emulator, data in memory (--ephemeral) or the persistent data that commands share
// (served by this process, or by another one that serves it already). It fills in the
// session and returns the endpoint and credential for the engine.
func (f *connFlags) connectEmbedded(ctx context.Context, io *IOStreams, sess *session) (string, cosmos.Credential, error) {
	if sess.settings.Auth == config.AuthAAD {
		// Azure AD means a real account: running against the local emulator instead
		// (which takes its key only) would hide a forgotten endpoint.
		return "", nil, usageErrorf("auth is aad (%s) but no account endpoint is configured: set --endpoint, COSMOSCTL_ENDPOINT or a profile; the embedded emulator takes its key only", sess.settings.Source("auth"))
	}
	var endpoint, key, where, servedBy string
	var regions int
	if f.ephemeral {
		srv, err := startEmbedded()
		if err != nil {
			return "", nil, fmt.Errorf("starting the embedded emulator: %w", err)
		}
		sess.embedded = srv
		endpoint, key, where, regions = srv.Endpoint(), srv.Key(), "in memory (--ephemeral)", len(srv.Regions())
	} else {
		dir, err := embeddedDataDir()
		if err != nil {
			return "", nil, err
		}
		data, err := openEmbeddedData(ctx, dir, "cosmosctl "+f.flags.Name(), io.ErrOut)
		if err != nil {
			var eu *embeddedUnavailableError
			if errors.As(err, &eu) || ctx.Err() != nil {
				return "", nil, err
			}
			return "", nil, fmt.Errorf("starting the embedded emulator: %w", err)
		}
		sess.shared = data
		endpoint, key, where, regions = data.endpoint(), data.key(), "data in "+data.dir, len(data.rec.Regions)
		if data.attached() {
			servedBy = data.rec.who()
		}
	}
	mk, err := cosmos.NewMasterKey(key)
	if err != nil {
		return "", nil, &UsageError{Err: fmt.Errorf("the key of the embedded emulator: %v", err)}
	}
	if sess.settings.Database == "" {
		sess.settings.Database = embeddedDatabase
	}
	if sess.settings.Container == "" {
		sess.settings.Container = embeddedContainer
	}
	// The notice is about where the data is: data elsewhere is told again. With
	// --diagnostics it is printed whenever asked.
	full := where
	if servedBy != "" {
		full += ", served by " + servedBy
	}
	if !io.quiet && !io.errJSON && (f.diagnostics || noticeDue(io, where)) {
		io.notice(fmt.Sprintf("cosmosctl: no account configured; using the embedded emulator (%d regions, %s). Set --endpoint, COSMOSCTL_ENDPOINT or a profile to use an account.", regions, full))
	} else if servedBy != "" {
		io.notice("cosmosctl: using the embedded emulator served by " + servedBy)
	}
	return endpoint, mk, nil
}

// embeddedClient builds an engine client for another embedded emulator the way connect
// builds the session's: the transport with the emulator's key, the attempt timeouts, the
// preferred regions and connection mode of the settings, and a region health store of
// its own. Nothing of it is remembered between commands. release closes the client and
// its connections.
func embeddedClient(srv *emulator.Server, s config.Settings) (client *engine.Client, release func(), err error) {
	mk, err := cosmos.NewMasterKey(srv.Key())
	if err != nil {
		return nil, nil, fmt.Errorf("the key of the embedded emulator: %v", err)
	}
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: mk, UserAgent: userAgent(), TLSConfig: srv.ClientTLSConfig()}
	hs, err := health.New(health.Config{}, clock.Real{})
	if err != nil {
		return nil, nil, err
	}
	timeouts := engine.DefaultAttemptTimeouts().Capped(s.AttemptTimeout)
	policy := retryPolicy
	client, err = engine.New(engine.Options{Endpoint: srv.Endpoint(), Transport: tr, PreferredRegions: s.PreferredRegions,
		Retry: &policy, Direct: s.ConnectionMode == config.ConnectionDirect, ThinClient: s.ConnectionMode == config.ConnectionGateway2, AttemptTimeouts: &timeouts, Health: hs})
	if err != nil {
		return nil, nil, err
	}
	return client, func() { client.Close(); tr.CloseIdleConnections() }, nil
}
