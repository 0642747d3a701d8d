package cmd

import (
	"regexp"
	"strings"

	"github.com/spf13/pflag"
)

// The resume hint an interrupted import prints is a command to paste: the same input
// and --state, and every other flag the run was given, shell-quoted, because a
// resumed run with another --container, --database or --mode is refused (the state is
// bound to them) and one without --concurrency or --max-ru-per-second runs differently.
// The database and container are named even when they came from the environment or a
// profile, since the state file is bound to them and the next shell may not have them.
// No flag takes a secret (a key is read from a file, the environment or the profile),
// and resumeSkip keeps any that ever would out of the hint.

// resumeSkip are flags that never go in a resume command: help, and anything secret.
var resumeSkip = map[string]bool{"help": true, "key": true, "connection-string": true, "aad-token": true}

// resumeCommand is the command that resumes this import: cosmosctl import INPUT --state
// STATE, then the flags given (in name order), then --database and --container when they
// were not given as flags.
func (o *importOptions) resumeCommand(input, database, container string) string {
	words := []string{"cosmosctl", "import", shellQuote(input), "--state", shellQuote(o.state)}
	fl := o.conn.flags
	fl.VisitAll(func(f *pflag.Flag) {
		if !f.Changed || f.Name == "state" || resumeSkip[f.Name] {
			return
		}
		if f.Value.Type() == "bool" {
			if f.Value.String() == "true" {
				words = append(words, "--"+f.Name)
			} else {
				words = append(words, "--"+f.Name+"=false")
			}
			return
		}
		value := f.Value.String()
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			value = strings.Join(sv.GetSlice(), ",")
		}
		words = append(words, "--"+f.Name, shellQuote(value))
	})
	for _, s := range []struct{ flag, value string }{{"database", database}, {"container", container}} {
		if f := fl.Lookup(s.flag); f != nil && !f.Changed && s.value != "" {
			words = append(words, "--"+s.flag, shellQuote(s.value))
		}
	}
	return strings.Join(words, " ")
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// shellQuote quotes s for a POSIX shell: as it is when nothing in it is special, else in
// single quotes, each single quote inside closed, escaped and reopened.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
