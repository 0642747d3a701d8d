// Command gen writes the files generated from cosmosctl's command tree, which are checked
// in and shipped in the release archives and packages: the shell completion scripts, the
// markdown reference, the man pages, and the JSON schema of every command's JSON output. `go generate ./...` runs it (see generate.go);
// CI runs that and fails if anything changed.
//
// The output must be the same on every machine: the environment variables cosmosctl
// reads are cleared first (one of them is a flag default), the man pages carry a fixed
// date, and cobra's "Auto generated … on DATE" lines are off.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/cpuguy83/go-md2man/v2/md2man"
	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/cosmosctl/cosmosctl/cmd"
)

// manDate is the date in the man pages' headers: fixed, so that regenerating them
// changes nothing unless the commands changed.
var manDate = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

func main() {
	completions := flag.String("completions", "", "write the completion scripts to this directory")
	docs := flag.String("docs", "", "write the markdown reference to this directory")
	man := flag.String("man", "", "write the man pages to man1/ and man7/ under this directory")
	schemas := flag.String("schemas", "", "write the JSON schema of every command's JSON output to this directory")
	flag.Parse()
	if err := run(*completions, *docs, *man, *schemas); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(completions, docs, man, schemas string) error {
	clearEnvironment()
	if completions != "" {
		if err := writeCompletions(completions); err != nil {
			return err
		}
	}
	if docs != "" {
		if err := writeMarkdown(docs); err != nil {
			return err
		}
	}
	if man != "" {
		if err := writeMan(man); err != nil {
			return err
		}
	}
	if schemas != "" {
		if err := writeSchemas(schemas); err != nil {
			return err
		}
	}
	return nil
}

// clearEnvironment unsets what cosmosctl reads, so that a developer's settings never
// end up in the generated files.
func clearEnvironment() {
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "COSMOSCTL_") || name == "NO_COLOR" {
			os.Unsetenv(name)
		}
	}
}

// writeCompletions runs `cosmosctl completion SHELL` for each shell, so that the files
// are exactly what users get from the command.
func writeCompletions(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := cmd.CompletionFiles()
	shells := make([]string, 0, len(files))
	for sh := range files {
		shells = append(shells, sh)
	}
	sort.Strings(shells)
	for _, sh := range shells {
		var out, errOut bytes.Buffer
		io := &cmd.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
		if code := cmd.Run(context.Background(), io, []string{"completion", sh}); code != 0 {
			return fmt.Errorf("cosmosctl completion %s exited %d: %s", sh, code, errOut.String())
		}
		if err := os.WriteFile(filepath.Join(dir, files[sh]), out.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// docTree is the command tree as the docs show it: cobra's help command hidden (it has
// no page of its own), no "Auto generated on DATE" footers, and each command's long
// description kept as it is laid out for the terminal. The descriptions are plain text
// with aligned columns and indented examples, not markdown: rendered as markdown they
// would lose their layout (and text such as <account host> would vanish as HTML).
func docTree() *cobra.Command {
	io := &cmd.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
	root := cmd.NewRootCmd(io)
	root.InitDefaultHelpCmd()
	root.InitDefaultHelpFlag()
	walk(root, func(c *cobra.Command) {
		c.DisableAutoGenTag = true
		if c.Name() == "help" && c.Parent() == root {
			c.Hidden = true
		}
		if c.Long != "" && !c.IsAdditionalHelpTopicCommand() {
			c.Long = "```\n" + strings.TrimRight(c.Long, "\n") + "\n```"
		}
	})
	return root
}

func walk(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, sub := range c.Commands() {
		walk(sub, fn)
	}
}

// topics are the help topics (`cosmosctl help environment`), which cobra's generators
// skip: they get pages of their own.
func topics(root *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	for _, c := range root.Commands() {
		if c.IsAdditionalHelpTopicCommand() {
			out = append(out, c)
		}
	}
	return out
}

// removeGenerated deletes the files a previous run wrote, so that a removed command's
// page does not linger.
func removeGenerated(pattern string) error {
	old, err := filepath.Glob(pattern)
	if err != nil {
		return err
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	return nil
}

func writeMarkdown(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := removeGenerated(filepath.Join(dir, "cosmosctl*.md")); err != nil {
		return err
	}
	root := docTree()
	if err := doc.GenMarkdownTree(root, dir); err != nil {
		return err
	}
	// The root page links the help topics too, each on a page of its own.
	var index bytes.Buffer
	index.WriteString("### Help topics\n\n")
	for _, t := range topics(root) {
		name := "cosmosctl_help_" + t.Name() + ".md"
		fmt.Fprintf(&index, "* [cosmosctl help %s](%s)\t - %s\n", t.Name(), name, t.Short)
		page := fmt.Sprintf("## cosmosctl help %s\n\n%s\n\n```\n%s\n```\n\n### SEE ALSO\n\n* [cosmosctl](cosmosctl.md)\t - %s\n",
			t.Name(), t.Short, strings.TrimRight(t.Long, "\n"), root.Short)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(page), 0o644); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(filepath.Join(dir, "cosmosctl.md"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write(append([]byte("\n"), index.Bytes()...)); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func writeMan(dir string) error {
	man1, man7 := filepath.Join(dir, "man1"), filepath.Join(dir, "man7")
	for _, d := range []string{man1, man7} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := removeGenerated(filepath.Join(man1, "cosmosctl*.1")); err != nil {
		return err
	}
	if err := removeGenerated(filepath.Join(man7, "cosmosctl*.7")); err != nil {
		return err
	}
	root := docTree()
	date := manDate
	header := &doc.GenManHeader{Section: "1", Date: &date, Source: "cosmosctl", Manual: "cosmosctl Manual"}
	if err := doc.GenManTree(root, header, man1); err != nil {
		return err
	}
	// Help topics are section 7 (overviews and conventions, as gitcli(7)), their text kept
	// as it is laid out for the terminal. Each names the others, and cosmosctl(1) names
	// them all: cobra's SEE ALSO knows commands only.
	all := topics(root)
	for _, t := range all {
		name := "cosmosctl-" + t.Name()
		seeAlso := []string{"**cosmosctl(1)**"}
		for _, other := range all {
			if other != t {
				seeAlso = append(seeAlso, "**"+topicPage(other)+"**")
			}
		}
		src := fmt.Sprintf("%% \"%s\" \"7\" \"%s\" \"cosmosctl\" \"cosmosctl Manual\"\n# NAME\n%s \\- %s\n\n# SYNOPSIS\n**cosmosctl help %s**\n\n# DESCRIPTION\n```\n%s\n```\n\n# SEE ALSO\n%s\n",
			strings.ToUpper(name), manDate.Format("Jan 2006"), name, t.Short, t.Name(), strings.TrimRight(t.Long, "\n"), strings.Join(seeAlso, ", "))
		if err := os.WriteFile(filepath.Join(man7, name+".7"), md2man.Render([]byte(src)), 0o644); err != nil {
			return err
		}
	}
	return addTopicsToSeeAlso(filepath.Join(man1, "cosmosctl.1"), all)
}

// topicPage is a help topic's man page reference: cosmosctl-exit-codes(7).
func topicPage(t *cobra.Command) string { return "cosmosctl-" + t.Name() + "(7)" }

// addTopicsToSeeAlso appends the help topics' pages to the SEE ALSO line of a page
// cobra wrote, in cobra's own markup (\fBname(7)\fP, comma-separated).
func addTopicsToSeeAlso(page string, all []*cobra.Command) error {
	data, err := os.ReadFile(page)
	if err != nil {
		return err
	}
	head, rest, ok := strings.Cut(string(data), ".SH SEE ALSO\n")
	if !ok {
		return fmt.Errorf("%s has no SEE ALSO section", page)
	}
	line, tail, _ := strings.Cut(rest, "\n")
	for _, t := range all {
		line += ", \\fB" + topicPage(t) + "\\fP"
	}
	return os.WriteFile(page, []byte(head+".SH SEE ALSO\n"+line+"\n"+tail), 0o644)
}
