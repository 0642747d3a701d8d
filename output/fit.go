package output

import (
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// Column is one column of a Table and how it gives way on a terminal too narrow for the
// whole table. Output that is not for a terminal (Styles.Width 0) ignores all of this
// but Header and Right: every column, every value as it was appended.
//
// On a narrow terminal the table first closes its gaps to two blanks, then lets Fill
// columns shrink to their Min. Then it visits the columns by ascending Priority (equal
// priorities right to left), twice: the first time each column with an abbreviation
// (Short, Abbrev) takes it; the second time each column with a Min is cut, down to Min
// cells, and each that is not Key is then hidden. Whatever width the last step freed goes
// back to the Fill columns, then to the cut ones. Every step stops as soon as the table
// fits, and one footnote under the table names the hidden columns.
type Column struct {
	Header string
	// Name is what the footnote calls the column when it is hidden; the header in
	// lower case unless set.
	Name string
	// Short is the header once the column is abbreviated, or narrower than Header.
	Short string
	Right bool
	// Key columns are never hidden: a row means nothing without them (the region, the
	// status). They may still be abbreviated, and cut if they have a Min.
	Key bool
	// Priority orders the columns' turns to give way: the lowest goes first.
	Priority int
	// Abbrev is the column's shorter form of a value (an endpoint's host, a replica's
	// id), applied to the whole column at its turn.
	Abbrev func(string) string
	// Min, when set, lets values be cut with an ellipsis down to Min cells.
	Min int
	// KeepEnd cuts values at their start rather than their end, for values told apart
	// by how they end (a replica id).
	KeepEnd bool
	// Fill redraws a row's cell at a given width (the diagnostics timeline): the column
	// takes what the others leave, down to Min. Its appended cells are the full form.
	Fill func(row, width int) string
	// Elsewhere marks a column that the caller shows another way when it is hidden (the
	// health notes, listed under the table): the footnote does not count it.
	Elsewhere bool
}

// narrowest is the header the column can get by with.
func (c Column) narrowest() string {
	if c.Short != "" {
		return c.Short
	}
	return c.Header
}

// abbreviates reports whether the column has a shorter form to take at its turn.
func (c Column) abbreviates() bool { return c.Fill == nil && (c.Abbrev != nil || c.Short != "") }

// layout is how a table is drawn at one width: which columns show, in which form, and
// how wide each is.
type layout struct {
	gap    int
	hidden []bool
	abbrev []bool
	width  []int
}

// fitter works out the layout of cols and rows for a width.
type fitter struct {
	cols  []Column
	rows  [][]string
	short [][]string // rows in each column's abbreviated form, once taken
	full  []int      // each column's width as appended
	abbr  []int      // each column's width abbreviated
	l     layout
}

func newFitter(cols []Column, rows [][]string, gap int) *fitter {
	n := len(cols)
	f := &fitter{cols: cols, rows: rows, short: make([][]string, n), full: make([]int, n), abbr: make([]int, n),
		l: layout{gap: gap, hidden: make([]bool, n), abbrev: make([]bool, n), width: make([]int, n)}}
	for c, col := range cols {
		f.full[c] = displayWidth(col.Header)
		for _, r := range rows {
			f.full[c] = max(f.full[c], displayWidth(r[c]))
		}
		f.l.width[c] = f.full[c]
	}
	return f
}

// total is the table's width as laid out now: the columns shown and the gaps between
// them (trailing blanks are trimmed, so the last column has none).
func (f *fitter) total() int {
	sum, shown := 0, 0
	for c, w := range f.l.width {
		if !f.l.hidden[c] {
			sum += w
			shown++
		}
	}
	if shown > 1 {
		sum += f.l.gap * (shown - 1)
	}
	return sum
}

// abbreviate switches column c to its short form.
func (f *fitter) abbreviate(c int) {
	col := f.cols[c]
	f.l.abbrev[c] = true
	f.short[c] = make([]string, len(f.rows))
	f.abbr[c] = displayWidth(col.narrowest())
	for r, row := range f.rows {
		v := row[c]
		if col.Abbrev != nil {
			v = col.Abbrev(v)
		}
		f.short[c][r] = v
		f.abbr[c] = max(f.abbr[c], displayWidth(v))
	}
	f.l.width[c] = min(f.l.width[c], f.abbr[c])
}

// form is column c's width before any cut.
func (f *fitter) form(c int) int {
	if f.l.abbrev[c] {
		return f.abbr[c]
	}
	return f.full[c]
}

// shrink cuts column c by what the table is over, down to its Min (or its narrowest
// header, if wider).
func (f *fitter) shrink(c int, over int) {
	floor := max(f.cols[c].Min, displayWidth(f.cols[c].narrowest()))
	f.l.width[c] = max(min(floor, f.l.width[c]), f.l.width[c]-over)
}

// fit lays the table out in width cells; width 0 is no limit.
func (f *fitter) fit(width int) layout {
	over := func() int { return f.total() - width }
	if width <= 0 || over() <= 0 {
		return f.l
	}
	f.l.gap = min(f.l.gap, 2)
	for c, col := range f.cols {
		if col.Fill != nil && over() > 0 {
			f.shrink(c, over())
		}
	}
	order := make([]int, len(f.cols))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(f.cols[a].Priority, f.cols[b].Priority), cmp.Compare(b, a))
	})
	for _, c := range order {
		if over() > 0 && f.cols[c].abbreviates() {
			f.abbreviate(c)
		}
	}
	for _, c := range order {
		col := f.cols[c]
		if over() > 0 && col.Min > 0 && col.Fill == nil {
			f.shrink(c, over())
		}
		if over() > 0 && !col.Key {
			f.l.hidden[c] = true
		}
	}
	// What the last step freed goes back to the columns that were narrowed, the Fill
	// columns first: they are meant to take what is left.
	slack := -over()
	grow := func(c, to int) {
		if slack > 0 && !f.l.hidden[c] && f.l.width[c] < to {
			g := min(slack, to-f.l.width[c])
			f.l.width[c] += g
			slack -= g
		}
	}
	for c, col := range f.cols {
		if col.Fill != nil {
			grow(c, f.full[c])
		}
	}
	for _, c := range slices.Backward(order) {
		if f.cols[c].Fill == nil {
			grow(c, f.form(c))
		}
	}
	return f.l
}

// header is column c's header as laid out.
func (f *fitter) header(c int) string {
	col := f.cols[c]
	if col.Short != "" && (f.l.abbrev[c] || f.l.width[c] < displayWidth(col.Header)) {
		return col.Short
	}
	return col.Header
}

// cell is row r's value in column c as laid out.
func (f *fitter) cell(st Styles, r, c int) string {
	w := f.l.width[c]
	switch {
	case f.cols[c].Fill != nil && w != f.full[c]:
		return f.cols[c].Fill(r, w)
	case f.l.abbrev[c]:
		return st.cut(f.short[c][r], w, f.cols[c].KeepEnd)
	default:
		return st.cut(f.rows[r][c], w, f.cols[c].KeepEnd)
	}
}

// footnote says which columns a narrow terminal hid, and how to see them; "" when none.
func (f *fitter) footnote() string {
	var names []string
	for c, col := range f.cols {
		if f.l.hidden[c] && !col.Elsewhere {
			names = append(names, cmp.Or(col.Name, strings.ToLower(col.Header)))
		}
	}
	switch len(names) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("(1 column hidden: %s; a wider terminal or a pipe shows it)", names[0])
	}
	return fmt.Sprintf("(%d columns hidden: %s; a wider terminal or a pipe shows them)", len(names), strings.Join(names, ", "))
}

// EndpointHost abbreviates an endpoint to the part that tells accounts and regions
// apart, its host, with the port unless it is the scheme's own:
// "acct-westus.documents.azure.com" of "https://acct-westus.documents.azure.com:443/",
// "127.0.0.1:8082" of "http://127.0.0.1:8082/".
func EndpointHost(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return endpoint
	}
	switch {
	case u.Port() == "",
		u.Scheme == "https" && u.Port() == "443",
		u.Scheme == "http" && u.Port() == "80":
		return u.Hostname()
	}
	return u.Host
}
