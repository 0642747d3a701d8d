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
		SilenceUsage:  true,
		SilenceErrors: true,
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
		newProbeCmd(io),
		newHedgeTestCmd(io),
		newConfigCmd(io),
		newEmulatorCmd(io),
	)
	root.AddCommand(newExitCodesHelpTopic())
	return root
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
