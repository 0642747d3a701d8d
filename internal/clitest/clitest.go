// Package clitest runs cosmosctl in the test's own process, with buffers for its
// streams, for the command tests outside package cmd (e2e/).
package clitest

import (
	"context"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cmd"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// Result is what one invocation did: its exit code, stdout and stderr.
type Result struct {
	Code        int
	Out, ErrOut string
}

// Run runs one invocation in-process with stdin.
func Run(t *testing.T, stdin string, args ...string) Result {
	t.Helper()
	io, out, errOut := IO()
	io.In = strings.NewReader(stdin)
	code := cmd.Run(context.Background(), io, args)
	return Result{code, out.String(), errOut.String()}
}

// IO is a command's streams as buffers, stdin empty and nothing a terminal.
func IO() (*cmd.IOStreams, *testkit.Buffer, *testkit.Buffer) {
	out, errOut := &testkit.Buffer{}, &testkit.Buffer{}
	return &cmd.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut}, out, errOut
}
