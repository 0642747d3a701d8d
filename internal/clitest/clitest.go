// Package clitest runs cosmosctl in the test's own process, with buffers for its
// streams, for the command tests outside package cmd (e2e/).
package clitest

import (
	"context"
	"encoding/json"
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

// MustRun runs one invocation in-process without stdin and returns its stdout; any exit
// code but 0 fails the test with both streams.
func MustRun(t *testing.T, args ...string) string {
	t.Helper()
	r := Run(t, "", args...)
	if r.Code != 0 {
		t.Fatalf("%s: exit %d\nstdout %s\nstderr %s", strings.Join(args, " "), r.Code, r.Out, r.ErrOut)
	}
	return r.Out
}

// ItemIDs counts the "id" of every line of NDJSON output into seen; a line that is not
// an item with an id fails the test.
func ItemIDs(t *testing.T, out string, seen map[string]int) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var d struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal([]byte(line), &d); err != nil || d.ID == "" {
			t.Fatalf("not an item line: %q (%v)", line, err)
		}
		seen[d.ID]++
	}
}
