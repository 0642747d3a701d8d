package output

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"image"
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The charts are looked at in a real browser, headless Chromium, when there is one: a
// screenshot of the HTML page, its DOM once its script has run, and the boxes the browser
// gives the SVG's text. Without Chromium these tests skip, unless COSMOSCTL_BROWSER=required
// (CI installs Chromium and sets it), when they fail.
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"chromium", "/usr/bin/chromium"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("COSMOSCTL_BROWSER") == "required" {
		t.Fatal("COSMOSCTL_BROWSER=required but there is no chromium on PATH or at /usr/bin/chromium (apt-get install chromium)")
	}
	t.Skip("no chromium (apt-get install chromium, or set COSMOSCTL_BROWSER=required to fail instead)")
	return ""
}

// runChromium runs headless Chromium on page (a file) with a fresh profile and no network
// of its own, and returns its stdout.
func runChromium(t *testing.T, page, fragment string, args ...string) []byte {
	t.Helper()
	bin := chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	profile, err := os.MkdirTemp("", "cosmosctl-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	// Not t.TempDir: Chromium's helpers may still be writing in it as the test ends.
	defer os.RemoveAll(profile)
	u := url.URL{Scheme: "file", Path: page, Fragment: fragment}
	cmd := exec.CommandContext(ctx, bin, append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + profile, "--window-size=1200,900"}, append(args, u.String())...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, tail(stderr.String(), 2000))
	}
	return stdout.Bytes()
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// dataAttr is the value of the root element's data-NAME attribute in a dumped DOM.
func dataAttr(t *testing.T, dom []byte, name string) string {
	t.Helper()
	m := regexp.MustCompile(`data-` + name + `="([^"]*)"`).FindSubmatch(dom)
	if m == nil {
		t.Fatalf("the rendered DOM has no data-%s: the page's script did not run?\n%s", name, tail(string(dom), 3000))
	}
	return html.UnescapeString(string(m[1]))
}

func brownoutPage() ChartPage {
	series := namedSeries("none", "threshold=500ms/100ms", "fanout", "adaptive")
	page := ChartPage{Title: "cosmosctl hedge-test: brownout (the first region answers 5% of reads 0.5–2 s late)",
		Summary: "500 reads per strategy", Verdict: "recommendation: fanout — the test's pick",
		Header: []string{"STRATEGY", "REQUESTS", "P99"}, AlignRight: []int{1, 2},
		Highlight: "fanout", HighlightLabel: "recommended", Series: series}
	for i, s := range series {
		page.Rows = append(page.Rows, []string{s.Name, fmt.Sprint(500 + i), HumanDuration(quantileOf(s.Latencies, 99))})
	}
	return page
}

func writePage(t *testing.T, page ChartPage) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "chart.html")
	var b bytes.Buffer
	if err := WriteCDFHTML(&b, page); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

type selfCheck struct {
	Visible bool   `json:"visible"`
	Head    string `json:"head"`
	Rows    []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"rows"`
	Dots  int `json:"dots"`
	Chart struct {
		X, Y, Width, Height float64
	} `json:"chart"`
}

func TestChartPageInABrowser(t *testing.T) {
	page := brownoutPage()
	path := writePage(t, page)

	// The DOM once the page's script ran, with the pointer put at p99 (#selfcheck).
	dom := runChromium(t, path, "selfcheck", "--dump-dom")
	for _, want := range []string{`<table id="results">`, `<tr class="highlight">`, `<span class="badge">recommended</span>`, `<figure id="chart">`} {
		if !bytes.Contains(dom, []byte(want)) {
			t.Errorf("the rendered DOM lacks %s", want)
		}
	}
	if n := bytes.Count(dom, []byte("<polyline")); n != len(page.Series) {
		t.Errorf("%d curves in the rendered DOM, want %d", n, len(page.Series))
	}
	if n := bytes.Count(dom, []byte("<tr")); n != len(page.Rows)+1 {
		t.Errorf("%d table rows in the rendered DOM, want %d", n, len(page.Rows)+1)
	}
	var check selfCheck
	if err := json.Unmarshal([]byte(dataAttr(t, dom, "selfcheck")), &check); err != nil {
		t.Fatal(err)
	}
	t.Logf("under the pointer: %+v", check)
	if !check.Visible || check.Head != "p99" || len(check.Rows) != len(page.Series) || check.Dots != len(page.Series) {
		t.Fatalf("the pointer at p99 shows %+v, want p99 and a value and a dot per strategy", check)
	}
	for i, s := range page.Series {
		if want := HumanDuration(quantileOf(s.Latencies, 99)); check.Rows[i].Name != s.Name || check.Rows[i].Value != want {
			t.Errorf("tooltip row %d: %q %q, want %q %q", i, check.Rows[i].Name, check.Rows[i].Value, s.Name, want)
		}
	}

	// What a person sees.
	shot := filepath.Join(filepath.Dir(path), "chart.png")
	runChromium(t, path, "", "--screenshot="+shot)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1200 || b.Dy() != 900 {
		t.Fatalf("the screenshot is %dx%d, want 1200x900", b.Dx(), b.Dy())
	}
	if n := distinctColors(img, img.Bounds()); n < 50 {
		t.Errorf("the screenshot has %d colours: blank?", n)
	}
	// Every strategy's colour is drawn in the chart, which is where the script says it is.
	chart := image.Rect(int(check.Chart.X), int(check.Chart.Y), int(check.Chart.X+check.Chart.Width), int(check.Chart.Y+check.Chart.Height)).Intersect(img.Bounds())
	if chart.Dx() < 600 || chart.Dy() < 300 {
		t.Fatalf("the chart is at %v of the screenshot: too small, or off the screen", chart)
	}
	for i, s := range page.Series {
		if n := pixelsNear(img, chart, seriesColor(i)); n < 100 {
			t.Errorf("%s's colour %s: %d pixels in the chart, want its curve and legend", s.Name, seriesColor(i), n)
		}
	}
}

func distinctColors(img image.Image, r image.Rectangle) int {
	seen := map[uint32]bool{}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			c0, c1, c2, _ := img.At(x, y).RGBA()
			seen[c0>>8<<16|c1>>8<<8|c2>>8] = true
		}
	}
	return len(seen)
}

// pixelsNear counts the pixels within a small distance of colour hex ("#1f77b4"): curves
// are anti-aliased at their edges.
func pixelsNear(img image.Image, r image.Rectangle, hex string) int {
	var want [3]int
	fmt.Sscanf(hex, "#%02x%02x%02x", &want[0], &want[1], &want[2])
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			c0, c1, c2, _ := img.At(x, y).RGBA()
			got := [3]int{int(c0 >> 8), int(c1 >> 8), int(c2 >> 8)}
			d := 0
			for k := range got {
				d = max(d, abs(got[k]-want[k]))
			}
			if d <= 12 {
				n++
			}
		}
	}
	return n
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// renderedText is a <text> as the browser laid it out, in the SVG's units.
type renderedText struct {
	Text   string  `json:"text"`
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
	// Length is the text's advance width, what textWidth estimates.
	Length float64 `json:"length"`
}

// measureScript records, for each SVG of the page, what the browser made of its text.
const measureScript = `<script>
var out = Array.prototype.map.call(document.querySelectorAll("svg"), function (svg) {
  return Array.prototype.map.call(svg.querySelectorAll("text"), function (t) {
    var b = t.getBBox();
    return { text: t.textContent, x: b.x, y: b.y, width: b.width, height: b.height, length: t.getComputedTextLength() };
  });
});
document.documentElement.setAttribute("data-texts", JSON.stringify(out));
</script>`

func TestCDFSVGTextFitsInABrowser(t *testing.T) {
	chromium(t)
	// One page holds every case's SVG, for one run of the browser.
	svgs := make([][]byte, len(chartLayoutCases))
	doc := `<!doctype html><html><head><meta charset="utf-8"></head><body style="margin:0">`
	for i, tc := range chartLayoutCases {
		var b bytes.Buffer
		if err := WriteCDFSVG(&b, tc.series, tc.title, 0); err != nil {
			t.Fatal(err)
		}
		svgs[i] = b.Bytes()
		doc += "<div>" + b.String() + "</div>"
	}
	path := filepath.Join(t.TempDir(), "svg.html")
	if err := os.WriteFile(path, []byte(doc+measureScript+"</body></html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	var rendered [][]renderedText
	if err := json.Unmarshal([]byte(dataAttr(t, runChromium(t, path, "", "--dump-dom"), "texts")), &rendered); err != nil {
		t.Fatal(err)
	}
	if len(rendered) != len(chartLayoutCases) {
		t.Fatalf("the browser has %d SVGs, want %d", len(rendered), len(chartLayoutCases))
	}
	widest, widestText := 0.0, ""
	for k, tc := range chartLayoutCases {
		t.Run(tc.name, func(t *testing.T) {
			width, height, texts, _ := parseSVG(t, svgs[k])
			got := rendered[k]
			if len(got) != len(texts) {
				t.Fatalf("the browser has %d texts, the SVG %d", len(got), len(texts))
			}
			for i, r := range got {
				if r.X < 0 || r.Y < 0 || r.X+r.Width > width || r.Y+r.Height > height {
					t.Errorf("%q is drawn at (%.1f,%.1f)–(%.1f,%.1f), outside the %.0f×%.0f image", r.Text, r.X, r.Y, r.X+r.Width, r.Y+r.Height, width, height)
				}
				est := textWidth(texts[i].content, texts[i].size, texts[i].bold)
				if r.Length > est+0.5 {
					t.Errorf("%q is %.1f px wide in the browser, wider than its estimate %.1f", r.Text, r.Length, est)
				}
				if r.Length/est > widest {
					widest, widestText = r.Length/est, r.Text
				}
				for _, o := range got[:i] {
					if r.X < o.X+o.Width && o.X < r.X+r.Width && r.Y < o.Y+o.Height && o.Y < r.Y+r.Height {
						t.Errorf("%q overlaps %q", r.Text, o.Text)
					}
				}
			}
		})
	}
	t.Logf("the text nearest its estimate, %q, takes %.0f%% of it", widestText, 100*widest)
}

func TestChartPageEscapesTextAndFetchesNothing(t *testing.T) {
	page := brownoutPage()
	page.Title = `<script>alert("title")</script> & co`
	page.Rows[0][0] = `<img src=x onerror=alert(1)>`
	page.Series[0].Name = page.Rows[0][0]
	page.Highlight = page.Rows[0][0]
	page.Notes = []string{`</p><b>note</b>`}
	var b bytes.Buffer
	if err := WriteCDFHTML(&b, page); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Count(out, "<script") != 1 || strings.Contains(out, "<img") || strings.Contains(out, "<b>note") {
		t.Fatalf("unescaped text in the page:\n%s", out)
	}
	for _, want := range []string{"<title>&lt;script&gt;alert(&#34;title&#34;)&lt;/script&gt; &amp; co</title>", "&lt;img src=x onerror=alert(1)&gt;"} {
		if !strings.Contains(out, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	// Self-contained: no URL but the SVG namespace, no external script, style or image.
	local := strings.ReplaceAll(out, `"http://www.w3.org/2000/svg"`, "")
	for _, re := range []string{`<[^>]*\s(src|href)\s*=`, `url\(`, `@import`, `https?:`, `fetch\(`, `XMLHttpRequest`} {
		if m := regexp.MustCompile(re).FindString(local); m != "" {
			t.Errorf("the page refers to something outside itself: %q", m)
		}
	}
}
