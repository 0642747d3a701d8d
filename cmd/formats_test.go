package cmd

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// noTable are the commands that print JSON but no table: an item, a line, nothing on
// stdout in table format. Every other command with -o prints a table, and so -o tsv.
var noTable = map[string]bool{
	"read": true, "create": true, "upsert": true, "replace": true, "delete": true, "patch": true,
	"export": true, "version": true, "health reset": true, "db delete": true, "container delete": true,
	"emulator": true, "emulator status": true, "emulator failover": true, "emulator replication": true,
	"emulator enforce-throughput": true, "emulator fault add": true, "emulator fault remove": true, "emulator fault clear": true,
	"emulator cert": true, // PEM, not a table
}

// Item 13: -o/--output is the format on every command that prints data, with the same
// values (table, json, ndjson, tsv as the command prints them), --jq beside it, and no
// command's --output is a file.
func TestTheFormatFlagIsTheSameOnEveryCommand(t *testing.T) {
	io, _, _ := testIO()
	formats := []string{"table", "json", "ndjson", "tsv"}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		f := c.Flags().Lookup("output")
		if f == nil {
			return
		}
		path := strings.TrimPrefix(c.CommandPath(), "cosmosctl ")
		got := f.Annotations[formatsAnnotation]
		if f.Shorthand != "o" || len(got) == 0 {
			t.Errorf("%s: --output is not -o FORMAT (shorthand %q, formats %v)", c.CommandPath(), f.Shorthand, got)
		}
		for _, v := range got {
			if !slices.Contains(formats, v) {
				t.Errorf("%s: -o %s is not one of %v", c.CommandPath(), v, formats)
			}
		}
		if !noTable[path] && !slices.Contains(got, "tsv") {
			t.Errorf("%s prints a table but not -o tsv (-o %v)", c.CommandPath(), got)
		}
		if slices.Contains(got, "tsv") != (c.Flags().Lookup("no-headers") != nil) {
			t.Errorf("%s: --no-headers goes with -o tsv", c.CommandPath())
		}
		if !strings.Contains(f.Usage, strings.Join(got[:1], "")) {
			t.Errorf("%s: the help of -o does not list its formats: %q", c.CommandPath(), f.Usage)
		}
	}
	walk(NewRootCmd(io))
}

// Item 11: every command that prints a table prints it as TSV with -o tsv: a header line
// and rows of as many tab-separated fields, no colour, and --no-headers drops the header.
func TestEveryTableIsTSVWithOTSV(t *testing.T) {
	srv := testAccount(t)
	for _, doc := range []string{`{"id":"o1","pk":"t1","note":"two words"}`, `{"id":"o2","pk":"t2"}`} {
		if r := cosmosctl(t, doc, "create", "-f", "-"); r.code != 0 {
			t.Fatal(r)
		}
	}
	input := filepath.Join(t.TempDir(), "in.ndjson")
	os.WriteFile(input, []byte(`{"id":"i1","pk":"p"}`+"\nnot json\n"), 0o644)
	if r := cosmosctl(t, "", "config", "set", "--profile", "prod", "endpoint", "https://prod.documents.azure.com:443/"); r.code != 0 {
		t.Fatal(r)
	}
	cases := []struct {
		args  []string
		code  int
		first string // the header's first field
	}{
		{[]string{"regions"}, 0, "REGION"},
		{[]string{"db", "ls"}, 0, "DATABASE"},
		{[]string{"db", "show", "app"}, 0, "DATABASE"},
		{[]string{"db", "create", "more"}, 0, "DATABASE"},
		{[]string{"container", "ls"}, 0, "CONTAINER"},
		{[]string{"container", "show", "items"}, 0, "PROPERTY"},
		{[]string{"container", "create", "more", "--partition-key", "/k"}, 0, "PROPERTY"},
		{[]string{"throughput", "show", "items"}, 0, "PROPERTY"},
		{[]string{"throughput", "set", "items", "--throughput", "500"}, 0, "PROPERTY"},
		{[]string{"locate", "--pk", "t1"}, 0, "RANGE"},
		{[]string{"locate", "--pk", "t1", "--connection-mode", "direct"}, 0, "RANGE"},
		{[]string{"query", "SELECT * FROM c"}, 0, "id"},
		{[]string{"changes"}, 0, "TIME"},
		{[]string{"import", input}, ExitPartial, "IMPORT"},
		{[]string{"probe", "--count", "4"}, 0, "REGION"},
		{[]string{"hedge-test", "--count", "20", "--strategies", "none,fanout"}, 0, "STRATEGY"},
		{[]string{"config", "show"}, 0, "SETTING"},
		{[]string{"config", "list"}, 0, "DEFAULT"},
		{[]string{"emulator", "latency", "--endpoint", srv.Endpoint()}, 0, "REGION"},
		{[]string{"emulator", "fault", "list", "--endpoint", srv.Endpoint()}, 0, "ID"},
	}
	for _, tc := range cases {
		name := strings.Join(tc.args, " ")
		r := cosmosctl(t, "", append(tc.args, "-o", "tsv")...)
		if r.code != tc.code {
			t.Errorf("%s -o tsv → %d, want %d: %s", name, r.code, tc.code, r.errOut)
			continue
		}
		lines := strings.Split(strings.TrimSuffix(r.out, "\n"), "\n")
		header := strings.Split(lines[0], "\t")
		if header[0] != tc.first || strings.Contains(r.out, "\x1b[") {
			t.Errorf("%s -o tsv: the header is %q:\n%s", name, lines[0], r.out)
			continue
		}
		for _, l := range lines[1:] {
			if n := len(strings.Split(l, "\t")); n != len(header) {
				t.Errorf("%s -o tsv: a row of %d fields under a header of %d: %q", name, n, len(header), l)
			}
		}
		if strings.Contains(name, "create") || strings.Contains(name, "import") || strings.Contains(name, "set ") {
			continue // not to be run twice
		}
		r = cosmosctl(t, "", append(tc.args, "-o", "tsv", "--no-headers")...)
		rows := strings.FieldsFunc(r.out, func(c rune) bool { return c == '\n' })
		if r.code != tc.code || len(rows) != len(lines)-1 || strings.HasPrefix(r.out, tc.first+"\t") {
			t.Errorf("%s -o tsv --no-headers → %d: %d lines, want the %d rows alone:\n%s", name, r.code, len(rows), len(lines)-1, r.out)
		}
	}
}
