package output

import (
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// defaultTerminalWidth is the width assumed for a terminal that does not report its
// size (a serial console, some CI runners' pseudo-terminals): the classic 80 columns.
const defaultTerminalWidth = 80

// StreamWidth is the one rule for how wide tables written to a stream may be.
//
// A stream that is not a terminal (a pipe, a file) gets 0: no limit, every column and
// every value in full, because scripts and `less -S` want all of it. A terminal gets
// COLUMNS when that is a positive number (shells set it, and it is how to ask for a
// wider or narrower table by hand), else the size the terminal reports (size, called
// only for a terminal), else 80.
func StreamWidth(isTTY bool, getenv func(string) string, size func() (int, error)) int {
	if !isTTY {
		return 0
	}
	if getenv != nil {
		if n, err := strconv.Atoi(strings.TrimSpace(getenv("COLUMNS"))); err == nil && n > 0 {
			return n
		}
	}
	if size != nil {
		if n, err := size(); err == nil && n > 0 {
			return n
		}
	}
	return defaultTerminalWidth
}

// displayWidth is the number of terminal cells s takes: ANSI escapes (the colour that
// Styles adds) take none, wide characters two.
func displayWidth(s string) int { return ansi.StringWidth(s) }

// ellipsis marks a value cut to fit.
func (s Styles) ellipsis() string {
	if s.ASCII {
		return "..."
	}
	return "…"
}

// cut shortens text to width cells, with an ellipsis where something was taken off:
// at the end, or at the start when keepEnd. Colour in text survives the cut.
func (s Styles) cut(text string, width int, keepEnd bool) string {
	w := displayWidth(text)
	if w <= width {
		return text
	}
	tail := s.ellipsis()
	if width <= displayWidth(tail) {
		tail = ""
	}
	if keepEnd {
		return ansi.TruncateLeft(text, w-width+displayWidth(tail), tail)
	}
	return ansi.Truncate(text, width, tail)
}

// wrapLines breaks text into lines of at most width cells at its blanks, and inside a
// word only when the word alone is wider; width 0 means no limit. Runs of blanks where
// a line breaks are dropped.
func wrapLines(text string, width int) []string {
	if width <= 0 || displayWidth(text) <= width {
		return []string{text}
	}
	var lines []string
	var line strings.Builder
	lineWidth := 0
	flush := func() {
		if lineWidth > 0 {
			lines = append(lines, line.String())
		}
		line.Reset()
		lineWidth = 0
	}
	for _, word := range strings.Fields(text) {
		ww := displayWidth(word)
		if lineWidth > 0 && lineWidth+1+ww > width {
			flush()
		}
		if ww > width {
			flush()
			parts := strings.Split(ansi.Hardwrap(word, width, false), "\n")
			lines = append(lines, parts[:len(parts)-1]...)
			word, ww = parts[len(parts)-1], displayWidth(parts[len(parts)-1])
		}
		if lineWidth > 0 {
			line.WriteByte(' ')
			lineWidth++
		}
		line.WriteString(word)
		lineWidth += ww
	}
	flush()
	return lines
}

// wrapHanging is wrapLines with the lines after the first indented by indent blanks, for
// a paragraph that must read as one item in a list.
func wrapHanging(text string, width, indent int) []string {
	lines := wrapLines(text, width)
	if len(lines) == 1 || width-indent < 1 {
		return lines
	}
	rest, ok := strings.CutPrefix(text, lines[0])
	if !ok {
		return lines
	}
	pad := strings.Repeat(" ", indent)
	out := lines[:1]
	for _, line := range wrapLines(strings.TrimLeft(rest, " "), width-indent) {
		out = append(out, pad+line)
	}
	return out
}
