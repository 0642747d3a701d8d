package output

import (
	"io"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// ColorEnabled decides whether a stream gets ANSI colour. Colour is for a person at a
// terminal only: never when the stream is piped or redirected, never with NO_COLOR set
// to any non-empty value (https://no-color.org), never with --no-color, and never on a
// terminal that declares itself dumb (TERM=dumb: Emacs shell buffers, some CI logs).
func ColorEnabled(isTTY bool, noColorFlag bool, getenv func(string) string) bool {
	if noColorFlag || !isTTY {
		return false
	}
	if getenv == nil {
		return true
	}
	if getenv("NO_COLOR") != "" {
		return false
	}
	return getenv("TERM") != "dumb"
}

// UnicodeEnabled reports whether box-drawing and symbol characters (━ ● ✕ → —) can be
// used. Only a locale that names a non-UTF-8 character set ("C", "POSIX",
// "en_US.ISO-8859-1") turns them off; with no locale set at all we assume UTF-8, which is
// what every current terminal emulator speaks. LC_ALL overrides LC_CTYPE overrides LANG,
// as in setlocale(3).
func UnicodeEnabled(getenv func(string) string) bool {
	if getenv == nil {
		return true
	}
	for _, name := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		v := getenv(name)
		if v == "" {
			continue
		}
		l := strings.ToLower(v)
		return strings.Contains(l, "utf-8") || strings.Contains(l, "utf8")
	}
	return true
}

// Styles is how one output stream is drawn: with or without ANSI colour, and with Unicode
// or ASCII-only symbols. The zero value is plain, uncoloured Unicode and never emits an
// escape code.
type Styles struct {
	// Color emits ANSI colour and bold/faint attributes.
	Color bool
	// ASCII draws timelines, arrows and dashes with ASCII characters only.
	ASCII bool
	// Width is how many columns a line on this stream may take: tables and the blocks
	// around them fit in it. 0, for a stream that is not a terminal, is no limit. See
	// StreamWidth for where it comes from.
	Width int
	// TSV writes tables as tab-separated values for a script (-o tsv): the header line
	// and one line per row, every column whole, no colour, no footnote (see
	// Table.Render). NoHeaders leaves the header line out, of a TSV or a drawn table.
	TSV       bool
	NoHeaders bool

	bold, faint, good, bad, warn lipgloss.Style
}

// NewStyles builds the styles for writing to w. The colour decision is the caller's
// (see ColorEnabled); lipgloss is never allowed to second-guess it. With colour off the
// renderer is pinned to the ASCII profile, so nothing is emitted even when lipgloss
// detects a terminal. With colour on it is pinned to the basic 16-colour profile: the
// decision was already made, w may be a buffer in tests, and the 16 colours follow the
// user's own terminal palette.
func NewStyles(w io.Writer, color, ascii bool) Styles {
	r := lipgloss.NewRenderer(w)
	if color {
		r.SetColorProfile(termenv.ANSI)
	} else {
		r.SetColorProfile(termenv.Ascii)
	}
	// Set explicitly so that lipgloss never queries the terminal for its background
	// colour (an OSC request that can stall on a slow or odd terminal).
	r.SetHasDarkBackground(true)
	return Styles{
		Color: color,
		ASCII: ascii,
		bold:  r.NewStyle().Bold(true),
		faint: r.NewStyle().Faint(true),
		good:  r.NewStyle().Foreground(lipgloss.Color("2")),
		bad:   r.NewStyle().Foreground(lipgloss.Color("1")),
		warn:  r.NewStyle().Foreground(lipgloss.Color("3")),
	}
}

// StylesFor is the usual way a command builds Styles for one of its streams: colour by
// ColorEnabled, ASCII unless UnicodeEnabled.
func StylesFor(w io.Writer, isTTY, noColorFlag bool, getenv func(string) string) Styles {
	return NewStyles(w, ColorEnabled(isTTY, noColorFlag, getenv), !UnicodeEnabled(getenv))
}

func (s Styles) paint(st lipgloss.Style, text string) string {
	if !s.Color || text == "" {
		return text
	}
	return st.Render(text)
}

// Bold emphasises text (table headers, labels).
func (s Styles) Bold(text string) string { return s.paint(s.bold, text) }

// Faint de-emphasises text (labels, secondary detail).
func (s Styles) Faint(text string) string { return s.paint(s.faint, text) }

// Good marks success (green).
func (s Styles) Good(text string) string { return s.paint(s.good, text) }

// Bad marks failure (red).
func (s Styles) Bad(text string) string { return s.paint(s.bad, text) }

// Warn marks something cancelled or degraded (yellow).
func (s Styles) Warn(text string) string { return s.paint(s.warn, text) }

// symbols are the characters that have an ASCII stand-in.
type symbols struct {
	dash    string // "no value"
	arrow   string // order of preference
	bar     string // attempt in flight
	answer  string // attempt got an answer
	failed  string // attempt cancelled or failed
	rangeTo string // "0–1.00s"
}

func (s Styles) sym() symbols {
	if s.ASCII {
		return symbols{dash: "-", arrow: " -> ", bar: "=", answer: "*", failed: "x", rangeTo: "-"}
	}
	return symbols{dash: "—", arrow: " → ", bar: "━", answer: "●", failed: "✕", rangeTo: "–"}
}

// None is what a cell without a value shows: a dash in a table, nothing at all in TSV,
// where an empty field is what a script tests for.
func (s Styles) None() string {
	if s.TSV {
		return ""
	}
	return s.sym().dash
}
