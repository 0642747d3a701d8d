package emulator

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// Config is everything an emulator needs to start. It is also the shape of a TOML
// scenario file, so a rehearsal can be checked into a repository and shared.
type Config struct {
	// Account is the account id reported by GET /. It must not be "localhost": the JS
	// SDK ignores the location lists of an account with that id.
	Account string `toml:"account"`
	// Host is the address every listener binds to (loopback unless told otherwise).
	Host string `toml:"host"`
	// Port is the global endpoint's port; 0 picks a free port.
	Port int `toml:"port"`
	// Regions in failover priority order; the first is the write region.
	Regions []RegionConfig `toml:"regions"`
	// MultiWrite makes every region writable.
	MultiWrite bool `toml:"multi_write"`
	// Consistency is the account's default consistency level, as GET / reports it:
	// Strong, BoundedStaleness, Session (the default), ConsistentPrefix or Eventual
	// (short names and any case accepted). Reads keep to it across regions
	// (consistency.go): Strong makes every write visible in every region before it
	// is acknowledged, BoundedStaleness keeps read regions within its bounds, Session
	// honours session tokens, ConsistentPrefix and Eventual serve what a region has.
	Consistency string `toml:"consistency"`
	// MaxStalenessPrefix (K, versions) and MaxIntervalSeconds (T) are the bounds of a
	// BoundedStaleness account, as userConsistencyPolicy reports them; 0 = the
	// defaults (defaultStalenessBounds). Only with BoundedStaleness.
	MaxStalenessPrefix int64 `toml:"max_staleness_prefix"`
	MaxIntervalSeconds int   `toml:"max_interval_seconds"`
	// ReplicationLag is how long a write takes to become visible in other regions.
	ReplicationLag faults.Duration `toml:"replication_lag"`
	// Ranges is the number of physical partitions of each container (default 4).
	Ranges int `toml:"ranges"`
	// FeedPageSize caps every page of the metadata feeds (databases, containers, offers,
	// partition key ranges, and queries of them) at this many resources, whatever
	// x-ms-max-item-count asks for: the service pages those feeds too, the partition key
	// ranges of a container with many physical partitions above all (feedpage.go), and a
	// client that reads only the first page loses data. 0: pages as large as the client
	// asks (100 without x-ms-max-item-count, 1000 for -1).
	FeedPageSize int `toml:"feed_page_size"`
	// Replicas is the size of every replica set (region × container × range), served
	// through the gateway's //addresses/ endpoint (default 4: a primary and three
	// secondaries).
	Replicas int `toml:"replicas"`
	// GatewayCacheTTL is how long the gateway's address cache keeps answering
	// addresses requests without x-ms-force-refresh with a replica set that has
	// changed (default 30s).
	GatewayCacheTTL faults.Duration `toml:"gateway_cache_ttl"`
	// ReplicaProtocol is what the addresses feed advertises: "rntbd" (the default, as
	// the service: rntbd://host:port/apps/… on the region's RNTBD listener, rntbd.go) or
	// "http" (legacy: the same replica paths on the region's HTTP port, for clients
	// that cannot speak RNTBD yet). Both are served either way; only the feed differs.
	ReplicaProtocol string `toml:"replica_protocol"`
	// ReplicaMoves are replica moves whose After counts from emulator start.
	ReplicaMoves []ReplicaMove `toml:"replica_move"`
	// EnforceThroughput throttles item operations by their container's provisioned
	// throughput (429/3200 with a retry-after, throughput.go); false: offers are
	// bookkeeping only and 429s come from fault rules.
	EnforceThroughput bool `toml:"enforce_throughput"`
	// MergeEnabled is an account with partition merge enabled: it refuses, with a 400,
	// every request that does not declare the merge capability in
	// x-ms-cosmos-sdk-supportedcapabilities (reshape.go).
	MergeEnabled bool `toml:"merge_enabled"`
	// Splits and Merges change containers' partition key ranges while the emulator
	// runs, moving their documents (splits.go): a split when a range holds so many
	// documents, a merge at a time after start.
	Splits []SplitRule `toml:"split"`
	Merges []MergeRule `toml:"merge"`
	// Databases and containers to create at start (skipped when they already exist).
	Databases []DatabaseConfig `toml:"databases"`
	// Latency and Faults form the initial fault-injection state.
	Latency []faults.LatencySpec `toml:"latency"`
	Faults  []faults.Rule        `toml:"fault"`
	// Seed makes latency sampling and fault probabilities reproducible (0 = random).
	Seed uint64 `toml:"seed"`
	// DataDir persists the store in DataDir/cosmosctl-emulator.db; empty = in memory.
	DataDir string `toml:"data_dir"`
	// Key is the account key; empty = the well-known emulator key. Never put a real
	// account's key in a scenario file: the emulator is for rehearsal.
	Key string `toml:"-"`
	// AADToken is the one Azure AD access token the emulator accepts (a request with
	// authorization type=aad&ver=1.0&sig=<AADToken>), so that cosmosctl's Azure AD path
	// is tested end to end; empty = Azure AD requests are refused. The emulator cannot
	// validate real tokens: it compares, so any string will do as a test token.
	AADToken string `toml:"aad_token"`
	// AADEmulatorTokens also accepts the Azure AD tokens Microsoft's emulator takes when
	// started with /enableaadauthentication: a JWT a client makes itself, kid
	// CosmosEmulatorPrimaryMaster, the account key as its signature, within nbf and exp
	// (aadtoken.go). Every official SDK's emulator tests make such tokens.
	AADEmulatorTokens bool `toml:"aad_emulator_tokens"`
	// TLS serves https on every endpoint, with a self-signed certificate generated at
	// start unless TLSCertFile and TLSKeyFile give one (tls.go).
	TLS bool `toml:"tls"`
	// TLSCertFile and TLSKeyFile are PEM files of a certificate of one's own and its
	// key, both or neither; they imply TLS.
	TLSCertFile string `toml:"tls_cert_file"`
	TLSKeyFile  string `toml:"tls_key_file"`
	// TLSCertPEM and TLSKeyPEM are a certificate generated before the emulator starts
	// (GenerateCertificate), so that its file exists before any endpoint answers; they
	// imply TLS.
	TLSCertPEM []byte `toml:"-"`
	TLSKeyPEM  []byte `toml:"-"`
}

// RegionConfig is one region of the emulated account.
type RegionConfig struct {
	Name string `toml:"name"`
	// Port of the regional endpoint; 0 = Config.Port+index+1 when Config.Port is set,
	// otherwise a free port.
	Port int `toml:"port"`
	// GlobalEndpoint serves the region on the global endpoint itself, with no port of
	// its own: the account lists the global endpoint's URL for it, as Microsoft's
	// emulator does for its one region. Only for an account of one region.
	GlobalEndpoint bool `toml:"global_endpoint"`
}

// DatabaseConfig is a database to pre-create, with its containers.
type DatabaseConfig struct {
	ID         string            `toml:"id"`
	Containers []ContainerConfig `toml:"containers"`
}

// ContainerConfig is a container to pre-create.
type ContainerConfig struct {
	ID string `toml:"id"`
	// PartitionKey paths; one path is a Hash key, several a hierarchical (MultiHash) key.
	PartitionKey []string `toml:"partition_key"`
}

// DefaultRegions are the regions of an emulator started without any: a write region and
// two read regions.
var DefaultRegions = []string{"East US", "West US", "North Europe"}

// Default settings.
const (
	DefaultAccount = "cosmosctl-emulator"
	DefaultHost    = "127.0.0.1"
	DefaultRanges  = 4
	// DefaultConsistency is the account's default consistency level unless told.
	DefaultConsistency = "Session"
	// MaxDocumentBytes is the service's 2 MB document limit.
	MaxDocumentBytes = 2 * 1024 * 1024
)

// LoadScenario reads a TOML scenario file into cfg, on top of what cfg already holds.
// Unknown keys are errors: a misspelt fault field that silently does nothing would make a
// rehearsal lie.
func LoadScenario(path string, cfg *Config) error {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("scenario file %s does not exist: check the path given to --scenario", path)
		}
		return fmt.Errorf("reading scenario file: %w", err)
	}
	md, err := toml.Decode(string(data), cfg)
	if err != nil {
		return fmt.Errorf("scenario file %s: %v", path, err)
	}
	if undec := md.Undecoded(); len(undec) > 0 {
		keys := make([]string, len(undec))
		for i, k := range undec {
			keys[i] = k.String()
		}
		return fmt.Errorf("scenario file %s: unknown setting %s (see `cosmosctl help scenarios`)", path, strings.Join(keys, ", "))
	}
	return nil
}

// withDefaults fills unset fields and validates the result.
func (c Config) withDefaults() (Config, error) {
	if c.Account == "" {
		c.Account = DefaultAccount
	}
	if strings.EqualFold(c.Account, "localhost") {
		return c, errors.New(`account id must not be "localhost": the JS SDK then ignores the region lists`)
	}
	if c.Host == "" {
		c.Host = DefaultHost
	}
	switch c.ReplicaProtocol {
	case "":
		c.ReplicaProtocol = ReplicaProtocolRNTBD
	case ReplicaProtocolRNTBD, ReplicaProtocolHTTP:
	default:
		return c, fmt.Errorf("replica_protocol %q: use %q (the default) or %q", c.ReplicaProtocol, ReplicaProtocolRNTBD, ReplicaProtocolHTTP)
	}
	if c.Ranges == 0 {
		c.Ranges = DefaultRanges
	}
	if c.Ranges < 1 || c.Ranges > 64 {
		return c, fmt.Errorf("ranges must be between 1 and 64, not %d", c.Ranges)
	}
	if c.FeedPageSize < 0 || c.FeedPageSize > maxPageItems {
		return c, fmt.Errorf("feed_page_size must be between 1 and %d (0: as the client asks), not %d", maxPageItems, c.FeedPageSize)
	}
	if c.Replicas == 0 {
		c.Replicas = DefaultReplicas
	}
	if c.Replicas < 1 || c.Replicas > 16 {
		return c, fmt.Errorf("replicas must be between 1 and 16, not %d", c.Replicas)
	}
	if c.GatewayCacheTTL < 0 {
		return c, errors.New("gateway_cache_ttl must not be negative")
	}
	if c.GatewayCacheTTL == 0 {
		c.GatewayCacheTTL = faults.Duration(DefaultGatewayCacheTTL)
	}
	if len(c.Regions) == 0 {
		for _, n := range DefaultRegions {
			c.Regions = append(c.Regions, RegionConfig{Name: n})
		}
	}
	seen := map[string]bool{}
	for i, r := range c.Regions {
		if strings.TrimSpace(r.Name) == "" {
			return c, fmt.Errorf("region %d has no name", i+1)
		}
		k := cosmos.RegionKey(r.Name)
		if seen[k] {
			return c, fmt.Errorf("region %q is listed twice", r.Name)
		}
		seen[k] = true
		if r.GlobalEndpoint {
			if len(c.Regions) > 1 {
				return c, fmt.Errorf("region %q is served on the global endpoint (global_endpoint = true), which only an account of one region can do: the global endpoint answers as the write region", r.Name)
			}
			if r.Port != 0 {
				return c, fmt.Errorf("region %q is served on the global endpoint (global_endpoint = true) and cannot have a port of its own (port = %d)", r.Name, r.Port)
			}
			continue
		}
		if r.Port == 0 && c.Port != 0 {
			c.Regions[i].Port = c.Port + i + 1
		}
	}
	if err := c.checkConsistency(); err != nil {
		return c, err
	}
	if c.ReplicationLag < 0 {
		return c, errors.New("replication lag must not be negative")
	}
	if c.Key == "" {
		c.Key = cosmos.EmulatorKey
	}
	c.AADToken = strings.TrimSpace(c.AADToken)
	if (c.TLSCertFile == "") != (c.TLSKeyFile == "") {
		return c, errors.New("a TLS certificate of your own needs both its certificate file and its key file (--tls-cert-file and --tls-key-file)")
	}
	if c.TLSCertFile != "" {
		c.TLS = true
	}
	for _, db := range c.Databases {
		if db.ID == "" {
			return c, errors.New("a pre-created database has no id")
		}
		for _, co := range db.Containers {
			if co.ID == "" {
				return c, fmt.Errorf("a container of database %q has no id", db.ID)
			}
			if _, err := partitionKeyDefinition(co.PartitionKey); err != nil {
				return c, fmt.Errorf("container %s/%s: %v", db.ID, co.ID, err)
			}
		}
	}
	return c, nil
}

func partitionKeyDefinition(paths []string) (cosmos.PartitionKeyDefinition, error) {
	if len(paths) == 0 {
		paths = []string{"/pk"}
	}
	if len(paths) > 3 {
		return cosmos.PartitionKeyDefinition{}, errors.New("a hierarchical partition key has at most 3 paths")
	}
	for _, p := range paths {
		if !strings.HasPrefix(p, "/") || len(p) < 2 {
			return cosmos.PartitionKeyDefinition{}, fmt.Errorf("partition key path %q must start with / and name a property, e.g. /tenantId", p)
		}
	}
	def := cosmos.PartitionKeyDefinition{Paths: paths, Kind: cosmos.PartitionKindHash, Version: 2}
	if len(paths) > 1 {
		def.Kind = cosmos.PartitionKindMultiHash
	}
	return def, nil
}

// ParseConsistency spells a consistency level as the service does: Strong,
// BoundedStaleness, Session, ConsistentPrefix or Eventual, from those names or
// strong, bounded, session, prefix and eventual, in any case.
func ParseConsistency(s string) (string, error) { return cosmos.ParseConsistency(s) }

// Bounds of a BoundedStaleness account. The ARM API takes maxStalenessPrefix in
// 1..2147483647 and maxIntervalInSeconds in 5..86400 (Microsoft Learn, ARM
// ConsistencyPolicy: https://learn.microsoft.com/en-us/javascript/api/@azure/arm-cosmosdb/consistencypolicy);
// "for a single region account, the minimum value of K and T is 10 write operations or
// 5 seconds; for multi-region accounts the minimum value of K and T is 100,000 write
// operations or 300 seconds" (Microsoft Learn, "Consistency levels in Azure Cosmos DB",
// https://learn.microsoft.com/en-us/azure/cosmos-db/consistency-levels). Unset bounds
// take the Azure CLI's defaults (az cosmosdb create --max-staleness-prefix 100
// --max-interval 5) on one region and the multi-region minimums on several.
const (
	maxStalenessPrefixLimit    = 2147483647
	maxIntervalLimit           = 86400
	minStalenessPrefixOne      = 10
	minIntervalOne             = 5
	minStalenessPrefixMulti    = 100000
	minIntervalMulti           = 300
	defaultStalenessPrefixOne  = 100
	defaultIntervalSecondsOne  = 5
	defaultStalenessPrefixMany = minStalenessPrefixMulti
	defaultIntervalSecondsMany = minIntervalMulti
)

// checkConsistency spells c.Consistency as the service does (Session when unset),
// fills and checks the bounds of BoundedStaleness, and refuses what the service
// refuses.
func (c *Config) checkConsistency() error {
	if c.Consistency == "" {
		c.Consistency = DefaultConsistency
	}
	level, err := ParseConsistency(c.Consistency)
	if err != nil {
		return err
	}
	c.Consistency = level
	if level != levelBounded {
		if c.MaxStalenessPrefix != 0 || c.MaxIntervalSeconds != 0 {
			return fmt.Errorf("max_staleness_prefix and max_interval_seconds are the bounds of consistency BoundedStaleness, not of %s: drop them or use --consistency bounded", level)
		}
	} else if err := c.checkStalenessBounds(); err != nil {
		return err
	}
	if level == levelStrong && c.MultiWrite {
		// "Strong consistency is not supported in a multi-region write scenario"
		// (Microsoft Learn, "Understand multi-region write").
		return errors.New("consistency Strong cannot go with multi_write: an account with several write regions cannot use strong consistency (use one write region, or Session)")
	}
	return nil
}

func (c *Config) checkStalenessBounds() error {
	multi := len(c.Regions) > 1
	minK, minT := int64(minStalenessPrefixOne), minIntervalOne
	where := "an account of one region"
	if multi {
		minK, minT = minStalenessPrefixMulti, minIntervalMulti
		where = fmt.Sprintf("an account of %d regions", len(c.Regions))
	}
	if c.MaxStalenessPrefix == 0 {
		c.MaxStalenessPrefix = defaultStalenessPrefixOne
		if multi {
			c.MaxStalenessPrefix = defaultStalenessPrefixMany
		}
	}
	if c.MaxIntervalSeconds == 0 {
		c.MaxIntervalSeconds = defaultIntervalSecondsOne
		if multi {
			c.MaxIntervalSeconds = defaultIntervalSecondsMany
		}
	}
	if c.MaxStalenessPrefix < minK || c.MaxStalenessPrefix > maxStalenessPrefixLimit {
		return fmt.Errorf("max staleness prefix %d is out of range for %s: the service takes %d to %d versions", c.MaxStalenessPrefix, where, minK, maxStalenessPrefixLimit)
	}
	if c.MaxIntervalSeconds < minT || c.MaxIntervalSeconds > maxIntervalLimit {
		return fmt.Errorf("max staleness interval %ds is out of range for %s: the service takes %d to %d seconds", c.MaxIntervalSeconds, where, minT, maxIntervalLimit)
	}
	return nil
}
