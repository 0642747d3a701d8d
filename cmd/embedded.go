package cmd

import (
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

// startEmbedded starts the emulator inside this process on free loopback ports.
func startEmbedded(ephemeral bool, opts ...embeddedOption) (*emulator.Server, string, error) {
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
	where := "in memory (--ephemeral)"
	if !ephemeral {
		dir, err := embeddedDataDir()
		if err != nil {
			return nil, "", err
		}
		cfg.DataDir = dir
		where = "data in " + dir
	}
	srv, err := emulator.Start(cfg, emulator.Options{})
	if err != nil {
		return nil, "", err
	}
	return srv, where, nil
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
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: mk, UserAgent: userAgent()}
	hs, err := health.New(health.Config{}, clock.Real{})
	if err != nil {
		return nil, nil, err
	}
	timeouts := engine.DefaultAttemptTimeouts().Capped(s.AttemptTimeout)
	client, err = engine.New(engine.Options{Endpoint: srv.Endpoint(), Transport: tr, PreferredRegions: s.PreferredRegions,
		Direct: s.ConnectionMode == config.ConnectionDirect, AttemptTimeouts: &timeouts, Health: hs})
	if err != nil {
		return nil, nil, err
	}
	return client, func() { client.Close(); tr.HTTP.CloseIdleConnections() }, nil
}
