package output

import (
	"io"
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// columnGap separates columns, as kubectl and gh do: no borders, no rules, just aligned
// columns that read well on a terminal and split cleanly with awk or cut.
const columnGap = "   "

// Table is a borderless table of aligned columns. On a terminal (Styles.Color) the
// header is bold; otherwise the output is plain text, identical in layout. Cells may carry
// ANSI colour from Styles: widths are measured without it.
//
// With a Styles.Width (a terminal) the table fits in it: columns give way as their
// Column says, and a footnote names the ones hidden. Without one (a pipe) every column
// is written in full.
type Table struct {
	w      io.Writer
	st     Styles
	cols   []Column
	rows   [][]string
	gap    int
	hidden []bool
}

// NewTable starts a table with the given header cells (written as given: pass them in
// upper case, as kubectl does). On a narrow terminal its columns give way right to left,
// all but the first; NewTableOf says more.
func NewTable(w io.Writer, st Styles, header ...string) *Table {
	cols := make([]Column, len(header))
	for i, h := range header {
		cols[i] = Column{Header: h, Key: i == 0}
	}
	return NewTableOf(w, st, cols...)
}

// NewTableOf starts a table whose columns say how they give way on a narrow terminal.
func NewTableOf(w io.Writer, st Styles, cols ...Column) *Table {
	return &Table{w: w, st: st, cols: slices.Clone(cols), gap: len(columnGap)}
}

// Append adds a row. Rows shorter than the header are padded with empty cells.
func (t *Table) Append(cells ...string) {
	t.rows = append(t.rows, cells)
}

// AlignRight right-aligns the given columns (0-based), for numbers meant to be compared
// down the column.
func (t *Table) AlignRight(cols ...int) *Table {
	for _, c := range cols {
		t.column(c).Right = true
	}
	return t
}

// Gap sets the blanks between columns (3 unless set): 2 keeps the layout of the
// tables that text/tabwriter used to draw.
func (t *Table) Gap(n int) *Table {
	t.gap = n
	return t
}

// Hidden reports whether the last Render hid column c to fit the terminal.
func (t *Table) Hidden(c int) bool {
	return c < len(t.hidden) && t.hidden[c]
}

func (t *Table) column(c int) *Column {
	for len(t.cols) <= c {
		t.cols = append(t.cols, Column{})
	}
	return &t.cols[c]
}

// Render writes the table, and under it the footnote if columns were hidden. Trailing
// blanks are trimmed from every line so that piped output and golden files carry no
// invisible whitespace.
func (t *Table) Render() error {
	n := len(t.cols)
	for _, r := range t.rows {
		n = max(n, len(r))
	}
	if n == 0 {
		return nil
	}
	if t.st.TSV {
		return t.renderTSV(n)
	}
	t.column(n - 1)
	hasHeader := false
	for _, c := range t.cols {
		hasHeader = hasHeader || c.Header != ""
	}
	rows := make([][]string, len(t.rows))
	for i, r := range t.rows {
		rows[i] = make([]string, n)
		copy(rows[i], r)
	}
	f := newFitter(t.cols, rows, t.gap)
	l := f.fit(t.st.Width)
	t.hidden = l.hidden

	var shown []int
	for c := range n {
		if !l.hidden[c] {
			shown = append(shown, c)
		}
	}
	right := make([]bool, len(shown))
	var header []string
	if hasHeader && !t.st.NoHeaders {
		header = make([]string, len(shown))
	}
	for i, c := range shown {
		right[i] = t.cols[c].Right
		if header != nil {
			header[i] = t.st.Bold(f.header(c))
		}
	}
	cells := make([][]string, len(rows))
	for r := range rows {
		cells[r] = make([]string, len(shown))
		for i, c := range shown {
			cells[r][i] = f.cell(t.st, r, c)
		}
	}
	laidOut := alignColumns(header, cells, right, l.gap)
	var out strings.Builder
	for line := range strings.Lines(laidOut) {
		out.WriteString(trimTrailing(strings.TrimRight(line, "\r\n")))
		out.WriteByte('\n')
	}
	if note := f.footnote(); note != "" {
		for _, line := range wrapLines(note, t.st.Width) {
			out.WriteString(t.st.Faint(line) + "\n")
		}
	}
	_, err := io.WriteString(t.w, out.String())
	return err
}

// alignColumns lays out the header (when not nil) and the rows as columns: each cell is
// padded with blanks to the display width of its column's widest cell (colour does not
// count), before the cell where right says so and after it otherwise, and followed by gap
// blanks. A cell of several lines makes its row as many lines tall. (This is the layout
// tablewriter drew for Table, borderless and unwrapped; TestColumnsAreLaidOutAsTablewriterDid
// holds the two to the same bytes.)
func alignColumns(header []string, rows [][]string, right []bool, gap int) string {
	if header != nil {
		rows = append([][]string{header}, rows...)
	}
	widths := make([]int, len(right))
	lines := make([][][]string, len(rows))
	for r, row := range rows {
		lines[r] = make([][]string, len(right))
		for c := range right {
			cell := ""
			if c < len(row) {
				cell = row[c]
			}
			lines[r][c] = strings.Split(cell, "\n")
			for _, line := range lines[r][c] {
				widths[c] = max(widths[c], displayWidth(line))
			}
		}
	}
	var b strings.Builder
	blanks := strings.Repeat(" ", gap)
	for _, row := range lines {
		height := 1
		for _, cell := range row {
			height = max(height, len(cell))
		}
		for i := range height {
			for c, cell := range row {
				text := ""
				if i < len(cell) {
					text = cell[i]
				}
				fill := strings.Repeat(" ", max(0, widths[c]-displayWidth(text)))
				if right[c] {
					b.WriteString(fill + text)
				} else {
					b.WriteString(text + fill)
				}
				b.WriteString(blanks)
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// ansiReset is the SGR reset that lipgloss closes coloured cells with.
const ansiReset = "\x1b[0m"

// trimTrailing removes trailing blanks from a rendered line, looking through the resets
// that close coloured cells, and keeps one reset if any colour was open.
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

// renderTSV writes the table as tab-separated values (-o tsv): the headers as given
// (unless NoHeaders), then every row, every column, each value whole. Nothing is fitted,
// coloured or footnoted: the output is for awk, cut and sort.
func (t *Table) renderTSV(n int) error {
	var out strings.Builder
	line := func(cells []string) {
		for i := range n {
			if i > 0 {
				out.WriteByte('\t')
			}
			if i < len(cells) {
				out.WriteString(TSVField(cells[i]))
			}
		}
		out.WriteByte('\n')
	}
	hasHeader := false
	header := make([]string, n)
	for i, c := range t.cols {
		header[i] = c.Header
		hasHeader = hasHeader || c.Header != ""
	}
	if hasHeader && !t.st.NoHeaders {
		line(header)
	}
	for _, r := range t.rows {
		line(r)
	}
	_, err := io.WriteString(t.w, out.String())
	return err
}

// tsvEscaper escapes what a TSV field cannot hold as it is, the way PostgreSQL's and
// MySQL's tab-separated text formats do: a backslash, a tab, a newline, a carriage
// return.
var tsvEscaper = strings.NewReplacer(`\`, `\\`, "\t", `\t`, "\n", `\n`, "\r", `\r`)

// TSVField is a value as one field of a TSV line: without ANSI colour, with tabs,
// newlines and backslashes escaped.
func TSVField(s string) string {
	if strings.Contains(s, "\x1b[") {
		s = ansi.Strip(s)
	}
	return tsvEscaper.Replace(s)
}
