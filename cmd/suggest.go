package cmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// unknownCommand is the usage error for a command name that is not one of parent's, with
// the names it is closest to: `cosmosctl reed` should say read, as git and kubectl do.
func unknownCommand(parent *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q for %s", name, parent.CommandPath())
	if s := suggestions(parent, name, false); len(s) > 0 {
		msg += "; did you mean " + orList(s) + "?"
	}
	return usageErrorf("%s (see `%s --help`)", msg, parent.CommandPath())
}

// unknownHelpTopic is the usage error of `cosmosctl help NAME` when NAME is neither a
// command nor a help topic; it lists both, since the reader was looking for one of them.
func unknownHelpTopic(parent *cobra.Command, path []string) error {
	name := path[len(path)-1]
	msg := fmt.Sprintf("unknown help topic %q", strings.Join(path, " "))
	if s := suggestions(parent, name, true); len(s) > 0 {
		msg += " (did you mean " + orList(s) + "?)"
	}
	var commands, topics []string
	for _, c := range parent.Commands() {
		switch {
		case c.IsAvailableCommand():
			commands = append(commands, c.Name())
		case c.IsAdditionalHelpTopicCommand():
			topics = append(topics, c.Name())
		}
	}
	help := parent.Root().Name() + " help" + strings.TrimPrefix(parent.CommandPath(), parent.Root().Name())
	msg += fmt.Sprintf(": %s takes a command (%s)", help, strings.Join(commands, ", "))
	if len(topics) > 0 {
		msg += fmt.Sprintf(" or a topic (%s)", strings.Join(topics, ", "))
	}
	return usageErrorf("%s", msg)
}

// suggestions are parent's subcommands (and with topics its help topics) whose names are
// within two edits of name or start with it.
func suggestions(parent *cobra.Command, name string, topics bool) []string {
	var out []string
	lower := strings.ToLower(name)
	for _, c := range parent.Commands() {
		if !c.IsAvailableCommand() && !(topics && c.IsAdditionalHelpTopicCommand()) {
			continue
		}
		n := strings.ToLower(c.Name())
		match := editDistance(lower, n) <= 2 || (len(lower) > 0 && strings.HasPrefix(n, lower))
		for _, s := range c.SuggestFor {
			match = match || strings.EqualFold(s, name)
		}
		if match {
			out = append(out, c.Name())
		}
	}
	return out
}

func orList(s []string) string {
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
