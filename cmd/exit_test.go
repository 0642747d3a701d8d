package cmd

import (
	"strings"
	"testing"
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
