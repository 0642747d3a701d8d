package output

import "strings"

// chartFont is the font the SVG and HTML charts declare. The chart has no font of its own
// to measure text with, so the layout estimates each string's width, per character, for
// the widest of the common sans fonts: DejaVu Sans (the default on most Linux desktops)
// and Verdana, which share Bitstream Vera's wide metrics and come first in the list. With
// a narrower font (Arial, Helvetica) the text only has more room than it needs.
const chartFont = "DejaVu Sans, Verdana, Arial, Helvetica, sans-serif"

// Character widths in em, each rounded up from the widest of its class in DejaVu Sans
// Book: "W" is 0.99 em, "m" 0.97, "%" 0.95, "O" 0.79, a digit 0.64, "i" 0.28.
const (
	emSpace  = 0.35
	emNarrow = 0.42 // i j l t f r I . , : ; ' | ! ( ) [ ] - /
	emDigit  = 0.64
	emLower  = 0.64
	emUpper  = 0.80
	emWide   = 1.00 // m w M W % @ — … and anything beyond ASCII
	emSymbol = 0.85 // = + < > # ~ ^ & and other ASCII punctuation
	emEmoji  = 1.25
	// emBold widens bold text: DejaVu Sans Bold is 7–12 % wider than Book, "i" a little more.
	emBold = 1.12
)

const narrowRunes = "ijltfrI.,:;'|!()[]-/\\"

// textWidth estimates, erring wide, how many pixels s takes in chartFont at size px.
func textWidth(s string, size float64, bold bool) float64 {
	var em float64
	for _, r := range s {
		em += runeEm(r)
	}
	if bold {
		em *= emBold
	}
	return em * size
}

func runeEm(r rune) float64 {
	switch {
	case r == ' ':
		return emSpace
	case strings.ContainsRune(narrowRunes, r):
		return emNarrow
	case r >= '0' && r <= '9':
		return emDigit
	case r == 'm' || r == 'w' || r == 'M' || r == 'W' || r == '%' || r == '@':
		return emWide
	case r >= 'a' && r <= 'z':
		return emLower
	case r >= 'A' && r <= 'Z':
		return emUpper
	case r < 0x80:
		return emSymbol
	case r >= 0x1F000:
		return emEmoji
	}
	return emWide
}

// wrapText breaks s at spaces into lines no wider than width; a word wider than width
// has a line of its own.
func wrapText(s string, size float64, bold bool, width float64) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		if line != "" && textWidth(line+" "+word, size, bold) > width {
			lines = append(lines, line)
			line = ""
		}
		if line == "" {
			line = word
		} else {
			line += " " + word
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
