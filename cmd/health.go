package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/health"
	"github.com/cosmosctl/cosmosctl/hedging"
	"github.com/cosmosctl/cosmosctl/internal/statefile"
	"github.com/cosmosctl/cosmosctl/output"
)

// The state files of an account, as cmd/memory.go names them.
const (
	healthFile   = "health"
	topologyFile = "topology"
	adaptiveFile = "adaptive"
)

const healthLong = `Show what cosmosctl remembers of the configured account's region health: which
regions (and partition key ranges) failed lately, for reads and for writes, which
are unavailable and until when, and the hedge races they lost. It reads the state
files only and sends no request to the account, so it works in the middle of an
outage. -o json prints one object: account_endpoint, state_file, health_memory,
entries (one per region, range and kind), topology (the saved account regions, or
null) and adaptive (the learned hedging latencies per operation, or null).

cosmosctl health reset forgets the region health (with --all the saved topology and
learned latencies too).

REGION HEALTH
  Every command counts, per region and kind of operation (read or write), the
  attempts that failed in a way that says something about the region:
    timeouts (the attempt's own timeout, or the end-to-end timeout, expired with
    no answer), no answer (connection refused or reset, DNS), 503, 500, 408, and
    a gateway's 410 (other than 410/1000, 1002, 1007 and 1008).
  Answers that say nothing about the region are not failures: throttling (429),
  449, 404/1002 and 410/1000, 1002, 1007, 1008 (the partition moved: routing is
  refreshed), and in direct mode a replica's 410 (that is the replica's health,
  kept by the address cache). An attempt cancelled because another
  region answered first says nothing either. A final answer (2xx, 404/0, 409, 412 …)
  is a success.

  Defaults, as the Java and .NET SDKs' per-partition circuit breaker:
    - more than 2 read failures (the third) or more than 5 write failures (the
      sixth) make the region unavailable for that kind of operation; so do 5 hedge
      races in a row lost by the region as first region (slow rather than failing)
    - the counts start again from zero after 5 minutes without a failure
    - an unavailable region is used last, never dropped; after 5 s one probe
      request at a time checks it: a read of its own (for a write, a read of its
      item) sent beside an operation, which goes to the available regions first, so
      that the check never delays an answer; when no other region is available the
      operation itself is the probe. An answer makes the region available again; a
      failure, or no answer before the command ends (and 250ms after), keeps it
      unavailable twice as long, up to 1 minute
    - what is known of a region with no news for 30 minutes is forgotten

  Where: one folder per account endpoint in $COSMOSCTL_STATE_DIR, else
  cosmosctl/state in the user cache directory (~/.cache on Linux,
  ~/Library/Caches on macOS, %LocalAppData% on Windows), files health.json,
  topology.json and adaptive.json. Commands merge what they learned into them under
  a lock when they end. A file that cannot be used (corrupt, another version) is
  one notice on stderr and is replaced by the next command.

  Off: --no-health-memory, COSMOSCTL_HEALTH_MEMORY=off or health_memory = false in
  the profile: commands then neither use nor update the health and adaptive files
  (each command still keeps health for its own operations; the account topology
  is still saved, as it only spares a lookup). The embedded emulator
  (no account configured) remembers nothing: it listens on new ports every run.

EXIT STATUS
  0  the view was printed, also when nothing is remembered or a state file was
     unusable (one notice on stderr); reset cleared what there was
  1  reset could not write a state file (another command holds its lock, a
     permission problem)
  2  bad flags or configuration`

// healthOptions are the flags of `cosmosctl health` and `cosmosctl health reset`.
type healthOptions struct {
	settings settingsFlags
	noColor  bool
	all      bool
	flags    *pflag.FlagSet
}

// register takes the settings flags every account command takes, so that the same
// --profile or --endpoint names the same account; those that cannot change what is
// shown (no request is sent) are accepted and hidden.
func (o *healthOptions) register(c *cobra.Command) {
	fl := c.Flags()
	o.flags = fl
	o.settings.register(fl)
	for _, name := range []string{"key-file", "auth", "aad-token-file", "database", "container", "preferred-regions", "exclude", "e2e-timeout", "attempt-timeout", "connection-mode"} {
		_ = fl.MarkHidden(name)
	}
	fl.BoolVar(&o.noColor, "no-color", false, "no colour (also: NO_COLOR set to anything)")
}

func (o *healthOptions) resolve(io *IOStreams) (config.Settings, error) {
	if err := o.settings.format.check(io); err != nil {
		return config.Settings{}, err
	}
	s, err := o.settings.resolve(o.flags)
	if err != nil {
		return s, err
	}
	if s.Output, err = o.settings.format.apply(io, s.Output); err != nil {
		return s, err
	}
	printConfigWarnings(io, s.Warnings)
	return s, nil
}

func newHealthCmd(io *IOStreams) *cobra.Command {
	o := &healthOptions{}
	c := &cobra.Command{
		Use:   "health",
		Short: "Show the region health remembered for the account, without sending a request",
		Long:  healthLong,
		Example: `  cosmosctl health                          # during an incident: what do commands avoid?
  cosmosctl health --profile prod -o json | jq '.entries[] | select(.status != "available")'
  cosmosctl health reset                    # the region is back: forget its failures
  cosmosctl health reset --all              # forget the topology and learned latencies too`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			st, err := o.resolve(io)
			if err != nil {
				return err
			}
			return runHealth(io, st, o.noColor, time.Now())
		},
	}
	o.register(c)
	o.settings.format.add(config.OutputTSV)
	c.AddCommand(newHealthResetCmd(io))
	return c
}

func newHealthResetCmd(io *IOStreams) *cobra.Command {
	o := &healthOptions{}
	c := &cobra.Command{
		Use:   "reset",
		Short: "Forget the region health remembered for the account",
		Long: `Forget the region health remembered for the configured account, so that the next
command uses every region in its usual order. With --all, forget the saved account
topology and the learned adaptive hedging latencies too. It says on stderr what it
cleared (-o json: on stdout, as one object). It sends no request to the account.

--all in the middle of a write-region outage costs more than it saves: the saved
topology names the regional endpoints that commands look the account up at when
the global endpoint (served by the write region) does not answer. Without it they
cannot find the account until the write region is back.

The files are cleared under their lock, so that a command saving at the same moment
is not lost half-written; a command still running may save what it learns when it
ends.

EXIT STATUS
  0  cleared, or there was nothing to clear
  1  a state file could not be written (another command holds its lock, a
     permission problem)
  2  bad flags or configuration`,
		Example: `  cosmosctl health reset
  cosmosctl health reset --profile prod --all`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			st, err := o.resolve(io)
			if err != nil {
				return err
			}
			return runHealthReset(io, st, o.all)
		},
	}
	o.register(c)
	c.Flags().BoolVar(&o.all, "all", false, "also forget the saved account topology and the learned adaptive hedging latencies")
	return c
}

// healthReport is `cosmosctl health -o json`.
type healthReport struct {
	AccountEndpoint string `json:"account_endpoint"`
	// StateFile is null when nothing is remembered (the embedded emulator).
	StateFile    *string         `json:"state_file"`
	HealthMemory bool            `json:"health_memory"`
	Entries      []health.Entry  `json:"entries"`
	Topology     *topologyReport `json:"topology"`
	Adaptive     *adaptiveReport `json:"adaptive"`
}

type topologyReport struct {
	FetchedAt time.Time      `json:"fetched_at"`
	Regions   []regionReport `json:"regions"`
}

type regionReport struct {
	Name     string `json:"region"`
	Endpoint string `json:"endpoint"`
	Write    bool   `json:"write"`
}

type adaptiveReport struct {
	// Samples counts the learned first-region latencies per operation kind.
	Samples map[string]int `json:"samples"`
}

// accountFiles are the state files of one account.
type accountFiles struct {
	endpoint                   string
	health, topology, adaptive string
}

// stateFilesOf finds the state files of the configured account. ok is false, after a
// line on stderr saying why, when nothing can be remembered.
func stateFilesOf(io *IOStreams, st config.Settings) (accountFiles, bool) {
	if !st.Configured() {
		fmt.Fprintln(io.ErrOut, "cosmosctl: nothing is remembered for the embedded emulator: it listens on new ports every run, so what one run learned would not apply to the next. Set --endpoint, COSMOSCTL_ENDPOINT or a profile to see an account's region health.")
		return accountFiles{}, false
	}
	dir, err := statefile.Dir()
	if err != nil {
		fmt.Fprintf(io.ErrOut, "cosmosctl: nothing is remembered between commands: %v\n", err)
		return accountFiles{endpoint: statefile.NormalizeEndpoint(st.Endpoint)}, false
	}
	return accountFiles{
		endpoint: statefile.NormalizeEndpoint(st.Endpoint),
		health:   statefile.AccountFile(dir, st.Endpoint, healthFile),
		topology: statefile.AccountFile(dir, st.Endpoint, topologyFile),
		adaptive: statefile.AccountFile(dir, st.Endpoint, adaptiveFile),
	}, true
}

func runHealth(io *IOStreams, st config.Settings, noColor bool, now time.Time) error {
	rep := healthReport{Entries: []health.Entry{}, HealthMemory: st.HealthMemory}
	files, ok := stateFilesOf(io, st)
	rep.AccountEndpoint = files.endpoint
	if files.health != "" {
		rep.StateFile = &files.health
	}
	// The view is the one a command would start from: entries merged into a store as
	// openMemory merges them, so that expired entries are left out and a saved
	// unavailable period is bounded the same way.
	store, err := health.New(health.Config{}, clock.Real{})
	if err != nil {
		return err
	}
	notice := func(err error) {
		if err != nil {
			fmt.Fprintf(io.ErrOut, "cosmosctl: %v\n", err)
		}
	}
	if ok {
		hs, err := statefile.Load[health.State](files.health, health.StateKind, health.StateVersion, st.Endpoint)
		notice(err)
		store.Merge(hs)
		rep.Entries = store.Entries()

		t, err := statefile.Load[savedTopology](files.topology, topologyKind, topologyVersion, st.Endpoint)
		notice(err)
		// As openMemory takes it: a topology too old to name the regions is not used.
		if age := now.Sub(t.FetchedAt); t.Account != nil && len(t.Account.ReadableLocations) > 0 && len(t.Account.WritableLocations) > 0 &&
			age >= 0 && age < topologyKnown {
			tr := &topologyReport{FetchedAt: t.FetchedAt, Regions: []regionReport{}}
			for _, l := range t.Account.ReadableLocations {
				r := regionReport{Name: l.Name, Endpoint: l.Endpoint}
				for _, w := range t.Account.WritableLocations {
					r.Write = r.Write || w.Name == l.Name
				}
				tr.Regions = append(tr.Regions, r)
			}
			rep.Topology = tr
		}

		a, err := statefile.Load[hedging.AdaptiveState](files.adaptive, adaptiveKind, hedging.AdaptiveStateVersion, st.Endpoint)
		notice(err)
		// What an adaptive strategy would import: samples aged out or invalid are not
		// remembered in any useful sense.
		live := hedging.MergeAdaptiveState(a, hedging.AdaptiveState{}, now, hedging.AdaptiveConfig{})
		if n := live.Samples(); n > 0 {
			ar := &adaptiveReport{Samples: map[string]int{}}
			for op, ss := range live.Operations {
				if len(ss) > 0 {
					ar.Samples[op] = len(ss)
				}
			}
			rep.Adaptive = ar
		}
	}

	if config.JSONOutput(st.Output) {
		return printJSON(io, rep)
	}
	if !ok {
		return nil
	}
	if !st.HealthMemory {
		fmt.Fprintf(io.ErrOut, "cosmosctl: health memory is off (%s): commands neither use nor update what is shown here\n", st.Source("health_memory"))
	}
	if len(rep.Entries) == 0 {
		fmt.Fprintf(io.ErrOut, "no region health remembered for %s: commands use every region in its usual order\n", rep.AccountEndpoint)
	} else {
		out := io.outStyles(noColor)
		if err := output.WriteHealthTable(io.Out, out, rep.Entries, store.Config(), now); err != nil {
			return err
		}
	}
	var summary []string
	if t := rep.Topology; t != nil {
		names := make([]string, len(t.Regions))
		for i, r := range t.Regions {
			names[i] = r.Name
			if r.Write {
				names[i] += " (write)"
			}
		}
		summary = append(summary, fmt.Sprintf("account topology: %s; fetched %s", strings.Join(names, ", "), output.ClockTimeFrom(t.FetchedAt, now, "-")))
	}
	if a := rep.Adaptive; a != nil {
		var parts []string
		for _, op := range slices.Sorted(maps.Keys(a.Samples)) {
			parts = append(parts, fmt.Sprintf("%s %d", op, a.Samples[op]))
		}
		summary = append(summary, "adaptive hedging samples: "+strings.Join(parts, ", "))
	}
	if len(summary) > 0 {
		// Under the table for a person; on stderr under -o tsv, whose stdout is the
		// table alone.
		w := io.Out
		if io.tsv {
			w = io.ErrOut
		} else if len(rep.Entries) > 0 {
			fmt.Fprintln(w)
		}
		for _, s := range summary {
			fmt.Fprintln(w, s)
		}
	}
	fmt.Fprintf(io.ErrOut, "state file %s\n", files.health)
	return nil
}

// healthResetJSON is `health reset -o json`.
type healthResetJSON struct {
	AccountEndpoint string        `json:"account_endpoint"`
	Cleared         []clearedFile `json:"cleared"`
}

// clearedFile is one state file `health reset` cleared.
type clearedFile struct {
	State     string `json:"state"` // health, topology or adaptive
	StateFile string `json:"state_file"`
	// Forgotten counts what was there: health entries, topology regions, samples.
	Forgotten int `json:"forgotten"`
}

func runHealthReset(io *IOStreams, st config.Settings, all bool) error {
	files, ok := stateFilesOf(io, st)
	rep := healthResetJSON{files.endpoint, []clearedFile{}}
	if ok {
		now := time.Now()
		var said []string
		n, err := clearState(files.health, health.StateKind, health.StateVersion, st.Endpoint, health.State{Entries: []health.StateEntry{}}, func(cur health.State) int {
			s, _ := health.New(health.Config{}, clock.Real{})
			s.Merge(cur)
			return len(s.Entries())
		})
		if err != nil {
			return err
		}
		if n >= 0 {
			rep.Cleared = append(rep.Cleared, clearedFile{"health", files.health, n})
			said = append(said, fmt.Sprintf("region health (%d %s)", n, plural(n, "entry", "entries")))
		}
		if all {
			n, err := clearState(files.topology, topologyKind, topologyVersion, st.Endpoint, savedTopology{}, func(cur savedTopology) int {
				if cur.Account == nil {
					return 0
				}
				return len(cur.Account.ReadableLocations)
			})
			if err != nil {
				return err
			}
			if n >= 0 {
				rep.Cleared = append(rep.Cleared, clearedFile{"topology", files.topology, n})
				said = append(said, fmt.Sprintf("the account topology (%d %s)", n, plural(n, "region", "regions")))
			}
			n, err = clearState(files.adaptive, adaptiveKind, hedging.AdaptiveStateVersion, st.Endpoint,
				hedging.AdaptiveState{Version: hedging.AdaptiveStateVersion, Operations: map[string][]hedging.AdaptiveSample{}},
				func(cur hedging.AdaptiveState) int {
					return hedging.MergeAdaptiveState(cur, hedging.AdaptiveState{}, now, hedging.AdaptiveConfig{}).Samples()
				})
			if err != nil {
				return err
			}
			if n >= 0 {
				rep.Cleared = append(rep.Cleared, clearedFile{"adaptive", files.adaptive, n})
				said = append(said, fmt.Sprintf("learned adaptive hedging latencies (%d %s)", n, plural(n, "sample", "samples")))
			}
		}
		if len(said) == 0 {
			fmt.Fprintf(io.ErrOut, "nothing to clear: nothing is remembered for %s\n", files.endpoint)
		} else {
			fmt.Fprintf(io.ErrOut, "cleared %s for %s\n", strings.Join(said, ", "), files.endpoint)
		}
	}
	if config.JSONOutput(st.Output) {
		return printJSON(io, rep)
	}
	return nil
}

// clearState replaces the state in path with empty under the file's lock and returns
// how much was there (count of what the file held, 0 for an unusable file), or -1 when
// there is no file: nothing to clear, and no folder made for an account never used.
func clearState[T any](path, kind string, version int, endpoint string, empty T, count func(T) int) (int, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return -1, nil
	}
	n := 0
	err := statefile.Update(path, kind, version, endpoint, func(cur T, loaded bool) (T, error) {
		if loaded {
			n = count(cur)
		}
		return empty, nil
	})
	if err != nil {
		return 0, fmt.Errorf("clearing %s: %w", path, err)
	}
	return n, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
