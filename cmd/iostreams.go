package cmd

import (
	"io"
	"os"
	"sync/atomic"

	"golang.org/x/term"

	"github.com/cosmosctl/cosmosctl/output"
)

// IOStreams are a command's standard streams and what is known about them. Tests swap in
// buffers; stdout carries data only, everything for a person goes to ErrOut.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// InTTY says stdin is a terminal, so a person can answer a confirmation prompt.
	InTTY bool
	// OutTTY and ErrTTY say whether the streams are terminals (tables, colour, progress).
	OutTTY bool
	ErrTTY bool
	// OutWidth and ErrWidth are how wide the streams' tables may be, in columns: the
	// terminal's width, 0 (no limit) when the stream is not a terminal. See
	// output.StreamWidth.
	OutWidth int
	ErrWidth int

	// output is the output format the command resolved (table, json, ndjson or tsv),
	// once it has (formatFlags.apply); Run uses it to decide how a failure is printed.
	output string
	// quiet silences notices (--quiet, COSMOSCTL_QUIET); errJSON says that stderr carries
	// a JSON stream (export --progress json), which no notice may break into. See
	// embedded_notice.go.
	quiet   bool
	errJSON bool
	// tsv and noHeaders are how stdout's tables are written (outStyles).
	tsv, noHeaders bool
	// stream says stdout is a stream of JSON lines: a failure is one line too.
	stream bool
	// dataOnly says stdout is the command's data whatever the format (export): a
	// failure is never a JSON object there.
	dataOnly bool
	// jq is stdout's --jq filter, when there is one (Out writes to it).
	jq *jqWriter
	// args are the invocation's arguments as given (Run), for a flag whose spelling
	// matters (export's deprecated --output FILE).
	args []string
}

// SystemIO returns the process's streams.
func SystemIO() *IOStreams {
	s := &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		InTTY:  term.IsTerminal(int(os.Stdin.Fd())),
		OutTTY: term.IsTerminal(int(os.Stdout.Fd())),
		ErrTTY: term.IsTerminal(int(os.Stderr.Fd())),
	}
	s.OutWidth = output.StreamWidth(s.OutTTY, getenv, terminalSize(os.Stdout))
	s.ErrWidth = output.StreamWidth(s.ErrTTY, getenv, terminalSize(os.Stderr))
	return s
}

// terminalSize asks the terminal f is for its width.
func terminalSize(f *os.File) func() (int, error) {
	return func() (int, error) {
		w, _, err := term.GetSize(int(f.Fd()))
		return w, err
	}
}

// outStyles are how stdout is drawn: colour (unless noColor, see output.ColorEnabled),
// symbols, and the width its tables fit in.
func (s *IOStreams) outStyles(noColor bool) output.Styles {
	if s.tsv {
		// For a script: no colour, no width, every value whole.
		return output.Styles{TSV: true, NoHeaders: s.noHeaders, ASCII: !output.UnicodeEnabled(getenv)}
	}
	st := output.StylesFor(s.Out, s.OutTTY, noColor, getenv)
	st.Width = s.OutWidth
	st.NoHeaders = s.noHeaders
	return st
}

// errStyles are how stderr is drawn (the diagnostics table), as outStyles.
func (s *IOStreams) errStyles(noColor bool) output.Styles {
	st := output.StylesFor(s.ErrOut, s.ErrTTY, noColor, getenv)
	st.Width = s.ErrWidth
	return st
}

// outFile is stdout as a file, for its terminal size; false when it is not one.
func (s *IOStreams) outFile() (*os.File, bool) {
	w := s.Out
	if j, ok := w.(*jqWriter); ok {
		w = j.out
	}
	if c, ok := w.(*countingWriter); ok {
		w = c.w
	}
	f, ok := w.(*os.File)
	return f, ok
}

// countingWriter counts what was written through it: Run prints a failure as JSON only
// when the command printed nothing on stdout itself, so that stdout holds one object.
type countingWriter struct {
	w io.Writer
	n atomic.Int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}
