package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
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

// startEmbedded starts the emulator inside this process on free loopback ports.
func startEmbedded(ephemeral bool) (*emulator.Server, string, error) {
	cfg := emulator.Config{
		Port:    0,
		Latency: embeddedLatencies,
		Databases: []emulator.DatabaseConfig{{ID: embeddedDatabase, Containers: []emulator.ContainerConfig{
			{ID: embeddedContainer, PartitionKey: []string{"/pk"}},
		}}},
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
