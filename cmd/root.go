// Package cmd holds cosmosctl's cobra commands. Each command parses flags into an
// options struct, validates it, hands it to the engine or the emulator, and hands the
// result to output; there is no Cosmos DB logic here.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/cosmosctl/cosmosctl/engine"
)

// Execute runs cosmosctl with the process's arguments and streams and returns the exit code.
func Execute() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, SystemIO(), os.Args[1:])
}

// Run executes one cosmosctl invocation; tests call it with buffers for streams.
func Run(ctx context.Context, io *IOStreams, args []string) int {
	root := NewRootCmd(io)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	fmt.Fprintln(io.ErrOut, "Error: "+oneLine(err.Error()))
	return ExitCode(err)
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return s
}

// NewRootCmd builds the command tree.
func NewRootCmd(io *IOStreams) *cobra.Command {
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
	root.SetIn(io.In)
	root.SetOut(io.Out)
	root.SetErr(io.ErrOut)
	// Flag errors are usage errors with their own exit code.
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &UsageError{Err: fmt.Errorf("%v (see `%s --help`)", err, c.CommandPath())}
	})
	root.AddCommand(
		newReadCmd(io),
		newWriteCmd(io, engine.OpCreate),
		newWriteCmd(io, engine.OpUpsert),
		newWriteCmd(io, engine.OpReplace),
		newDeleteCmd(io),
		newPatchCmd(io),
		newRegionsCmd(io),
		newHealthCmd(io),
		newProbeCmd(io),
		newHedgeTestCmd(io),
		newConfigCmd(io),
		newEmulatorCmd(io),
		newCompletionCmd(io),
		newVersionCmd(io),
	)
	root.AddCommand(newHelpTopics()...)
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

// noArgs is cobra.NoArgs with a usage error.
func noArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErrorf("%s takes no arguments, got %q", c.CommandPath(), strings.Join(args, " "))
	}
	return nil
}

func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErrorf("%s needs %s (see `%s --help`)", c.CommandPath(), what, c.CommandPath())
		}
		return nil
	}
}

var errInterrupted = errors.New("interrupted")
