// Package cmd holds cosmosctl's cobra commands. Each command parses flags into an
// options struct, validates it, hands it to the engine or the emulator, and hands the
// result to output; there is no Cosmos DB logic here.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cosmosctl/cosmosctl/output"
)

// Execute runs cosmosctl with the process's arguments and streams and returns the exit code.
func Execute() int {
	ctx, stop := interruptContext(context.Background())
	defer stop()
	return Run(ctx, SystemIO(), os.Args[1:])
}

// Run executes one cosmosctl invocation; tests call it with buffers for streams.
func Run(ctx context.Context, streams *IOStreams, args []string) int {
	s := *streams
	out := &countingWriter{w: streams.Out}
	s.Out = out
	io := &s
	quiet, qerr := quietFromEnv(getenv)
	io.quiet = quiet
	io.args = args
	root := newRoot(io, treeFor(args))
	if qerr != nil {
		fmt.Fprintln(io.ErrOut, "Error: "+qerr.Error())
		return ExitUsage
	}
	args = commandFirst(root, args)
	root.SetArgs(args)
	c, err := root.ExecuteContextC(ctx)
	if io.jq != nil {
		// What --jq made of the output is the output; its failure is the command's
		// unless the command failed on its own.
		jqErr := io.jq.Close()
		var je *jqError
		switch {
		case jqErr == nil:
		case err == nil || errors.As(err, &je):
			err = jqErr
		default:
			fmt.Fprintln(io.ErrOut, "cosmosctl: "+oneLine(jqErr.Error()))
		}
	}
	if err == nil {
		return ExitOK
	}
	var ue *UsageError
	if c == root && !errors.As(err, &ue) {
		// cobra's own check of the root's arguments: the only thing it refuses there is
		// an unknown command, in an error without a type and with its suggestions on
		// lines of their own.
		err = unknownCommand(root, firstArg(args))
	}
	if ie := interruption(ctx, err, c.CommandPath()); ie != nil {
		err = ie
	}
	// The embedded emulator's data out of reach says all there is to say in one line,
	// whatever the engine wrapped around it.
	var eu *embeddedUnavailableError
	if errors.As(err, &eu) {
		err = eu
	}
	code := ExitCode(err)
	if io.errJSON {
		// stderr is an NDJSON stream a program reads (--progress json): the failure is
		// one more event of it, not a line of text breaking into it.
		writeErrorEvent(io.ErrOut, failureJSON(err, code))
	} else {
		fmt.Fprintln(io.ErrOut, "Error: "+oneLine(err.Error()))
	}
	// With --jq stdout holds what the expression made of the output, and a failure is
	// the exit code and the line on stderr.
	if out.n.Load() == 0 && io.jq == nil && !jqArg(args) && failureAsJSON(c, io, args) {
		if failureAsLine(c, io, args) {
			_ = output.WriteJSONLine(streams.Out, failureJSON(err, code))
		} else {
			_ = output.WriteJSON(streams.Out, failureJSON(err, code))
		}
	}
	return code
}

// commandFirst moves flags given before the command name after it, so that
// `cosmosctl --diagnostics read …` is `cosmosctl read --diagnostics …`: the flags are the
// command's, and people type them first (as kubectl and gh allow). The args are left as
// they are unless everything before the first command name is a flag (or a flag's
// value) and none of them is one of the root's own (--version, --help).
func commandFirst(root *cobra.Command, args []string) []string {
	if len(args) == 0 || !strings.HasPrefix(args[0], "-") {
		return args
	}
	for i, a := range args {
		if a == "--" {
			return args
		}
		if strings.HasPrefix(a, "-") {
			name := strings.TrimLeft(strings.SplitN(a, "=", 2)[0], "-")
			if root.Flags().Lookup(name) != nil || (len(name) == 1 && root.Flags().ShorthandLookup(name) != nil) {
				return args
			}
			continue
		}
		c, _, err := root.Find([]string{a})
		if err != nil || c == root {
			continue // a flag's value
		}
		return append(append([]string{a}, args[:i]...), args[i+1:]...)
	}
	return args
}

// firstArg is the first argument that is not a flag: the root's flags are all booleans.
func firstArg(args []string) string {
	for _, a := range args {
		if a != "--" && !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return s
}

// NewRootCmd builds the whole command tree.
func NewRootCmd(io *IOStreams) *cobra.Command { return newRoot(io, "") }

// newRoot builds the root command with every command under it, or with only the
// top-level command named only (and its subcommands): what one invocation of that command
// needs (see commandToBuild).
func newRoot(io *IOStreams, only string) *cobra.Command {
	root := &cobra.Command{
		Use:   "cosmosctl",
		Short: "Operate Azure Cosmos DB accounts: hedged reads, safe write retries, regional incident rehearsal",
		Long: `cosmosctl reads and writes Azure Cosmos DB items through an engine that hedges
reads across regions, retries writes safely and shows every attempt it made.
It ships a multi-region emulator with fault injection, so that a regional
incident can be rehearsed on one machine.`,
		Example: `  cosmosctl read order-1 --pk tenant-7                    # a point read, hedged if the profile says so
  echo '{"id":"order-1","pk":"tenant-7"}' | cosmosctl create -f -
  cosmosctl regions                                       # the account's regions and their latency
  cosmosctl health                                        # which regions commands avoid, and why
  cosmosctl probe --duration 30s                          # which regions are slow right now
  cosmosctl hedge-test                                    # what hedging would do about it
  cosmosctl emulator                                      # a local three-region account
  cosmosctl help environment                              # every COSMOSCTL_* variable`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// completion is cosmosctl's own command, with install instructions per shell.
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
	}
	root.PersistentFlags().BoolVarP(&io.quiet, "quiet", "q", io.quiet, "print no notices on stderr (what the command assumed, that it resumes): warnings and errors only ($COSMOSCTL_QUIET=1)")
	root.SetIn(io.In)
	root.SetOut(io.Out)
	root.SetErr(io.ErrOut)
	// Flag errors are usage errors with their own exit code.
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &UsageError{Err: fmt.Errorf("%v (see `%s --help`)", err, c.CommandPath())}
	})
	for _, t := range topCommands {
		if only == "" || t.name == only {
			root.AddCommand(t.build(io))
		}
	}
	if only == "" {
		root.AddCommand(newHelpTopics()...)
	}
	addVersionFlag(root)
	initHelpCmd(root)
	registerCompletions(root)
	return root
}

// initHelpCmd adds cobra's help command now rather than when the tree runs, to give it
// an example and to make `cosmosctl help <Tab>` offer the help topics too.
func initHelpCmd(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	help, _, err := root.Find([]string{"help"})
	if err != nil || help == root || help.ValidArgsFunction == nil {
		return
	}
	// cobra's help prints the usage and exits 0 for a topic it does not know; a script
	// (or a typo) should learn that it asked for nothing.
	help.Run = nil
	help.RunE = func(c *cobra.Command, args []string) error {
		target, rest, err := c.Root().Find(args)
		if err != nil || target == nil || (len(rest) > 0 && target.HasSubCommands()) {
			parent := target
			if parent == nil || err != nil {
				parent = c.Root()
			}
			return unknownHelpTopic(parent, args)
		}
		target.InitDefaultHelpFlag()
		return target.Help()
	}
	help.Example = "  cosmosctl help read\n  cosmosctl help emulator fault add\n  cosmosctl help environment        # a help topic"
	commands := help.ValidArgsFunction
	help.ValidArgsFunction = func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		comps, directive := commands(c, args, toComplete)
		if len(args) == 0 {
			for _, t := range c.Root().Commands() {
				if t.IsAdditionalHelpTopicCommand() && strings.HasPrefix(t.Name(), toComplete) {
					comps = append(comps, cobra.CompletionWithDesc(t.Name(), t.Short))
				}
			}
		}
		return comps, directive
	}
}

// noArgs is cobra.NoArgs with a usage error; a command with subcommands says which of
// them the argument may have meant.
func noArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 && c.HasAvailableSubCommands() {
		return unknownCommand(c, args[0])
	}
	if len(args) > 0 {
		return usageErrorf("%s takes no arguments, got %q", c.CommandPath(), strings.Join(args, " "))
	}
	return nil
}

func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		switch {
		case len(args) < n:
			return usageErrorf("%s needs %s (see `%s --help`)", c.CommandPath(), what, c.CommandPath())
		case len(args) > n:
			takes := "one argument"
			if n != 1 {
				takes = fmt.Sprintf("%d arguments", n)
			}
			return usageErrorf("too many arguments: %s takes %s (%s), got %d: %s (see `%s --help`)",
				c.CommandPath(), takes, what, len(args), quoteAll(args), c.CommandPath())
		}
		return nil
	}
}

func quoteAll(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = fmt.Sprintf("%q", a)
	}
	return strings.Join(q, " ")
}

var errInterrupted = errors.New("interrupted")
