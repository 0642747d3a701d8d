package output

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// targetMarks reads the target line of a chart: its x and the ends of its vertical
// line, and its label.
func targetMarks(t *testing.T, svg []byte) (x, y1, y2 float64, label string, found bool) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(svg))
	in := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			attr := map[string]string{}
			for _, a := range tok.Attr {
				attr[a.Name.Local] = a.Value
			}
			f := func(name string) float64 { v, _ := strconv.ParseFloat(attr[name], 64); return v }
			switch {
			case tok.Name.Local == "g" && attr["class"] == "target":
				in, found = true, true
			case in && tok.Name.Local == "line":
				x, y1, y2 = f("x1"), f("y1"), f("y2")
				if f("x2") != x {
					t.Errorf("the target line is not vertical: x1 %s, x2 %s", attr["x1"], attr["x2"])
				}
			}
		case xml.CharData:
			if in {
				label += strings.TrimSpace(string(tok))
			}
		case xml.EndElement:
			if tok.Name.Local == "g" {
				in = false
			}
		}
	}
}

// The chart of a hedge-test with a target p99 draws it: a line across the whole plot at
// the target's latency, labelled with it, inside the image and clear of every other
// text, also when the target lies beyond every curve (the axis stretches to it).
func TestTheChartDrawsTheTargetP99(t *testing.T) {
	for _, tc := range []struct {
		name   string
		series []Series
		target time.Duration
	}{
		{"a target among the curves", namedSeries("none", "fanout", "adaptive"), 5 * time.Millisecond},
		{"a target right of every curve", namedSeries("none", "fanout"), 2 * time.Second},
		{"a target left of every curve", namedSeries("none"), 150 * time.Microsecond},
		{"a target at the right edge", namedSeries("none", "fanout"), 20 * time.Millisecond},
	} {
		for _, html := range []bool{false, true} {
			name := tc.name + ", SVG"
			l := layoutCDF(tc.series, cdfOptions{title: "t", plotW: chartPlotW, target: tc.target})
			if html {
				name = tc.name + ", page"
				l = layoutCDF(tc.series, cdfOptions{plotW: pagePlotW, target: tc.target, legendBelow: true})
			}
			t.Run(name, func(t *testing.T) {
				svg := []byte(l.svg(tc.series))
				x, y1, y2, label, found := targetMarks(t, svg)
				if !found {
					t.Fatal("no target line")
				}
				if want := l.x(tc.target); math.Abs(x-want) > 0.1 || x < l.left-0.1 || x > l.left+l.plotW+0.1 {
					t.Errorf("the target line is at x %.1f, want %.1f, inside the plot (%.1f–%.1f)", x, want, l.left, l.left+l.plotW)
				}
				if y1 != math.Round(l.top*10)/10 || y2 != math.Round((l.top+l.plotH)*10)/10 {
					t.Errorf("the target line runs from %.1f to %.1f, want the plot's height %.1f–%.1f", y1, y2, l.top, l.top+l.plotH)
				}
				if want := "target p99 " + HumanDuration(tc.target); label != want {
					t.Errorf("the label reads %q, want %q", label, want)
				}
				width, height, texts, _ := parseSVG(t, svg)
				for i, s := range texts {
					x0, y0, x1, y1 := s.extent()
					if x0 < 0 || y0 < 0 || x1 > width || y1 > height {
						t.Errorf("%q extends to (%.0f,%.0f)–(%.0f,%.0f), outside the %.0f×%.0f image", s.content, x0, y0, x1, y1, width, height)
					}
					for _, o := range texts[:i] {
						a0, b0, a1, b1 := o.extent()
						if (s.content == label || o.content == label) && x0 < a1 && a0 < x1 && y0 < b1 && b0 < y1 {
							t.Errorf("%q overlaps %q", s.content, o.content)
						}
					}
				}
			})
		}
	}
}

// In an HTML page the legend goes under the plot, in rows, so that the chart is no
// wider than about 650 px, shown at nine tenths of its size on a 600 px screen; a
// legend of many long names takes more rows, not more width.
func TestThePagesChartHasItsLegendUnderThePlot(t *testing.T) {
	for _, names := range [][]string{{"none", "threshold=500ms/100ms", "fanout", "adaptive"}, manyStrategies(12)} {
		series := namedSeries(names...)
		l := layoutCDF(series, cdfOptions{plotW: pagePlotW, target: 100 * time.Millisecond, legendBelow: true})
		if l.width > 650 {
			t.Errorf("%d strategies: the chart is %.0f px wide, want at most 650", len(names), l.width)
		}
		width, height, texts, _ := parseSVG(t, []byte(l.svg(series)))
		bottom := l.top + l.plotH
		isLegend := func(s string) bool { return slices.Contains(names, s) }
		legend := 0
		for i, s := range texts {
			x0, y0, x1, y1 := s.extent()
			if x0 < 0 || y0 < 0 || x1 > width || y1 > height {
				t.Errorf("%q extends to (%.0f,%.0f)–(%.0f,%.0f), outside the %.0f×%.0f image", s.content, x0, y0, x1, y1, width, height)
			}
			for _, o := range texts[:i] {
				a0, b0, a1, b1 := o.extent()
				if (isLegend(s.content) || isLegend(o.content)) && x0 < a1 && a0 < x1 && y0 < b1 && b0 < y1 {
					t.Errorf("%q overlaps %q", s.content, o.content)
				}
			}
			for _, n := range names {
				if s.content == n {
					legend++
					if y0 < bottom+axisLabelBelow {
						t.Errorf("the legend entry %q is not under the plot and its axis label", n)
					}
				}
			}
		}
		if legend != len(names) {
			t.Errorf("%d legend entries, want %d", legend, len(names))
		}
	}
}
