package scripts_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cmd"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// A failure under -o ndjson (query, changes) is one line, so that a stream of several
// runs (a runbook's loop appending to one file) stays one JSON value a line.
func TestAFailureInAnNDJSONStreamIsOneLine(t *testing.T) {
	srv, env := standalone(t)
	bin := testkit.Binary(t)
	// Every region refuses queries and change feed polls (both are "query").
	if _, err := srv.AddFault(faults.Rule{Operations: []string{"query"}, Effect: faults.EffectStatus, Status: 503}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"query -o ndjson, every region answering 503", []string{"query", "SELECT * FROM c", "-o", "ndjson"}, cmd.ExitUnavailable},
		{"changes -o ndjson, every region answering 503", []string{"changes", "-o", "ndjson"}, cmd.ExitUnavailable},
		{"changes -o json, which streams too", []string{"changes", "-o", "json"}, cmd.ExitUnavailable},
		{"query -o ndjson with bad flags", []string{"query", "SELECT * FROM c", "--max-items", "0", "-o", "ndjson"}, cmd.ExitUsage},
		{"changes with a flag it does not know, -o ndjson", []string{"changes", "--no-such-flag", "-o", "ndjson"}, cmd.ExitUsage},
	}
	var stream strings.Builder
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			code, out, errOut := testkit.RunBinary(t, bin, env, "", tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %s", code, tc.code, errOut)
			}
			if took := time.Since(start); took > 45*time.Second {
				t.Fatalf("took %s", took)
			}
			if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
				t.Fatalf("stdout is %d lines, want the failure on one line:\n%s", strings.Count(out, "\n"), out)
			}
			v := testkit.JSONLines(t, tc.name, out)[0]
			errObj, _ := v["error"].(map[string]any)
			if errObj == nil || errObj["message"] == "" || v["exit_code"] != float64(code) {
				t.Fatalf("the line is not a failure object with exit_code %d: %s", code, out)
			}
			stream.WriteString(out)
		})
	}
	// A runbook's loop appending each run's output to one file: still NDJSON.
	if got := testkit.JSONLines(t, "the runs appended", stream.String()); len(got) != len(cases) {
		t.Fatalf("%d lines from %d runs", len(got), len(cases))
	}
}
