package output

import (
	_ "embed"
	"html/template"
	"io"
	"slices"
	"sync"
	"time"
)

// ChartPage is a latency comparison as one self-contained HTML page: a heading, the
// figures as a table, and the chart, whose values show under the pointer. It fetches
// nothing: the style, the script and the chart are in the page.
type ChartPage struct {
	// Title is the page's title and heading.
	Title string
	// Summary says what was run, under the heading.
	Summary string
	// Verdict is the conclusion (the recommendation), above the table.
	Verdict string
	// Header and Rows are the table, as the terminal prints it; a row whose first cell
	// names a series gets the series' colour.
	Header []string
	Rows   [][]string
	// AlignRight are the columns (0-based) of numbers.
	AlignRight []int
	// Highlight is the first cell of the row to highlight, HighlightLabel what to call it.
	Highlight      string
	HighlightLabel string
	// Notes follow the table.
	Notes  []string
	Series []Series
	// TargetP99 draws the target p99 on the chart (0: none).
	TargetP99 time.Duration
}

//go:embed cdf_page.html.tmpl
var chartPageSource string

var chartPageTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page").Parse(chartPageSource))
})

type pageCell struct {
	Text  string
	Right bool
}

type pageRow struct {
	Cells       []pageCell
	Color       string
	Highlighted bool
}

// hoverData is what the page's script reads the chart with: where each series is at each
// step of the percentile axis, with the labels the table would print.
type hoverData struct {
	Left        float64       `json:"left"`
	Top         float64       `json:"top"`
	Width       float64       `json:"width"`
	Height      float64       `json:"height"`
	Percentiles []string      `json:"percentiles"`
	Series      []hoverSeries `json:"series"`
}

type hoverSeries struct {
	Name      string    `json:"name"`
	Color     string    `json:"color"`
	X         []float64 `json:"x"`
	Latencies []string  `json:"latencies"`
}

// WriteCDFHTML writes page. Every text in it is escaped (html/template).
func WriteCDFHTML(w io.Writer, page ChartPage) error {
	// The page has its heading: the chart goes without its title.
	l := layoutCDF(page.Series, cdfOptions{plotW: pagePlotW, target: page.TargetP99, legendBelow: true})
	colors := map[string]string{}
	for i, s := range page.Series {
		colors[s.Name] = seriesColor(i)
	}
	var rows []pageRow
	for _, r := range page.Rows {
		row := pageRow{Highlighted: len(r) > 0 && page.Highlight != "" && r[0] == page.Highlight}
		if len(r) > 0 {
			row.Color = colors[r[0]]
		}
		for i, c := range r {
			row.Cells = append(row.Cells, pageCell{Text: c, Right: slices.Contains(page.AlignRight, i)})
		}
		rows = append(rows, row)
	}
	var header []pageCell
	for i, h := range page.Header {
		header = append(header, pageCell{Text: h, Right: slices.Contains(page.AlignRight, i)})
	}
	data := hoverData{Left: l.left, Top: l.top, Width: l.plotW, Height: l.plotH}
	for i := 0; i <= chartSteps; i++ {
		data.Percentiles = append(data.Percentiles, stepLabel(l.stepNines(i)))
	}
	for si, s := range page.Series {
		hs := hoverSeries{Name: s.Name, Color: seriesColor(si), X: []float64{}, Latencies: []string{}}
		if len(s.Latencies) > 0 {
			for i := 0; i <= chartSteps; i++ {
				p := percentileOfNines(l.stepNines(i))
				d := quantileOf(s.Latencies, p)
				if s.Quantile != nil {
					d = s.Quantile(p / 100)
				}
				hs.X = append(hs.X, float64(int(l.x(d)*10))/10)
				hs.Latencies = append(hs.Latencies, HumanDuration(d))
			}
		}
		data.Series = append(data.Series, hs)
	}
	return chartPageTemplate().Execute(w, struct {
		ChartPage
		HeaderCells []pageCell
		TableRows   []pageRow
		Chart       template.HTML
		ChartWidth  float64
		Hover       hoverData
		TargetLabel string
	}{
		ChartPage: page, HeaderCells: header, TableRows: rows,
		// The SVG escapes its own text (xmlEscape).
		Chart: template.HTML(l.svg(page.Series)), ChartWidth: l.width, Hover: data, TargetLabel: HumanDuration(page.TargetP99),
	})
}
