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
	pagePlotW      = 700 // and in an HTML page
	chartPlotH     = 350
	// chartTitleWidth is as wide as the image grows to keep the title on one line; a
	// longer title wraps at spaces.
	chartTitleWidth = 1000
	legendGap       = 16 // between the plot and the legend
	legendRow       = 20
	legendSwatch    = 20
	chartSteps      = 300 // points per curve: 0.01 nines apart, so that p90, p99 and p99.9 are points
	tickLabelBelow  = 19  // the baselines of the tick labels and of the axis label, under the plot
	axisLabelBelow  = 37
)

// cdfLayout is where everything of a chart goes.
type cdfLayout struct {
	width, height           float64
	left, top, plotW, plotH float64
	title                   []string
	legendX, legendY        float64 // the legend's left edge and first baseline
	lo, hi                  time.Duration
	llo, lhi, maxNines      float64
	ticks                   []time.Duration
}

func layoutCDF(series []Series, title string, plotW float64) cdfLayout {
	l := cdfLayout{plotW: plotW, plotH: chartPlotH, maxNines: ninesOf(99.9)}
	l.lo, l.hi = chartRange(series)
	l.llo, l.lhi = math.Log(float64(l.lo)), math.Log(float64(l.hi))
	for d := 100 * time.Microsecond; d <= l.hi; d *= 10 {
		if d >= l.lo {
			l.ticks = append(l.ticks, d)
		}
	}
	var labelW, tickW, legendW float64
	for _, p := range chartPercentiles {
		labelW = max(labelW, textWidth(percentileLabel(p), chartFontSize, false))
	}
	for _, d := range l.ticks {
		tickW = max(tickW, textWidth(HumanDuration(d), chartFontSize, false))
	}
	for _, s := range series {
		legendW = max(legendW, legendSwatch+6+textWidth(s.Name, chartFontSize, false))
	}
	// Tick labels are centred on their tick, the first and last on the plot's edges.
	l.left = chartPad + max(labelW+6, tickW/2)
	right := chartPad + max(legendGap+legendW, tickW/2)
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
	l.legendX = l.left + l.plotW + legendGap
	l.legendY = l.top + 16
	// Tick labels, then the axis label, under the plot: the first tick's label clears
	// the p0 label, which sits on the plot's bottom edge.
	l.height = l.top + l.plotH + axisLabelBelow + 4 + chartPad
	if n := len(series); n > 0 {
		l.height = max(l.height, l.legendY+float64(n-1)*legendRow+4+chartPad)
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
// scale) up, latency (log scale) across, one curve per series, the legend on the right.
func WriteCDFSVG(w io.Writer, series []Series, title string) error {
	_, err := io.WriteString(w, layoutCDF(series, title, chartPlotW).svg(series))
	return err
}

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
		ly := l.legendY + float64(si)*legendRow
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="3"/>`+"\n",
			l.legendX, ly-4, l.legendX+legendSwatch, ly-4, color)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f">%s</text>`+"\n", l.legendX+legendSwatch+6, ly, xmlEscape(s.Name))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
