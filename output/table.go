package output

import (
	"bytes"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// columnGap separates columns, as kubectl and gh do: no borders, no rules, just aligned
// columns that read well on a terminal and split cleanly with awk or cut.
const columnGap = "   "

// Table is a borderless table of aligned columns. On a terminal (Styles.Color) the
// header is bold; otherwise the output is plain text, identical in layout. Cells may carry
// ANSI colour from Styles: widths are measured without it.
type Table struct {
	w      io.Writer
	st     Styles
	header []string
	rows   [][]string
	right  map[int]bool
}

// NewTable starts a table with the given header cells (written as given: pass them in
// upper case, as kubectl does).
func NewTable(w io.Writer, st Styles, header ...string) *Table {
	return &Table{w: w, st: st, header: header, right: map[int]bool{}}
}

// Append adds a row. Rows shorter than the header are padded with empty cells.
func (t *Table) Append(cells ...string) {
	t.rows = append(t.rows, cells)
}

// AlignRight right-aligns the given columns (0-based), for numbers meant to be compared
// down the column.
func (t *Table) AlignRight(cols ...int) *Table {
	for _, c := range cols {
		t.right[c] = true
	}
	return t
}

// Render writes the table. Trailing blanks are trimmed from every line so that piped
// output and golden files carry no invisible whitespace.
func (t *Table) Render() error {
	n := len(t.header)
	for _, r := range t.rows {
		n = max(n, len(r))
	}
	if n == 0 {
		return nil
	}
	align := make([]tw.Align, n)
	for i := range align {
		align[i] = tw.AlignLeft
		if t.right[i] {
			align[i] = tw.AlignRight
		}
	}
	pad := func(cells []string) []string {
		out := make([]string, n)
		copy(out, cells)
		return out
	}

	var buf bytes.Buffer
	tbl := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenRows: tw.Off, BetweenColumns: tw.Off},
				Lines:      tw.Lines{ShowTop: tw.Off, ShowBottom: tw.Off, ShowHeaderLine: tw.Off, ShowFooterLine: tw.Off},
			},
		})),
		// Leading blanks are meaningful (the diagnostics timeline starts with them).
		tablewriter.WithTrimSpace(tw.Off),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithPadding(tw.Padding{Left: "", Right: columnGap, Overwrite: true}),
	)
	if len(t.header) > 0 {
		h := pad(t.header)
		for i := range h {
			h[i] = t.st.Bold(h[i])
		}
		tbl.Header(h)
	}
	for _, r := range t.rows {
		if err := tbl.Append(pad(r)); err != nil {
			return err
		}
	}
	if err := tbl.Render(); err != nil {
		return err
	}
	var out strings.Builder
	for line := range strings.Lines(buf.String()) {
		out.WriteString(trimTrailing(strings.TrimRight(line, "\r\n")))
		out.WriteByte('\n')
	}
	_, err := io.WriteString(t.w, out.String())
	return err
}

// ansiReset is the SGR reset that tablewriter and lipgloss close coloured cells with.
const ansiReset = "\x1b[0m"

// trimTrailing removes trailing blanks from a rendered line, looking through the resets
// tablewriter appends after padding, and keeps one reset if any colour was open.
func trimTrailing(line string) string {
	hadReset := false
	for {
		switch {
		case strings.HasSuffix(line, " "):
			line = strings.TrimRight(line, " ")
		case strings.HasSuffix(line, ansiReset):
			line = strings.TrimSuffix(line, ansiReset)
			hadReset = true
		default:
			if hadReset && strings.Contains(line, "\x1b[") {
				line += ansiReset
			}
			return line
		}
	}
}
