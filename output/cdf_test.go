package output

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"
)

func series() []Series {
	var fast, slow []time.Duration
	for i := 1; i <= 1000; i++ {
		fast = append(fast, time.Duration(i)*10*time.Microsecond)
		slow = append(slow, time.Duration(i)*time.Millisecond)
	}
	return []Series{{Name: "fast", Latencies: fast}, {Name: "slow", Latencies: slow}}
}

func TestCDFChartPlacesEachSeriesAndLabelsTheAxes(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCDF(&b, series(), 40, 10, NewStyles(&b, false, true)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"p0", "p99.9", "* fast", "+ slow", "(latency, log scale)"} {
		if !strings.Contains(out, want) {
			t.Fatalf("chart lacks %q:\n%s", want, out)
		}
	}
	lines := strings.Split(out, "\n")
	// The fast series sits left of the slow one on every row.
	for _, l := range lines[:10] {
		if i, j := strings.IndexRune(l, '*'), strings.IndexRune(l, '+'); i >= 0 && j >= 0 && i > j {
			t.Fatalf("fast series right of slow: %q", l)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Fatal("no escapes without colour")
	}
}

func TestCDFSVGIsWellFormed(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCDFSVG(&b, series(), "brownout <test>", 0); err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(&b)
	polylines := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
			polylines++
		}
	}
	if polylines != 2 {
		t.Fatalf("%d curves, want 2", polylines)
	}
}

// svgText is a <text> element of a chart, with what its size is estimated from.
type svgText struct {
	x, y, size float64
	anchor     string
	bold       bool
	content    string
}

// parseSVG reads a chart's viewBox and its text elements with encoding/xml.
func parseSVG(t *testing.T, svg []byte) (width, height float64, texts []svgText, polylines int) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(svg))
	rootSize := 0.0
	var cur *svgText
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			attr := map[string]string{}
			for _, a := range tok.Attr {
				attr[a.Name.Local] = a.Value
			}
			num := func(name string) float64 {
				v, err := strconv.ParseFloat(attr[name], 64)
				if err != nil {
					t.Fatalf("<%s %s=%q>: %v", tok.Name.Local, name, attr[name], err)
				}
				return v
			}
			switch tok.Name.Local {
			case "svg":
				var x0, y0 float64
				if _, err := fmt.Sscanf(attr["viewBox"], "%g %g %g %g", &x0, &y0, &width, &height); err != nil || x0 != 0 || y0 != 0 {
					t.Fatalf("viewBox %q", attr["viewBox"])
				}
				if num("width") != width || num("height") != height {
					t.Fatalf("width/height %s×%s differ from the viewBox %q", attr["width"], attr["height"], attr["viewBox"])
				}
				rootSize = num("font-size")
			case "text":
				cur = &svgText{x: num("x"), y: num("y"), size: rootSize, anchor: attr["text-anchor"], bold: attr["font-weight"] == "bold"}
				if attr["font-size"] != "" {
					cur.size = num("font-size")
				}
			case "polyline":
				polylines++
			}
		case xml.CharData:
			if cur != nil {
				cur.content += string(tok)
			}
		case xml.EndElement:
			if tok.Name.Local == "text" && cur != nil {
				texts = append(texts, *cur)
				cur = nil
			}
		}
	}
	return width, height, texts, polylines
}

// extent is the box a text is estimated to take: its estimated width placed by its
// anchor, from a full em above the baseline to 0.3 em below it (DejaVu Sans: 0.93 and 0.24).
func (s svgText) extent() (x0, y0, x1, y1 float64) {
	w := textWidth(s.content, s.size, s.bold)
	switch s.anchor {
	case "middle":
		x0 = s.x - w/2
	case "end":
		x0 = s.x - w
	default:
		x0 = s.x
	}
	return x0, s.y - s.size, x0 + w, s.y + 0.3*s.size
}

func namedSeries(names ...string) []Series {
	var out []Series
	for i, name := range names {
		var lat []time.Duration
		for j := 1; j <= 500; j++ {
			lat = append(lat, time.Duration(j*(i+1))*20*time.Microsecond)
		}
		out = append(out, Series{Name: name, Latencies: lat})
	}
	return out
}

func manyStrategies(n int) []string {
	var names []string
	for i := range n {
		names = append(names, fmt.Sprintf("threshold=%dms/%dms (no replica health)", 100*(i+1), 50*(i+1)))
	}
	return names
}

var chartLayoutCases = []struct {
	name   string
	title  string
	series []Series
}{
	{"the built-in brownout", "cosmosctl hedge-test: brownout (the first region answers 5% of reads 0.5–2 s late)",
		namedSeries("none", "threshold=500ms/100ms", "fanout", "adaptive")},
	{"no title", "", namedSeries("none", "fanout")},
	{"a long scenario description wraps", "cosmosctl hedge-test: " + strings.Repeat("WWW mmm a region answering 20% of reads with 429 and the rest late ", 4),
		namedSeries("none", "adaptive=25%")},
	{"a scenario file with a long path", "cosmosctl hedge-test: /home/operator/rehearsals/" + strings.Repeat("MMMMWWWW", 20) + ".toml",
		namedSeries("none")},
	{"many long strategy names", "cosmosctl hedge-test: replica-move", namedSeries(manyStrategies(24)...)},
	{"text beyond ASCII", "cosmosctl hedge-test: 東京 – Ōsaka … ✓ 🚀 «ünïcödé»", namedSeries("none", "ńone—wide…", "%%%%@@@@WWWW")},
}

func TestCDFSVGTextStaysInsideTheImage(t *testing.T) {
	for _, tc := range chartLayoutCases {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteCDFSVG(&b, tc.series, tc.title, 0); err != nil {
				t.Fatal(err)
			}
			width, height, texts, polylines := parseSVG(t, b.Bytes())
			if polylines != len(tc.series) {
				t.Fatalf("%d curves, want %d", polylines, len(tc.series))
			}
			var title string
			legend := 0
			for _, s := range texts {
				x0, y0, x1, y1 := s.extent()
				if x0 < 0 || y0 < 0 || x1 > width || y1 > height {
					t.Errorf("%q extends to (%.0f,%.0f)–(%.0f,%.0f), outside the %.0f×%.0f image", s.content, x0, y0, x1, y1, width, height)
				}
				if s.bold {
					title += " " + s.content
				}
				for _, ser := range tc.series {
					if s.content == ser.Name {
						legend++
					}
				}
			}
			if strings.Join(strings.Fields(title), " ") != strings.Join(strings.Fields(tc.title), " ") {
				t.Errorf("the title reads %q, want %q", title, tc.title)
			}
			if legend != len(tc.series) {
				t.Errorf("%d legend entries, want %d", legend, len(tc.series))
			}
			if width > 1400 && !strings.Contains(tc.name, "path") {
				t.Errorf("the image is %.0f px wide: a long title should wrap", width)
			}
		})
	}
}

func TestTextWidthErrsWide(t *testing.T) {
	// DejaVu Sans Book advance widths, in em: the estimate must not be narrower.
	for s, em := range map[string]float64{"W": 0.989, "m": 0.974, "%": 0.95, "O": 0.787, "0": 0.636, "i": 0.278, " ": 0.318, "=": 0.838, "–": 0.5, "東": 1} {
		if got := textWidth(s, 10, false) / 10; got < em {
			t.Errorf("%q: %.3f em, narrower than DejaVu Sans's %.3f", s, got, em)
		}
	}
	if textWidth("abc", 12, true) <= textWidth("abc", 12, false) {
		t.Error("bold is wider")
	}
}

func TestCDFChartFitsTheTerminal(t *testing.T) {
	for _, tc := range []struct{ width, plot int }{{0, 60}, {200, 60}, {120, 60}, {100, 60}, {80, 49}, {60, 29}} {
		if got := CDFWidth(tc.width); got != tc.plot {
			t.Errorf("CDFWidth(%d) = %d, want %d", tc.width, got, tc.plot)
		}
		if tc.width == 0 {
			continue
		}
		var b bytes.Buffer
		if err := WriteCDF(&b, series(), CDFWidth(tc.width), 14, Styles{}); err != nil {
			t.Fatal(err)
		}
		assertFits(t, b.String(), tc.width)
		if !strings.Contains(b.String(), "(latency, log scale)") {
			t.Errorf("at %d the axis lost its title:\n%s", tc.width, b.String())
		}
	}
}
