package cmd

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/output"
)

const configLong = `Profiles keep an account's endpoint, key and defaults in a TOML file, so that
commands need no flags. Each setting is taken from the first of:

  1. a flag                    --endpoint, --key-file, --database, --exclude, -o ...
  2. an environment variable   COSMOSCTL_ENDPOINT, COSMOSCTL_KEY, ...
  3. the profile               --profile, else $COSMOSCTL_PROFILE, else default_profile
  4. the built-in default

With no endpoint anywhere, commands use an embedded emulator and say so.
At one level, a separate endpoint or key beats a connection string.

The file is $COSMOSCTL_CONFIG, else cosmosctl/config.toml in the user configuration
directory (` + "`cosmosctl config path`" + ` prints it):

  default_profile = "prod"

  [profiles.prod]
  endpoint = "https://myaccount.documents.azure.com:443/"
  key_file = "~/.config/cosmosctl/prod.key"  # or key = "…" or connection_string = "…"
  auth = "key"                               # key | aad (Azure AD: no key needed)
  # aad_token_file = "ci.token"              # with auth = "aad": a pre-acquired token
  database = "app"
  container = "orders"
  preferred_regions = ["East US", "West US"]
  exclude_regions = []
  e2e_timeout = "5s"
  attempt_timeout = "2s"                     # cap on each attempt's own timeout
  health_memory = true                       # false: remember no region health
  output = "table"                           # table | json
  connection_mode = "gateway"                # gateway | direct (replicas over RNTBD) | gateway2

  [profiles.prod.hedging]
  mode = "threshold"                         # threshold | adaptive | off
  threshold = "300ms"
  step = "100ms"
  max_regions = 3
  budget = "10%"

  [profiles.prod.write_retries]
  policy = "tracking-id"                     # off | retries | tracking-id

With auth = "aad" requests carry Azure AD (Entra ID) tokens instead of key
signatures, for accounts that disable keys. Tokens come from the default Azure
credential chain (service principal in AZURE_CLIENT_ID/AZURE_TENANT_ID/
AZURE_CLIENT_SECRET, workload or managed identity, then ` + "`az login`" + `), scope
https://<account host>/.default, and are refreshed before they expire. The identity
needs a Cosmos DB data-plane role on the account. aad_token_file instead names a
file holding a token acquired elsewhere (CI jobs, break-glass runbooks):
  az account get-access-token --resource https://myaccount.documents.azure.com \
    --query accessToken -o tsv > ci.token
A token from a file is NOT refreshed: when it expires, commands fail until the file
holds a new one.

A relative key_file or aad_token_file is relative to the config file's directory. A file holding an
inline key must be readable by you alone (chmod 600); ` + "`config set`" + ` writes it so.
Unknown settings are errors, so that a misspelt setting never silently does nothing.

Environment variables:
  COSMOSCTL_CONFIG               the config file
  COSMOSCTL_PROFILE              the profile
  COSMOSCTL_ENDPOINT             account endpoint
  COSMOSCTL_KEY                  account key
  COSMOSCTL_KEY_FILE             file holding the account key
  COSMOSCTL_CONNECTION_STRING    AccountEndpoint=…;AccountKey=…;
  COSMOSCTL_AUTH                 key or aad
  COSMOSCTL_AAD_TOKEN_FILE       file holding an Azure AD access token (not refreshed)
  COSMOSCTL_DATABASE, COSMOSCTL_CONTAINER
  COSMOSCTL_PREFERRED_REGIONS    comma-separated
  COSMOSCTL_EXCLUDE_REGIONS      comma-separated
  COSMOSCTL_E2E_TIMEOUT          e.g. 5s
  COSMOSCTL_ATTEMPT_TIMEOUT      e.g. 2s
  COSMOSCTL_HEALTH_MEMORY        on or off
  COSMOSCTL_STATE_DIR            where region health and topologies are remembered
  COSMOSCTL_OUTPUT               table, json, ndjson or tsv
  COSMOSCTL_WRITE_RETRY_POLICY   NO_RETRIES, WITH_RETRIES or WITH_TRACKING_ID
A variable set to the empty string counts as unset.`

func newConfigCmd(io *IOStreams) *cobra.Command {
	c := &cobra.Command{
		Use:   "config",
		Short: "Profiles: where the endpoint, key and defaults come from",
		Long:  configLong,
		Example: `  # a profile for an account, with the key kept out of process arguments
  cosmosctl config set --profile prod endpoint https://myaccount.documents.azure.com:443/
  printf %s "$COSMOS_KEY" | cosmosctl config set --profile prod key
  cosmosctl config set default_profile prod

  # what a command would use, and why
  cosmosctl config show
  COSMOSCTL_DATABASE=test cosmosctl config show --profile prod`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf("unknown command %q for %s: use list, show, set or path", args[0], c.CommandPath())
			}
			return nil
		},
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newConfigListCmd(io), newConfigShowCmd(io), newConfigSetCmd(io), newConfigPathCmd(io))
	return c
}

// settingsFlags are the flags that override configured settings. Every command that talks
// to an account takes them; `config show` takes them too, to show what such a command
// would use.
type settingsFlags struct {
	profile, endpoint, keyFile, database, container string
	connectionMode, auth, aadTokenFile              string
	preferredRegions, excludeRegions                []string
	e2eTimeout, attemptTimeout                      time.Duration
	noHealthMemory                                  bool
	// format is -o, --jq and --no-headers; the settings give -o its default
	// (COSMOSCTL_OUTPUT, the profile's output).
	format formatFlags
	// hedge is set on commands that take the hedging flags (reads, config show).
	hedge *hedgeFlags
	// writeRetryFlag is the --write-retries value of a write command that was given one.
	writeRetryFlag *string
	// noFormat leaves out the format flags: the command registers its own.
	noFormat bool
	// formats are what the command prints (default: table and json).
	formats []string
}

// withHedging registers the hedging flags too.
func (s *settingsFlags) withHedging(f *pflag.FlagSet) {
	s.hedge = &hedgeFlags{}
	s.hedge.register(f)
}

func (s *settingsFlags) register(f *pflag.FlagSet) {
	f.StringVar(&s.profile, "profile", "", "profile from the config file ($COSMOSCTL_PROFILE, else default_profile)")
	f.StringVar(&s.endpoint, "endpoint", "", "account endpoint, e.g. https://myaccount.documents.azure.com:443/ ($COSMOSCTL_ENDPOINT)")
	f.StringVar(&s.keyFile, "key-file", "", "file holding the account key ($COSMOSCTL_KEY_FILE, or the key itself in $COSMOSCTL_KEY; never an argument)")
	f.StringVar(&s.auth, "auth", "", "key, or aad for Azure AD tokens from the Azure credential chain (az login, managed identity, AZURE_CLIENT_*) ($COSMOSCTL_AUTH; default key)")
	f.StringVar(&s.aadTokenFile, "aad-token-file", "", "with --auth aad: file holding an access token to use instead of the credential chain; not refreshed ($COSMOSCTL_AAD_TOKEN_FILE)")
	f.StringVar(&s.database, "database", "", "database ($COSMOSCTL_DATABASE)")
	f.StringVar(&s.container, "container", "", "container ($COSMOSCTL_CONTAINER)")
	f.StringSliceVar(&s.preferredRegions, "preferred-regions", nil, "regions in the order to use them, comma-separated ($COSMOSCTL_PREFERRED_REGIONS; default: the account's order)")
	f.StringSliceVar(&s.excludeRegions, "exclude", nil, "regions not to use; repeatable or comma-separated ($COSMOSCTL_EXCLUDE_REGIONS)")
	f.DurationVar(&s.e2eTimeout, "e2e-timeout", 0, "end-to-end timeout of the whole operation, retries included, e.g. 2s; while another region remains, an attempt gets at most half of what is left ($COSMOSCTL_E2E_TIMEOUT; default none)")
	f.DurationVar(&s.attemptTimeout, "attempt-timeout", 0, "cap on each attempt's own timeout, e.g. 1s; a timed-out read fails over ($COSMOSCTL_ATTEMPT_TIMEOUT; default: point operations 6s→10s→65s, query pages 10s→20s→65s, metadata 3s→6s→10s, account lookup 2s→5s, connect 1s→3s→5s)")
	f.BoolVar(&s.noHealthMemory, "no-health-memory", false, "neither use nor update the region health and learned hedging thresholds remembered between commands ($COSMOSCTL_HEALTH_MEMORY=off; profile health_memory = false)")
	if !s.noFormat {
		formats := s.formats
		if formats == nil {
			formats = []string{config.OutputTable, config.OutputJSON}
		}
		s.format.register(f, formats...)
	}
	f.StringVar(&s.connectionMode, "connection-mode", "", "gateway; direct to the replicas through the address cache; or gateway2, point operations through the account's Gateway 2.0 proxies ($COSMOSCTL_CONNECTION_MODE; default gateway)")
}

// resolve returns the settings from the flags the user set, the environment and the
// config file. Configuration errors are usage errors.
func (s *settingsFlags) resolve(f *pflag.FlagSet) (config.Settings, error) {
	path, err := config.Path(os.LookupEnv)
	if err != nil {
		return config.Settings{}, &UsageError{Err: err}
	}
	var fl config.Flags
	if f.Changed("profile") {
		fl.Profile = &s.profile
	}
	if f.Changed("endpoint") {
		fl.Endpoint = &s.endpoint
	}
	if f.Changed("key-file") {
		fl.KeyFile = &s.keyFile
	}
	if f.Changed("auth") {
		fl.Auth = &s.auth
	}
	if f.Changed("aad-token-file") {
		fl.AADTokenFile = &s.aadTokenFile
	}
	if f.Changed("database") {
		fl.Database = &s.database
	}
	if f.Changed("container") {
		fl.Container = &s.container
	}
	if f.Changed("preferred-regions") {
		fl.PreferredRegions = &s.preferredRegions
	}
	if f.Changed("exclude") {
		fl.ExcludeRegions = &s.excludeRegions
	}
	if f.Changed("e2e-timeout") {
		fl.E2ETimeout = &s.e2eTimeout
	}
	if v := s.format.explicit(); v != "" && !s.noFormat {
		fl.Output = &v
	}
	if f.Changed("attempt-timeout") {
		fl.AttemptTimeout = &s.attemptTimeout
	}
	if f.Changed("no-health-memory") {
		fl.NoHealthMemory = &s.noHealthMemory
	}
	if f.Changed("connection-mode") {
		fl.ConnectionMode = &s.connectionMode
	}
	if s.hedge != nil {
		s.hedge.apply(f, &fl)
	}
	fl.WriteRetryPolicy = s.writeRetryFlag
	st, err := config.Resolve(path, fl, os.LookupEnv)
	if err != nil {
		return st, &UsageError{Err: err}
	}
	return st, nil
}

func newConfigPathCmd(io *IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:     "path",
		Short:   "Print the config file's path",
		Long:    "Print the config file's path: $COSMOSCTL_CONFIG, else cosmosctl/config.toml in the\nuser configuration directory. The file need not exist.",
		Example: "  cosmosctl config path\n  $EDITOR \"$(cosmosctl config path)\"",
		Args:    noArgs,
		RunE: func(*cobra.Command, []string) error {
			path, err := config.Path(os.LookupEnv)
			if err != nil {
				return &UsageError{Err: err}
			}
			fmt.Fprintln(io.Out, path)
			return nil
		},
	}
}

// configListOptions are the flags of `config list`.
type configListOptions struct {
	format formatFlags
	Output string // the format, once settled
}

func newConfigListCmd(io *IOStreams) *cobra.Command {
	opts := &configListOptions{}
	c := &cobra.Command{
		Use:     "list",
		Short:   "List the profiles in the config file, marking the default",
		Example: "  cosmosctl config list\n  cosmosctl config list --jq '.profiles[].profile'",
		Args:    noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			var err error
			if opts.Output, err = opts.format.apply(io, envFormat()); err != nil {
				return err
			}
			path, err := config.Path(os.LookupEnv)
			if err != nil {
				return &UsageError{Err: err}
			}
			return runConfigList(io, opts, path)
		},
	}
	opts.format.register(c.Flags(), config.OutputTable, config.OutputJSON, config.OutputTSV)
	return c
}

type listedProfile struct {
	Name      string `json:"name"`
	Default   bool   `json:"default"`
	Endpoint  string `json:"endpoint"`
	Database  string `json:"database"`
	Container string `json:"container"`
}

func runConfigList(io *IOStreams, opts *configListOptions, path string) error {
	f, err := config.Load(path)
	if err != nil {
		return &UsageError{Err: err}
	}
	printConfigWarnings(io, f.Warnings)
	profiles := []listedProfile{}
	for _, name := range f.ProfileNames() {
		p := f.Profiles[name]
		endpoint := p.Endpoint
		if endpoint == "" && p.ConnectionString != "" {
			endpoint, _, _ = config.ParseConnectionString(p.ConnectionString.Reveal())
		}
		profiles = append(profiles, listedProfile{Name: name, Default: name == f.DefaultProfile,
			Endpoint: endpoint, Database: p.Database, Container: p.Container})
	}
	if config.JSONOutput(opts.Output) {
		return printJSON(io, configListJSONOf(path, f.Exists, f.DefaultProfile, profiles))
	}
	if !f.Exists {
		fmt.Fprintf(io.ErrOut, "no config file at %s: create a profile with `cosmosctl config set --profile NAME endpoint URL`\n", path)
		return nil
	}
	fmt.Fprintf(io.ErrOut, "config file %s\n", path)
	if len(profiles) == 0 {
		fmt.Fprintln(io.ErrOut, "no profiles: create one with `cosmosctl config set --profile NAME endpoint URL`")
		return nil
	}
	// On a narrow terminal the endpoint shortens to its host, the container and then
	// the database go, and the endpoint is cut.
	st := io.outStyles(true)
	t := output.NewTableOf(io.Out, st,
		output.Column{Header: "DEFAULT", Key: true},
		output.Column{Header: "PROFILE", Key: true, Priority: 9, Min: 12},
		output.Column{Header: "ENDPOINT", Key: true, Priority: 8, Min: 20, Abbrev: output.EndpointHost},
		output.Column{Header: "DATABASE", Priority: 2},
		output.Column{Header: "CONTAINER", Priority: 1},
	).Gap(2)
	for _, p := range profiles {
		mark := ""
		if p.Default {
			mark = "*"
		}
		t.Append(mark, p.Name, orNone(st, p.Endpoint), orNone(st, p.Database), orNone(st, p.Container))
	}
	return t.Render()
}

func newConfigShowCmd(io *IOStreams) *cobra.Command {
	flags := &settingsFlags{}
	c := &cobra.Command{
		Use:   "show",
		Short: "Show the settings a command would use and where each comes from",
		Long: `Show the settings a command would use with the same flags, profile and environment,
and where each comes from: a flag, an environment variable, the profile or the
built-in default. The account key is masked (first and last four characters); of an
Azure AD token file only the path is shown, never the token.

When an endpoint is configured but the key, the database or the container is not,
it asks the endpoint, as a command would, whether it is a cosmosctl emulator (which
announces itself; for at most the account lookup's first attempt timeout), and
shows what a command would take from it: its well-known key, its database and its
container, with the source "announced by the cosmosctl emulator at URL".`,
		Example: `  cosmosctl config show
  cosmosctl config show --profile staging -o json | jq '.settings.endpoint'
  COSMOSCTL_PREFERRED_REGIONS="West US,East US" cosmosctl config show`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := flags.format.check(io); err != nil {
				return err
			}
			st, err := flags.resolve(c.Flags())
			if err != nil {
				return err
			}
			// The output setting is shown as a command would use it; this one's own
			// format may differ (--jq, or a tsv a command without tables does not take).
			format, err := flags.format.apply(io, st.Output)
			if err != nil {
				return err
			}
			return runConfigShow(io, announcedForShow(c.Context(), st), format)
		},
	}
	flags.register(c.Flags())
	flags.format.add(config.OutputTSV)
	flags.withHedging(c.Flags())
	return c
}

// shownSetting is one row of `config show`. JSON names durations with their unit
// (e2e_timeout_ms), as everywhere in cosmosctl's JSON.
type shownSetting struct {
	name     string // as in the config file
	jsonName string
	text     string // for the table
	Value    any
	Source   string
}

func shownSettings(st config.Settings) []shownSetting {
	row := func(name string, value any, text string) shownSetting {
		return shownSetting{name: name, jsonName: name, text: text, Value: value, Source: st.Source(name)}
	}
	dur := func(name string, d time.Duration) shownSetting {
		r := row(name, nil, "")
		r.jsonName = name + "_ms"
		if d > 0 {
			r.text = d.String()
			r.Value = float64(d) / float64(time.Millisecond)
		}
		return r
	}
	key := row("key", config.Mask(st.Key.Reveal()), config.Mask(st.Key.Reveal()))
	if st.KeySource != "" {
		key.Source = st.KeySource
	}
	h := st.Hedging
	budget := row("hedging.budget", nil, "")
	budget.jsonName = "hedging.budget_percent"
	if st.Source("hedging.budget") != config.SourceDefault {
		budget.text = fmt.Sprintf("%g%%", h.BudgetPercent)
		budget.Value = h.BudgetPercent
	}
	maxRegions := row("hedging.max_regions", nil, "")
	if h.MaxRegions > 0 {
		maxRegions.text = fmt.Sprint(h.MaxRegions)
		maxRegions.Value = h.MaxRegions
	}
	// The token file's path only: the token is a bearer credential, shown nowhere.
	tokenFile := row("aad_token_file", st.AADTokenFile, st.AADTokenFile)
	return []shownSetting{
		row("profile", st.Profile, st.Profile),
		row("endpoint", st.Endpoint, st.Endpoint),
		row("auth", st.Auth, st.Auth),
		key,
		tokenFile,
		row("database", st.Database, st.Database),
		row("container", st.Container, st.Container),
		row("preferred_regions", st.PreferredRegions, strings.Join(st.PreferredRegions, ",")),
		row("exclude_regions", st.ExcludeRegions, strings.Join(st.ExcludeRegions, ",")),
		dur("e2e_timeout", st.E2ETimeout),
		dur("attempt_timeout", st.AttemptTimeout),
		row("health_memory", st.HealthMemory, onOff(st.HealthMemory)),
		row("output", st.Output, st.Output),
		row("connection_mode", st.ConnectionMode, st.ConnectionMode),
		hedgingModeRow(st, row("hedging.mode", h.Mode, string(h.Mode))),
		dur("hedging.threshold", h.Threshold),
		dur("hedging.step", h.Step),
		maxRegions,
		budget,
		row("write_retries.policy", st.WriteRetries.Policy, string(st.WriteRetries.Policy)),
	}
}

// hedgingModeRow shows the hedging mode commands will use: a threshold from a flag, the
// environment or a profile turns threshold hedging on without hedging.mode saying so,
// and `config show` must not say "off" then.
func hedgingModeRow(st config.Settings, r shownSetting) shownSetting {
	if st.Source("hedging.mode") == config.SourceDefault && st.Source("hedging.threshold") != config.SourceDefault {
		r.Value, r.text = config.HedgingThreshold, string(config.HedgingThreshold)
		r.Source = "implied by hedging.threshold (" + st.Source("hedging.threshold") + ")"
	}
	return r
}

func runConfigShow(io *IOStreams, st config.Settings, format string) error {
	printConfigWarnings(io, st.Warnings)
	rows := shownSettings(st)
	if config.JSONOutput(format) {
		if err := printJSON(io, configShowJSONOf(st.ConfigFile, st.Configured(), rows)); err != nil {
			return err
		}
	} else {
		// On a narrow terminal the source, then the value, are cut.
		ost := io.outStyles(true)
		t := output.NewTableOf(io.Out, ost,
			output.Column{Header: "SETTING", Key: true},
			output.Column{Header: "VALUE", Key: true, Priority: 8, Min: 16},
			output.Column{Header: "SOURCE", Key: true, Priority: 7, Min: 12},
		).Gap(2)
		for _, r := range rows {
			t.Append(r.name, orNone(ost, r.text), r.Source)
		}
		if err := t.Render(); err != nil {
			return err
		}
		fmt.Fprintf(io.ErrOut, "config file %s\n", st.ConfigFile)
	}
	switch {
	case !st.Configured():
		fmt.Fprintln(io.ErrOut, "no account endpoint is configured: commands will use the embedded emulator (set one with `cosmosctl config set endpoint URL`, COSMOSCTL_ENDPOINT or --endpoint)")
	case st.Auth == config.AuthKey && st.Key == "":
		fmt.Fprintf(io.ErrOut, "%s\n", "no account key is configured: pipe it in with `printf %s \"$KEY\" | cosmosctl config set key`, or set COSMOSCTL_KEY, COSMOSCTL_KEY_FILE or --key-file")
	}
	return nil
}

// configSetOptions are the arguments of `config set`.
type configSetOptions struct {
	Profile  string // "" when neither --profile nor COSMOSCTL_PROFILE names one
	Key      string
	Value    string
	HasValue bool
}

func newConfigSetCmd(io *IOStreams) *cobra.Command {
	opts := &configSetOptions{}
	c := &cobra.Command{
		Use:   "set KEY [VALUE]",
		Short: "Change one setting of a profile",
		Long: `Change one setting of a profile in the config file, creating the file (readable by
you alone) and the profile if needed. An empty VALUE ("") removes the setting.

The profile is --profile, else $COSMOSCTL_PROFILE, else the file's default_profile,
else "default" (which then becomes the default profile).

KEY is one of:
  endpoint, key, key_file, connection_string, auth (key|aad), aad_token_file,
  database, container,
  preferred_regions, exclude_regions (comma-separated), e2e_timeout (e.g. 5s),
  attempt_timeout (e.g. 2s), health_memory (on|off),
  connection_mode (gateway|direct|gateway2),
  output (table|json), hedging.mode (threshold|adaptive|off), hedging.threshold,
  hedging.step, hedging.max_regions, hedging.budget (e.g. 10%),
  write_retries.policy (off|retries|tracking-id), default_profile.

key and connection_string are read from stdin, never from the arguments: a secret in
process arguments is visible to other users and stays in shell history. Setting one
of key, key_file and connection_string removes the other two from the profile.

The file is rewritten: comments and the order of settings are not kept.`,
		Example: `  cosmosctl config set endpoint https://myaccount.documents.azure.com:443/
  printf %s "$COSMOS_KEY" | cosmosctl config set key
  cosmosctl config set --profile prod key_file ~/.config/cosmosctl/prod.key
  cosmosctl config set --profile prod preferred_regions "East US,West US"
  cosmosctl config set --profile prod hedging.threshold 300ms
  cosmosctl config set --profile prod attempt_timeout 2s
  cosmosctl config set --profile ci health_memory false
  cosmosctl config set default_profile prod
  cosmosctl config set --profile prod database ""   # remove the setting`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return usageErrorf("%s needs KEY and VALUE (see `%s --help`)", c.CommandPath(), c.CommandPath())
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			if !c.Flags().Changed("profile") {
				opts.Profile = os.Getenv("COSMOSCTL_PROFILE")
			}
			opts.Key = args[0]
			if len(args) == 2 {
				opts.Value, opts.HasValue = args[1], true
			}
			if err := opts.validate(); err != nil {
				return err
			}
			if !opts.HasValue {
				v, err := readSecret(io, opts.Key)
				if err != nil {
					return err
				}
				opts.Value = v
			}
			path, err := config.Path(os.LookupEnv)
			if err != nil {
				return &UsageError{Err: err}
			}
			return runConfigSet(io, opts, path)
		},
	}
	c.Flags().StringVar(&opts.Profile, "profile", "", "profile to change (default: $COSMOSCTL_PROFILE, else default_profile, else \"default\")")
	return c
}

func (o *configSetOptions) validate() error {
	secret := config.IsSecret(o.Key)
	switch {
	case secret && o.HasValue:
		return usageErrorf("config set %s takes the value on stdin, not as an argument: a secret in process arguments is visible to other users; pipe it in: printf %%s \"$KEY\" | cosmosctl config set %s", o.Key, o.Key)
	case !secret && !o.HasValue:
		return usageErrorf("config set %s needs a VALUE (\"\" removes the setting; see `cosmosctl config set --help`)", o.Key)
	}
	return nil
}

// readSecret reads one line from stdin; on a terminal it prompts and does not echo.
func readSecret(io *IOStreams, key string) (string, error) {
	if f, ok := io.In.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprintf(io.ErrOut, "%s (input hidden): ", key)
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(io.ErrOut)
		if err != nil {
			return "", fmt.Errorf("reading %s from the terminal: %v", key, err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	sc := bufio.NewScanner(io.In)
	sc.Scan()
	if err := sc.Err(); err != nil {
		return "", usageErrorf("reading %s from stdin: %v", key, err)
	}
	v := strings.TrimSpace(sc.Text())
	if v == "" {
		return "", usageErrorf("no %s on stdin: pipe it in: printf %%s \"$KEY\" | cosmosctl config set %s", key, key)
	}
	return v, nil
}

func runConfigSet(io *IOStreams, opts *configSetOptions, path string) error {
	if opts.Key == "default_profile" {
		if err := config.Set(path, "", opts.Key, opts.Value); err != nil {
			return &UsageError{Err: err}
		}
		fmt.Fprintf(io.ErrOut, "default profile is now %s (%s)\n", dashIfEmpty(opts.Value), path)
		return nil
	}
	profile, makeDefault := opts.Profile, false
	if profile == "" {
		def, err := config.ReadDefaultProfile(path)
		if err != nil {
			return &UsageError{Err: err}
		}
		profile, makeDefault = def, def == ""
		if makeDefault {
			profile = "default"
		}
	}
	if err := config.Set(path, profile, opts.Key, opts.Value); err != nil {
		return &UsageError{Err: err}
	}
	shown := opts.Value
	if config.IsSecret(opts.Key) {
		shown = config.Mask(opts.Value)
	}
	if opts.Value == "" {
		fmt.Fprintf(io.ErrOut, "removed %s from profile %s (%s)\n", opts.Key, profile, path)
	} else {
		fmt.Fprintf(io.ErrOut, "set %s = %s in profile %s (%s)\n", opts.Key, shown, profile, path)
	}
	if makeDefault {
		if err := config.Set(path, "", "default_profile", profile); err != nil {
			return &UsageError{Err: err}
		}
		fmt.Fprintf(io.ErrOut, "default profile is now %s\n", profile)
	}
	return nil
}

func printConfigWarnings(io *IOStreams, warnings []string) {
	for _, w := range warnings {
		fmt.Fprintln(io.ErrOut, "warning: "+w)
	}
}

// orNone is s, or what a table shows for no value ("-" drawn, nothing in TSV).
func orNone(st output.Styles, s string) string {
	if s == "" && st.TSV {
		return ""
	}
	return dashIfEmpty(s)
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
