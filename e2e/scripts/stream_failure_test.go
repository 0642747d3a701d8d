package scripts_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cmd"
)

// A command whose progress is an NDJSON stream on stderr (--progress json) keeps that
// stream NDJSON when it fails: the failure is its last event, one line, with the exit
// code — not an "Error:" line breaking into what a program reads.
func TestAFailureInAProgressStreamOnStderrIsAnEvent(t *testing.T) {
	_, env := standalone(t)
	input := filepath.Join(t.TempDir(), "items.ndjson")
	if err := os.WriteFile(input, []byte(`{"id":"a","pk":"t"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, command string
		code          int
	}{
		{"export from a container that does not exist", "cosmosctl export --container nowhere --progress json", cmd.ExitNotFound},
		{"import into a container that does not exist", "cosmosctl import " + input + " --container nowhere --progress json", cmd.ExitNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := script(t, env, tc.command)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, errOut)
			}
			lines := strings.Split(strings.TrimSpace(errOut), "\n")
			var last struct {
				Event string `json:"event"`
				Error *struct {
					Message string `json:"message"`
				} `json:"error"`
				ExitCode int `json:"exit_code"`
			}
			for i, l := range lines {
				if err := json.Unmarshal([]byte(l), &last); err != nil || last.Event == "" {
					t.Fatalf("line %d of stderr is not an event of the stream: %q\nstderr:\n%s", i+1, l, errOut)
				}
			}
			if last.Event != "error" || last.Error == nil || last.Error.Message == "" || last.ExitCode != tc.code {
				t.Fatalf("the last event is not the failure with exit code %d: %q", tc.code, lines[len(lines)-1])
			}
		})
	}
}
