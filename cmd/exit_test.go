package cmd

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// Each case is what a user types and what `cosmosctl help exit-codes` promises for it.
func TestUsageMistakesExitWithTheUsageCodeAndSayWhatWasMeant(t *testing.T) {
	isolate(t)
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"an unknown command suggests the near one", []string{"reed"}, []string{`unknown command "reed" for cosmosctl`, "did you mean read?"}},
		{"a prefix of a command suggests it", []string{"hedge"}, []string{"did you mean hedge-test?"}},
		{"an unknown subcommand suggests the near one", []string{"emulator", "fualt"}, []string{`unknown command "fualt" for cosmosctl emulator`, "did you mean fault?"}},
		{"an unknown help topic lists the commands and topics", []string{"help", "nosuch"},
			[]string{`unknown help topic "nosuch"`, "a command (changes, completion, config, container, create, db, delete, emulator, export,", "or a topic (configuration, embedded-emulator, environment, exit-codes, scenarios, statuses)"}},
		{"a misspelt help topic suggests it", []string{"help", "exitcodes"}, []string{"did you mean exit-codes?"}},
		{"an unknown help subtopic names its parent", []string{"help", "emulator", "fualt"}, []string{"did you mean fault?", "cosmosctl help emulator takes a command"}},
		{"too many arguments say so", []string{"read", "a", "b", "--pk", "x"},
			[]string{`too many arguments: cosmosctl read takes one argument (the item id), got 2: "a" "b"`}},
		{"too few arguments say what is missing", []string{"read", "--pk", "x"}, []string{"cosmosctl read needs the item id"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := cosmosctl(t, "", tc.args...)
			if r.code != ExitUsage {
				t.Fatalf("exit %d, want %d: %+v", r.code, ExitUsage, r)
			}
			if r.out != "" || strings.Count(r.errOut, "\n") != 1 {
				t.Fatalf("want one line on stderr and nothing on stdout: %+v", r)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.errOut, w) {
					t.Errorf("stderr lacks %q: %s", w, r.errOut)
				}
			}
		})
	}
}

func TestHelpOfAKnownCommandOrTopicStillSucceeds(t *testing.T) {
	isolate(t)
	for _, args := range [][]string{{"help", "read"}, {"help", "emulator", "fault", "add"}, {"help", "exit-codes"}, {"help"}, {}} {
		if r := cosmosctl(t, "", args...); r.code != ExitOK || r.out == "" {
			t.Errorf("%q: %+v", args, r)
		}
	}
}

// A token file that cannot be read is this machine's input (2); a credential that
// produces no token is an authentication failure (7), as a token the account refuses is.
func TestAzureADTokenFailuresExitByCause(t *testing.T) {
	expired := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none"}`)) + "." +
		base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"cosmosctl-test","exp":1000000000}`)) + ".c2ln"
	t.Run("an expired token is exit 7", func(t *testing.T) {
		aadAccount(t, expired)
		r := cosmosctl(t, "", "read", "x", "--pk", "p")
		if r.code != ExitAuth || !strings.Contains(r.errOut, "expired at 2001-09-09") {
			t.Fatalf("expired token: %+v", r)
		}
		if strings.Contains(r.errOut, expired) {
			t.Fatalf("the error shows the token: %s", r.errOut)
		}
	})
	t.Run("a token file with no token in it is exit 2", func(t *testing.T) {
		_, path := aadAccount(t, testAADToken)
		os.WriteFile(path, []byte("not a token\n"), 0o600)
		if r := cosmosctl(t, "", "read", "x", "--pk", "p"); r.code != ExitUsage {
			t.Fatalf("malformed token file: %+v", r)
		}
	})
	t.Run("exit-codes documents both", func(t *testing.T) {
		out := helpTopic(t, "exit-codes")
		for _, want := range []string{"a missing or empty token file", "no Azure AD token could be had"} {
			if !strings.Contains(out, want) {
				t.Errorf("help exit-codes lacks %q:\n%s", want, out)
			}
		}
	})
}

// hangingReads is an account whose point reads never answer in any region.
func hangingReads(t *testing.T) {
	t.Helper()
	testAccount(t, func(c *emulator.Config) {
		c.Faults = []faults.Rule{{Effect: faults.EffectHang, Operations: []string{faults.OpRead}}}
	})
	if r := cosmosctl(t, `{"id":"o1","pk":"t1"}`, "create", "-f", "-"); r.code != ExitOK {
		t.Fatalf("create: %+v", r)
	}
}

// Ctrl-C is its own outcome: not a failure of the service (8) or "context canceled" (1).
func TestInterruptedReadExits130AndSaysWhatWasInFlight(t *testing.T) {
	hangingReads(t)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"plain", []string{"read", "o1", "--pk", "t1", "--region", "West US"}},
		{"hedged", []string{"read", "o1", "--pk", "t1", "--hedge-threshold", "10ms", "--e2e-timeout", "1m"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			io, out, errOut := testIO()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan int, 1)
			go func() { done <- Run(ctx, io, tc.args) }()
			time.Sleep(300 * time.Millisecond)
			cancel()
			var code int
			select {
			case code = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("the read did not end when interrupted")
			}
			if code != ExitInterrupted {
				t.Fatalf("exit %d, want %d: %s", code, ExitInterrupted, errOut.String())
			}
			line := errOut.String()
			if !strings.HasPrefix(line, `Error: interrupted: read "o1" in flight in `) || strings.Count(line, "\n") != 1 || !strings.Contains(line, "West US") {
				t.Fatalf("want one line naming the read and its regions, got %q", line)
			}
			if out.String() != "" {
				t.Fatalf("stdout: %q", out.String())
			}
		})
	}
}

func TestCtrlCOnTheBinaryExits130(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := cosmosctlBinary(t)
	hangingReads(t)
	cmd := exec.Command(bin, "read", "o1", "--pk", "t1", "--region", "West US")
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != ExitInterrupted {
		t.Fatalf("exit %v, want %d: %s", err, ExitInterrupted, errOut.String())
	}
	if got := errOut.String(); got != "Error: interrupted: read \"o1\" in flight in West US\n" {
		t.Fatalf("stderr %q", got)
	}
	if out := helpTopic(t, "exit-codes"); !strings.Contains(out, "130  interrupted (Ctrl-C, SIGINT)") || !strings.Contains(out, "143  terminated (SIGTERM)") {
		t.Fatalf("help exit-codes lacks 130 and 143:\n%s", out)
	}
}

// A request the engine refuses before sending has no attempts to show: the diagnostics
// table would only say "no request was sent" under settings that never applied.
func TestDiagnosticsPrintNoTableWhenNothingWasSent(t *testing.T) {
	testAccount(t)
	r := cosmosctl(t, "", "read", "bad\xffid", "--pk", "t1", "--diagnostics", "--hedge-threshold", "300ms")
	if r.code != ExitUsage {
		t.Fatalf("exit %d, want %d: %+v", r.code, ExitUsage, r)
	}
	if strings.Count(r.errOut, "\n") != 1 || strings.Contains(r.errOut, "no request was sent") || strings.Contains(r.errOut, "hedging") {
		t.Fatalf("want the error line alone on stderr, got:\n%s", r.errOut)
	}
	// A request that was sent still shows its table.
	r = cosmosctl(t, "", "read", "missing", "--pk", "t1", "--diagnostics")
	if r.code != ExitNotFound || !strings.Contains(r.errOut, "REGION") {
		t.Fatalf("a sent read shows its diagnostics: %+v", r)
	}
}

// jsonFailure decodes stdout as exactly one JSON object.
func jsonFailure(t *testing.T, out string) failureObject {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	var f failureObject
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("stdout is not a JSON object: %v\n%s", err, out)
	}
	if dec.More() {
		t.Fatalf("stdout holds more than one JSON value:\n%s", out)
	}
	if f.Error == nil {
		t.Fatalf("no error member:\n%s", out)
	}
	return f
}

// Scripts parse stdout: under -o json every failure is one JSON object there, usage
// errors included, with the stderr line as without it.
func TestEveryFailureUnderJSONOutputIsOneJSONObject(t *testing.T) {
	testAccount(t)
	if r := cosmosctl(t, `{"id":"o1","pk":"t1"}`, "create", "-f", "-"); r.code != ExitOK {
		t.Fatalf("create: %+v", r)
	}
	for _, tc := range []struct {
		name  string
		env   string
		stdin string
		args  []string
		code  int
		kind  string
		want  string
	}{
		{"a bad flag", "", "", []string{"read", "o1", "--pk", "t1", "--bogus", "-o", "json"}, ExitUsage, "usage", "unknown flag: --bogus"},
		{"a bad flag before -o", "", "", []string{"read", "--bogus", "o1", "--output=json"}, ExitUsage, "usage", "unknown flag: --bogus"},
		{"an unknown region", "", "", []string{"read", "o1", "--pk", "t1", "--region", "Nowhere", "-ojson"}, ExitUsage, "usage", `--region "Nowhere" is not a region`},
		{"bad JSON input", "", "{bad", []string{"create", "-f", "-", "-o", "json"}, ExitUsage, "usage", "not valid JSON"},
		{"a missing partition key", "", "", []string{"read", "o1", "-o", "json"}, ExitUsage, "usage", "needs the item's partition key"},
		{"an unknown command", "", "", []string{"reed", "-o", "json"}, ExitUsage, "usage", "did you mean read?"},
		{"COSMOSCTL_OUTPUT=json", "json", "", []string{"read", "o1", "--pk", "t1", "--bogus"}, ExitUsage, "usage", "unknown flag: --bogus"},
		{"a service error", "", "", []string{"read", "missing", "--pk", "t1", "-o", "json"}, ExitNotFound, "service", "does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("COSMOSCTL_OUTPUT", tc.env)
			r := cosmosctl(t, tc.stdin, tc.args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d: %+v", r.code, tc.code, r)
			}
			f := jsonFailure(t, r.out)
			if f.Error.Kind != tc.kind || !strings.Contains(f.Error.Message, tc.want) {
				t.Fatalf("error %+v, want kind %s and a message with %q", f.Error, tc.kind, tc.want)
			}
			if tc.kind == "usage" && (f.ExitCode != tc.code || f.Error.Code != "UsageError") {
				t.Fatalf("exit_code %d code %q, want %d UsageError", f.ExitCode, f.Error.Code, tc.code)
			}
			if !strings.HasPrefix(r.errOut, "Error: ") && !strings.Contains(r.errOut, "\nError: ") && tc.kind == "usage" {
				t.Fatalf("the stderr line is gone: %q", r.errOut)
			}
		})
	}
	t.Run("without -o json stdout stays empty", func(t *testing.T) {
		if r := cosmosctl(t, "", "read", "o1", "--pk", "t1", "--bogus"); r.out != "" || r.code != ExitUsage {
			t.Fatalf("%+v", r)
		}
	})
}

// Messages name JSON kinds, never Go types: a reader wrote JSON, not Go.
func TestErrorsNameJSONKindsNotGoTypes(t *testing.T) {
	testAccount(t)
	for _, tc := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{`{"id":5,"pk":"t1"}`, []string{"create", "-f", "-"}, `the document's "id" must be a string, not a number`},
		{`{"id":{"a":1},"pk":"t1"}`, []string{"create", "-f", "-"}, `must be a string, not an object`},
		{`{"id":["a"],"pk":"t1"}`, []string{"create", "-f", "-"}, `must be a string, not an array`},
		{"", []string{"read", "o1", "--pk", `[{"a":1}]`}, "not an object"},
		{"", []string{"read", "o1", "--pk", `[[1]]`}, "not an array"},
	} {
		r := cosmosctl(t, tc.stdin, tc.args...)
		if r.code != ExitUsage || !strings.Contains(r.errOut, tc.want) {
			t.Errorf("%v %s: exit %d, want %d and %q: %s", tc.args, tc.stdin, r.code, ExitUsage, tc.want, r.errOut)
		}
		for _, goType := range []string{"json.Number", "map[string]interface", "[]interface", "float64"} {
			if strings.Contains(r.errOut, goType) {
				t.Errorf("%v %s: the error names the Go type %s: %s", tc.args, tc.stdin, goType, r.errOut)
			}
		}
	}
}

// An item command's own JSON result names the kind of a failure the service did not
// answer, as the generic failure object does: bad input the engine refused is "usage",
// an interruption is "interrupted" — never "other".
func TestItemCommandJSONErrorKinds(t *testing.T) {
	hangingReads(t)
	t.Run("engine-refused input", func(t *testing.T) {
		r := cosmosctl(t, "", "read", "o1", "--pk", "t1", "--exclude", "Atlantis", "-o", "json")
		if r.code != ExitUsage {
			t.Fatalf("exit %d, want %d: %+v", r.code, ExitUsage, r)
		}
		var obj struct {
			Error struct{ Kind, Code, Message string } `json:"error"`
		}
		if err := json.Unmarshal([]byte(r.out), &obj); err != nil {
			t.Fatalf("stdout is not one JSON object: %v: %q", err, r.out)
		}
		if obj.Error.Kind != "usage" || !strings.Contains(obj.Error.Message, "Atlantis") {
			t.Fatalf("error %+v, want kind usage naming the region", obj.Error)
		}
	})
	t.Run("interrupted", func(t *testing.T) {
		io, out, errOut := testIO()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan int, 1)
		go func() {
			done <- Run(ctx, io, []string{"read", "o1", "--pk", "t1", "--region", "West US", "-o", "json"})
		}()
		time.Sleep(300 * time.Millisecond)
		cancel()
		var code int
		select {
		case code = <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("the read did not end when interrupted")
		}
		if code != ExitInterrupted {
			t.Fatalf("exit %d, want %d: %s", code, ExitInterrupted, errOut.String())
		}
		var obj struct {
			Error struct{ Kind, Code string } `json:"error"`
		}
		if err := json.Unmarshal([]byte(out.String()), &obj); err != nil {
			t.Fatalf("stdout is not one JSON object: %v: %q", err, out.String())
		}
		if obj.Error.Kind != "interrupted" || obj.Error.Code != "Interrupted" {
			t.Fatalf("error %+v, want kind interrupted", obj.Error)
		}
	})
}

// A profile that asks for JSON gets JSON for a flag error too, which stops the command
// before its settings are resolved; --profile picks the profile there as everywhere.
func TestFlagErrorsHonourTheProfilesOutput(t *testing.T) {
	isolatedConfig(t, "default_profile = \"scripts\"\n[profiles.scripts]\noutput = \"json\"\n[profiles.people]\noutput = \"table\"\n")
	r := cosmosctl(t, "", "read", "o1", "--pk", "t1", "--bogus")
	if r.code != ExitUsage {
		t.Fatalf("exit %d: %+v", r.code, r)
	}
	if f := jsonFailure(t, r.out); f.Error.Kind != "usage" || !strings.Contains(f.Error.Message, "--bogus") {
		t.Fatalf("error %+v", f.Error)
	}
	for _, args := range [][]string{
		{"read", "o1", "--pk", "t1", "--bogus", "--profile", "people"},
		{"read", "o1", "--pk", "t1", "--bogus", "--profile=people"},
	} {
		if r := cosmosctl(t, "", args...); r.code != ExitUsage || r.out != "" {
			t.Fatalf("%v: the table profile printed %q (exit %d)", args, r.out, r.code)
		}
	}
}

// Flags typed before the command are the command's: `cosmosctl --diagnostics read …`
// runs the read (it used to say `unknown command "read" … did you mean read?`).
func TestFlagsBeforeTheCommandAreTheCommands(t *testing.T) {
	testAccount(t)
	if r := cosmosctl(t, `{"id":"o1","pk":"t1"}`, "create", "-f", "-"); r.code != ExitOK {
		t.Fatalf("create: %+v", r)
	}
	r := cosmosctl(t, "", "-o", "json", "--region", "West US", "read", "o1", "--pk", "t1")
	if r.code != ExitOK || !strings.Contains(r.out, `"status_code": 200`) || !strings.Contains(r.out, `"winning_region": "West US"`) {
		t.Fatalf("%+v", r)
	}
	if r := cosmosctl(t, "", "--bogus", "read", "o1", "--pk", "t1"); r.code != ExitUsage || !strings.Contains(r.errOut, "unknown flag: --bogus") {
		t.Fatalf("an unknown flag before the command: %+v", r)
	}
	if r := cosmosctl(t, "", "--version"); r.code != ExitOK || !strings.Contains(r.out, "cosmosctl") {
		t.Fatalf("--version: %+v", r)
	}
}
