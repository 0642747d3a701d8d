package output

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// Series is one curve of a latency chart: every request's latency, sorted ascending.
type Series struct {
	Name      string
	Latencies []time.Duration
}

// The chart's vertical axis is the percentile on a "nines" scale (0, 90, 99, 99.9 …
// equally spaced), so that the tail, where hedging matters, is as visible as the median;
// the horizontal axis is latency on a log scale.
var chartPercentiles = []float64{0, 50, 90, 99, 99.9}

func ninesOf(p float64) float64 {
	if p >= 100 {
		return 4
	}
	return -math.Log10(1 - p/100)
}

// quantileOf returns the latency at percentile p of sorted latencies.
func quantileOf(lat []time.Duration, p float64) time.Duration {
	if len(lat) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(lat)))) - 1
	if i < 0 {
		i = 0
	}
	if i >= len(lat) {
		i = len(lat) - 1
	}
	return lat[i]
}

func chartRange(series []Series) (lo, hi time.Duration) {
	lo, hi = time.Duration(math.MaxInt64), 0
	for _, s := range series {
		if len(s.Latencies) == 0 {
			continue
		}
		lo = min(lo, s.Latencies[0])
		hi = max(hi, s.Latencies[len(s.Latencies)-1])
	}
	if hi == 0 {
		return time.Millisecond, 10 * time.Millisecond
	}
	lo = max(lo, 100*time.Microsecond)
	if hi <= lo {
		hi = lo * 10
	}
	return lo, hi
}

var seriesMarks = []rune{'●', '▲', '■', '◆', '✚', '○', '△', '□'}
var seriesMarksASCII = []rune{'*', '+', 'o', 'x', '#', '@', '%', '&'}

// WriteCDF draws the latency distribution of each series in the terminal: percentile
// (nines scale) up, latency (log scale) across, one mark per series.
func WriteCDF(w io.Writer, series []Series, width, height int, st Styles) error {
	if width < 20 {
		width = 20
	}
	if height < 8 {
		height = 8
	}
	lo, hi := chartRange(series)
	llo, lhi := math.Log(float64(lo)), math.Log(float64(hi))
	maxNines := ninesOf(99.9)
	grid := make([][]rune, height)
	for i := range grid {
		grid[i] = []rune(strings.Repeat(" ", width))
	}
	marks := seriesMarks
	if st.ASCII {
		marks = seriesMarksASCII
	}
	for si, s := range series {
		if len(s.Latencies) == 0 {
			continue
		}
		mark := marks[si%len(marks)]
		// Sample the curve densely along the percentile axis.
		for row := 0; row < height; row++ {
			n := maxNines * float64(row) / float64(height-1)
			p := 100 * (1 - math.Pow(10, -n))
			d := quantileOf(s.Latencies, p)
			x := 0
			if d > lo {
				x = int(math.Round((math.Log(float64(d)) - llo) / (lhi - llo) * float64(width-1)))
			}
			x = max(0, min(width-1, x))
			grid[height-1-row][x] = mark
		}
	}
	var b strings.Builder
	labelFor := func(row int) string {
		n := maxNines * float64(height-1-row) / float64(height-1)
		for _, p := range chartPercentiles {
			if math.Abs(ninesOf(p)-n) < maxNines/float64(height-1)/2 {
				return fmt.Sprintf("p%-5s", strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.1f", p), "0"), "."))
			}
		}
		return "      "
	}
	vbar, hbar, corner := "│", "─", "└"
	if st.ASCII {
		vbar, hbar, corner = "|", "-", "+"
	}
	for row := range grid {
		b.WriteString(labelFor(row) + " " + vbar + string(grid[row]) + "\n")
	}
	b.WriteString("       " + corner + strings.Repeat(hbar, width) + "\n")
	left, right := HumanDuration(lo), HumanDuration(hi)
	mid := HumanDuration(time.Duration(math.Exp((llo + lhi) / 2)))
	gap := width - len(left) - len(mid) - len(right)
	b.WriteString("        " + left + strings.Repeat(" ", max(1, gap/2)) + mid + strings.Repeat(" ", max(1, gap-gap/2)) + right + "   (latency, log scale)\n")
	for si, s := range series {
		b.WriteString(fmt.Sprintf("        %c %s\n", marks[si%len(marks)], s.Name))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

var svgColors = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"}

// WriteCDFSVG writes the same chart as a standalone SVG image.
func WriteCDFSVG(w io.Writer, series []Series, title string) error {
	const W, H, left, right, top, bottom = 760, 440, 70, 170, 40, 50
	pw, ph := float64(W-left-right), float64(H-top-bottom)
	lo, hi := chartRange(series)
	llo, lhi := math.Log(float64(lo)), math.Log(float64(hi))
	maxNines := ninesOf(99.9)
	x := func(d time.Duration) float64 {
		if d < lo {
			d = lo
		}
		return float64(left) + (math.Log(float64(d))-llo)/(lhi-llo)*pw
	}
	y := func(n float64) float64 { return float64(top) + ph - n/maxNines*ph }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", W, H, W, H)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="24" font-size="15" font-weight="bold">%s</text>`+"\n", left, xmlEscape(title))
	for _, p := range chartPercentiles {
		yy := y(ninesOf(p))
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", left, yy, float64(left)+pw, yy)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">p%g</text>`+"\n", left-6, yy+4, p)
	}
	for d := time.Microsecond * 100; d <= hi*10; d *= 10 {
		if d < lo || d > hi {
			continue
		}
		xx := x(d)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", xx, top, xx, float64(top)+ph)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", xx, float64(top)+ph+16, HumanDuration(d))
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">latency (log scale)</text>`+"\n", float64(left)+pw/2, H-10)
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.0f" height="%.0f" fill="none" stroke="#444"/>`+"\n", left, top, pw, ph)
	for si, s := range series {
		if len(s.Latencies) == 0 {
			continue
		}
		var pts []string
		const steps = 200
		for i := 0; i <= steps; i++ {
			n := maxNines * float64(i) / steps
			p := 100 * (1 - math.Pow(10, -n))
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(quantileOf(s.Latencies, p)), y(n)))
		}
		color := svgColors[si%len(svgColors)]
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", color, strings.Join(pts, " "))
		ly := top + 16 + si*20
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"/>`+"\n", W-right+12, ly-4, W-right+32, ly-4, color)
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", W-right+38, ly, xmlEscape(s.Name))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteCDFHTML wraps the SVG chart in a minimal HTML page.
func WriteCDFHTML(w io.Writer, series []Series, title string) error {
	if _, err := fmt.Fprintf(w, "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>%s</title></head><body>\n", xmlEscape(title)); err != nil {
		return err
	}
	if err := WriteCDFSVG(w, series, title); err != nil {
		return err
	}
	_, err := io.WriteString(w, "</body></html>\n")
	return err
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
