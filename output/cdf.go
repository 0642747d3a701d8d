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
	// Quantile, if set, is how the figures next to the chart were computed (q in [0,1]):
	// the HTML page's values under the pointer use it, so that they read as the table.
	Quantile func(q float64) time.Duration
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
	// The epsilon keeps p99 of 1000 latencies the 990th: 100*(1-10^-2) is a hair above 99.
	i := int(math.Ceil(p/100*float64(len(lat))-1e-9)) - 1
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

// cdfChartWidth is the width of the chart's plot area when the line has room.
const cdfChartWidth = 60

// cdfMargin is what a line of the chart takes besides the plot area: the percentile
// labels on the left, the axis title on the right.
const cdfMargin = 31

// CDFWidth is the plot width that fits WriteCDF's lines in width cells (0: no limit):
// 60, or what the labels leave on a narrower terminal, never under 20.
func CDFWidth(width int) int {
	if width <= 0 {
		return cdfChartWidth
	}
	return min(cdfChartWidth, max(20, width-cdfMargin))
}

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
