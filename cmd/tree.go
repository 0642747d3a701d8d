package cmd

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/cosmosctl/cosmosctl/engine"
)

// Building the command tree: every command and its flags, help text and completions.
// An invocation of one command needs that command only, so Run builds the root with it
// alone when the arguments name it (commandToBuild); whatever could need the others
// (help, completion, suggestions for an unknown command, the root's own flags) gets the
// whole tree, as NewRootCmd builds it. A one-shot `cosmosctl read` then spends a
// fraction of a millisecond here instead of registering the flags of two dozen commands
// (README, Performance; TestOneCommandsTreeBehavesAsTheWholeTree).

// treeFor chooses the tree Run builds for its arguments: commandToBuild, or in tests
// the whole tree, to compare the two.
var treeFor = commandToBuild

// topCommand is a top-level command: the name that selects it, and how to build it.
type topCommand struct {
	name  string
	build func(*IOStreams) *cobra.Command
}

// topCommands are the top-level commands, in the order the root adds them.
var topCommands = []topCommand{
	{"read", newReadCmd},
	{"create", func(io *IOStreams) *cobra.Command { return newWriteCmd(io, engine.OpCreate) }},
	{"upsert", func(io *IOStreams) *cobra.Command { return newWriteCmd(io, engine.OpUpsert) }},
	{"replace", func(io *IOStreams) *cobra.Command { return newWriteCmd(io, engine.OpReplace) }},
	{"delete", newDeleteCmd},
	{"patch", newPatchCmd},
	{"query", newQueryCmd},
	{"changes", newChangesCmd},
	{"import", newImportCmd},
	{"export", newExportCmd},
	{"db", newDBCmd},
	{"container", newContainerCmd},
	{"throughput", newThroughputCmd},
	{"locate", newLocateCmd},
	{"skew", newSkewCmd},
	{"ranges", newRangesCmd},
	{"regions", newRegionsCmd},
	{"health", newHealthCmd},
	{"probe", newProbeCmd},
	{"hedge-test", newHedgeTestCmd},
	{"config", newConfigCmd},
	{"emulator", newEmulatorCmd},
	{"completion", newCompletionCmd},
	{"version", newVersionCmd},
}

// wholeTreeCommands are the top-level names that get the whole tree: the completion
// scripts and cobra's completion requests describe every command, help may be asked
// about any, and the help topics are read through help.
var wholeTreeCommands = map[string]bool{
	"completion": true, "help": true,
	cobra.ShellCompRequestCmd: true, cobra.ShellCompNoDescRequestCmd: true,
	"exit-codes": true, "environment": true, "configuration": true, "scenarios": true, "embedded-emulator": true, "statuses": true,
}

// commandToBuild is the top-level command that the arguments run, when that command is
// all the invocation needs, or "" for the whole tree. It reads the arguments as
// commandFirst and cobra do: the first argument is the command's name, unless it is a
// flag; then flags, and the values of flags, may come before the name, and the first
// argument that names a command is the command. Anything the root itself answers
// (--version, --help, "--") gets the whole tree, and so does a command that describes
// the others (wholeTreeCommands), an unknown command (for the suggestions) or none.
func commandToBuild(args []string) string {
	if len(args) == 0 {
		return ""
	}
	if !strings.HasPrefix(args[0], "-") {
		return buildable(args[0])
	}
	for _, a := range args {
		if a == "--" {
			return ""
		}
		if strings.HasPrefix(a, "-") {
			switch strings.TrimLeft(strings.SplitN(a, "=", 2)[0], "-") {
			case "version", "help", "h":
				return ""
			}
			continue
		}
		if wholeTreeCommands[a] {
			return ""
		}
		if name := buildable(a); name != "" {
			return name
		}
		// Not a command: the value of a flag before the command's name.
	}
	return ""
}

// buildable is name when it is a top-level command that can be built alone.
func buildable(name string) string {
	if wholeTreeCommands[name] {
		return ""
	}
	for _, t := range topCommands {
		if t.name == name {
			return name
		}
	}
	return ""
}
