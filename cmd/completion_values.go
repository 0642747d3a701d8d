package cmd

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// Dynamic completion. The shell runs `cosmosctl __complete ARGS…` on every Tab, so
// these functions must be quick and quiet: stdout carries the completions and nothing
// else, a failure (no config file, an unreachable account) yields no completions rather
// than an error, and nothing here ever starts the embedded emulator.

// completionTimeout bounds a completion's network call: a Tab that hangs is worse than
// one that offers nothing.
const completionTimeout = 2 * time.Second

const noFiles = cobra.ShellCompDirectiveNoFileComp

// fileFlags are the flags whose values are paths, left to the shell's file completion.
var fileFlags = map[string]bool{"file": true, "key-file": true, "aad-token-file": true, "state": true, "rejected": true}

// registerCompletions attaches completion functions to every command of the tree: the
// commands' files declare flags, and completion is decided here, in one place, by flag
// name (and by whether the command belongs to `emulator`, whose flags of the same name
// mean something else).
func registerCompletions(root *cobra.Command) {
	walk(root, func(c *cobra.Command) {
		underEmulator := isUnder(c, "emulator")
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if fn := flagCompletion(c, f, underEmulator); fn != nil {
				if _, exists := c.GetFlagCompletionFunc(f.Name); !exists {
					_ = c.RegisterFlagCompletionFunc(f.Name, fn)
				}
			}
		})
		if c.ValidArgsFunction == nil && len(c.ValidArgs) == 0 && c.Runnable() {
			c.ValidArgsFunction = argsCompletion(c)
		}
	})
}

func walk(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, sub := range c.Commands() {
		walk(sub, fn)
	}
}

func isUnder(c *cobra.Command, name string) bool {
	for p := c; p != nil; p = p.Parent() {
		if p.Name() == name && p.HasParent() && !p.Parent().HasParent() {
			return true
		}
	}
	return false
}

// flagCompletion returns the completion of a flag's value, or nil to leave it alone.
func flagCompletion(c *cobra.Command, f *pflag.Flag, underEmulator bool) cobra.CompletionFunc {
	switch f.Name {
	case "profile":
		return completeProfiles
	case "output":
		return completeFormats(c, f)
	case "from":
		if c.Name() == "changes" {
			return fixed("beginning\tevery change the container holds (default)", "now\tonly changes made after the command starts",
				time.Now().UTC().Truncate(time.Hour).Format(time.RFC3339)+"\tchanges made at or after an RFC 3339 time")
		}
	case "region":
		if underEmulator {
			return completeEmulatorRegions
		}
		return completeAccountRegions(false)
	case "exclude", "preferred-regions":
		return completeAccountRegions(true)
	case "regions":
		if underEmulator { // new region names: nothing to offer
			return cobra.NoFileCompletions
		}
		return completeAccountRegions(true)
	case "write-retries":
		if c.Name() == "patch" {
			return fixed("off\tambiguous failures surface", "retries\tretry this patch (check its operations are safe twice)")
		}
		return fixed("off\tambiguous failures surface (default)", "retries\tretry with back-off",
			"tracking-id\tretry; create and replace add a _trackingId to resolve 409/412")
	case "migrate":
		if c.Name() == "set" {
			return fixed("autoscale\tmanual → autoscale; the service picks the maximum", "manual\tautoscale → manual at its maximum RU/s")
		}
	case "mode":
		if c.Name() == "import" {
			return fixed("create\tleave an item already stored, counted as already present (default)", "upsert\tcreate or replace every item")
		}
	case "source":
		if c.Name() == "export" {
			return fixed("query\tthe query pipeline: every lasting item once (default)", "change-feed\ta snapshot of the change feed at the start")
		}
	case "balance":
		if c.Name() == "ranges" {
			return fixed("ranges\tthe plan --shard i/N computes from the ranges (default)", "statistics\twhole ranges grouped by documents, for --feed-range")
		}
	case "progress":
		if c.Name() == "export" || c.Name() == "import" {
			return fixed("bar\ta bar on stderr (default on a terminal)", "json\tNDJSON events on stderr, then a report", "off\tnothing")
		}
	case "auth":
		return fixed("key\tsign with the account key (default)", "aad\tAzure AD (Entra ID) tokens")
	case "connection-mode":
		return fixed("gateway\tthrough the account's gateway (default)", "direct\tto the replicas over RNTBD, through the address cache", "gateway2\tpoint operations through the regional Gateway 2.0 proxies")
	case "scenario":
		if underEmulator {
			return tomlFiles
		}
		return completeScenarios
	case "strategies":
		return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return listCompletions([]string{"none", "threshold=500ms/100ms", "fanout", "adaptive", "adaptive=10%"}, toComplete, strings.EqualFold), noFiles
		}
	case "effect":
		return fixed("delay\tadd --delay to matching requests", "status\tanswer --status (and --substatus, --retry-after)",
			"hang\tnever answer", "refuse\trefuse connections: the region is down",
			"drop-response\tapply the write, then drop the connection")
	case "op":
		if underEmulator {
			return completeOperations
		}
		if c.Name() == "hedge-test" {
			return fixed("read\tpoint reads (default)", "query\ta query page within a partition key",
				"query-cross\ta cross-partition TOP 10 ORDER BY: a plan and a page per range")
		}
	case "latency":
		if underEmulator && c.Name() == "emulator" {
			return fixed("realistic\tthe embedded emulator's round trips: ≈2 ms, ≈62 ms, ≈75 ms (default)", "none\tno added latency")
		}
	case "data-dir":
		return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return nil, cobra.ShellCompDirectiveFilterDirs
		}
	case "plot":
		return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return []cobra.Completion{"svg", "html"}, cobra.ShellCompDirectiveFilterFileExt
		}
	}
	if fileFlags[f.Name] || f.NoOptDefVal != "" { // a path, or a boolean
		return nil
	}
	return cobra.NoFileCompletions
}

func fixed(choices ...string) cobra.CompletionFunc {
	return cobra.FixedCompletions(choices, noFiles)
}

func tomlFiles(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return []cobra.Completion{"toml"}, cobra.ShellCompDirectiveFilterFileExt
}

// completeScenarios offers hedge-test's built-in scenarios, or TOML files once what is
// typed is no built-in's prefix.
func completeScenarios(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []cobra.Completion
	for _, name := range emulator.BuiltinScenarioNames() {
		if strings.HasPrefix(name, toComplete) {
			out = append(out, cobra.CompletionWithDesc(name, emulator.BuiltinScenarios[name]))
		}
	}
	if len(out) == 0 {
		return tomlFiles(c, args, toComplete)
	}
	return out, noFiles
}

func completeOperations(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	ops := []string{faults.GroupReads, faults.GroupWrites, faults.GroupAll, faults.OpRead, faults.OpQuery, faults.OpCreate,
		faults.OpUpsert, faults.OpReplace, faults.OpDelete, faults.OpPatch, faults.OpAccount, faults.OpPKRanges,
		faults.OpMetadata, faults.OpAddresses}
	return listCompletions(ops, toComplete, strings.EqualFold), noFiles
}

// completeProfiles offers the profiles of the config file (config.Path, as commands
// find it), each with its endpoint.
func completeProfiles(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	path, err := config.Path(os.LookupEnv)
	if err != nil {
		return nil, noFiles
	}
	f, err := config.Load(path)
	if err != nil {
		return nil, noFiles
	}
	var out []cobra.Completion
	for _, name := range f.ProfileNames() {
		desc := f.Profiles[name].Endpoint
		if name == f.DefaultProfile {
			desc = strings.TrimSpace("(default) " + desc)
		}
		if desc == "" {
			out = append(out, name)
		} else {
			out = append(out, cobra.CompletionWithDesc(name, desc))
		}
	}
	return out, noFiles
}

// completeAccountRegions offers the region names of the account a command would use.
// list is for flags that take comma-separated names: the names already typed are kept
// as a prefix and not offered again.
func completeAccountRegions(list bool) cobra.CompletionFunc {
	return func(c *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		names := accountRegionNames(c)
		if !list {
			return names, noFiles
		}
		return listCompletions(names, toComplete, cosmos.SameRegion), noFiles
	}
}

// accountRegionNames resolves the settings as the command would (flag > environment >
// profile > default, for the flags typed so far) and returns the account's regions: from
// the cache when fresh, else from GET /. With no account configured they are the
// embedded emulator's, which is never started for a completion.
func accountRegionNames(c *cobra.Command) []string {
	path, err := config.Path(os.LookupEnv)
	if err != nil {
		return nil
	}
	var fl config.Flags
	flagValue := func(name string) *string {
		if f := c.Flags().Lookup(name); f != nil && f.Changed {
			v := f.Value.String()
			return &v
		}
		return nil
	}
	fl.Profile, fl.Endpoint, fl.KeyFile = flagValue("profile"), flagValue("endpoint"), flagValue("key-file")
	fl.Auth, fl.AADTokenFile = flagValue("auth"), flagValue("aad-token-file")
	s, err := config.Resolve(path, fl, os.LookupEnv)
	if err != nil {
		return nil
	}
	if !s.Configured() {
		return slices.Clone(emulator.DefaultRegions)
	}
	cache := regionCacheFor(s.Endpoint)
	if names, fresh := cache.load(time.Now()); fresh {
		return names
	}
	ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
	defer cancel()
	names, err := fetchRegionNames(ctx, s)
	if err != nil {
		stale, _ := cache.load(time.Time{})
		return stale
	}
	cache.store(names, time.Now())
	return names
}

// fetchRegionNames reads the account (GET /), authorised as a command would be (the key
// or Azure AD), and returns its write regions, then its read regions, each once.
func fetchRegionNames(ctx context.Context, s config.Settings) ([]string, error) {
	cred, err := credential(ctx, announcedKey(ctx, s))
	if err != nil {
		return nil, err
	}
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred, UserAgent: userAgent()}
	resp, err := tr.Do(ctx, s.Endpoint, &cosmos.Request{Method: "GET", Path: "/"})
	if err != nil {
		return nil, err
	}
	var acct cosmos.Account
	if err := json.Unmarshal(resp.Body, &acct); err != nil {
		return nil, err
	}
	return regionNamesOf(&acct), nil
}

func regionNamesOf(acct *cosmos.Account) []string {
	var names []string
	for _, n := range append(acct.WriteRegions(), acct.ReadRegions()...) {
		if !slices.ContainsFunc(names, func(m string) bool { return cosmos.SameRegion(m, n) }) {
			names = append(names, n)
		}
	}
	return names
}

// listCompletions completes the last element of a comma-separated list.
func listCompletions(names []string, toComplete string, same func(a, b string) bool) []cobra.Completion {
	prefix := ""
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		prefix = toComplete[:i+1]
	}
	typed := strings.Split(strings.TrimSuffix(prefix, ","), ",")
	var out []cobra.Completion
	for _, n := range names {
		if !slices.ContainsFunc(typed, func(t string) bool { return same(strings.TrimSpace(t), n) }) {
			out = append(out, prefix+n)
		}
	}
	return out
}

// emulatorControlClient is the control client an emulator subcommand would use, from the
// flags typed so far, resolved as the subcommand resolves them (emulator_endpoint.go),
// saying nothing on stderr.
func emulatorControlClient(c *cobra.Command) (*emulator.ControlClient, error) {
	o := &controlOptions{cmd: c}
	for name, v := range map[string]*string{"endpoint": &o.Endpoint, "profile": &o.Profile, "key-file": &o.KeyFile} {
		if f := c.Flags().Lookup(name); f != nil {
			*v = f.Value.String()
		}
	}
	t, err := o.resolveControlTarget(nil)
	if err != nil {
		return nil, err
	}
	return emulator.NewControlClient(t.endpoint, t.key)
}

// completeEmulatorRegions offers the regions of the running emulator the subcommand
// talks to, or the default regions when none answers. They are not cached: a restarted
// emulator may have other regions.
func completeEmulatorRegions(c *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	names := slices.Clone(emulator.DefaultRegions)
	if cl, err := emulatorControlClient(c); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
		defer cancel()
		if st, err := cl.State(ctx); err == nil && len(st.Regions) > 0 {
			names = names[:0]
			for _, r := range st.Regions {
				names = append(names, r.Name)
			}
		}
	}
	return names, noFiles
}

// argsCompletion completes a command's positional arguments.
func argsCompletion(c *cobra.Command) cobra.CompletionFunc {
	switch c.CommandPath() {
	case "cosmosctl emulator failover":
		return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, noFiles
			}
			return completeEmulatorRegions(c, args, toComplete)
		}
	case "cosmosctl emulator fault remove":
		return completeFaultIDs
	case "cosmosctl config set":
		return completeConfigSet
	}
	return cobra.NoFileCompletions
}

func completeFaultIDs(c *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, noFiles
	}
	cl, err := emulatorControlClient(c)
	if err != nil {
		return nil, noFiles
	}
	ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
	defer cancel()
	rules, err := cl.Faults(ctx)
	if err != nil {
		return nil, noFiles
	}
	var out []cobra.Completion
	for _, r := range rules {
		out = append(out, cobra.CompletionWithDesc(r.ID, strings.TrimSpace(r.Effect+" "+r.Region)))
	}
	return out, noFiles
}

// completeConfigSet completes `config set KEY VALUE`: the setting names, then the
// choices of the settings that have them.
func completeConfigSet(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	switch len(args) {
	case 0:
		return config.SettingKeys(), noFiles
	case 1:
		switch args[0] {
		case "output":
			return []cobra.Completion{config.OutputTable, config.OutputJSON, config.OutputNDJSON, config.OutputTSV}, noFiles
		case "auth":
			return []cobra.Completion{"key", "aad"}, noFiles
		case "key_file", "aad_token_file":
			return nil, cobra.ShellCompDirectiveDefault
		case "connection_mode":
			return []cobra.Completion{config.ConnectionGateway, config.ConnectionDirect, config.ConnectionGateway2}, noFiles
		case "hedging.mode":
			return []cobra.Completion{string(config.HedgingOff), string(config.HedgingThreshold), string(config.HedgingAdaptive)}, noFiles
		case "write_retries.policy":
			return []cobra.Completion{string(config.WriteRetriesOff), string(config.WriteRetriesOn), string(config.WriteRetriesTrackingID)}, noFiles
		case "default_profile":
			return completeProfiles(c, args, toComplete)
		case "preferred_regions", "exclude_regions":
			return listCompletions(accountRegionNames(c), toComplete, cosmos.SameRegion), noFiles
		}
	}
	return nil, noFiles
}

// formatDescriptions say what each -o value prints, for the shells that show them.
var formatDescriptions = map[string]string{
	config.OutputTable:  "a table for a person (default)",
	config.OutputJSON:   "JSON for a script (--jq picks from it)",
	config.OutputNDJSON: "one JSON record a line, as they come",
	config.OutputTSV:    "the table as tab-separated values, for awk and cut",
}

// completeFormats offers the formats the command prints (its --output flag lists them).
func completeFormats(c *cobra.Command, f *pflag.Flag) cobra.CompletionFunc {
	formats := f.Annotations[formatsAnnotation]
	if len(formats) == 0 {
		return nil
	}
	desc := map[string]string{}
	for k, v := range formatDescriptions {
		desc[k] = v
	}
	switch c.Name() {
	case "query":
		desc[config.OutputTable] = "a column per property (default)"
		desc[config.OutputJSON] = "one object: items, continuation, totals, every request"
		desc[config.OutputNDJSON] = "one item per line, as pages arrive"
	case "changes":
		desc[config.OutputTable] = "a row per change (a terminal's default)"
		desc[config.OutputJSON] = "one item per line, as the changes arrive"
		desc[config.OutputNDJSON] = "one item per line, as the changes arrive (the default off a terminal)"
	case "export":
		desc[config.OutputNDJSON] = "one item per line (export's only format)"
	}
	comps := make([]string, len(formats))
	for i, v := range formats {
		comps[i] = v + "\t" + desc[v]
	}
	return fixed(comps...)
}
