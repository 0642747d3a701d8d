package cmd

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/itchyny/gojq"
	"github.com/spf13/pflag"

	"github.com/cosmosctl/cosmosctl/config"
)

// formatFlags are how a command prints its data, the same on every command that prints
// any: -o/--output FORMAT (table, json, ndjson or tsv, as the command supports), --jq EXPR
// on JSON, and --no-headers on tables. The vocabulary of the JSON they print is in
// docs/json/README.md.
type formatFlags struct {
	output    string
	jq        string
	noHeaders bool
	// formats are what the command prints, table first.
	formats []string
	// stream says the command's JSON is a stream of lines even under -o json (changes,
	// probe): a failure is then one line too, and --jq filters each line.
	stream bool
	// filtersItself says the command runs --jq itself (export, whose checkpoints count
	// the bytes written): stdout gets no filter.
	filtersItself bool
	// dataOnly: stdout is the data, never a failure object (stdoutIsData).
	dataOnly bool
	// textAlias accepts "text" for table (what emulator commands called it), with a
	// deprecation notice, for one release.
	textAlias bool
	fs        *pflag.FlagSet
}

// formatsAnnotation lists a command's formats on its --output flag, for completion;
// streamAnnotation marks a command whose JSON is a stream of lines, for a failure that
// comes before the flags are parsed.
const (
	formatsAnnotation = "cosmosctl_formats"
	streamAnnotation  = "cosmosctl_stream"
	// dataAnnotation marks a command whose stdout is its data whatever -o says
	// (export's items): a failure is never a JSON object there.
	dataAnnotation = "cosmosctl_data"
)

// register adds -o/--output, --jq and, for a command that prints tables, --no-headers.
// formats are what the command prints, table first.
func (f *formatFlags) register(fs *pflag.FlagSet, formats ...string) {
	f.fs = fs
	f.formats = formats
	fs.StringVarP(&f.output, "output", "o", "", "")
	fs.StringVar(&f.jq, "jq", "", "print what this jq expression (gojq) makes of the JSON output: implies -o json; strings print raw, one a line (see docs/json/README.md)")
	if f.supports(config.OutputTSV) {
		fs.BoolVar(&f.noHeaders, "no-headers", false, "leave out the header line of the table or TSV")
	}
	f.describe()
}

// supports reports whether the command prints format.
func (f *formatFlags) supports(format string) bool { return slices.Contains(f.formats, format) }

// add declares more formats after register (a command whose JSON streams, one that
// prints TSV).
func (f *formatFlags) add(formats ...string) {
	for _, v := range formats {
		if !f.supports(v) {
			f.formats = append(f.formats, v)
		}
	}
	if f.supports(config.OutputTSV) && f.fs.Lookup("no-headers") == nil {
		f.fs.BoolVar(&f.noHeaders, "no-headers", false, "leave out the header line of the table or TSV")
	}
	f.describe()
}

// describe writes the --output flag's usage from the formats; commands with more to say
// set their own after it.
func (f *formatFlags) describe() {
	fl := f.fs.Lookup("output")
	fl.Usage = orList(f.formats) + " ($COSMOSCTL_OUTPUT; default table)"
	_ = f.fs.SetAnnotation("output", formatsAnnotation, f.formats)
}

// stdoutIsData marks a command whose stdout is its data (export's items, often
// redirected to a file): a failure is the line on stderr and the exit code, never a
// JSON object among the items.
func (f *formatFlags) stdoutIsData() {
	f.dataOnly = true
	_ = f.fs.SetAnnotation("output", dataAnnotation, []string{"true"})
}

// streams marks the command's JSON as a stream of lines, -o json included.
func (f *formatFlags) streams() {
	f.stream = true
	_ = f.fs.SetAnnotation("output", streamAnnotation, []string{"true"})
}

// explicit is the -o value given on the command line, normalised; "" when none was.
func (f *formatFlags) explicit() string {
	if f.fs == nil || !f.fs.Changed("output") {
		return ""
	}
	return strings.ToLower(strings.TrimSpace(f.output))
}

// check validates the flags, before anything is sent: -o is one of the command's
// formats, --jq compiles and goes with JSON, --no-headers goes with a table.
func (f *formatFlags) check(io *IOStreams) error {
	v := f.explicit()
	if f.fs != nil && f.fs.Changed("output") {
		if v == "text" && f.textAlias {
			fmt.Fprintln(io.ErrOut, "cosmosctl: warning: -o text is now -o table, as on every command; -o text stops working in the next release")
			v, f.output = config.OutputTable, config.OutputTable
		}
		if !f.supports(v) {
			return f.unsupported(v)
		}
	}
	if f.jq != "" || (f.fs != nil && f.fs.Changed("jq")) {
		if _, err := compileJQ(f.jq); err != nil {
			return err
		}
		if v == config.OutputTable || v == config.OutputTSV {
			return usageErrorf("--jq filters JSON, and -o %s prints none: give -o json (or leave -o out)", v)
		}
	}
	if f.noHeaders && (config.JSONOutput(v) || f.jq != "") {
		return usageErrorf("--no-headers leaves out the header line of a table or TSV; JSON has none: drop --no-headers")
	}
	return nil
}

// unsupported is the usage error of an -o the command does not print.
func (f *formatFlags) unsupported(v string) error {
	switch {
	case len(f.formats) == 1:
		return usageErrorf("--output must be %s, not %q: it is this command's only format", f.formats[0], f.output)
	case v == config.OutputNDJSON && f.supports(config.OutputJSON):
		return usageErrorf("--output ndjson streams records one a line (query, changes, probe, export); this command prints one result: use -o json")
	case v == config.OutputTSV:
		return usageErrorf("--output tsv prints a table as tab-separated values, and this command prints no table: use -o json, with --jq to pick fields")
	case v == "":
		return usageErrorf("--output is empty: give %s", orList(f.formats))
	}
	return usageErrorf("--output must be %s, not %q", orList(f.formats), f.output)
}

// format is the format the command prints in: -o, else setting (COSMOSCTL_OUTPUT or the
// profile's output; "" for neither) where the command prints it, else its nearest
// (ndjson is json for a command that prints one result, tsv is table for one that prints
// no table), and JSON whenever --jq is given.
func (f *formatFlags) format(setting string) string {
	v := f.explicit()
	if v == "" {
		v = strings.ToLower(strings.TrimSpace(setting))
		switch {
		case f.supports(v):
		case v == config.OutputNDJSON && f.supports(config.OutputJSON):
			v = config.OutputJSON
		default:
			v = f.formats[0]
		}
	}
	if f.jq != "" && !config.JSONOutput(v) {
		v = config.OutputJSON
		if !f.supports(v) {
			v = config.OutputNDJSON
		}
	}
	return v
}

// envFormat is COSMOSCTL_OUTPUT, for the commands that use no profile.
func envFormat() string { return os.Getenv("COSMOSCTL_OUTPUT") }

// apply checks the flags, settles the format from setting (see format) and prepares io
// for it: the table styles (tsv, no headers), how a failure is printed, and the --jq
// filter on stdout. It returns the format.
func (f *formatFlags) apply(io *IOStreams, setting string) (string, error) {
	if err := f.check(io); err != nil {
		return "", err
	}
	v := f.format(setting)
	io.output = v
	io.tsv = v == config.OutputTSV
	io.noHeaders = f.noHeaders
	io.stream = v == config.OutputNDJSON || (f.stream && v == config.OutputJSON)
	io.dataOnly = f.dataOnly
	if f.jq != "" && io.jq == nil && !f.filtersItself {
		code, err := compileJQ(f.jq)
		if err != nil {
			return "", err
		}
		io.jq = newJQWriter(io.Out, code, !io.stream)
		io.Out = io.jq
	}
	return v, nil
}

// code is the compiled --jq expression, nil without one.
func (f *formatFlags) code() (*gojq.Code, error) {
	if f.jq == "" {
		return nil, nil
	}
	return compileJQ(f.jq)
}
