package cmd

import (
	"bytes"
	"context"
	"encoding/base64"
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
			[]string{`unknown help topic "nosuch"`, "a command (completion, config, create,", "or a topic (configuration, environment, exit-codes, scenarios)"}},
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
