package output

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

var svgColors = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"}

func seriesColor(i int) string { return svgColors[i%len(svgColors)] }

// The chart's geometry in pixels. Text sizes are what the SVG declares; every margin is
// computed from the text it must hold (textWidth), so that a long title or many, long
// strategy names widen or lengthen the image instead of running off its edge.
const (
	chartPad       = 12  // the image's outer margin
	chartFontSize  = 12  // axis labels and legend
	chartTitleSize = 15  // the title, bold
	chartTitleLine = 20  // baseline to baseline
	chartPlotW     = 520 // the plot area's least width in an SVG image
	// pagePlotW is the plot's width in an HTML page, whose legend goes under the plot:
	// the whole chart is then about 650 px wide, so that on a 600 px screen it is shown
	// at nine tenths of its size, its 12 px text still readable (about 11 px).
	pagePlotW  = 560
	chartPlotH = 350
	// chartTitleWidth is as wide as the image grows to keep the title on one line; a
	// longer title wraps at spaces.
	chartTitleWidth = 1000
	legendGap       = 16 // between the plot and the legend
	legendRow       = 20
	legendSwatch    = 20
	chartSteps      = 300 // points per curve: 0.01 nines apart, so that p90, p99 and p99.9 are points
	tickLabelBelow  = 19  // the baselines of the tick labels and of the axis label, under the plot
	axisLabelBelow  = 37
	legendBelowGap  = 24 // from the axis label's baseline to the first legend row's, under the plot
	legendColGap    = 18 // between two legend entries on one row
	targetLabelDown = 14 // the target line's label's baseline, under the plot's top edge
)

// cdfOptions say how a chart is drawn.
type cdfOptions struct {
	title string
	// plotW is the plot area's least width.
	plotW float64
	// target is the target p99: a dashed line across the chart at that latency, labelled,
	// with a mark where it meets p99 (0: none), so that a curve's p99 reads as left of
	// the target (met) or right of it.
	target time.Duration
	// legendBelow puts the legend in rows under the plot instead of on its right, so
	// that the chart is no wider than its plot and labels (an HTML page on a narrow
	// screen).
	legendBelow bool
}

// legendEntry is where one series' legend entry goes: the swatch's left end and the
// text's baseline.
type legendEntry struct{ x, y float64 }

// cdfLayout is where everything of a chart goes.
type cdfLayout struct {
	width, height           float64
	left, top, plotW, plotH float64
	title                   []string
	legend                  []legendEntry
	target                  time.Duration
	lo, hi                  time.Duration
	llo, lhi, maxNines      float64
	ticks                   []time.Duration
}

func layoutCDF(series []Series, o cdfOptions) cdfLayout {
	title := o.title
	l := cdfLayout{plotW: o.plotW, plotH: chartPlotH, maxNines: ninesOf(99.9), target: o.target}
	l.lo, l.hi = chartRange(series)
	if o.target > 0 {
		// The target is on the chart, however far the curves are from it.
		l.lo, l.hi = min(l.lo, max(o.target, 100*time.Microsecond)), max(l.hi, o.target)
	}
	l.llo, l.lhi = math.Log(float64(l.lo)), math.Log(float64(l.hi))
	for d := 100 * time.Microsecond; d <= l.hi; d *= 10 {
		if d >= l.lo {
			l.ticks = append(l.ticks, d)
		}
	}
	var labelW, tickW, legendW float64
	entryW := make([]float64, len(series))
	for _, p := range chartPercentiles {
		labelW = max(labelW, textWidth(percentileLabel(p), chartFontSize, false))
	}
	for _, d := range l.ticks {
		tickW = max(tickW, textWidth(HumanDuration(d), chartFontSize, false))
	}
	for i, s := range series {
		entryW[i] = legendSwatch + 6 + textWidth(s.Name, chartFontSize, false)
		legendW = max(legendW, entryW[i])
	}
	// Tick labels are centred on their tick, the first and last on the plot's edges.
	l.left = chartPad + max(labelW+6, tickW/2)
	right := chartPad + max(legendGap+legendW, tickW/2)
	if o.legendBelow {
		right = chartPad + tickW/2
		// An entry wider than the plot (a very long name) widens the chart.
		l.plotW = max(l.plotW, legendW)
	}
	l.width = l.left + l.plotW + right

	l.top = chartPad + 8
	if title != "" {
		if w := textWidth(title, chartTitleSize, true) + 2*chartPad; w <= max(l.width, chartTitleWidth) {
			l.title = []string{title}
			l.width = max(l.width, w)
		} else {
			l.width = max(l.width, chartTitleWidth)
			l.title = wrapText(title, chartTitleSize, true, l.width-2*chartPad)
			for _, line := range l.title {
				l.width = max(l.width, textWidth(line, chartTitleSize, true)+2*chartPad)
			}
		}
		l.top = chartPad + float64(len(l.title))*chartTitleLine + 12
	}
	l.width = math.Ceil(l.width)
	// The plot takes the width the title gave the image.
	l.plotW = l.width - l.left - right
	// Tick labels, then the axis label, under the plot: the first tick's label clears
	// the p0 label, which sits on the plot's bottom edge.
	l.height = l.top + l.plotH + axisLabelBelow + 4 + chartPad
	if o.legendBelow {
		// Rows of entries under the axis label, as many to a row as the plot's width
		// holds.
		x, y := l.left, l.top+l.plotH+axisLabelBelow+legendBelowGap
		for i := range series {
			if x > l.left && x+entryW[i] > l.left+l.plotW {
				x, y = l.left, y+legendRow
			}
			l.legend = append(l.legend, legendEntry{x, y})
			x += entryW[i] + legendColGap
		}
		if len(series) > 0 {
			l.height = y + 4 + chartPad
		}
	} else {
		for i := range series {
			l.legend = append(l.legend, legendEntry{l.left + l.plotW + legendGap, l.top + 16 + float64(i)*legendRow})
		}
		if n := len(series); n > 0 {
			l.height = max(l.height, l.legend[n-1].y+4+chartPad)
		}
	}
	l.height = math.Ceil(l.height)
	return l
}

// x is where latency d goes across; y where n nines go up.
func (l cdfLayout) x(d time.Duration) float64 {
	d = max(d, l.lo)
	return l.left + (math.Log(float64(d))-l.llo)/(l.lhi-l.llo)*l.plotW
}

func (l cdfLayout) y(n float64) float64 { return l.top + l.plotH - n/l.maxNines*l.plotH }

// stepNines is the percentile, in nines, of step i of chartSteps.
func (l cdfLayout) stepNines(i int) float64 { return l.maxNines * float64(i) / chartSteps }

func percentileOfNines(n float64) float64 { return 100 * (1 - math.Pow(10, -n)) }

// percentileLabel is "p50", "p99.9": as many decimals as the percentile has.
func percentileLabel(p float64) string { return fmt.Sprintf("p%g", p) }

// stepLabel names the percentile of a step with the decimals its place on the nines scale
// needs to tell neighbouring steps apart: p42.5, p95.5, p99.45, p99.9.
func stepLabel(n float64) string {
	decimals := max(1, int(math.Floor(n+1e-9)))
	s := fmt.Sprintf("%.*f", decimals, percentileOfNines(n))
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return "p" + s
}

// WriteCDFSVG writes the chart of WriteCDF as a standalone SVG image: percentile (nines
// scale) up, latency (log scale) across, one curve per series, the legend on the right,
// and with a target p99 (0: none) a dashed line at that latency.
func WriteCDFSVG(w io.Writer, series []Series, title string, targetP99 time.Duration) error {
	_, err := io.WriteString(w, layoutCDF(series, cdfOptions{title: title, plotW: chartPlotW, target: targetP99}).svg(series))
	return err
}

// targetLabel is the label of the target line.
func targetLabel(d time.Duration) string { return "target p99 " + HumanDuration(d) }

func (l cdfLayout) svg(series []Series) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="%s" font-size="%d">`+"\n",
		l.width, l.height, l.width, l.height, chartFont, chartFontSize)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	for i, line := range l.title {
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="%d" font-weight="bold">%s</text>`+"\n",
			chartPad, chartPad+chartTitleSize+i*chartTitleLine, chartTitleSize, xmlEscape(line))
	}
	right, bottom := l.left+l.plotW, l.top+l.plotH
	for _, p := range chartPercentiles {
		yy := l.y(ninesOf(p))
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", l.left, yy, right, yy)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", l.left-6, yy+4, percentileLabel(p))
	}
	for _, d := range l.ticks {
		xx := l.x(d)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", xx, l.top, xx, bottom)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", xx, bottom+tickLabelBelow, HumanDuration(d))
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">latency (log scale)</text>`+"\n", l.left+l.plotW/2, bottom+axisLabelBelow)
	fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#444"/>`+"\n", l.left, l.top, l.plotW, l.plotH)
	for si, s := range series {
		color := seriesColor(si)
		if len(s.Latencies) > 0 {
			pts := make([]string, 0, chartSteps+1)
			for i := 0; i <= chartSteps; i++ {
				n := l.stepNines(i)
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", l.x(quantileOf(s.Latencies, percentileOfNines(n))), l.y(n)))
			}
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", color, strings.Join(pts, " "))
		}
		e := l.legend[si]
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="3"/>`+"\n",
			e.x, e.y-4, e.x+legendSwatch, e.y-4, color)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f">%s</text>`+"\n", e.x+legendSwatch+6, e.y, xmlEscape(s.Name))
	}
	if l.target > 0 {
		// Drawn over the curves: the line, its mark at p99, and its label inside the
		// plot's top, on the side of the line with room for it.
		xx, y99 := l.x(l.target), l.y(ninesOf(99))
		fmt.Fprintf(&b, `<g class="target"><line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333" stroke-width="1.5" stroke-dasharray="6 4"/>`+"\n", xx, l.top, xx, bottom)
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="4" fill="white" stroke="#333" stroke-width="1.5"/>`+"\n", xx, y99)
		label := targetLabel(l.target)
		lx, anchor := xx+5, "start"
		if xx+5+textWidth(label, chartFontSize, false) > right-2 {
			lx, anchor = xx-5, "end"
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="%s" fill="#333">%s</text></g>`+"\n", lx, l.top+targetLabelDown, anchor, xmlEscape(label))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
