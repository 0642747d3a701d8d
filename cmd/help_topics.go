package cmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
)

// Help topics are commands with no Run: cobra lists them under "Additional help topics"
// and `cosmosctl help TOPIC` prints their Long text, as `gh help environment` does.
// The generated docs and man pages include them too (see docs.go).
func newHelpTopics() []*cobra.Command {
	return []*cobra.Command{
		newExitCodesHelpTopic(),
		newStatusesHelpTopic(),
		{Use: "environment", Short: "Environment variables cosmosctl reads", Long: environmentHelp},
		{Use: "configuration", Short: "The profiles file: its path, every setting, and precedence", Long: configurationHelp},
		{Use: "scenarios", Short: "Emulator scenario files: regions, latency, faults, replica moves", Long: scenariosText()},
		{Use: "embedded-emulator", Short: "The emulator used with no account configured: its data, sharing it, its notice", Long: embeddedEmulatorHelp},
	}
}

func newExitCodesHelpTopic() *cobra.Command {
	var b strings.Builder
	b.WriteString("cosmosctl exits with one of these codes, so that scripts can tell what happened\nand whether a retry could help:\n\n")
	for _, e := range exitCodeHelp {
		fmt.Fprintf(&b, "  %3d  %s\n", e.code, strings.Join(wrap(e.text, 80-7), "\n       "))
	}
	b.WriteString(`
With -o json (or COSMOSCTL_OUTPUT=json) a failure prints one JSON object on
stdout as well as its line on stderr. An item command prints its result object,
with "error" set; any other failure, usage errors included, prints
  {"error": {"kind": "usage", "status_code": 0, "substatus": 0,
             "code": "UsageError", "message": "…"}, "exit_code": 2}
where kind is usage, auth, interrupted, threshold_breach, service, network,
timeout or other, and status_code is the service's when it answered.
`)
	return &cobra.Command{
		Use:   "exit-codes",
		Short: "Exit codes and what they mean",
		Long:  b.String(),
	}
}

// newStatusesHelpTopic lists cosmos.Statuses, the one table every command's diagnostics
// (status_text) and errors put the service's answers into words from.
func newStatusesHelpTopic() *cobra.Command {
	var b strings.Builder
	b.WriteString(`The service's statuses and substatuses, in words, and what to do. Diagnostics
(--diagnostics, and status_text in -o json) and errors use this table; a
substatus not listed takes its status's row (the "*" lines).

`)
	for _, s := range cosmos.Statuses {
		code := fmt.Sprintf("%d/%d", s.Code, s.Sub)
		if s.Sub < 0 {
			code = fmt.Sprintf("%d/*", s.Code)
		}
		fmt.Fprintf(&b, "  %-9s %s\n", code, strings.Join(wrap(s.Meaning, 80-12), "\n            "))
		fmt.Fprintf(&b, "            %s\n", strings.Join(wrap("→ "+s.Do, 80-12), "\n              "))
	}
	return &cobra.Command{
		Use:   "statuses",
		Short: "The service's status and substatus codes in words, and what to do",
		Long:  b.String(),
	}
}

const environmentHelp = `cosmosctl reads these environment variables. A variable set to the empty string
counts as unset, so that a script can clear one with VAR= . For every setting a
flag beats the variable and the variable beats the profile (cosmosctl help
configuration); the flag or profile key is in brackets.

The account
  COSMOSCTL_ENDPOINT             account endpoint, e.g.
                                 https://myaccount.documents.azure.com:443/
                                 [--endpoint; endpoint]. Of a standalone
                                 cosmosctl emulator, it is all that is needed:
                                 the emulator announces its key, database and
                                 container
  COSMOSCTL_KEY                  the account key itself [key]. There is no flag
                                 for it: process arguments are visible to others
  COSMOSCTL_KEY_FILE             a file holding the account key [--key-file;
                                 key_file]; setting it and COSMOSCTL_KEY is an error
  COSMOSCTL_CONNECTION_STRING    AccountEndpoint=…;AccountKey=…; [connection_string];
                                 COSMOSCTL_ENDPOINT or COSMOSCTL_KEY next to it win
  COSMOSCTL_AUTH                 key (sign with the account key; the default) or
                                 aad (Azure AD / Entra ID tokens) [--auth; auth]
  COSMOSCTL_AAD_TOKEN_FILE       with auth aad: a file holding an access token to
                                 use instead of the Azure credential chain; it is
                                 never refreshed [--aad-token-file; aad_token_file]
  COSMOSCTL_DATABASE             database [--database; database]
  COSMOSCTL_CONTAINER            container [--container; container]
  COSMOSCTL_CONNECTION_MODE      gateway (default); direct: point operations to the
                                 replicas over RNTBD/TLS through the address cache
                                 (not on Strong or Bounded Staleness accounts); or
                                 gateway2: point operations through the account's
                                 Gateway 2.0 proxies [--connection-mode; connection_mode].
                                 Both are untested against a real account

Regions, timeouts and retries
  COSMOSCTL_PREFERRED_REGIONS    regions in the order to use them, comma-separated
                                 [--preferred-regions; preferred_regions]
  COSMOSCTL_EXCLUDE_REGIONS      regions not to use, comma-separated [--exclude;
                                 exclude_regions]
  COSMOSCTL_E2E_TIMEOUT          end-to-end timeout of an operation, retries
                                 included, e.g. 5s [--e2e-timeout; e2e_timeout]
  COSMOSCTL_ATTEMPT_TIMEOUT      cap on each attempt's own timeout, e.g. 1s; a read
                                 whose attempt times out fails over [--attempt-timeout;
                                 attempt_timeout]. Default: point operations
                                 6s→10s→65s, query pages 10s→20s→65s, metadata
                                 3s→6s→10s, account lookup 2s→5s, connect
                                 1s→3s→5s
  COSMOSCTL_WRITE_RETRY_POLICY   NO_RETRIES, WITH_RETRIES or WITH_TRACKING_ID (or off,
                                 retries, tracking-id) [--write-retries;
                                 write_retries.policy]

Output
  COSMOSCTL_OUTPUT               table, json, ndjson or tsv [-o; output]; a command
                                 that does not print it prints its nearest: ndjson
                                 is json for one that prints one result, tsv is
                                 table for one that prints no table (docs/json)
  NO_COLOR                       set to anything: no colour (https://no-color.org)
                                 [--no-color]. TERM=dumb turns colour off too, and
                                 an LC_ALL, LC_CTYPE or LANG that names a character
                                 set other than UTF-8 turns off box-drawing symbols
  COSMOSCTL_QUIET                1 (or true): print no notices on stderr [--quiet,
                                 -q]: not what a command assumed (the embedded
                                 emulator, an emulator's announced key, database and
                                 container), not that it resumes from a state file;
                                 warnings and errors stay. Notices are printed once
                                 per terminal session, or off a terminal once per
                                 script run, and never into a JSON stream on stderr
  COLUMNS                        on a terminal, the width tables fit in (default: the
                                 terminal's own); narrower tables hide their least
                                 important columns and say which. Piped output is
                                 never narrowed: pipe it, or set COLUMNS wide, to
                                 see every column

What commands remember (cosmosctl help health)
  COSMOSCTL_HEALTH_MEMORY        on (default) or off: off neither uses nor updates the
                                 region health and learned hedging latencies kept
                                 between commands [--no-health-memory; health_memory]
  COSMOSCTL_STATE_DIR            where region health, account topologies and learned
                                 latencies are kept, one folder per account endpoint;
                                 default: cosmosctl/state in the user cache directory

The config file
  COSMOSCTL_CONFIG               the profiles file (default: cosmosctl/config.toml in
                                 the user configuration directory)
  COSMOSCTL_PROFILE              the profile to use [--profile]; default: the
                                 file's default_profile

The emulator
  COSMOSCTL_EMULATOR_DATA        where the embedded emulator (used when no account is
                                 configured) keeps its data, shared by the commands
                                 running at once; default: cosmosctl/emulator in the
                                 user cache directory
  COSMOSCTL_EMULATOR_ENDPOINT    the running emulator that cosmosctl emulator status,
                                 fault, latency, replication, failover, split and
                                 merge talk to [--endpoint]. Unset, they go where
                                 the data commands go: COSMOSCTL_ENDPOINT, else the
                                 profile's endpoint, else http://127.0.0.1:8081; and
                                 sign with the key the data commands would
                                 (--key-file, COSMOSCTL_KEY, COSMOSCTL_KEY_FILE, the
                                 profile's), else the well-known key

Shards (--shard auto/N; cosmosctl help import, export)
  JOB_COMPLETION_INDEX           the shard index i of --shard auto/N (or /N), 0 to
                                 N-1: a Kubernetes Indexed Job sets it in each pod

Azure AD (auth aad) tokens come from the default Azure credential chain, which
reads AZURE_CLIENT_ID, AZURE_TENANT_ID and AZURE_CLIENT_SECRET (a service
principal), then workload or managed identity, then the az login session.

Examples:
  COSMOSCTL_PROFILE=staging cosmosctl regions
  COSMOSCTL_ATTEMPT_TIMEOUT=1s COSMOSCTL_HEALTH_MEMORY=off cosmosctl read order-1 --pk tenant-7
  COSMOSCTL_EXCLUDE_REGIONS="East US" cosmosctl read order-1 --pk tenant-7
  COSMOSCTL_KEY_FILE= cosmosctl config show        # ignore a key file set earlier
`

const embeddedEmulatorHelp = `With no account endpoint anywhere (no --endpoint, COSMOSCTL_ENDPOINT or
profile), data commands use an emulator built into cosmosctl: East US, West US
and North Europe with realistic latencies (about 2 ms, 62 ms and 75 ms), database
"app", container "items" partitioned by /pk.

ITS DATA
  The data persists in $COSMOSCTL_EMULATOR_DATA, else cosmosctl/emulator in the
  user cache directory, so that create then read in two invocations work.
  --ephemeral gives a command an emulator of its own, data in memory, gone when
  it ends; hedge-test always runs on such scratch emulators.

COMMANDS AT ONCE
  The first command that opens the data serves it on loopback ports while it
  runs and writes where, with its pid, to serving.json in the data directory. A
  command started meanwhile sends its requests there and says so on stderr
  ("using the embedded emulator served by cosmosctl probe (pid 1234)").
  When the serving command ends, a command still using the data serves it
  itself, on the same ports, and carries on. If the serving command was killed,
  the requests it had in flight fail as on any lost connection, and the command
  that takes over says so. A serving.json that nobody answers for is ignored and
  replaced.

  cosmosctl emulator --data-dir with the same directory writes serving.json
  too: commands use that emulator while it runs (when its key is the well-known
  one). If it is stopped or killed while a command uses it, that command's
  requests fail with one line saying so (it cannot serve the data as that
  emulator was configured); the next command serves the data itself.

  A process that holds the data without serving it (a cosmosctl older than
  this one, or one stopped with Ctrl-Z) makes a command give up after 10
  seconds, exit code 8: let it finish or end it, use --ephemeral, or point
  COSMOSCTL_EMULATOR_DATA elsewhere.

THE NOTICE
  "cosmosctl: no account configured; using the embedded emulator (…)" is
  printed on stderr, as the notice of a standalone emulator's announcement is
    - on a terminal, once per terminal session (on Unix the session of the
      terminal's shell, every command started from it; on Windows the Windows
      Terminal tab or the console window);
    - off a terminal, once per run of the script that runs the commands (their
      parent process): a script's log, read later and alone, says once why
      the script never reached an account; a command whose parent is init (a
      service manager's) prints it every time;
    - again when the data is elsewhere (--ephemeral, another
      COSMOSCTL_EMULATOR_DATA) or 12 hours later; what was shown is kept in
      notices.json in the state directory (COSMOSCTL_STATE_DIR);
    - with --diagnostics, every time; with --quiet or COSMOSCTL_QUIET=1, never;
      never into a JSON stream on stderr (export --progress json).
`

const configurationHelp = `Profiles keep an account's endpoint, key and defaults in a TOML file, so that
commands need no flags.

THE FILE
  $COSMOSCTL_CONFIG, else cosmosctl/config.toml in the user configuration
  directory: ~/.config/cosmosctl/config.toml on Linux ($XDG_CONFIG_HOME),
  ~/Library/Application Support/cosmosctl/config.toml on macOS,
  %AppData%\cosmosctl\config.toml on Windows. cosmosctl config path prints it.

  A missing file means no profiles. cosmosctl config set creates and changes it
  (readable by you alone); cosmosctl config list lists the profiles. Unknown
  settings are errors, so that a misspelt setting never silently does nothing.

PRECEDENCE
  Each setting is taken from the first of:
    1. a flag                    --endpoint, --key-file, --database, --exclude, -o ...
    2. an environment variable   COSMOSCTL_ENDPOINT, ... (cosmosctl help environment)
    3. the profile               --profile, else $COSMOSCTL_PROFILE, else default_profile
    4. what the endpoint announces, when it is a cosmosctl emulator: its
       well-known key, its only database and container (or app and items)
    5. the built-in default
  With no endpoint anywhere, commands use an embedded emulator and say so on
  stderr (see cosmosctl help embedded-emulator). At one level, a separate endpoint or key beats a connection string.
  cosmosctl config show prints every setting and where it came from.

EVERY SETTING
  default_profile = "prod"     # top level: the profile used when none is named

  [profiles.prod]
  endpoint = "https://myaccount.documents.azure.com:443/"
  key_file = "prod.key"        # file holding the key; relative to this file's
                               # directory; ~ is your home directory
  # key = "…"                  # or the key inline (then chmod 600 the file)
  # connection_string = "AccountEndpoint=https://…;AccountKey=…;"
  auth = "key"                 # key | aad: Azure AD tokens instead of the key,
                               # from the Azure credential chain (az login,
                               # managed identity, AZURE_CLIENT_*)
  # aad_token_file = "ci.token"  # with aad: a token acquired elsewhere, never
                               # refreshed; relative like key_file
  database = "app"
  container = "orders"
  preferred_regions = ["East US", "West US"]  # order reads use; default: the account's
  exclude_regions = ["Brazil South"]          # never used; an unknown name is an error
  e2e_timeout = "5s"           # end-to-end timeout, retries included; default none
  attempt_timeout = "2s"       # cap on each attempt's own timeout (default: point
                               # operations 6s→10s→65s, query pages 10s→20s→65s,
                               # metadata 3s→6s→10s, account lookup 2s→5s,
                               # connect 1s→3s→5s)
  health_memory = true         # false: remember no region health or learned
                               # latencies between commands (cosmosctl help health)
  output = "table"             # table | json | ndjson (query: one item a line)
  connection_mode = "gateway"  # gateway | direct (to the replicas over RNTBD)
                               # | gateway2 (through the Gateway 2.0 proxies)

  [profiles.prod.hedging]      # off unless a mode or a threshold is set
  mode = "threshold"           # off | threshold | adaptive
  threshold = "300ms"          # ask the next region after this long (default 500ms);
                               # adaptive: the threshold before it has learned
  step = "100ms"               # then one more region every step; 0 asks them all
  max_regions = 3              # at most this many regions in all; default every one
  budget = "10%"               # adaptive: extra requests at most this share

  [profiles.prod.write_retries]
  policy = "tracking-id"       # off | retries | tracking-id

  key, key_file and connection_string are alternatives: key and key_file in one
  profile is an error, and cosmosctl config set of one removes the other two. A
  file holding an inline key or connection string must be readable by you alone.

EXAMPLES
  cosmosctl config set --profile prod endpoint https://myaccount.documents.azure.com:443/
  printf %s "$COSMOS_KEY" | cosmosctl config set --profile prod key
  cosmosctl config set --profile prod hedging.threshold 300ms
  cosmosctl config set default_profile prod
  cosmosctl config show --profile prod
`

// scenariosText is the scenarios topic with the built-in scenarios listed from the
// emulator, so that the list cannot fall behind.
func scenariosText() string {
	names := emulator.BuiltinScenarioNames()
	width := 0
	for _, name := range names {
		width = max(width, len(name))
	}
	var b strings.Builder
	for _, name := range names {
		indent := strings.Repeat(" ", 2+width+2)
		lines := wrap(emulator.BuiltinScenarios[name], 80-len(indent))
		fmt.Fprintf(&b, "  %-*s  %s\n", width, name, strings.Join(lines, "\n"+indent))
	}
	return strings.Replace(scenariosHelp, "{{builtins}}\n", b.String(), 1)
}

// wrap breaks text into lines of at most width columns, at spaces.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && len([]rune(line))+1+len([]rune(w)) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return append(lines, line)
}

const scenariosHelp = `A scenario file is TOML that sets up the emulator: its regions, containers, base
latencies, fault rules and replica moves, so that a rehearsal can be checked in
and replayed. Give it to cosmosctl emulator --scenario FILE, or to cosmosctl
hedge-test --scenario FILE (which uses its latency and fault tables). Flags given
on the command line win over the file. Unknown settings are errors. Durations are
strings such as "150ms" or "2m"; times (after, for) count from the emulator's
start, while those of rules added later with cosmosctl emulator fault add count
from when they are added.

THE ACCOUNT
  account = "rehearsal"          # account id reported by GET / (not "localhost")
  host = "127.0.0.1"             # address to bind; loopback unless told otherwise
  port = 8081                    # global endpoint; regions use the next ports; 0: free
  multi_write = false            # every region writable
  replication_lag = "150ms"      # time for a write to reach the other regions
  ranges = 4                     # partition key ranges per container (1-64)
  feed_page_size = 1             # serve databases, containers, offers and partition
                                 # key ranges in pages of at most this many, whatever
                                 # the client asks, as the service pages a big
                                 # container's ranges (default: as the client asks)
  replicas = 4                   # replicas per region x range, one primary (1-16)
  gateway_cache_ttl = "30s"      # how long plain //addresses/ requests see a stale set
  replica_protocol = "rntbd"     # what //addresses/ advertises: rntbd (the default:
                                 # rntbd:// on each region's TLS RNTBD listener) or
                                 # http (legacy: http replica addresses on the
                                 # regional port, for clients without RNTBD)
  seed = 42                      # reproducible latencies and probabilities (0: random)
  data_dir = "/var/tmp/rehearsal"  # persist data here (default: in memory)
  aad_token = "test-token"       # accept this string as an Azure AD token, to test
                                 # --auth aad (default: refuse Azure AD requests)
  aad_emulator_tokens = true     # accept the Azure AD tokens clients make for
                                 # Microsoft's emulator (/enableaadauthentication):
                                 # kid CosmosEmulatorPrimaryMaster, the key as the
                                 # signature, within nbf and exp
  consistency = "Strong"         # the account's default consistency level (as
                                 # --consistency): Session (default), Strong,
                                 # BoundedStaleness, ConsistentPrefix or Eventual.
                                 # Strong: writes reach every region before they are
                                 # acknowledged (replication_lag adds to their
                                 # latency); not with multi_write. Session: 404/1002
                                 # for a token a region lacks. Prefix, Eventual: a
                                 # region serves what it has, tokens not waited for
  max_staleness_prefix = 100000  # BoundedStaleness only: a read region lags at most
  max_interval_seconds = 300     # K versions or T seconds (default 100 and 5 for one
                                 # region, 100000 and 300, the service's minimum, for
                                 # several)
  enforce_throughput = true      # throttle item operations by provisioned RU/s:
                                 # 429/3200 with a retry-after (default: bookkeeping)
  tls = true                     # https on every endpoint, self-signed certificate
                                 # generated at start (as Microsoft's emulator)
  tls_cert_file = "cert.pem"     # https with a certificate of your own (PEM) and
  tls_key_file = "key.pem"       # its key, instead of a generated one
  merge_enabled = true           # an account with partition merge on: a request
                                 # without the merge capability (the header
                                 # x-ms-cosmos-sdk-supportedcapabilities) is a 400

  [[regions]]                    # in failover order; the first is the write region
  name = "East US"               # default: East US, West US, North Europe
  port = 0                       # optional: this region's port
  global_endpoint = false        # serve the region on the global endpoint itself,
                                 # as Microsoft's emulator (one region only)

  [[databases]]
  id = "app"
  [[databases.containers]]
  id = "items"
  partition_key = ["/pk"]        # several paths (at most 3): a hierarchical key

SPLITS AND MERGES
  [[split]]                      # split a range, its items moved to its children
  database = "app"
  container = "items"
  range = "0"                    # optional: default, whichever range gets there first
  documents = 1000               # when the range holds this many documents
  [[merge]]                      # merge two adjacent ranges into one
  database = "app"
  container = "items"
  ranges = ["2", "3"]
  after = "30s"                  # since the emulator's start
  The parents then answer 410/1002 and the ranges feed lists the new ranges with
  their parents. Not with data_dir. While the emulator runs, cosmosctl emulator
  split RANGE and cosmosctl emulator merge RANGE RANGE do the same at once.

LATENCY
  [[latency]]                    # base latency of a region and operation
  region = "West US"             # default: every region
  operation = "reads"            # default: all
  kind = "lognormal"             # fixed (value), uniform (min, max),
  p50 = "35ms"                   # lognormal (p50, p99), none
  p99 = "80ms"
  The most specific entry wins: an operation beats its group, a group beats all.
  Without [[latency]] entries cosmosctl emulator gives the regions its realistic
  default (--latency); --latency none (or kind = "none") adds none.

  Operations: read (point read), query, create, upsert, replace, delete, patch,
  account (GET /), pkranges, metadata (databases and containers), addresses
  (direct mode), and the groups reads (read, query), writes, all.

FAULT RULES
  [[fault]]
  id = "brownout"                # optional: the id to remove it by
  region = "East US"             # default: every region
  operations = ["reads"]         # default: every operation
  replica = "0:3"                # optional: only requests to this replica
  probability = 0.05             # in (0, 1]; default 1: every matching request
  count = 0                      # stop after firing this many times; 0: never
  after = "2m"                   # active from this long after start ...
  for = "30s"                    # ... for this long; 0: forever
  effect = "delay"
  delay = { kind = "uniform", min = "500ms", max = "2s" }

  [[fault]]                      # throttling: 20% of writes get 429
  operations = ["writes"]
  probability = 0.2
  effect = "status"
  status = 429
  substatus = 0                  # e.g. 3 with 403, 1002 with 404 or 410
  retry_after = "200ms"          # sent with 429 (default 100ms)

  Effects:
    delay          add delay (a distribution, as in [[latency]]) to the request
    status         answer status (400-599) with substatus; a 429 carries
                   retry_after (default 100ms). E.g. 503, 408, 429, 410/1002,
                   403/3, 449
    hang           never answer: hold the request until the client gives up
    refuse         the region is down: connections are refused or cut
    drop-response  writes only: apply the write, then drop the connection
                   without answering (the ambiguous write)
  Settings of another effect (a status on a hang rule) are errors.

REPLICA MOVES
  [[replica_move]]               # a replica of a region x container x range moves
  region = "East US"
  database = "app"
  container = "items"
  range = "0"                    # partition key range id; default "0"
  replica = 1                    # index in the replica set; default 1 (a secondary)
  primary = false                # true moves the primary (index 0)
  effect = "gone"                # what the old replica does: gone (410), hang, refuse
  after = "10s"
  refresh_delay = "2s"           # the gateway returns the old set this long
  After after, the old replica answers per effect; the gateway keeps handing out
  the old addresses for refresh_delay, then to force-refresh requests the new
  set, and to every request once gateway_cache_ttl has passed.

BUILT-IN SCENARIOS (hedge-test --scenario NAME, on the embedded emulator)
{{builtins}}
  Each is aimed at the first region, where reads go first; brownout is the default.

While an emulator runs, cosmosctl emulator fault, latency, replication,
failover, split and merge change the same state. An example:
examples/brownout.toml in the source repository.

EXAMPLES
  cosmosctl emulator --scenario examples/brownout.toml
  cosmosctl hedge-test --scenario examples/brownout.toml
  cosmosctl hedge-test --scenario outage
`
