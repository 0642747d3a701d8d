package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/hedging"
	"github.com/cosmosctl/cosmosctl/output"
	"github.com/cosmosctl/cosmosctl/retries"
)

// retryPolicy is the engine's retry policy for a command's session: the default, whose
// counts and waits match the SDKs'. Tests of a region in trouble shorten its waits
// (shortenRetryWaits), keeping its counts: what they show is how often a write is sent
// and when a command gives up, not how long it sleeps in between.
var retryPolicy = retries.DefaultPolicy()

// connFlags are the flags every data command shares: the settings flags, and how to
// reach and show the account for this one command.
type connFlags struct {
	settingsFlags
	region      string
	diagnostics bool
	// diagnosticsJSON: --diagnostics=json, the diagnostics as NDJSON events on stderr.
	diagnosticsJSON bool
	events          *eventWriter
	noColor         bool
	ephemeral       bool
	// noReplicaHealth turns replica health ordering off in direct mode, to compare.
	noReplicaHealth bool
	// noContainer says the command uses no database or container (regions, probe
	// --account-only), so that an emulator is not asked for them (emulator_detect.go).
	noContainer bool
	// optionalContainer says a command that needs no container uses one when it has
	// one (regions measures a read in it): an emulator's only database and container
	// are taken when nothing names them, and none is no error.
	optionalContainer bool
	// databaseOnly says the command uses a database but names its containers itself
	// (the container commands), so that an emulator is not asked for a container.
	databaseOnly bool
	// consistency is --consistency of the commands that read (read, query, changes,
	// export): the level their reads ask for, "" for the account's.
	consistency string
	flags       *pflag.FlagSet
}

// withConsistency registers --consistency, on commands that read.
func (f *connFlags) withConsistency(fl *pflag.FlagSet) {
	fl.StringVar(&f.consistency, "consistency", "", "read at this consistency level, which may relax the account's, never strengthen it: bounded, session, prefix or eventual (or strong on a Strong account) (default: the account's)")
}

// readConsistency is --consistency as the service spells it, "" when not given.
func (f *connFlags) readConsistency() (string, error) {
	if f.consistency == "" && (f.flags == nil || !f.flags.Changed("consistency")) {
		return "", nil
	}
	level, err := cosmos.ParseConsistency(f.consistency)
	if err != nil {
		return "", usageErrorf("--%v", err)
	}
	return level, nil
}

func (f *connFlags) register(c *cobra.Command) {
	fl := c.Flags()
	f.flags = fl
	f.settingsFlags.register(fl)
	fl.StringVar(&f.region, "region", "", "send this command to one region only (every other region excluded)")
	fl.Var(diagnosticsValue{on: &f.diagnostics, json: &f.diagnosticsJSON}, "diagnostics", "print the per-attempt diagnostics table on stderr even when it is not a terminal; --diagnostics=false: never, not even on a terminal; --diagnostics=json: one JSON object a line on stderr for each read, query page, change feed poll or import write, every attempt's anatomy in it (docs/json/diagnostics.schema.json)")
	fl.Lookup("diagnostics").NoOptDefVal = "true"
	fl.BoolVar(&f.noColor, "no-color", false, "no colour (also: NO_COLOR set to anything)")
	fl.BoolVar(&f.ephemeral, "ephemeral", false, "with the embedded emulator, use one of this command's own with data in memory, not the data that commands share in the user's cache directory")
	fl.BoolVar(&f.noReplicaHealth, "no-replica-health", false, "direct mode: ignore replica health when choosing a replica (for comparison only)")
}

// resolve validates the flags and resolves the settings, printing configuration
// warnings on stderr.
func (f *connFlags) resolve(io *IOStreams) (config.Settings, error) {
	if f.e2eTimeout < 0 {
		return config.Settings{}, usageErrorf("--e2e-timeout must not be negative (got %s); give a duration such as 2s", f.e2eTimeout)
	}
	if err := f.format.check(io); err != nil {
		return config.Settings{}, err
	}
	if _, err := f.readConsistency(); err != nil {
		return config.Settings{}, err
	}
	s, err := f.settingsFlags.resolve(f.flags)
	if err != nil {
		return s, err
	}
	if s.Output, err = f.format.apply(io, s.Output); err != nil {
		return s, err
	}
	for _, w := range s.Warnings {
		fmt.Fprintln(io.ErrOut, "warning: "+w)
	}
	return s, nil
}

// session is a connected engine, and the embedded emulator behind it if there is one:
// embedded is an emulator of this process's own (--ephemeral), which the command may
// change (hedge-test's scenarios); shared is the persistent data, which other commands
// may use at the same time.
type session struct {
	client   *engine.Client
	settings config.Settings
	embedded *emulator.Server
	shared   *embeddedData
	memory   *memory
}

// learn gives an adaptive hedging strategy what earlier commands learned of this
// account's latencies, and saves what it learns when the session closes; other
// strategies are left alone.
func (s *session) learn(strategy hedging.Strategy) {
	if a, ok := strategy.(*hedging.Adaptive); ok && s.memory != nil {
		s.memory.learnInto(a)
	}
}

func (s *session) Close() {
	if s.client != nil {
		s.client.Close()
	}
	if s.memory != nil {
		s.memory.save()
	}
	if s.embedded != nil {
		s.embedded.Close()
	}
	if s.shared != nil {
		s.shared.Close()
	}
}

// connect builds the engine for the resolved settings. With no endpoint configured
// anywhere it uses the embedded emulator (connectEmbedded).
func (f *connFlags) connect(ctx context.Context, io *IOStreams, s config.Settings) (*session, error) {
	sess := &session{settings: s}
	endpoint := s.Endpoint
	var cred cosmos.Credential
	if !s.Configured() {
		var err error
		if endpoint, cred, err = f.connectEmbedded(ctx, io, sess); err != nil {
			sess.Close()
			return nil, err
		}
	} else {
		var err error
		// A key, database or container configured nowhere may be announced by the
		// endpoint, when it is a cosmosctl emulator.
		if s, err = f.withAnnounced(ctx, io, s); err != nil {
			return nil, err
		}
		sess.settings = s
		if cred, err = credential(ctx, s); err != nil {
			return nil, err
		}
	}
	tlsConfig, err := connectionTLS(s, sess)
	if err != nil {
		sess.Close()
		return nil, err
	}
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred, UserAgent: userAgent(), TLSConfig: tlsConfig}
	if sess.shared != nil && sess.shared.attached() {
		tr.HTTP = sess.shared.client(tr.HTTP)
	}
	// An embedded emulator listens on new ports every run: nothing about it is worth
	// remembering. A configured account's topology is always remembered (it only saves
	// a lookup); its region health and learned latencies unless health memory is off.
	mem := openMemory(io.ErrOut, endpoint, s.Configured() && s.HealthMemory, s.Configured())
	sess.memory = mem
	timeouts := engine.DefaultAttemptTimeouts().Capped(s.AttemptTimeout)
	policy := retryPolicy
	client, err := engine.New(engine.Options{Endpoint: endpoint, Transport: tr, PreferredRegions: s.PreferredRegions,
		Retry: &policy, Direct: s.ConnectionMode == config.ConnectionDirect, ThinClient: s.ConnectionMode == config.ConnectionGateway2, NoReplicaHealth: f.noReplicaHealth,
		AttemptTimeouts: &timeouts, Health: mem.health, LookupRegions: lookupRegions(f.region),
		KnownAccount: mem.known, KnownAccountFresh: mem.knownFresh, KnownAccountAt: mem.knownAt, OnAccount: mem.accountFetched})
	if err != nil {
		sess.Close()
		return nil, err
	}
	sess.client = client
	return sess, nil
}

// credential builds what authorizes requests to a configured account: the account key,
// or Azure AD tokens (auth = aad) from a token file or the default Azure credential
// chain.
//
// The first Azure AD token is fetched here, before any request, so that a missing login
// fails once with one clear line instead of on every attempt. What fails is decided by
// cause: a token file that is missing, unreadable or holds no token is bad input (exit
// 2), like a missing key; a credential that cannot produce a token (nobody logged in,
// a secret Azure AD refuses, a token file's token expired) is an authentication failure
// (exit 7), as is an account answering 401 or 403 to a token.
func credential(ctx context.Context, s config.Settings) (cosmos.Credential, error) {
	if s.Auth != config.AuthAAD {
		if s.Key == "" {
			return nil, usageErrorf("no key for %s: set COSMOSCTL_KEY, use --key-file, or put key_file in the profile; or use Azure AD with --auth aad", s.Endpoint)
		}
		mk, err := cosmos.NewMasterKey(s.Key.Reveal())
		if err != nil {
			return nil, &UsageError{Err: fmt.Errorf("the key from %s: %v", s.KeySource, err)}
		}
		return mk, nil
	}
	var src cosmos.TokenSource
	if s.AADTokenFile != "" {
		st, err := cosmos.NewStaticToken(s.AADToken.Reveal(), s.AADTokenFile+" ("+s.Source("aad_token_file")+")")
		if err != nil {
			return nil, &UsageError{Err: err}
		}
		src = st
	} else {
		az, err := cosmos.NewDefaultAzureTokenSource(s.Endpoint)
		if err != nil {
			return nil, &UsageError{Err: err}
		}
		src = az
	}
	cred := cosmos.NewAADCredential(src)
	if _, err := cred.Token(ctx); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &AuthError{Err: err}
	}
	return cred, nil
}

// open resolves the settings and connects: what a command does first when nothing of
// its own comes between the two.
func (f *connFlags) open(ctx context.Context, io *IOStreams) (*session, error) {
	settings, err := f.resolve(io)
	if err != nil {
		return nil, err
	}
	return f.connect(ctx, io, settings)
}

// readTemplate is the template of the reads a command sends (query pages, change feed
// polls, export pages): the end-to-end timeout, the hedging strategy with the adaptive
// thresholds earlier commands learned for the account, and the excluded regions.
func (f *connFlags) readTemplate(ctx context.Context, sess *session) (engine.Operation, error) {
	op := engine.Operation{E2ETimeout: sess.settings.E2ETimeout}
	var err error
	if op.Consistency, err = f.readConsistency(); err != nil {
		return op, err
	}
	if op.Hedge, err = f.hedge.strategy(sess.settings); err != nil {
		return op, err
	}
	sess.learn(op.Hedge)
	op.ExcludeRegions, err = f.excludes(ctx, sess)
	return op, err
}

// excludes returns the regions to exclude: --exclude (or its environment and profile
// settings), and with --region every region but that one.
func (f *connFlags) excludes(ctx context.Context, sess *session) ([]string, error) {
	ex := sess.settings.ExcludeRegions
	if f.region == "" {
		return ex, nil
	}
	acct, err := sess.client.Account(ctx)
	if err != nil {
		return nil, err
	}
	found := false
	for _, name := range acct.ReadRegions() {
		if cosmos.SameRegion(name, f.region) {
			found = true
			continue
		}
		ex = append(ex, name)
	}
	if !found {
		return nil, usageErrorf("--region %q is not a region of this account; its regions are %s", f.region, strings.Join(acct.ReadRegions(), ", "))
	}
	return ex, nil
}

// terminalDiagnostics says whether what a command shows a person on stderr by default
// (the per-attempt diagnostics table, a query's or a feed's line of totals) is shown:
// when stderr is a terminal, unless --diagnostics=false says never.
func (f *connFlags) terminalDiagnostics(io *IOStreams) bool {
	if f.flags != nil && f.flags.Changed("diagnostics") && !f.diagnostics {
		return false
	}
	return io.ErrTTY
}

// eventsTo is where --diagnostics=json writes its events: stderr, one writer for the
// command, shared by its goroutines.
func (f *connFlags) eventsTo(io *IOStreams) *eventWriter {
	if f.events == nil {
		f.events = &eventWriter{w: io.ErrOut}
	}
	return f.events
}

func (f *connFlags) styles(io *IOStreams) output.Styles {
	return io.errStyles(f.noColor)
}

// wantJSON reports JSON output: json, or ndjson, which a command that does not stream
// items prints as json.
func (f *connFlags) wantJSON(s config.Settings) bool { return config.JSONOutput(s.Output) }

func getenv(k string) string { return os.Getenv(k) }

// isInput reports engine input errors, which are usage errors to the user.
func asUsage(err error) error {
	var ie *engine.InputError
	if errors.As(err, &ie) {
		return &UsageError{Err: err}
	}
	return err
}

func lookupRegions(region string) []string {
	if region == "" {
		return nil
	}
	return []string{region}
}
