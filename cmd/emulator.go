package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// emulatorOptions are the flags of `cosmosctl emulator`.
type emulatorOptions struct {
	Host           string
	Port           int
	Regions        []string
	MultiWrite     bool
	ReplicationLag time.Duration
	// Consistency is the account's default consistency level, and MaxStalenessPrefix
	// and MaxInterval the bounds of BoundedStaleness (emulator/consistency.go).
	Consistency        string
	MaxStalenessPrefix int64
	MaxInterval        int
	Ranges             int
	FeedPageSize       int
	Database           string
	Container          string
	PartitionKey       []string
	Scenario           string
	DataDir            string
	KeyFile            string
	InsecureKey        bool
	AADTokenFile       string
	Seed               uint64
	Latency            string
	// Output is the format, once settled: table or json.
	Output string
	format formatFlags
	// EnforceThroughput throttles by provisioned throughput (emulator/throughput.go).
	EnforceThroughput bool
	// MergeEnabled refuses requests without the merge capability (emulator/reshape.go).
	MergeEnabled bool
	// TLS serves https; TLSCertFile and TLSKeyFile are a certificate of one's own;
	// TLSCertOut is where the generated certificate is written (emulator_tls.go).
	TLS         bool
	TLSCertFile string
	TLSKeyFile  string
	TLSCertOut  string
	set         func(name string) bool
	warn        io.Writer // for the key file's permission warning; nil: none
}

func newEmulatorCmd(io *IOStreams) *cobra.Command {
	opts := &emulatorOptions{warn: io.ErrOut}
	c := &cobra.Command{
		Use:   "emulator",
		Short: "Serve a local multi-region Cosmos DB account with fault injection",
		Long: `Serve a local Cosmos DB account on loopback: a global endpoint and one port per
region (by default a write region and two read regions). Official Cosmos DB SDKs
use it unmodified. Latencies and faults come from a TOML scenario file and can be
changed while it runs with the subcommands below, which talk to its control API.

By default each region answers with the round trips the embedded emulator has, as
seen from a client next to the first region: the first region ≈2 ms (p99 8 ms), the
second ≈62 ms (p99 90 ms), the others ≈75 ms (p99 110 ms). --latency none adds no
latency at all; a scenario's [[latency]] entries replace the default unless
--latency is given.

A fault rule's after and for count from the emulator's start in a scenario file,
and from the moment it is added with ` + "`cosmosctl emulator fault add`" + `.

The account key defaults to the well-known emulator key, which is public; with
--key-file the key is read from a file and never printed. Because that key is public,
a --host other than loopback (127.0.0.0/8, ::1, localhost) is refused unless
--key-file gives a key of your own or --insecure-public-key accepts that anyone who
can reach the emulator can use it. With a wildcard --host (0.0.0.0, ::) the endpoints
printed are the loopback ones, for use on this machine; from elsewhere use this
machine's address with the same ports.

It announces itself at GET /_emulator/hello, which needs no key: that it is a
cosmosctl emulator, whether it takes the well-known key, and its databases and
containers (those only with the well-known key, or to a request signed with its
key; a key of its own is never revealed). So cosmosctl's data commands need only
its endpoint (COSMOSCTL_ENDPOINT=http://127.0.0.1:8081): they take the well-known
key and its only database and container (or app and items) when none is
configured, and say so on stderr.

With --aad-token-file it also accepts Azure AD requests (authorization type=aad)
carrying exactly the token in that file, so that cosmosctl --auth aad can be tested
without Azure; it cannot validate real Azure AD tokens, and without the flag it
refuses every type=aad request. A scenario with aad_emulator_tokens = true also takes
the tokens Microsoft's emulator takes with /enableaadauthentication, which clients
make themselves (kid CosmosEmulatorPrimaryMaster, the account key as the signature,
within nbf and exp), as every SDK's emulator tests do.

With --enforce-throughput (enforce_throughput = true in a scenario, or
` + "`cosmosctl emulator enforce-throughput on`" + ` while it runs) it throttles like the
service: a container's RU/s (its manual throughput, its autoscale maximum, or its
database's shared throughput) is split evenly over its partition key ranges, each
with one second's share in each region, refilled continuously; an item operation
whose charge does not fit answers 429 with substatus 3200 and x-ms-retry-after-ms,
is charged 0 RU and is not applied. Account and metadata requests are not
throttled. Without it, throughput is bookkeeping only and 429s come from fault
rules.

As the service does, it refuses (401) a request whose x-ms-date is more than 15
minutes from its clock, so a captured signature cannot be replayed; it answers 400
to a partition key value over 2 KB, an id over 1,023 bytes or a document nested
deeper than 128 levels; and it cuts off a request whose body has not arrived 30 s
after it started. Handler panics and server errors are logged on stderr.

With --tls (tls = true in a scenario) every endpoint serves https, as Microsoft's
emulator does, with a self-signed certificate generated at start (ECDSA P-256, for
localhost, 127.0.0.1, ::1 and --host) or your own (--tls-cert-file, --tls-key-file).
The generated certificate is written to --tls-cert-out, else DIR/tls-cert.pem with
--data-dir, else a temporary file removed at stop; the banner and -o json name it,
GET /_explorer/emulator.pem serves it without a key, and ` + "`cosmosctl emulator cert`" + `
prints it. Clients trust it with SSL_CERT_FILE (Go, cosmosctl), NODE_EXTRA_CA_CERTS
(Node.js) or REQUESTS_CA_BUNDLE (Python). examples/microsoft-emulator.toml is the shape
of Microsoft's emulator: one region, port 8081, https, the well-known key.

--consistency sets the account's default consistency level, which GET / reports and
reads keep to across regions: strong makes every write visible in every region
before it is acknowledged (a write then takes --replication-lag longer, as on the
service; not with --multi-write), bounded keeps read regions within
--max-staleness-prefix versions and --max-interval seconds, session (the default)
answers 404/1002 to a session token a region has not caught up with, prefix and
eventual serve what a region has. A request's x-ms-consistency-level may relax the
level, never strengthen it (400, as the service).

Data is kept in memory unless --data-dir is given; then every acknowledged write
is on disk before it is acknowledged, and survives a restart or a kill -9. A record
that cannot be read at start is skipped with a notice, not a refusal to start.
While it runs it says in DIR/serving.json where it serves the data: a second
emulator on the same directory is refused at once, naming this one, and when DIR
is the embedded emulator's (COSMOSCTL_EMULATOR_DATA, or its default), data
commands with no account configured use this emulator (see cosmosctl help
embedded-emulator).`,
		Example: `  # three regions on ports 8081 (global), 8082-8084, database "app", container "items"
  cosmosctl emulator

  # five named regions, 2 s replication lag, persistent data
  cosmosctl emulator --regions "East US,West US,North Europe,Southeast Asia,Brazil South" \
    --replication-lag 2s --data-dir ~/.cache/cosmos-rehearsal

  # no added latency: every region answers as fast as loopback
  cosmosctl emulator --latency none

  # throttle by provisioned throughput: 400 RU/s over 4 ranges is 100 RU/s per range
  cosmosctl emulator --enforce-throughput

  # a brownout rehearsal from a scenario file
  cosmosctl emulator --scenario brownout.toml

  # https with a generated certificate, written where clients can trust it
  cosmosctl emulator --tls --tls-cert-out emulator.pem

  # while it runs, from another shell:
  cosmosctl emulator fault add --region "East US" --op reads --effect status --status 503
  cosmosctl emulator failover "West US"`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			opts.set = c.Flags().Changed
			var err error
			if opts.Output, err = opts.format.apply(io, envFormat()); err != nil {
				return err
			}
			cfg, err := opts.config()
			if err != nil {
				return err
			}
			return runEmulator(c.Context(), io, opts, cfg)
		},
	}
	f := c.Flags()
	f.StringVar(&opts.Host, "host", emulator.DefaultHost, "address to bind; anything but loopback exposes the emulator to the network")
	f.IntVar(&opts.Port, "port", 8081, "global endpoint port; regions use the next ports; 0 picks free ports")
	f.StringSliceVar(&opts.Regions, "regions", nil, `region names in failover order, the first being the write region (default "East US,West US,North Europe")`)
	f.BoolVar(&opts.MultiWrite, "multi-write", false, "make every region writable")
	f.DurationVar(&opts.ReplicationLag, "replication-lag", 0, "time for a write to reach the other regions")
	f.StringVar(&opts.Consistency, "consistency", "session", "the account's default consistency level: strong, bounded, session, prefix or eventual (or the service's names Strong, BoundedStaleness, Session, ConsistentPrefix, Eventual)")
	f.Int64Var(&opts.MaxStalenessPrefix, "max-staleness-prefix", 0, "with --consistency bounded, how many versions a read region may lag (K; default 100 for one region, 100000 for several, the service's minimum)")
	f.IntVar(&opts.MaxInterval, "max-interval", 0, "with --consistency bounded, how many seconds a read region may lag (T; default 5 for one region, 300 for several, the service's minimum)")
	f.IntVar(&opts.Ranges, "ranges", emulator.DefaultRanges, "physical partitions (partition key ranges) per container")
	f.IntVar(&opts.FeedPageSize, "feed-page-size", 0, "serve the metadata feeds (databases, containers, offers, partition key ranges) in pages of at most this many, whatever the client asks, as the service pages a big container's ranges (default: as large as the client asks)")
	f.StringVar(&opts.Database, "database", "app", `database to pre-create ("" for none)`)
	f.StringVar(&opts.Container, "container", "items", `container to pre-create in --database ("" for none)`)
	f.StringSliceVar(&opts.PartitionKey, "partition-key", []string{"/pk"}, "partition key path(s) of the pre-created container; several paths make a hierarchical key")
	f.StringVar(&opts.Scenario, "scenario", "", "TOML scenario file: regions, latencies, faults, containers (flags given explicitly win)")
	f.StringVar(&opts.DataDir, "data-dir", "", "persist data in this directory, and say so in its serving.json for other cosmosctl commands (default: in memory)")
	f.StringVar(&opts.KeyFile, "key-file", "", "file holding the account key to require (default: the well-known emulator key)")
	f.BoolVar(&opts.InsecureKey, "insecure-public-key", false, "allow a non-loopback --host with the public well-known key: anyone who can reach the emulator can use it")
	f.StringVar(&opts.AADTokenFile, "aad-token-file", "", "file holding the one Azure AD token to accept as type=aad (any string; for testing --auth aad; default: refuse Azure AD requests)")
	f.Uint64Var(&opts.Seed, "seed", 0, "seed for latency sampling and fault probabilities (0: random)")
	f.StringVar(&opts.Latency, "latency", latencyRealistic, `base latency of the regions: "realistic" (≈2 ms for the first region, ≈62 ms and ≈75 ms for the others) or "none"`)
	opts.format.textAlias = true
	opts.format.register(f, config.OutputTable, config.OutputJSON)
	f.Lookup("output").Usage = "how to print the endpoints: table, or json (one line) ($COSMOSCTL_OUTPUT; default table)"
	f.BoolVar(&opts.TLS, "tls", false, "serve https on every endpoint, with a self-signed certificate generated at start (as Microsoft's emulator)")
	f.StringVar(&opts.TLSCertOut, "tls-cert-out", "", "with --tls, write the generated certificate (PEM) here (default: DIR/tls-cert.pem with --data-dir, else a temporary file)")
	f.StringVar(&opts.TLSCertFile, "tls-cert-file", "", "serve https with this certificate (PEM, with --tls-key-file) instead of a generated one")
	f.StringVar(&opts.TLSKeyFile, "tls-key-file", "", "the private key (PEM) of --tls-cert-file")
	f.BoolVar(&opts.MergeEnabled, "merge-enabled", false, "act as an account with partition merge enabled: refuse with 400 every request whose x-ms-cosmos-sdk-supportedcapabilities lacks the PartitionMerge bit (as the service refuses SDKs without merge support)")
	f.BoolVar(&opts.EnforceThroughput, "enforce-throughput", false, "throttle item operations by provisioned throughput: 429/3200 with a retry-after once a range's share of its container's RU/s is spent (default: bookkeeping only)")

	c.AddCommand(newEmulatorStatusCmd(io), newEmulatorFailoverCmd(io), newEmulatorFaultCmd(io),
		newEmulatorLatencyCmd(io), newEmulatorReplicationCmd(io), newEmulatorEnforceThroughputCmd(io),
		newEmulatorCertCmd(io), newEmulatorSplitCmd(io), newEmulatorMergeCmd(io))
	return c
}

// config merges the scenario file and the flags: a flag given on the command line wins
// over the scenario, the scenario over the flag defaults.
func (o *emulatorOptions) config() (emulator.Config, error) {
	var cfg emulator.Config
	if o.ReplicationLag < 0 {
		return cfg, usageErrorf("--replication-lag must not be negative (got %s)", o.ReplicationLag)
	}
	latency := o.Latency
	if latency == "" {
		latency = latencyRealistic
	}
	if latency != latencyRealistic && latency != latencyNone {
		return cfg, usageErrorf("--latency must be %s or %s, not %q", latencyRealistic, latencyNone, o.Latency)
	}
	if o.FeedPageSize < 0 {
		return cfg, usageErrorf("--feed-page-size must be positive (or 0: pages as large as the client asks), not %d", o.FeedPageSize)
	}
	if o.Port < 0 || o.Port > 65535 {
		return cfg, usageErrorf("--port must be between 0 and 65535, not %d", o.Port)
	}
	if o.Scenario != "" {
		if err := emulator.LoadScenario(o.Scenario, &cfg); err != nil {
			return cfg, &UsageError{Err: err}
		}
	}
	pick := func(name string, scenarioSet bool) bool { return o.set(name) || !scenarioSet }
	if pick("host", cfg.Host != "") {
		cfg.Host = o.Host
	}
	if pick("port", cfg.Port != 0) {
		cfg.Port = o.Port
	}
	if o.set("regions") || len(cfg.Regions) == 0 {
		names := o.Regions
		if len(names) == 0 {
			names = emulator.DefaultRegions
		}
		cfg.Regions = nil
		for _, n := range names {
			cfg.Regions = append(cfg.Regions, emulator.RegionConfig{Name: strings.TrimSpace(n)})
		}
	}
	if o.set("latency") || len(cfg.Latency) == 0 {
		cfg.Latency = nil
		if latency == latencyRealistic {
			cfg.Latency = standaloneLatencies(cfg.Regions)
		}
	}
	if o.set("multi-write") {
		cfg.MultiWrite = o.MultiWrite
	}
	if pick("replication-lag", cfg.ReplicationLag != 0) {
		cfg.ReplicationLag = faults.Duration(o.ReplicationLag)
	}
	if o.set("consistency") || cfg.Consistency == "" && o.Consistency != "" {
		level, err := emulator.ParseConsistency(o.Consistency)
		if err != nil {
			return cfg, &UsageError{Err: fmt.Errorf("--%v", err)}
		}
		cfg.Consistency = level
	}
	if pick("max-staleness-prefix", cfg.MaxStalenessPrefix != 0) {
		cfg.MaxStalenessPrefix = o.MaxStalenessPrefix
	}
	if pick("max-interval", cfg.MaxIntervalSeconds != 0) {
		cfg.MaxIntervalSeconds = o.MaxInterval
	}
	if pick("ranges", cfg.Ranges != 0) {
		cfg.Ranges = o.Ranges
	}
	if pick("feed-page-size", cfg.FeedPageSize != 0) {
		cfg.FeedPageSize = o.FeedPageSize
	}
	if pick("data-dir", cfg.DataDir != "") {
		cfg.DataDir = o.DataDir
	}
	if o.set("enforce-throughput") {
		cfg.EnforceThroughput = o.EnforceThroughput
	}
	if o.set("merge-enabled") {
		cfg.MergeEnabled = o.MergeEnabled
	}
	if err := o.tlsConfig(&cfg); err != nil {
		return cfg, err
	}
	if pick("seed", cfg.Seed != 0) {
		cfg.Seed = o.Seed
	}
	if (o.set("database") || len(cfg.Databases) == 0) && o.Database != "" {
		db := emulator.DatabaseConfig{ID: o.Database}
		if o.Container != "" {
			db.Containers = []emulator.ContainerConfig{{ID: o.Container, PartitionKey: o.PartitionKey}}
		}
		cfg.Databases = append(cfg.Databases, db)
	}
	if o.KeyFile != "" {
		key, err := readKeyFile(o.KeyFile, o.warn)
		if err != nil {
			return cfg, err
		}
		cfg.Key = key
	}
	if !isLoopbackHost(cfg.Host) && (cfg.Key == "" || cfg.Key == cosmos.EmulatorKey) && !o.InsecureKey {
		return cfg, usageErrorf("--host %s exposes the emulator to the network, and the well-known key is public: give --key-file FILE with a key of your own, or --insecure-public-key to allow it anyway", cfg.Host)
	}
	if o.AADTokenFile != "" {
		tok, err := readAADTokenFile(o.AADTokenFile)
		if err != nil {
			return cfg, err
		}
		cfg.AADToken = tok
	}
	return cfg, nil
}

// readAADTokenFile reads the emulator's test token. It must be something a client can
// send as a bearer token; errors never quote it.
func readAADTokenFile(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return "", usageErrorf("Azure AD token file %s does not exist: check the --aad-token-file path", path)
		}
		return "", usageErrorf("cannot read Azure AD token file %s: %v", path, err)
	}
	tok := strings.TrimSpace(string(data))
	if tok == "" {
		return "", usageErrorf("Azure AD token file %s is empty: write the test token to accept into it", path)
	}
	if _, err := cosmos.NewStaticToken(tok, path); err != nil {
		return "", &UsageError{Err: err}
	}
	return tok, nil
}

func runEmulator(ctx context.Context, io *IOStreams, opts *emulatorOptions, cfg emulator.Config) error {
	if err := checkDataDirFree(ctx, &cfg); err != nil {
		return err
	}
	var cert servedCertificate
	if cfg.TLS && cfg.TLSCertFile == "" {
		certPEM, keyPEM, err := emulator.GenerateCertificate([]string{cfg.Host}, time.Now())
		if err != nil {
			return fmt.Errorf("generating the TLS certificate: %v", err)
		}
		cfg.TLSCertPEM, cfg.TLSKeyPEM = certPEM, keyPEM
		if cert, err = writeCertificate(certPEM, cfg, opts); err != nil {
			return err
		}
		defer cert.remove()
	}
	srv, err := emulator.Start(cfg, emulator.Options{Version: thisBuild().Version})
	if err != nil {
		return &UsageError{Err: dataDirInUse(cfg, err)}
	}
	defer srv.Close()
	if cfg.TLSCertFile != "" {
		if cert, err = writeCertificate(srv.CertificatePEM(), cfg, opts); err != nil {
			return err
		}
	}
	// The RNTBD and Gateway 2.0 listeners always use TLS: without --tls their
	// certificate is one of their own, written where direct-mode clients can trust it.
	direct := cert
	if direct.path == "" {
		if direct, err = writeDirectCertificate(srv.CertificatePEM()); err != nil {
			return err
		}
		defer direct.remove()
	}
	st := srv.State()
	wildcard := isWildcardHost(cfg.Host)
	endpoint := localURL(srv.Endpoint(), wildcard)
	for i := range st.Regions {
		st.Regions[i].Endpoint = localURL(st.Regions[i].Endpoint, wildcard)
	}
	if cfg.DataDir != "" {
		// Data commands with no account configured use the data where this serves it,
		// when it is the embedded emulator's directory (see embedded_share.go).
		rec := newServingRecord(srv, cfg.DataDir, "cosmosctl emulator", false, endpoint, st.Regions)
		if err := writeServingRecord(cfg.DataDir, rec); err != nil {
			fmt.Fprintf(io.ErrOut, "warning: other commands cannot find this emulator's data: %v\n", err)
		}
		defer markStopped(cfg.DataDir, rec) // before srv.Close lets go of the data
	}
	if config.JSONOutput(opts.Output) {
		out := emulatorServingJSON{Endpoint: endpoint, AAD: cfg.AADToken != "" || cfg.AADEmulatorTokens, Regions: emulatorRegionsJSON(st.Regions),
			Latency: latencyTableJSON(st.Latency), DataDir: stringOrNull(cfg.DataDir), EnforceThroughput: st.EnforceThroughput,
			TLS: srv.TLS(), TLSCertificateFile: stringOrNull(cert.path), TLSCertificateSHA256: stringOrNull(cert.sha256),
			DirectCertificateFile: stringOrNull(direct.path)}
		if srv.UsesWellKnownKey() {
			key := srv.Key()
			out.Key = &key
		}
		data, _ := json.Marshal(out)
		fmt.Fprintln(io.Out, string(data))
	} else {
		fmt.Fprintf(io.Out, "endpoint  %s\n", endpoint)
		if srv.UsesWellKnownKey() {
			fmt.Fprintf(io.Out, "key       %s  (the well-known emulator key)\n", srv.Key())
		} else {
			fmt.Fprintf(io.Out, "key       (from %s, not shown)\n", opts.KeyFile)
		}
		if cfg.AADToken != "" {
			from := "the scenario"
			if opts.AADTokenFile != "" {
				from = opts.AADTokenFile
			}
			fmt.Fprintf(io.Out, "aad       accepts the Azure AD test token from %s (not shown)\n", from)
		}
		if cfg.AADEmulatorTokens {
			fmt.Fprintln(io.Out, "aad       accepts Azure AD tokens made as for Microsoft's emulator (kid CosmosEmulatorPrimaryMaster, signed with the key)")
		}
		for _, r := range st.Regions {
			role := "read"
			if r.Write {
				role = "write"
			}
			fmt.Fprintf(io.Out, "region    %-16s %-6s %s\n", r.Name, role, r.Endpoint)
		}
		for _, r := range st.Regions {
			fmt.Fprintf(io.Out, "replicas  %-16s rntbd  %s  gateway 2.0 %s\n", r.Name, localURL(r.Replicas, wildcard), localURL(r.ThinClient, wildcard))
		}
		if p := srv.Account().UserConsistencyPolicy; p.DefaultConsistencyLevel != "Session" {
			fmt.Fprintf(io.Out, "consistency %s%s\n", p.DefaultConsistencyLevel, stalenessBounds(p))
		}
		if cfg.DataDir != "" {
			fmt.Fprintf(io.Out, "data      %s\n", cfg.DataDir)
		}
		if st.EnforceThroughput {
			fmt.Fprintln(io.Out, "throttle  by provisioned throughput: 429/3200 once a range's share of its container's RU/s is spent")
		}
		if cert.path != "" {
			fmt.Fprintf(io.Out, "tls       https; certificate %s  (sha256 %s)\n", cert.path, cert.sha256)
		}
	}
	if cert.path != "" && !config.JSONOutput(opts.Output) {
		fmt.Fprintf(io.ErrOut, "clients trust the certificate with SSL_CERT_FILE=%[1]s (Go, cosmosctl), NODE_EXTRA_CA_CERTS=%[1]s (Node.js), REQUESTS_CA_BUNDLE=%[1]s (Python)\n", cert.path)
	} else if direct.path != "" && !config.JSONOutput(opts.Output) {
		fmt.Fprintf(io.ErrOut, "direct mode (RNTBD) and Gateway 2.0 use TLS: clients trust the certificate with SSL_CERT_FILE=%s\n", direct.path)
	}
	if opts.Scenario != "" {
		fmt.Fprintf(io.ErrOut, "scenario: %d latency setting(s), %d fault rule(s)\n", len(st.Latency), len(st.Faults))
	}
	if !config.JSONOutput(opts.Output) {
		fmt.Fprintln(io.ErrOut, latencySummary(st.Latency))
	}
	if h := cfg.Host; !isLoopbackHost(h) {
		if wildcard {
			fmt.Fprintf(io.ErrOut, "listening on all interfaces (%s): the endpoints above are for this machine; from elsewhere use its address with the same ports\n", h)
		}
		who := "anyone who can reach it and has the key from " + opts.KeyFile + " can use it"
		if srv.UsesWellKnownKey() {
			who = "the well-known key is public (--insecure-public-key), so anyone who can reach it can use it"
		}
		fmt.Fprintf(io.ErrOut, "warning: listening on %s, not loopback: %s\n", h, who)
	}
	fmt.Fprintln(io.ErrOut, "emulator running; press Ctrl-C to stop")
	<-ctx.Done()
	fmt.Fprintln(io.ErrOut, "stopping emulator")
	return nil
}

// isLoopbackHost reports whether binding to host keeps the emulator on this machine:
// "localhost", any 127.0.0.0/8 address and ::1 (with or without brackets). An empty
// host is the default, loopback.
func isLoopbackHost(host string) bool {
	h := strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if h == "" || strings.EqualFold(strings.TrimSuffix(h, "."), "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// isWildcardHost reports whether host binds every interface (0.0.0.0, ::).
func isWildcardHost(host string) bool {
	ip := net.ParseIP(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	return ip != nil && ip.IsUnspecified()
}

// localURL turns a listener's URL such as http://[::]:8081 into one a client on this
// machine can use: a wildcard listener (dual-stack in Go, whichever wildcard was given)
// also accepts connections on 127.0.0.1.
func localURL(raw string, wildcard bool) string {
	if !wildcard {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Host = net.JoinHostPort("127.0.0.1", u.Port())
	return u.String()
}

// stalenessBounds describes the bounds of a BoundedStaleness policy, "" for other levels.
func stalenessBounds(p cosmos.ConsistencyPolicy) string {
	if p.DefaultConsistencyLevel != "BoundedStaleness" {
		return ""
	}
	return fmt.Sprintf(" (at most %d versions or %d s behind)", p.MaxStalenessPrefix, p.MaxIntervalInSeconds)
}
