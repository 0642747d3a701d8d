package cmd

import (
	"fmt"
	"io"
	"os"

	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/cosmos"
)

// defaultEmulatorEndpoint is where `cosmosctl emulator` listens by default, and where
// the control subcommands go when nothing says otherwise.
const defaultEmulatorEndpoint = "http://127.0.0.1:8081"

// The control subcommands (status, latency, fault, failover, …) talk to the emulator
// that the data commands would use, resolved the same way, setting by setting:
//
//	endpoint  --endpoint > COSMOSCTL_EMULATOR_ENDPOINT > COSMOSCTL_ENDPOINT (or
//	          COSMOSCTL_CONNECTION_STRING) > the profile's > http://127.0.0.1:8081
//	key       --key-file > COSMOSCTL_KEY or COSMOSCTL_KEY_FILE > the profile's >
//	          the well-known emulator key
//
// so that a runbook that exports COSMOSCTL_ENDPOINT, or a profile for the rehearsal
// emulator, sends its fault injection to the emulator its reads go to, not to whatever
// listens on 8081. COSMOSCTL_EMULATOR_ENDPOINT, the control commands' own variable,
// beats COSMOSCTL_ENDPOINT: it is the more specific of the two.

// controlTarget is the emulator a control subcommand talks to, and where its endpoint
// came from ("flag", "env COSMOSCTL_ENDPOINT", "profile rehearsal", "default"); and
// for a subcommand that acts on a container, the database and container configured
// (flag > COSMOSCTL_DATABASE, COSMOSCTL_CONTAINER > the profile's; "" for none).
type controlTarget struct {
	endpoint, source, key string
	database, container   string
}

// resolveControlTarget resolves the endpoint and key of a control subcommand; warn gets
// the configuration's warnings (a key file others can read).
func (o *controlOptions) resolveControlTarget(warn io.Writer) (controlTarget, error) {
	path, err := config.Path(os.LookupEnv)
	if err != nil {
		return controlTarget{}, &UsageError{Err: err}
	}
	var fl config.Flags
	if o.cmd != nil {
		f := o.cmd.Flags()
		if f.Changed("profile") {
			fl.Profile = &o.Profile
		}
		if f.Changed("endpoint") {
			fl.Endpoint = &o.Endpoint
		}
		if f.Changed("key-file") {
			fl.KeyFile = &o.KeyFile
		}
		if f.Changed("database") {
			fl.Database = &o.Database
		}
		if f.Changed("container") {
			fl.Container = &o.Container
		}
	}
	env := func(name string) (string, bool) {
		if name == "COSMOSCTL_ENDPOINT" {
			if v, ok := os.LookupEnv("COSMOSCTL_EMULATOR_ENDPOINT"); ok && v != "" {
				return v, true
			}
		}
		return os.LookupEnv(name)
	}
	st, err := config.Resolve(path, fl, env)
	if err != nil {
		return controlTarget{}, &UsageError{Err: err}
	}
	if warn != nil {
		for _, w := range st.Warnings {
			fmt.Fprintln(warn, "warning: "+w)
		}
	}
	t := controlTarget{endpoint: st.Endpoint, source: st.Source("endpoint"), key: st.Key.Reveal(), database: st.Database, container: st.Container}
	if t.source == "env COSMOSCTL_ENDPOINT" && os.Getenv("COSMOSCTL_EMULATOR_ENDPOINT") != "" {
		t.source = "env COSMOSCTL_EMULATOR_ENDPOINT"
	}
	if t.endpoint == "" {
		t.endpoint, t.source = defaultEmulatorEndpoint, config.SourceDefault
	}
	if t.key == "" {
		t.key = cosmos.EmulatorKey
	}
	return t, nil
}
