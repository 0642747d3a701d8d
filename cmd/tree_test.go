package cmd

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// runWith runs one invocation in-process, building the tree as tree says.
func runWith(tree func([]string) string, args ...string) runResult {
	saved := treeFor
	treeFor = tree
	defer func() { treeFor = saved }()
	io, out, errOut := testIO()
	code := Run(context.Background(), io, args)
	return runResult{code, out.String(), errOut.String()}
}

func wholeTree([]string) string { return "" }

// TestOneCommandsTreeBehavesAsTheWholeTree: an invocation built with its command alone
// answers exactly as with every command built, for the help of every command and for
// the usage errors and argument orders that reach the root.
func TestOneCommandsTreeBehavesAsTheWholeTree(t *testing.T) {
	testkit.Isolate(t)
	var invocations [][]string
	walk(NewRootCmd(&IOStreams{}), func(c *cobra.Command) {
		path := strings.Fields(c.CommandPath())[1:]
		invocations = append(invocations, append(slices.Clone(path), "--help"), append(slices.Clone(path), "-h"))
	})
	invocations = append(invocations,
		[]string{"read"},                              // no id
		[]string{"read", "a", "b", "c"},               // too many
		[]string{"read", "a", "--pk", "b", "--bogus"}, // unknown flag
		[]string{"read", "a", "--pk"},                 // flag without its value
		[]string{"read", "a", "--pk", "b", "--e2e-timeout", "-1s"},
		[]string{"-o", "json", "read"}, // flags before the command, usage error as JSON
		[]string{"--diagnostics", "read"},
		[]string{"--pk", "b", "--region", "West US", "read"},
		[]string{"--bogus", "read"},
		[]string{"--help", "read"},
		[]string{"-h", "read"},
		[]string{"--version"},
		[]string{"--version", "read"},
		[]string{"read", "--version"},
		[]string{"version", "-o", "json"},
		[]string{"version", "-o", "yaml"},
		[]string{"reed", "x"}, // suggestions from every command
		[]string{"reed", "read"},
		[]string{"--pk", "x", "reed"},
		[]string{"help", "read"},
		[]string{"help", "environment"},
		[]string{"environment"},
		[]string{"emulator", "fault", "bogus"},
		[]string{"emulator", "faults"},
		[]string{"db", "bogus"},
		[]string{"config", "set"},
		[]string{"probe", "--rate", "-1"},
		[]string{"completion", "bash"},
		[]string{"--", "read"},
		[]string{},
	)
	for _, args := range invocations {
		whole := runWith(wholeTree, args...)
		one := runWith(commandToBuild, args...)
		if one != whole {
			t.Errorf("cosmosctl %s built for %q:\n%+v\nwith the whole tree:\n%+v", strings.Join(args, " "), commandToBuild(args), one, whole)
		}
	}
}

// TestEveryTopLevelNameIsKnown: commandToBuild knows every top-level name of the tree,
// as a command built alone or as one that gets the whole tree, so that a command added
// to the root cannot be mistaken for a flag's value.
func TestEveryTopLevelNameIsKnown(t *testing.T) {
	root := NewRootCmd(&IOStreams{})
	for _, c := range root.Commands() {
		if buildable(c.Name()) == "" && !wholeTreeCommands[c.Name()] {
			t.Errorf("top-level command %q is neither in topCommands nor in wholeTreeCommands", c.Name())
		}
		for _, a := range c.Aliases {
			t.Errorf("command %q has alias %q: commandToBuild knows names only", c.Name(), a)
		}
	}
	for _, tc := range topCommands {
		if c := tc.build(&IOStreams{}); c.Name() != tc.name {
			t.Errorf("topCommands entry %q builds %q", tc.name, c.Name())
		}
	}
	for _, args := range [][]string{{"read", "x"}, {"-o", "json", "read", "x"}, {"--region", "West US", "read"}, {"emulator", "fault", "add"}} {
		if got, want := commandToBuild(args), args[slices.IndexFunc(args, func(a string) bool { return buildable(a) != "" })]; got != want {
			t.Errorf("commandToBuild(%q) = %q, want %q", args, got, want)
		}
	}
	for _, args := range [][]string{{}, {"help", "read"}, {"--version", "read"}, {"--help", "read"}, {"reed", "read"}, {"__complete", "read", ""}, {"completion", "bash"}, {"--", "read"}} {
		if got := commandToBuild(args); got != "" {
			t.Errorf("commandToBuild(%q) = %q, want the whole tree", args, got)
		}
	}
}

// TestBuildingTheTreeForOneCommandIsCheap guards the start-up cost of the command tree
// deterministically, in allocations rather than time: building the root for `read`
// allocates a small part of what the whole tree does.
func TestBuildingTheTreeForOneCommandIsCheap(t *testing.T) {
	io := &IOStreams{}
	whole := testing.AllocsPerRun(5, func() { NewRootCmd(io) })
	read := testing.AllocsPerRun(5, func() { newRoot(io, "read") })
	t.Logf("allocations: whole tree %.0f, read's %.0f", whole, read)
	if read > whole/8 {
		t.Errorf("building the tree for read allocates %.0f times, more than an eighth of the whole tree's %.0f", read, whole)
	}
}
