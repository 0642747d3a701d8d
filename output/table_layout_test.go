package output

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// tablewriterColumns is how Table laid out its columns with tablewriter before it did so
// itself (alignColumns), kept as the oracle of TestColumnsAreLaidOutAsTablewriterDid:
// tablewriter is a test dependency only, so that a command's start no longer pays for its
// package initialisation (a 660 KB width cache among it).
func tablewriterColumns(t *testing.T, header []string, rows [][]string, right []bool, gap int) string {
	t.Helper()
	align := make([]tw.Align, len(right))
	for i := range right {
		align[i] = tw.AlignLeft
		if right[i] {
			align[i] = tw.AlignRight
		}
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
		tablewriter.WithTrimSpace(tw.Off),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithPadding(tw.Padding{Left: "", Right: strings.Repeat(" ", gap), Overwrite: true}),
	)
	if header != nil {
		tbl.Header(header)
	}
	for _, r := range rows {
		if err := tbl.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := tbl.Render(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// trimmed is a rendered table as Render writes it: trailing blanks trimmed off each line.
func trimmed(s string) string {
	var out strings.Builder
	for line := range strings.Lines(s) {
		out.WriteString(trimTrailing(strings.TrimRight(line, "\r\n")))
		out.WriteByte('\n')
	}
	return out.String()
}

// looks is what a terminal shows of s: each character with the SGR attributes in force
// where it is written (blanks without them: no style here draws a background). Two
// strings that look the same may differ in escape codes: tablewriter closed a coloured
// cell with a second reset after its padding.
func looks(s string) string {
	var b strings.Builder
	var attrs []string
	for len(s) > 0 {
		if strings.HasPrefix(s, "\x1b[") {
			end := strings.IndexByte(s, 'm')
			if p := s[2:end]; p == "0" || p == "" {
				attrs = nil
			} else {
				attrs = append(attrs, p)
			}
			s = s[end+1:]
			continue
		}
		r, size := utf8.DecodeRuneInString(s)
		s = s[size:]
		if r == ' ' || r == '\n' {
			b.WriteRune(r)
			continue
		}
		fmt.Fprintf(&b, "%c%v", r, attrs)
	}
	return b.String()
}

// TestColumnsAreLaidOutAsTablewriterDid: for tables of every shape the commands draw
// (headers or none, left and right alignment, colour, empty cells, wide and ambiguous
// characters, leading blanks, gaps of 2 and 3), alignColumns writes what tablewriter
// wrote once trailing blanks are trimmed as Render trims them: the same characters in the
// same places with the same colours, and the same bytes where no colour is involved.
func TestColumnsAreLaidOutAsTablewriterDid(t *testing.T) {
	colour := NewStyles(&bytes.Buffer{}, true, false)
	words := []string{"", "a", "West US", "North Europe", "503/0", "1.20s", "—", "–", "…", "≈ 3", "µs", "→", "━━━●", "  ━━✕",
		"東京", "한국어", "ü", "two\nlines", "✅", "👍", "12,345", "0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d", "x y z", "   ", "░▒"}
	paint := []func(string) string{func(s string) string { return s }, colour.Bold, colour.Faint, colour.Good, colour.Bad, colour.Warn}
	rng := rand.New(rand.NewPCG(1, 2))
	cell := func() string {
		s := words[rng.IntN(len(words))]
		if rng.IntN(3) == 0 {
			s = paint[rng.IntN(len(paint))](s)
		}
		if rng.IntN(5) == 0 {
			s += words[rng.IntN(len(words))]
		}
		return s
	}
	for i := range 2000 {
		cols := 1 + rng.IntN(7)
		right := make([]bool, cols)
		for c := range right {
			right[c] = rng.IntN(3) == 0
		}
		var header []string
		if rng.IntN(4) != 0 {
			header = make([]string, cols)
			for c := range header {
				header[c] = strings.ToUpper(words[1+rng.IntN(len(words)-1)])
				if rng.IntN(2) == 0 {
					header[c] = colour.Bold(header[c])
				}
			}
		}
		rows := make([][]string, rng.IntN(6))
		for r := range rows {
			rows[r] = make([]string, cols)
			for c := range rows[r] {
				rows[r][c] = cell()
			}
		}
		if header == nil && len(rows) == 0 {
			continue
		}
		gap := 2 + rng.IntN(2)
		want := trimmed(tablewriterColumns(t, header, rows, right, gap))
		got := trimmed(alignColumns(header, rows, right, gap))
		if looks(got) != looks(want) || !strings.Contains(got+want, "\x1b") && got != want {
			t.Fatalf("table %d (header %q, rows %q, right %v, gap %d):\ngot\n%q\nwant (tablewriter)\n%q", i, header, rows, right, gap, got, want)
		}
	}
}
