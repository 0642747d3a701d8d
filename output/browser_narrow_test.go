package output

import (
	"encoding/json"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// narrowScript records how the page lays out in the window: whether the page itself
// scrolls sideways, the table's box and whether the table scrolls inside it, the chart's
// box and the size its text is drawn at, and the target line and its label.
const narrowScript = `<script>
(function () {
  var svg = document.querySelector("figure svg");
  var wrap = document.querySelector(".table-wrap");
  var sr = svg.getBoundingClientRect(), wr = wrap.getBoundingClientRect();
  var scale = sr.width / svg.viewBox.baseVal.width;
  var texts = Array.prototype.map.call(svg.querySelectorAll("text"), function (t) {
    var b = t.getBoundingClientRect();
    return { text: t.textContent, x: b.left, y: b.top, width: b.width, height: b.height };
  });
  var line = svg.querySelector("g.target line");
  var lr = line ? line.getBoundingClientRect() : null;
  document.documentElement.setAttribute("data-narrow", JSON.stringify({
    innerWidth: window.innerWidth,
    scrollWidth: document.documentElement.scrollWidth,
    table: { left: wr.left, right: wr.right, scrolls: wrap.scrollWidth > wrap.clientWidth },
    chart: { left: sr.left, right: sr.right, top: sr.top, bottom: sr.bottom },
    fontPx: 12 * scale,
    texts: texts,
    target: lr ? { x: lr.left + lr.width / 2, top: lr.top, bottom: lr.bottom } : null
  }));
})();
</script>`

type narrowLayout struct {
	InnerWidth  float64 `json:"innerWidth"`
	ScrollWidth float64 `json:"scrollWidth"`
	Table       struct {
		Left, Right float64
		Scrolls     bool
	} `json:"table"`
	Chart struct {
		Left, Right, Top, Bottom float64
	} `json:"chart"`
	FontPx float64 `json:"fontPx"`
	Texts  []struct {
		Text                string
		X, Y, Width, Height float64
	} `json:"texts"`
	Target *struct {
		X, Top, Bottom float64
	} `json:"target"`
}

// The hedge-test page on a 600 px wide screen: nothing makes the page scroll sideways
// (the wide table scrolls inside its own box), the chart fits the screen with its text
// drawn at a readable size, the target p99 is a line across the chart with its label
// clear of every other text, and the tooltip still reads p99 under the pointer.
func TestChartPageAt600PixelsWithTheTargetP99(t *testing.T) {
	page := brownoutPage()
	page.TargetP99 = 100 * time.Millisecond
	// The table hedge-test prints, wider than the screen.
	page.Header = []string{"STRATEGY", "REQUESTS", "P50", "P90", "P99", "P99.9", "MAX", "EXTRA REQ", "EXTRA RU", "TIMEOUTS", "WINS"}
	page.AlignRight = []int{1, 2, 3, 4, 5, 6, 7, 8, 9}
	for i, r := range page.Rows {
		q := func(p float64) string { return HumanDuration(quantileOf(page.Series[i].Latencies, p)) }
		page.Rows[i] = []string{r[0], r[1], q(50), q(90), q(99), q(99.9), q(100), "+2.0%", "+1.5%", "0", "East US 96%, West US 4%"}
	}
	path := writePage(t, page)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), "</body>", narrowScript+"</body>", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := runChromium(t, path, "selfcheck", "--window-size=600,1400", "--dump-dom")
	var got narrowLayout
	if err := json.Unmarshal([]byte(dataAttr(t, dom, "narrow")), &got); err != nil {
		t.Fatal(err)
	}
	t.Logf("at %.0f px: page %.0f px wide, table %.0f–%.0f (scrolls inside: %v), chart %.0f–%.0f, text at %.1f px",
		got.InnerWidth, got.ScrollWidth, got.Table.Left, got.Table.Right, got.Table.Scrolls, got.Chart.Left, got.Chart.Right, got.FontPx)
	if got.InnerWidth != 600 {
		t.Fatalf("the window is %.0f px wide, want 600: the browser did not take --window-size", got.InnerWidth)
	}
	if got.ScrollWidth > got.InnerWidth {
		t.Errorf("the page is %.0f px wide in a %.0f px window: it scrolls sideways", got.ScrollWidth, got.InnerWidth)
	}
	if got.Table.Right > got.InnerWidth || !got.Table.Scrolls {
		t.Errorf("the table's box ends at %.0f px (window %.0f) and scrolls inside: %v; want it inside the window, scrolling", got.Table.Right, got.InnerWidth, got.Table.Scrolls)
	}
	if got.Chart.Left < 0 || got.Chart.Right > got.InnerWidth {
		t.Errorf("the chart spans %.0f–%.0f px of a %.0f px window", got.Chart.Left, got.Chart.Right, got.InnerWidth)
	}
	if got.FontPx < 10 {
		t.Errorf("the chart's text is drawn at %.1f px: too small to read", got.FontPx)
	}
	if got.Target == nil {
		t.Fatal("no target line in the chart")
	}
	if got.Target.X < got.Chart.Left || got.Target.X > got.Chart.Right || got.Target.Bottom-got.Target.Top < 200 {
		t.Errorf("the target line %+v is not across the chart %+v", *got.Target, got.Chart)
	}
	label := "target p99 " + HumanDuration(page.TargetP99)
	found := false
	for _, a := range got.Texts {
		if a.Text != label {
			continue
		}
		found = true
		for _, o := range got.Texts {
			if o.Text != label && a.X < o.X+o.Width && o.X < a.X+a.Width && a.Y < o.Y+o.Height && o.Y < a.Y+a.Height {
				t.Errorf("the target's label overlaps %q", o.Text)
			}
		}
	}
	if !found {
		t.Errorf("no %q label", label)
	}
	var check selfCheck
	if err := json.Unmarshal([]byte(dataAttr(t, dom, "selfcheck")), &check); err != nil {
		t.Fatal(err)
	}
	if !check.Visible || check.Head != "p99" || len(check.Rows) != len(page.Series) {
		t.Errorf("at 600 px the pointer at p99 shows %+v", check)
	}

	// What a person sees: every strategy's colour in the chart.
	shot := filepath.Join(filepath.Dir(path), "narrow.png")
	runChromium(t, path, "", "--window-size=600,1400", "--screenshot="+shot)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	chart := image.Rect(int(got.Chart.Left), int(got.Chart.Top), int(got.Chart.Right), int(got.Chart.Bottom)).Intersect(img.Bounds())
	for i, s := range page.Series {
		if n := pixelsNear(img, chart, seriesColor(i)); n < 50 {
			t.Errorf("%s's colour %s: %d pixels in the chart at 600 px", s.Name, seriesColor(i), n)
		}
	}
}
